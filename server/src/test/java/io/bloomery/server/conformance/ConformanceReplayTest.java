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
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicTest;
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
  /**
   * The ACL and server-introspection cases (tools/conformance/cases/acl.cases and admin.cases), recorded from the
   * same server into their own file.
   */
  static final String ADMIN_RECORDING = "/conformance/admin.recording";
  /** MIGRATE, MONITOR and OBJECT IDLETIME (tools/conformance/cases/parity.cases), from the same server. */
  static final String PARITY_RECORDING = "/conformance/parity.recording";
  static final String DIVERGENCES = "/conformance/known-divergences.txt";

  private static final List<String> FAILURES = Collections.synchronizedList(new ArrayList<>());
  private static ReplayTarget target;

  @BeforeAll
  static void startTarget() throws Exception {
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
    return recording(RECORDING);
  }

  static Recording recording(String resource) throws IOException {
    try (InputStream in = ConformanceReplayTest.class.getResourceAsStream(resource)) {
      if (in == null) {
        throw new IOException("test resource " + resource + " is missing");
      }
      return Recording.parse(in, resource);
    }
  }

  /** Every recorded case, of every recording. */
  static List<Recording.Case> allCases() throws IOException {
    List<Recording.Case> cases = new ArrayList<>(recording().cases());
    cases.addAll(recording(ADMIN_RECORDING).cases());
    cases.addAll(recording(PARITY_RECORDING).cases());
    return cases;
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
    List<Recording.Case> cases = allCases();
    Map<String, String> divergences = knownDivergences();
    Set<String> names = cases.stream().map(Recording.Case::name).collect(Collectors.toSet());
    for (String name : divergences.keySet()) {
      assertThat(names).as("known divergence %s names a recorded case", name).contains(name);
    }
    CaseReplayer replayer = new CaseReplayer(target.address(), 10_000);
    return cases.stream().map(c -> DynamicTest.dynamicTest(c.name(), () -> {
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
}
