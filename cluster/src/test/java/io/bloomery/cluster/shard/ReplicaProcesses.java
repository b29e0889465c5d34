package io.bloomery.cluster.shard;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The replicas of one test shard as real child JVMs ({@link ReplicaMain} on this test JVM's class path), each with
 * its own directory and a log file that collects its stderr across restarts: so that a kill is a real
 * {@code kill -9} of a process, and a restart recovers from what that process left on disk.
 */
final class ReplicaProcesses implements AutoCloseable {
  private final ShardGroup group;
  private final Path root;
  private final long electionTimeoutMillis;
  private final long snapshotEvery;
  private final long logSegmentBytes;
  private final Map<String, Process> running = new HashMap<>();

  ReplicaProcesses(ShardGroup group, Path root, long electionTimeoutMillis, long snapshotEvery,
      long logSegmentBytes) {
    this.logSegmentBytes = logSegmentBytes;
    this.group = group;
    this.root = root;
    this.electionTimeoutMillis = electionTimeoutMillis;
    this.snapshotEvery = snapshotEvery;
  }

  /**
   * Starts every replica and waits (120 s at most) until the group is formed: every replica holds the group's first
   * committed entry. Until then a replica's log is empty, and Ratis counts no vote from an empty log once the group
   * has committed anything (so that a replica whose disk was wiped cannot help elect a leader that lacks acknowledged
   * writes): were the leader to die before the last replica received anything, the other two could elect no one.
   */
  void startAll() throws Exception {
    for (String id : group.peers().keySet()) {
      start(id);
    }
    explainFailures(this::awaitFormed);
  }

  private void awaitFormed() throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
    try (ShardClient client = new ShardClient(group, Duration.ofSeconds(120))) {
      for (String id : group.peers().keySet()) {
        while (true) {
          try {
            client.readAt(id, 0, ShardClient.argv("EXISTS", "formed"));
            break;
          } catch (IOException notYet) { // no leader yet, or this replica has not committed index 0
            if (System.nanoTime() > deadline) {
              throw new AssertionError("replica " + id + " holds no committed entry after 120 s", notYet);
            }
            Thread.sleep(50);
          }
        }
      }
    }
  }

  /** Starts replica {@code id} on its directory and waits (60 s at most) for its serving line. */
  void start(String id) throws Exception {
    if (running.containsKey(id)) {
      throw new IllegalStateException(id + " is running");
    }
    StringBuilder peers = new StringBuilder();
    group.peers().forEach((peer, address) -> peers.append(peers.isEmpty() ? "" : ",").append(peer).append('=')
        .append(address.getHostString()).append(':').append(address.getPort()));
    List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-Xmx256m", "-XX:+UseSerialGC", "-cp", System.getProperty("java.class.path"), ReplicaMain.class.getName(),
        "--shard", group.shard(), "--id", id, "--peers", peers.toString(), "--dir", dir(id).toString(),
        "--election-timeout-ms", Long.toString(electionTimeoutMillis), "--snapshot-every", Long.toString(snapshotEvery),
        "--log-segment-bytes", Long.toString(logSegmentBytes)));
    Process process = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.appendTo(log(id).toFile()))
        .start();
    CompletableFuture<Void> serving = new CompletableFuture<>();
    Thread reader = new Thread(() -> {
      try (BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(),
          StandardCharsets.UTF_8))) {
        for (String line; (line = out.readLine()) != null; ) {
          if (line.startsWith("Replica " + id + " of shard ")) {
            serving.complete(null);
          }
        }
      } catch (IOException e) {
        // the process died; the future fails below or completed already
      }
      serving.completeExceptionally(new IllegalStateException("replica " + id + " exited before it served"));
    }, "replica-" + id + "-stdout");
    reader.setDaemon(true);
    reader.start();
    try {
      serving.get(60, TimeUnit.SECONDS);
    } catch (Exception e) {
      process.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
      throw new AssertionError("replica " + id + " did not start:\n" + Files.readString(log(id)), e);
    }
    running.put(id, process);
  }

  /** Kills replica {@code id} with SIGKILL and waits for it to be gone. */
  void kill9(String id) throws InterruptedException {
    Process p = running.remove(id);
    if (p == null) {
      throw new IllegalStateException(id + " is not running");
    }
    p.destroyForcibly();
    if (!p.waitFor(30, TimeUnit.SECONDS)) {
      throw new IllegalStateException(id + " survived SIGKILL for 30 s");
    }
  }

  /** Stops replica {@code id} with SIGSTOP: a paused process, as a long GC pause or a partition looks to the others. */
  void pause(String id) throws Exception {
    signal(id, "STOP");
  }

  /** Lets replica {@code id} run again after {@link #pause} (SIGCONT). */
  void resume(String id) throws Exception {
    signal(id, "CONT");
  }

  private void signal(String id, String signal) throws Exception {
    Process p = running.get(id);
    if (p == null) {
      throw new IllegalStateException(id + " is not running");
    }
    Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(p.pid())).inheritIO().start();
    if (!kill.waitFor(30, TimeUnit.SECONDS) || kill.exitValue() != 0) {
      throw new IllegalStateException("kill -" + signal + " " + p.pid() + " failed");
    }
  }

  /** The directory replica {@code id} keeps its log and snapshots in. */
  Path dir(String id) {
    return root.resolve(id);
  }

  /** The file replica {@code id}'s stderr goes to. */
  Path log(String id) {
    return root.resolve(id + ".log");
  }

  /**
   * For a failure message: replica {@code id}'s last 20 role and leader changes (what a stalled election shows), the
   * first three errors in its log with the 15 lines after each (their exception and stack), then its last 10 lines.
   */
  String logSummary(String id) throws IOException {
    List<String> lines = Files.readAllLines(log(id), StandardCharsets.UTF_8);
    StringBuilder out = new StringBuilder();
    List<String> changes = lines.stream()
        .filter(l -> l.contains("changes role") || l.contains("change Leader") || l.contains("shutdown"))
        .toList();
    changes.subList(Math.max(0, changes.size() - 20), changes.size()).forEach(l -> out.append(l).append('\n'));
    out.append("...\n");
    int errors = 0;
    for (int i = 0; i < lines.size() && errors < 3; i++) {
      if (lines.get(i).contains(" ERROR ")) {
        errors++;
        lines.subList(i, Math.min(lines.size(), i + 16)).forEach(l -> out.append(l).append('\n'));
      }
    }
    out.append("...\n");
    lines.subList(Math.max(0, lines.size() - 10), lines.size()).forEach(l -> out.append(l).append('\n'));
    return out.toString();
  }

  /** A test body that may throw. */
  interface Scenario {
    void run() throws Exception;
  }

  /** Runs {@code scenario}; if it fails, the failure carries every replica's {@link #logSummary}. */
  void explainFailures(Scenario scenario) throws Exception {
    try {
      scenario.run();
    } catch (Exception | AssertionError e) {
      StringBuilder logs = new StringBuilder("replica logs:");
      for (String id : group.peers().keySet()) {
        logs.append("\n=== ").append(id).append(" (").append(running.containsKey(id) ? "running" : "not running")
            .append(")\n").append(logSummary(id));
      }
      throw new AssertionError(logs.toString(), e);
    }
  }

  @Override
  public void close() throws InterruptedException {
    for (String id : List.copyOf(running.keySet())) {
      kill9(id);
    }
  }
}
