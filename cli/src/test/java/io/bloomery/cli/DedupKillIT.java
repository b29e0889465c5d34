package io.bloomery.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomery.guard.PostgresCluster;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.SequencedSet;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code bloomery dedup} killed for real, again and again: a child JVM runs the CLI, is killed with
 * SIGKILL, SIGTERM or SIGINT at a random point once it has printed some new items, and is run
 * again on the same input, until a last run completes. The union of all outputs must hold every
 * distinct input item ({@code awk '!seen[$0]++'}) and nothing else; a SIGTERM or SIGINT repeats
 * nothing, a SIGKILL at most the new items of the one batch that was written but not committed.
 *
 * <p>Seeded: {@code -Dbloomery.seed=N} replays a run; the seed is in every failure message.
 */
class DedupKillIT {
  private static final int BATCH = 200;
  private static final int KILLS = 6;
  private static final int LINES = 20_000;
  private static final List<String> SIGNALS = List.of("KILL", "TERM", "KILL", "INT");

  @TempDir Path dir;

  enum Output { OUTPUT_FILE, STDOUT_FILE, STDOUT_PIPE }

  enum Input { INPUT_FILE, STDIN_FILE }

  record RunResult(int index, String signal, boolean killedWhileRunning, int exitCode,
      List<String> lines, String stderr) {}

  @Test
  void sqliteOutputFileSurvivesKillsAndTerms() throws Exception {
    killChain("sqlite:" + dir.resolve("seen.db"), Output.OUTPUT_FILE, Input.INPUT_FILE);
  }

  @Test
  void sqliteStdinToPipeSurvivesKillsAndTerms() throws Exception {
    killChain("sqlite:" + dir.resolve("seen.db"), Output.STDOUT_PIPE, Input.STDIN_FILE);
  }

  @Test
  void postgresStdoutFileSurvivesKillsAndTerms() throws Exception {
    killChain(PostgresCluster.shared().createDatabase(), Output.STDOUT_FILE, Input.INPUT_FILE);
  }

  @Test
  void sigtermWhileWaitingForInputFinishesTheLinesAlreadyRead() throws Exception {
    Path out = dir.resolve("idle.out");
    Path err = dir.resolve("idle.err");
    Process process = new ProcessBuilder(DedupChild.command("dedup", "--store",
        "sqlite:" + dir.resolve("idle.db"), "--batch", "1000"))
        .redirectOutput(out.toFile()).redirectError(err.toFile()).start();
    try {
      // A producer that sent 1 500 lines and then pauses: one full batch and 500 in hand.
      StringBuilder lines = new StringBuilder();
      for (int i = 0; i < 1_500; i++) {
        lines.append("https://example.org/idle/").append(i).append('\n');
      }
      process.getOutputStream().write(lines.toString().getBytes(StandardCharsets.UTF_8));
      process.getOutputStream().flush();
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
      while (DedupChild.lineCount(out) < 1_000 && process.isAlive()
          && System.nanoTime() < deadline) {
        Thread.sleep(5);
      }
      assertThat(DedupChild.lineCount(out)).as("the first batch is out").isEqualTo(1_000);
      Thread.sleep(200); // the reader is now blocked on the idle pipe, 500 items in hand
      process.toHandle().destroy(); // SIGTERM
      assertThat(process.waitFor(120, TimeUnit.SECONDS)).isTrue();
    } finally {
      process.destroyForcibly();
    }
    String stderr = Files.readString(err);
    assertThat(process.exitValue()).as(stderr).isEqualTo(143);
    assertThat(stderr).contains("stopped by SIGTERM after 1500 items");
    assertThat(DedupChild.lineCount(out)).as("the 500 lines in hand were finished, not dropped")
        .isEqualTo(1_500);
  }

