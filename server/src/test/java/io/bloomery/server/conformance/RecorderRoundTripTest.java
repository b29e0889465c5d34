package io.bloomery.server.conformance;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The recorder ({@code tools/conformance/record.py}) and the replay agree: its own tests pass, and a
 * recording it makes of a server parses here and replays against that same server without a single
 * difference (every case kind: RESP2 and RESP3, pipelined, $N.M references, raw bytes, HELLO fields).
 */
class RecorderRoundTripTest {

  private static final String PYTHON = "/usr/bin/python3";
  private static ReplayTarget target;

  @BeforeAll
  static void start() throws Exception {
    Assumptions.assumeTrue(ExternalClient.installed(PYTHON), PYTHON + " is not installed");
    Assumptions.assumeTrue(Files.isRegularFile(recorder()), "tools/conformance/record.py is not in this checkout");
    target = ReplayTarget.open();
  }

  @AfterAll
  static void stop() throws Exception {
    ReplayTarget.closeIfOpen(target);
  }

  private static Path recorder() {
    Path fromModule = Path.of("..", "tools", "conformance", "record.py");
    return Files.isRegularFile(fromModule) ? fromModule.toAbsolutePath().normalize()
        : Path.of("tools", "conformance", "record.py").toAbsolutePath();
  }

  @Test
  void recordersOwnTestsPass() throws Exception {
    List<String> command = List.of(PYTHON, recorder().resolveSibling("test_record.py").toString());
    ExternalClient.Result result = ExternalClient.run(command, recorder().getParent(), null, Duration.ofMinutes(1));
    assertThat(result.exitCode()).as(result.describe(command)).isZero();
  }

  @Test
  void aRecordingOfAServerReplaysAgainstItExactly(@TempDir Path dir) throws Exception {
    Path cases = dir.resolve("round-trip.cases");
    Files.writeString(cases, """
        case rt/sequential
        proto 2,3
        > BF.RESERVE bf 0.1 10
        > BF.MADD bf a b "two words" "\\x00\\xff"
        > BF.SCANDUMP bf 0
        > BF.SCANDUMP bf $3.0
        > BF.LOADCHUNK copy $3.0 $3.1
        > BF.LOADCHUNK copy $4.0 $4.1
        > BF.MEXISTS copy a b "two words" "\\x00\\xff" c
        > [fields proto: server and version differ] HELLO 3
        > [any: only the type matters here] CF.INFO missing

        case rt/pipelined
        proto 3
        pipeline
        > CF.INSERT cf ITEMS {i:0..9}
        raw "PING\\r\\n"
        > CF.MEXISTS cf i0 i9 j0
        """, StandardCharsets.UTF_8);
    Path out = dir.resolve("round-trip.recording");
    List<String> command = List.of(PYTHON, recorder().toString(), "--host", target.address().getHostString(),
        "--port", Integer.toString(target.address().getPort()), "--source", "the round-trip test",
        "--out", out.toString(), cases.toString());
    ExternalClient.Result result = ExternalClient.run(command, dir, null, Duration.ofMinutes(1));
    assertThat(result.exitCode()).as(result.describe(command)).isZero();

    Recording recording = Recording.parse(Files.newInputStream(out), out.toString());
    assertThat(recording.cases()).extracting(Recording.Case::name)
        .containsExactly("rt/sequential@resp2", "rt/sequential@resp3", "rt/pipelined");
    assertThat(recording.cases().get(2).pipelined()).isTrue();
    CaseReplayer replayer = new CaseReplayer(target.address(), 10_000);
    for (Recording.Case c : recording.cases()) {
      assertThat(replayer.replay(c)).as("replay of %s against the server it was recorded from", c.name()).isEmpty();
    }
  }
}
