package io.bloomery.cluster.shard;

import static io.bloomery.cluster.shard.ShardClient.argv;
import static org.assertj.core.api.Assertions.assertThat;

import io.bloomery.cluster.chaos.History;
import io.bloomery.cluster.chaos.HistoryChecker;
import io.bloomery.cluster.chaos.ShardWorkload;
import io.bloomery.server.resp.Reply;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A three-replica shard of real processes under four writers and two readers ({@link ShardWorkload}) while its
 * leader is killed with {@code kill -9} again and again, or stopped with {@code kill -STOP}; afterwards every
 * replica holds every acknowledged write, counts are exact, and the whole history passes {@link HistoryChecker}.
 *
 * <p>{@code -Dchaos.kills=N} (5 by default) sets the number of kills; {@code -Dchaos.seed=S} replays a run's
 * random moments (every failure names its seed). Every wait is on a condition with a generous bound; nothing is
 * timed.
 */
@Timeout(3600)
class ShardChaosIT {
  private static final Duration PATIENCE = Duration.ofSeconds(120);
  /** Each client retries a request this long before the operation is recorded as timed out. */
  private static final Duration RETRY_FOR = Duration.ofSeconds(20);
  private static final long SEED = Long.getLong("chaos.seed", System.nanoTime());
  private static final int KILLS = Integer.getInteger("chaos.kills", 5);
  /** The replicas run with the election timeout they have by default. */
  private static final long ELECTION_TIMEOUT_MILLIS = ShardReplica.Options.DEFAULT_ELECTION_TIMEOUT.toMillis();

  @TempDir
  Path dir;

  private final History history = new History();

  /** The leader as a linearizable read finds it. */
  private static String leader(ShardClient client) throws IOException {
    client.read(argv("BF.EXISTS", "bf:0", "probe"));
    return client.leader();
  }

  /**
   * Stops the workload, commits a last write and checks, at its index, every replica's keys and the history.
   */
  private void finish(ShardGroup group, ShardWorkload workload, ShardClient client) throws Exception {
    workload.stop();
    long index = client.write(argv("BF.ADD", "fence", "last")).logIndex();
    workload.readEverythingAt(client, List.copyOf(group.peers().keySet()), index, PATIENCE);
    HistoryChecker.assertValid(history, "seed " + SEED);
  }

  /** Acknowledged writes that completed between {@code from} and {@code to} on the history's clock. */
  private long acknowledgedBetween(long from, long to) {
    return history.ops().stream().filter(op -> op.read() == null && op.ok())
        .filter(op -> op.completedAt() > from && op.completedAt() < to).count();
  }

  @Test
  void killingTheLeaderAgainAndAgainLosesNothingAndAppliesNothingTwice() throws Exception {
    ShardGroup group = FreePorts.group("chaos-kills", 3);
    // Snapshots every 200 entries, of a keyspace with a 7 MB filter in it: some kills land while one is written.
    try (ReplicaProcesses replicas = new ReplicaProcesses(group, dir, ELECTION_TIMEOUT_MILLIS, 200, 64 << 10);
        ShardClient client = new ShardClient(group, PATIENCE);
        ShardWorkload workload = new ShardWorkload(group, history, SEED, RETRY_FOR)) {
      replicas.startAll();
      replicas.explainFailures(() -> {
        try {
          killLoop(group, replicas, client, workload);
        } catch (Exception | AssertionError e) {
          throw new AssertionError("seed " + SEED + " (-Dchaos.seed=" + SEED + " replays its moments): "
              + HistoryChecker.summary(history), e);
        }
      });
    }
  }