  private void killChain(String store, Output output, Input input) throws Exception {
    long seed = Long.getLong("bloomery.seed", System.nanoTime());
    String context = "seed " + seed + " (rerun with -Dbloomery.seed=" + seed + "), " + output
        + ", " + input + ", " + store.replaceAll("\\?.*", "");
    Random random = new Random(seed);
    Path in = dir.resolve("input.txt");
    SequencedSet<String> expected = DedupChild.writeInput(in, LINES, 15_000, seed);

    List<RunResult> runs = new ArrayList<>();
    for (int k = 0; k <= KILLS; k++) {
      String signal = k == KILLS ? null : SIGNALS.get(k % SIGNALS.size());
      long target = 1 + random.nextInt(3 * BATCH);
      runs.add(run(k, store, output, input, in, signal, target, context));
    }

    StringBuilder table = new StringBuilder();
    for (RunResult run : runs) {
      table.append(String.format("%n  run %d: %s while running=%s exit %d, %d lines, stderr ends: %s",
          run.index(), run.signal(), run.killedWhileRunning(), run.exitCode(), run.lines().size(),
          run.stderr().strip().substring(Math.max(0, run.stderr().strip().lastIndexOf('\n') + 1))));
    }
    String figures = context;
    context += table;
    RunResult last = runs.get(runs.size() - 1);
    assertThat(last.exitCode()).as(context + ": the last run completes\n" + last.stderr()).isZero();
    Set<String> union = new HashSet<>();
    long printed = 0;
    for (RunResult run : runs) {
      assertThat(run.lines()).as(context + ": run %d prints each item once, in input order",
          run.index()).doesNotHaveDuplicates().isSubsetOf(expected);
      assertThat(isInInputOrder(run.lines(), expected)).as(context + ": run %d order", run.index())
          .isTrue();
      for (String line : run.lines()) {
        union.add(line);
      }
      printed += run.lines().size();
    }
    assertThat(union).as(context + ": every distinct item is printed at least once (none lost)")
        .hasSameSizeAs(expected).containsAll(expected);

    List<Set<String>> printedBy = runs.stream().map(run -> Set.copyOf(run.lines())).toList();
    long repeats = 0;
    int kills = 0;
    int terms = 0;
    for (RunResult run : runs.subList(0, KILLS)) {
      assertThat(run.killedWhileRunning()).as(context + ": run %d was still running when %s"
          + " arrived", run.index(), run.signal()).isTrue();
      List<String> repeatedLater = run.lines().stream()
          .filter(line -> laterRunsPrint(printedBy, run.index(), line)).toList();
      repeats += repeatedLater.size();
      if (!run.signal().equals("KILL")) {
        terms++;
        assertThat(run.exitCode()).as(context + ": SIG%s exits 128 + its number\n%s",
            run.signal(), run.stderr()).isEqualTo(run.signal().equals("TERM") ? 143 : 130);
        assertThat(run.stderr()).as(context).contains("stopped by SIG" + run.signal());
        assertThat(repeatedLater).as(context + ": a SIG%s finishes its batch: run %d repeats"
            + " nothing", run.signal(), run.index()).isEmpty();
      } else {
        kills++;
        assertThat(run.exitCode()).as(context).isEqualTo(137);
        assertThat(repeatedLater.size()).as(context + ": a SIGKILL repeats at most the new items"
            + " of its one unconfirmed batch (run %d)", run.index()).isLessThanOrEqualTo(BATCH);
        assertThat(repeatedLater).as(context + ": the repeats are the tail of run %d",
            run.index()).isEqualTo(run.lines().subList(run.lines().size() - repeatedLater.size(),
                run.lines().size()));
      }
    }
    assertThat(printed - union.size()).as(context).isEqualTo(repeats);
    System.out.printf("dedup kill chain %s: %d runs (%d SIGKILL, %d SIGTERM/SIGINT, then one to the end),"
            + " %d input lines, %d distinct, %d printed, lost 0, repeats %d%s%n", figures,
        runs.size(), kills, terms, LINES, expected.size(), printed, repeats, table);
  }

  private static boolean laterRunsPrint(List<Set<String>> printedBy, int index, String line) {
    for (Set<String> later : printedBy.subList(index + 1, printedBy.size())) {
      if (later.contains(line)) {
        return true;
      }
    }
    return false;
  }

  private static boolean isInInputOrder(List<String> lines, SequencedSet<String> expected) {
    var it = expected.iterator();
    for (String line : lines) {
      boolean found = false;
      while (it.hasNext()) {
        if (it.next().equals(line)) {
          found = true;
          break;
        }
      }
      if (!found) {
        return false;
      }
    }
    return true;
  }

