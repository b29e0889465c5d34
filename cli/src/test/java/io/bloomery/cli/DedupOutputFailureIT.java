package io.bloomery.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomery.guard.PostgresCluster;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SequencedSet;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Outputs that fail, for real, in a child process: {@code /dev/full}, a closed stdout, a reader
 * that goes away ({@code | head -1}), a full disk; and a store that dies mid-run. Each run exits 1
 * with one line that names no Java class, and a re-run prints exactly the items not yet delivered.
 */
class DedupOutputFailureIT {
  private static final String JAVA_CLASS = "\\b(?:[a-z][a-z0-9_]*\\.)+[A-Z]\\w*(?:Exception|Error)\\b";

  @TempDir Path dir;
  private Path in;
  private SequencedSet<String> expected;
  private String store;

  record Run(int exitCode, String err) {
    String lastLine() {
      String[] lines = err.strip().split("\n");
      return lines[lines.length - 1];
    }
  }

  @BeforeEach
  void input() throws IOException {
    in = dir.resolve("input.txt");
    expected = DedupChild.writeInput(in, 6_000, 5_000, 11);
    store = "sqlite:" + dir.resolve("seen.db");
  }

  private Run bash(String script) throws Exception {
    Path err = dir.resolve("stderr-" + System.nanoTime());
    Process process = new ProcessBuilder("bash", "-c", script).redirectError(err.toFile())
        .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
    try {
      assertThat(process.waitFor(180, TimeUnit.SECONDS)).isTrue();
    } finally {
      process.destroyForcibly();
    }
    return new Run(process.exitValue(), Files.readString(err, StandardCharsets.UTF_8));
  }

  private String dedup(String... extra) {
    List<String> args = new ArrayList<>(List.of("dedup", "--store", store, "--batch", "100",
        "--expected", "100000"));
    args.addAll(List.of(extra));
    return DedupChild.shellCommand(args.toArray(String[]::new));
  }

  /** A complete re-run into a file; returns its lines. */
  private List<String> rerun() throws Exception {
    Path out = dir.resolve("rerun.out");
    Run run = bash(dedup("--input", in.toString(), "--output", out.toString()));
    assertThat(run.exitCode()).as(run.err()).isZero();
    return Files.readAllLines(out);
  }

  private static void assertOneLineFailure(Run run, String containing) {
    assertThat(run.exitCode()).as(run.err()).isEqualTo(1);
    assertThat(run.lastLine()).startsWith("bloomery dedup: ").contains(containing)
        .doesNotContainPattern(JAVA_CLASS);
    assertThat(run.err()).as("no stack trace without --verbose").doesNotContain("\tat ")
        .doesNotContain("Exception");
  }

  @Test
  void devFullFailsAndCommitsNothing() throws Exception {
    Run run = bash(dedup("--input", in.toString()) + " > /dev/full");
    assertOneLineFailure(run, "cannot write to standard output: No space left on device");
    assertThat(rerun()).containsExactlyElementsOf(expected);
  }

  @Test
  void closedStdoutIsRefusedBeforeAnythingIsRead() throws Exception {
    Run run = bash(dedup("--input", in.toString()) + " >&-");
    assertOneLineFailure(run, "standard output is closed");
    Run both = bash(dedup() + " <&- >&-");
    assertOneLineFailure(both, "is closed");
    assertThat(rerun()).containsExactlyElementsOf(expected);
  }

  @Test
  void closedStdinIsRefused() throws Exception {
    Run run = bash(dedup() + " <&- > " + dir.resolve("out.txt"));
    assertOneLineFailure(run, "standard input is closed");
    assertThat(rerun()).containsExactlyElementsOf(expected);
  }

  @Test
  void aReaderThatGoesAwayEndsTheRunAndOnlyWhatThePipeTookIsCommitted() throws Exception {
    Path head = dir.resolve("head.out");
    Run run = bash("set -o pipefail; " + dedup() + " < " + in + " | head -1 > " + head
        + "; exit ${PIPESTATUS[0]}");
    assertOneLineFailure(run, "broken pipe");
    assertThat(Files.readAllLines(head)).containsExactly(expected.getFirst());
    // The batches the pipe accepted were delivered to head (which read one line and left); the
    // one that met the closed pipe was rolled back. A re-run prints the rest, in order.
    List<String> rest = rerun();
    List<String> all = List.copyOf(expected);
    int delivered = all.size() - rest.size();
    assertThat(rest).containsExactlyElementsOf(all.subList(delivered, all.size()));
    assertThat(delivered).as("at most a pipe buffer (64 KiB) and a batch went to head")
        .isBetween(1, 65_536 / 30 + 100);
  }

