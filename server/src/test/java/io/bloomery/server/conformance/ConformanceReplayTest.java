package io.bloomery.server.conformance;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

/**
 * Differential conformance: every case that {@code tools/conformance/record.py} recorded against real
 * Redis 8.0.2 + RedisBloom (source commits in the recording's header) is replayed against Bloomery, and
 * each reply must equal the recorded bytes exactly (HELLO: its {@code proto} field). A failure names the
 * case, the step, the command and both replies in escaped form; all failing cases are also listed in
 * {@code target/conformance-report.txt}.
 *
 * <p>Cases listed in {@value #DIVERGENCES} are known, documented design differences: they are reported
 * as skipped with their reason while they still differ, and fail once they match (so the list cannot
 * go stale).
 */
class ConformanceReplayTest {

  static final String RECORDING = "/conformance/redisbloom.recording";
  static final String DIVERGENCES = "/conformance/known-divergences.txt";

  private static final List<String> FAILURES = Collections.synchronizedList(new ArrayList<>());
  private static ReplayTarget target;

  @BeforeAll
  static void startTarget() throws Exception {
    Assumptions.assumeTrue(ReplayTarget.externalNamed() || ReplayTarget.bloomeryAvailable(),
        "no server to replay against: io.bloomery.server.BloomeryServer is not on this branch yet and "
            + ReplayTarget.PROPERTY + " names no external server");
    target = ReplayTarget.open();
  }

  @AfterAll
  static void stopTarget() throws Exception {
    if (target == null) {
      return;
    }
    try {
      Path report = Path.of("target", "conformance-report.txt");
      Files.createDirectories(report.getParent());
      List<String> lines = new ArrayList<>();
      lines.add("Conformance replay against " + target.description() + ": " + FAILURES.size() + " case(s) differ");
      synchronized (FAILURES) {
        lines.addAll(FAILURES);
      }
      Files.write(report, lines, StandardCharsets.UTF_8);
    } finally {
      target.close();
    }
  }

  static Recording recording() throws IOException {
    try (InputStream in = ConformanceReplayTest.class.getResourceAsStream(RECORDING)) {
      if (in == null) {
        throw new IOException("test resource " + RECORDING + " is missing");
      }
      return Recording.parse(in, RECORDING);
    }
  }

  static Map<String, String> knownDivergences() throws IOException {
    Map<String, String> out = new LinkedHashMap<>();
    try (InputStream in = ConformanceReplayTest.class.getResourceAsStream(DIVERGENCES)) {
      if (in == null) {
        return out;
      }
      int lineNo = 0;
      for (String line : new String(in.readAllBytes(), StandardCharsets.UTF_8).split("\n")) {
        lineNo++;
        String trimmed = line.strip();
        if (trimmed.isEmpty() || trimmed.startsWith("#")) {
          continue;
        }
        String[] parts = trimmed.split("\\s+", 2);
        if (parts.length < 2 || parts[1].isBlank()) {
          throw new IOException(DIVERGENCES + ":" + lineNo + ": a known divergence needs a reason after the case name");
        }
        out.put(parts[0], parts[1]);
      }
    }
    return out;
  }

  @TestFactory
  Stream<DynamicTest> everyRecordedCaseMatches() throws IOException {
    Recording recording = recording();
    Map<String, String> divergences = knownDivergences();
    Set<String> names = recording.cases().stream().map(Recording.Case::name).collect(Collectors.toSet());
    for (String name : divergences.keySet()) {
      assertThat(names).as("known divergence %s names a recorded case", name).contains(name);
    }
    CaseReplayer replayer = new CaseReplayer(target.address(), 10_000);
    return recording.cases().stream().map(c -> DynamicTest.dynamicTest(c.name(), () -> {
      List<CaseReplayer.Mismatch> mismatches = replayer.replay(c);
      String reason = divergences.get(c.name());
      if (mismatches.isEmpty()) {
        if (reason != null) {
          fail("case " + c.name() + " now matches the recording: remove it from " + DIVERGENCES);
        }
        return;
      }
      String message = "case " + c.name() + " (RESP" + c.proto() + ", " + (c.pipelined() ? "pipelined" : "sequential")
          + ", recording line " + c.line() + ") differs from the recording in " + mismatches.size() + " of "
          + c.steps().size() + " steps against " + target.description() + ":\n"
          + mismatches.stream().map(CaseReplayer.Mismatch::describe).collect(Collectors.joining("\n"));
      if (reason != null) {
        Assumptions.abort("known divergence (" + reason + "): " + message);
      }
      FAILURES.add(message);
      fail(message);
    }));
  }

  /** The recording itself: enough cases, and every command of every family in both protocols. */
  @Test
  void recordingCoversEveryCommandInBothProtocols() throws IOException {
    Recording recording = recording();
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

  /** The upper-cased command name of an encoded command, or "(raw)" for bytes sent as they are. */
  private static String commandName(byte[] sent) throws IOException {
    if (sent.length == 0 || sent[0] != '*') {
      return "(raw)";
    }
    RespReply command = RespReply.parse(sent);
    return new String(command.elements().get(0).scalar(), StandardCharsets.UTF_8).toUpperCase(Locale.ROOT);
  }
}