  /** One child run; with a signal, sends it once the run printed {@code target} new lines. */
  private RunResult run(int k, String store, Output output, Input input, Path in, String signal,
      long target, String context) throws Exception {
    Path out = dir.resolve("run-" + k + ".out");
    Path err = dir.resolve("run-" + k + ".err");
    // The last run only has to finish: a larger batch does it with fewer fsyncs.
    List<String> args = new ArrayList<>(List.of("dedup", "--store", store, "--batch",
        Integer.toString(signal == null ? 5 * BATCH : BATCH), "--expected", "100000"));
    if (input == Input.INPUT_FILE) {
      args.addAll(List.of("--input", in.toString()));
    }
    if (output == Output.OUTPUT_FILE) {
      args.addAll(List.of("--output", out.toString()));
    }
    ProcessBuilder builder = new ProcessBuilder(DedupChild.command(args.toArray(String[]::new)))
        .redirectError(err.toFile());
    builder.redirectInput(input == Input.STDIN_FILE ? ProcessBuilder.Redirect.from(in.toFile())
        : ProcessBuilder.Redirect.from(Path.of("/dev/null").toFile()));
    if (output == Output.STDOUT_FILE) {
      builder.redirectOutput(out.toFile());
    }
    Process process = builder.start();
    ByteArrayOutputStream piped = new ByteArrayOutputStream();
    AtomicLong pipedLines = new AtomicLong();
    Thread reader = null;
    if (output == Output.STDOUT_PIPE) {
      reader = Thread.ofPlatform().daemon().start(() -> drain(process.getInputStream(), piped,
          pipedLines));
    }
    boolean killedWhileRunning = false;
    try {
      if (signal != null) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (process.isAlive() && System.nanoTime() < deadline
            && (output == Output.STDOUT_PIPE ? pipedLines.get() : DedupChild.lineCount(out))
                < target) {
          Thread.sleep(5);
        }
        killedWhileRunning = process.isAlive();
        if (signal.equals("INT") && ignoresSigint(process.pid())) {
          // Started from a background job, the JVM inherited SIGINT as ignored (POSIX: a shell
          // runs background commands that way) and rightly keeps it so; TERM takes the same path.
          signal = "TERM";
        }
        // Through the handle: Process.destroy() would also close our end of the child's stdout,
        // and a reader that goes away loses what the pipe still held (that is `| head`, below).
        switch (signal) {
          case "KILL" -> process.toHandle().destroyForcibly();
          case "TERM" -> process.toHandle().destroy();
          default -> new ProcessBuilder("kill", "-" + signal, Long.toString(process.pid()))
              .inheritIO().start().waitFor();
        }
      }
      assertThat(process.waitFor(180, TimeUnit.SECONDS)).as(context + ": run " + k + " ends")
          .isTrue();
      if (reader != null) {
        reader.join(TimeUnit.SECONDS.toMillis(60));
      }
    } finally {
      process.destroyForcibly(); // never outlives the test
    }
    byte[] bytes;
    synchronized (piped) {
      bytes = output == Output.STDOUT_PIPE ? piped.toByteArray() : Files.readAllBytes(out);
    }
    return new RunResult(k, signal, killedWhileRunning, process.exitValue(),
        DedupChild.completeLines(bytes), Files.readString(err, StandardCharsets.UTF_8));
  }

  /** Whether the process ignores SIGINT (bit 2 of SigIgn in /proc/PID/status). */
  private static boolean ignoresSigint(long pid) throws IOException {
    for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
      if (line.startsWith("SigIgn:")) {
        return (Long.parseLong(line.substring("SigIgn:".length()).strip(), 16) & 2) != 0;
      }
    }
    return false;
  }

  private static void drain(InputStream stdout, ByteArrayOutputStream sink, AtomicLong lines) {
    byte[] buffer = new byte[8192];
    try (stdout) {
      for (int n; (n = stdout.read(buffer)) > 0; ) {
        synchronized (sink) {
          sink.write(buffer, 0, n);
        }
        for (int i = 0; i < n; i++) {
          if (buffer[i] == '\n') {
            lines.incrementAndGet();
          }
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