  private void killLoop(ShardGroup group, ReplicaProcesses replicas, ShardClient client, ShardWorkload workload)
      throws Exception {
    Random random = new Random(SEED);
    assertThat(client.write(argv("BF.RESERVE", "large", "0.0001", "3000000")).reply())
        .isEqualTo(new Reply.Simple("OK"));
    workload.prepare(client);
    workload.start(4, 2);
    List<Long> kills = new ArrayList<>();
    int duringSnapshot = 0;
    for (int k = 0; k < KILLS; k++) {
      Thread.sleep(300 + random.nextInt(1200));
      String leader = leader(client);
      if (k % 3 == 1 && snapshotStarts(replicas.dir(leader))) {
        duringSnapshot++;
      }
      kills.add(history.now());
      replicas.kill9(leader);
      Thread.sleep(200 + random.nextInt(1800));
      replicas.start(leader);
    }
    Thread.sleep(1000);
    kills.add(history.now());
    finish(group, workload, client);
    for (int k = 0; k < KILLS; k++) {
      assertThat(acknowledgedBetween(kills.get(k), kills.get(k + 1)))
          .as("writes acknowledged between kill %d and the next", k + 1).isPositive();
    }
    if (KILLS >= 2) {
      assertThat(duringSnapshot).as("kills while the leader wrote a snapshot").isPositive();
    }
    System.out.printf("ShardChaosIT: %d kills (%d while a snapshot was written), seed %d: %s%n", KILLS,
        duringSnapshot, SEED, HistoryChecker.summary(history));
  }

  /**
   * Waits (30 s at most) until a snapshot file the leader did not have before is being written under {@code dir},
   * and says whether one was.
   */
  private static boolean snapshotStarts(Path dir) throws Exception {
    Set<Path> before = snapshotsInProgress(dir);
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (System.nanoTime() < deadline) {
      Set<Path> now = snapshotsInProgress(dir);
      now.removeAll(before);
      if (!now.isEmpty()) {
        return true;
      }
      Thread.sleep(1);
    }
    return false;
  }

  /** The snapshot files being written under {@code dir}: their temporary files ({@code .snapshot.*.tmp}). */
  private static Set<Path> snapshotsInProgress(Path dir) throws IOException {
    try (Stream<Path> files = Files.walk(dir)) {
      return files.filter(f -> {
        String name = f.getFileName().toString();
        return name.startsWith(".snapshot.") && name.endsWith(".tmp");
      }).collect(Collectors.toCollection(HashSet::new));
    } catch (java.io.UncheckedIOException e) { // a file renamed while the walk listed it
      return new HashSet<>();
    }
  }

  /**
   * A leader stopped with SIGSTOP for 10 s while the workload runs: another replica takes over, writes are
   * acknowledged meanwhile, and the stopped one, continued, acknowledges nothing it did not commit and catches up.
   */
  @Test
  void aPausedLeaderAcknowledgesNothingAfterItLostLeadershipAndCatchesUp() throws Exception {
    ShardGroup group = FreePorts.group("chaos-pause", 3);
    try (ReplicaProcesses replicas = new ReplicaProcesses(group, dir, ELECTION_TIMEOUT_MILLIS,
        ShardReplica.Options.DEFAULT_SNAPSHOT_EVERY, ShardReplica.Options.DEFAULT_LOG_SEGMENT_BYTES);
        ShardClient client = new ShardClient(group, PATIENCE);
        ShardWorkload workload = new ShardWorkload(group, history, SEED, RETRY_FOR)) {
      replicas.startAll();
      replicas.explainFailures(() -> {
        workload.prepare(client);
        workload.start(4, 2);
        Thread.sleep(2000);
        String paused = leader(client);
        long pausedAt = history.now();
        replicas.pause(paused);
        Thread.sleep(10_000);
        String successor = leader(client);
        long resumedAt = history.now();
        replicas.resume(paused);
        assertThat(successor).as("the leader while %s was stopped", paused).isNotEqualTo(paused);
        assertThat(acknowledgedBetween(pausedAt, resumedAt)).as("writes acknowledged while %s was stopped", paused)
            .isPositive();
        Thread.sleep(3000);
        finish(group, workload, client);
        System.out.printf("ShardChaosIT: %s stopped for 10 s, %s led meanwhile, seed %d: %s%n", paused, successor,
            SEED, HistoryChecker.summary(history));
      });
    }
  }
}
