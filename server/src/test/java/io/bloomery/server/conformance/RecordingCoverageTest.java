package io.bloomery.server.conformance;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/** The checked-in recording parses and covers what the replay promises, whether or not a server runs. */
class RecordingCoverageTest {

  /** The recording itself: enough cases, and every command of every family in both protocols. */
  @Test
  void recordingCoversEveryCommandInBothProtocols() throws IOException {
    Recording recording = ConformanceReplayTest.recording();
    assertThat(recording.cases()).hasSizeGreaterThanOrEqualTo(400);
    Set<String> resp2 = new TreeSet<>();
    Set<String> resp3 = new TreeSet<>();
    boolean pipelined = false;
    for (Recording.Case c : recording.cases()) {
      pipelined |= c.pipelined();
      for (Recording.Step step : c.steps()) {
        String name = commandName(step.sent());
        (c.proto() == 2 ? resp2 : resp3).add(name);
      }
    }
    List<String> families = List.of(
        "BF.RESERVE", "BF.ADD", "BF.MADD", "BF.INSERT", "BF.EXISTS", "BF.MEXISTS", "BF.INFO", "BF.CARD",
        "BF.SCANDUMP", "BF.LOADCHUNK", "BF.DEBUG",
        "CF.RESERVE", "CF.ADD", "CF.ADDNX", "CF.INSERT", "CF.INSERTNX", "CF.EXISTS", "CF.MEXISTS", "CF.COUNT",
        "CF.DEL", "CF.COMPACT", "CF.INFO", "CF.SCANDUMP", "CF.LOADCHUNK", "CF.DEBUG",
        "CMS.INITBYDIM", "CMS.INITBYPROB", "CMS.INCRBY", "CMS.QUERY", "CMS.MERGE", "CMS.INFO",
        "TOPK.RESERVE", "TOPK.ADD", "TOPK.INCRBY", "TOPK.QUERY", "TOPK.COUNT", "TOPK.LIST", "TOPK.INFO",
        "PING", "ECHO", "HELLO", "SELECT", "EXISTS", "DEL", "TYPE", "DBSIZE", "EXPIRE", "TTL", "MULTI", "EXEC");
    assertThat(resp2).containsAll(families);
    assertThat(resp3).containsAll(families.stream().filter(n -> !n.equals("HELLO")).toList());
    assertThat(pipelined).isTrue();
  }

  /** The admin recording: ACL (AUTH and HELLO AUTH as other users included) and the introspection commands. */
  @Test
  void adminRecordingCoversAclAndIntrospection() throws IOException {
    Recording recording = ConformanceReplayTest.recording(ConformanceReplayTest.ADMIN_RECORDING);
    assertThat(recording.cases()).hasSizeGreaterThanOrEqualTo(20)
        .allSatisfy(c -> assertThat(c.name()).matches("(acl|admin)/.*"));
    Set<String> sent = new TreeSet<>();
    for (Recording.Case c : recording.cases()) {
      for (Recording.Step step : c.steps()) {
        sent.add(commandName(step.sent()));
      }
    }
    assertThat(sent).contains("ACL", "AUTH", "HELLO", "BF.ADD", "CF.ADD", "CMS.INCRBY", "TOPK.ADD", "ROLE",
        "SLOWLOG", "LATENCY", "OBJECT", "MODULE", "CONFIG", "INFO");
  }

  /** The parity recording: MIGRATE's errors, MONITOR in a transaction, OBJECT IDLETIME and RESTORE IDLETIME. */
  @Test
  void parityRecordingCoversMigrateMonitorAndIdletime() throws IOException {
    Recording recording = ConformanceReplayTest.recording(ConformanceReplayTest.PARITY_RECORDING);
    Set<String> sent = new TreeSet<>();
    for (Recording.Case c : recording.cases()) {
      assertThat(c.name()).startsWith("parity/");
      for (Recording.Step step : c.steps()) {
        sent.add(commandName(step.sent()));
      }
    }
    assertThat(sent).contains("MIGRATE", "MONITOR", "OBJECT", "RESTORE");
  }

  @Test
  void knownDivergencesParseAndEachHasAReason() throws IOException {
    assertThat(ConformanceReplayTest.knownDivergences()).allSatisfy((name, reason) -> assertThat(reason).isNotBlank());
  }

  /** The upper-cased command name of an encoded command, or "(raw)" for bytes sent as they are. */
  private static String commandName(byte[] sent) {
    try {
      RespReply command = RespReply.parse(sent);
      if (command.type() == '*' && !command.elements().isEmpty() && command.elements().get(0).scalar() != null) {
        return new String(command.elements().get(0).scalar(), StandardCharsets.UTF_8).toUpperCase(Locale.ROOT);
      }
    } catch (IOException notACommand) {
      // inline commands and the hostile bytes of the protocol-error cases
    }
    return "(raw)";
  }
}