  @Test
  void aFullDiskFailsCleanlyAndTheRerunPrintsExactlyTheRest() throws Exception {
    Path small = dir.resolve("small");
    Files.createDirectories(small);
    Process mount = new ProcessBuilder("mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs",
        small.toString()).redirectErrorStream(true).start();
    boolean mounted = mount.waitFor(30, TimeUnit.SECONDS) && mount.exitValue() == 0;
    Assumptions.assumeTrue(mounted, "mounting a 64 KiB tmpfs needs root: "
        + new String(mount.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip());
    try {
      Path out = small.resolve("new.txt");
      Run run = bash(dedup("--input", in.toString(), "--output", out.toString()));
      assertOneLineFailure(run, "No space left on device");
      byte[] written = Files.readAllBytes(out);
      assertThat(written.length).isPositive();
      assertThat(written[written.length - 1]).as("cut back to the last whole batch").isEqualTo(
          (byte) '\n');
      List<String> first = Files.readAllLines(out);
      List<String> all = List.copyOf(expected);
      assertThat(first).containsExactlyElementsOf(all.subList(0, first.size()));
      // Exactly once: what the full disk took is committed, the rest is not.
      assertThat(rerun()).containsExactlyElementsOf(all.subList(first.size(), all.size()));

      // Appending stdout (>> FILE) that fills up: the earlier content stays, whole batches follow.
      Files.delete(out);
      Path appended = small.resolve("appended.txt");
      Files.writeString(appended, "kept from before\n");
      store = "sqlite:" + dir.resolve("second.db");
      Run append = bash(dedup("--input", in.toString()) + " >> " + appended);
      assertOneLineFailure(append, "No space left on device");
      List<String> appendedLines = Files.readAllLines(appended);
      assertThat(appendedLines.getFirst()).isEqualTo("kept from before");
      List<String> batches = appendedLines.subList(1, appendedLines.size());
      assertThat(batches).isNotEmpty().containsExactlyElementsOf(all.subList(0, batches.size()));
      byte[] appendedBytes = Files.readAllBytes(appended);
      assertThat(appendedBytes[appendedBytes.length - 1]).isEqualTo((byte) '\n');
      assertThat(rerun()).containsExactlyElementsOf(all.subList(batches.size(), all.size()));
    } finally {
      new ProcessBuilder("umount", small.toString()).start().waitFor(30, TimeUnit.SECONDS);
    }
  }

  @Test
  void aStoreStoppedMidRunIsOneLineAndNothingIsLost() throws Exception {
    try (PostgresCluster cluster = PostgresCluster.startNew()) {
      store = cluster.createDatabase();
      Path out = dir.resolve("first.out");
      Path err = dir.resolve("first.err");
      Process process = new ProcessBuilder(DedupChild.command("dedup", "--store", store,
          "--batch", "50", "--output", out.toString()))
          .redirectInput(in.toFile()).redirectError(err.toFile()).start();
      try {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (process.isAlive() && DedupChild.lineCount(out) < 200
            && System.nanoTime() < deadline) {
          Thread.sleep(5);
        }
        cluster.stopImmediately();
        assertThat(process.waitFor(120, TimeUnit.SECONDS)).isTrue();
      } finally {
        process.destroyForcibly();
      }
      Run run = new Run(process.exitValue(), Files.readString(err));
      assertOneLineFailure(run, "the store failed after");
      System.out.println("store stopped mid-run, stderr's last line: " + run.lastLine());
      assertThat(run.err()).doesNotContain("HikariPool").doesNotContain("WARN");
      List<String> first = DedupChild.completeLines(Files.readAllBytes(out));
      cluster.start();
      List<String> rest = rerun();
      List<String> union = new ArrayList<>(first);
      union.addAll(rest);
      assertThat(union).containsAll(expected);
      assertThat(union.size() - expected.size()).as("repeats: at most the unconfirmed batch")
          .isBetween(0, 50);
    }
  }

  @Test
  void credentialsNeverReachStderrEvenVerbose() throws Exception {
    for (String url : List.of(
        "jdbc:postgresql://crawler:hunter2@127.0.0.1:1/crawl",
        "jdbc:postgresql://127.0.0.1:1/crawl?user=crawler&password=hunter2")) {
      Run run = bash(DedupChild.shellCommand("dedup", "--store", url, "--input", in.toString(),
          "--output", dir.resolve("x.out").toString()));
      assertThat(run.exitCode()).as(run.err()).isIn(1, 2);
      assertThat(run.err()).doesNotContain("hunter2");
      if (url.contains("crawler:hunter2@")) {
        assertThat(run.err()).contains("crawler:***@"); // the user stays, to see which store
      }
      Run verbose = bash(DedupChild.shellCommand("dedup", "--verbose", "--store", url, "--input",
          in.toString(), "--output", dir.resolve("x.out").toString()));
      assertThat(verbose.err()).doesNotContain("hunter2").contains("\tat ");
    }
  }
}
