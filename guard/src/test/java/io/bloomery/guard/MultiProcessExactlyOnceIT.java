package io.bloomery.guard;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Exactly once across processes: three JVMs, each with its own guard (own filter, own
 * connections), offer the same items at the same time; each item is reported new by exactly one.
 */
class MultiProcessExactlyOnceIT {
  private static final int ITEMS = 3_000;
  private static final int PROCESSES = 3;
  @TempDir Path directory;

  @Test
  void postgresDecidesExactlyOnceAcrossProcesses() throws Exception {
    int processesThatWon = runWorkers(PostgresCluster.shared().createDatabase());
    assertThat(processesThatWon).as("the processes really raced").isGreaterThan(1);
  }

  @Test
  void sqliteDecidesExactlyOnceAcrossProcesses() throws Exception {
    // SQLite has one writer per database: a process that holds the write lock may finish all its
    // batches while the others back off in the busy handler, so who wins is not asserted; that
    // every item is new exactly once across the processes is.
    runWorkers("sqlite:" + directory.resolve("shared.db"));
  }

  /** Runs the workers and checks exactly-once; returns how many processes won at least one item. */
  private int runWorkers(String store) throws Exception {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    List<Process> processes = new ArrayList<>();
    List<Path> outputs = new ArrayList<>();
    try {
      return raceWorkers(java, store, processes, outputs);
    } finally {
      // A no-op for workers that exited; none outlives a failed test.
      processes.forEach(Process::destroyForcibly);
    }
  }

  private int raceWorkers(String java, String store, List<Process> processes, List<Path> outputs)
      throws Exception {
    for (int p = 0; p < PROCESSES; p++) {
      Path output = directory.resolve("won-" + p + ".txt");
      outputs.add(output);
      processes.add(new ProcessBuilder(java, "-Xmx256m", "-cp",
          System.getProperty("java.class.path"), AddIfAbsentWorker.class.getName(), store,
          Integer.toString(ITEMS), Integer.toString(p), output.toString())
          .redirectErrorStream(true)
          .redirectOutput(directory.resolve("worker-" + p + ".log").toFile())
          .start());
    }
    for (Path output : outputs) { // every guard is open: start them together
      Path ready = Path.of(output + ".ready");
      for (long deadline = System.nanoTime() + 180_000_000_000L; !Files.exists(ready); ) {
        assertThat(System.nanoTime()).as("worker never became ready: %s", ready)
            .isLessThan(deadline);
        assertThat(processes.stream().allMatch(Process::isAlive) || Files.exists(ready))
            .as("a worker died before it was ready").isTrue();
        Thread.sleep(10);
      }
    }
    for (Path output : outputs) {
      Files.createFile(Path.of(output + ".go"));
    }
    for (int p = 0; p < PROCESSES; p++) {
      assertThat(processes.get(p).waitFor(300, TimeUnit.SECONDS)).isTrue();
      assertThat(processes.get(p).exitValue())
          .as("worker %d: %s", p, Files.readString(directory.resolve("worker-" + p + ".log")))
          .isZero();
    }
    Map<String, Integer> wins = new HashMap<>();
    int processesThatWon = 0;
    for (Path output : outputs) {
      List<String> won = Files.readAllLines(output);
      processesThatWon += won.isEmpty() ? 0 : 1;
      won.forEach(item -> wins.merge(item, 1, Integer::sum));
    }
    assertThat(wins).hasSize(ITEMS);
    assertThat(wins.values()).containsOnly(1);
    return processesThatWon;
  }
}
