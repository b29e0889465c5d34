package io.bloomery.cluster.shard;

import static io.bloomery.cluster.shard.ShardClient.argv;
import static org.assertj.core.api.Assertions.assertThat;

import io.bloomery.server.resp.Reply;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A three-replica shard of real processes on loopback: a leader killed with {@code kill -9} loses no acknowledged
 * write, a new leader takes over, and a restarted replica catches up, from the log or from a snapshot. Every wait is
 * on a condition with a generous bound; nothing is timed.
 */
@Timeout(600)
class ShardFailoverIT {
  private static final Duration PATIENCE = Duration.ofSeconds(120);

  @TempDir
  Path dir;

  /** What the test was told was done: the items each key acknowledged, and the acknowledged cuckoo adds. */
  private final Map<String, List<String>> acknowledged = new LinkedHashMap<>();
  private long cuckooAdds;
  private long lastIndex;

  private void write(ShardClient client, int i) throws IOException {
    String key = "urls{" + (i % 3) + "}";
    String item = "https://example.com/" + i;
    ShardClient.Answer a = client.write(argv("BF.ADD", key, item));
    assertThat(a.reply()).as("BF.ADD %s %s", key, item).isInstanceOf(Reply.Bool.class);
    acknowledged.computeIfAbsent(key, k -> new ArrayList<>()).add(item);
    lastIndex = Math.max(lastIndex, a.logIndex());
    if (i % 4 == 0) {
      ShardClient.Answer c = client.write(argv("CF.ADD", "counted", "same-item"));
      assertThat(c.reply()).isEqualTo(new Reply.Bool(true));
      cuckooAdds++;
      lastIndex = Math.max(lastIndex, c.logIndex());
    }
  }

  /** Waits until {@code replica} has applied every acknowledged write and shows each of them. */
  private void assertHoldsEverything(ShardClient client, ReplicaProcesses replicas, String replica) throws Exception {
    long deadline = System.nanoTime() + PATIENCE.toNanos();
    while (true) {
      try {
        for (Map.Entry<String, List<String>> e : acknowledged.entrySet()) {
          List<String> args = new ArrayList<>(List.of("BF.MEXISTS", e.getKey()));
          args.addAll(e.getValue());
          Reply r = client.readAt(replica, lastIndex, argv(args.toArray(String[]::new))).reply();
          assertThat(((Reply.Array) r).elements()).as("%s on %s", e.getKey(), replica)
              .hasSize(e.getValue().size()).containsOnly(new Reply.Bool(true));
        }
        assertThat(client.readAt(replica, lastIndex, argv("CF.COUNT", "counted", "same-item")).reply())
            .as("acknowledged CF.ADDs on %s, each applied once", replica).isEqualTo(new Reply.Int(cuckooAdds));
        return;
      } catch (IOException notYet) { // the replica is starting, or has not applied lastIndex yet
        if (System.nanoTime() > deadline) {
          throw new AssertionError(replica + " did not catch up to index " + lastIndex + " in " + PATIENCE, notYet);
        }
        Thread.sleep(200);
      }
    }
  }

  /** A test's steps over a started shard. */
  private interface OnShard {
    void run(ShardGroup group, ReplicaProcesses replicas, ShardClient client) throws Exception;
  }

  /** Starts a three-replica shard of processes and runs {@code scenario}; a failure carries the replicas' logs. */
  private void onShard(String shard, long snapshotEvery, long logSegmentBytes, OnShard scenario) throws Exception {
    ShardGroup group = FreePorts.group(shard, 3);
    try (ReplicaProcesses replicas = new ReplicaProcesses(group, dir, 1000, snapshotEvery, logSegmentBytes);
        ShardClient client = new ShardClient(group, PATIENCE)) {
      replicas.startAll();
      replicas.explainFailures(() -> scenario.run(group, replicas, client));
    }
  }

  @Test
  void killingTheLeaderLosesNoAcknowledgedWrite() throws Exception {
    onShard("failover", ShardReplica.Options.DEFAULT_SNAPSHOT_EVERY, ShardReplica.Options.DEFAULT_LOG_SEGMENT_BYTES,
        this::failoverScenario);
  }

  private void failoverScenario(ShardGroup group, ReplicaProcesses replicas, ShardClient client) throws Exception {
    for (int i = 0; i < 120; i++) {
      write(client, i);
    }
    String leader = client.leader();
    assertThat(leader).isIn(group.peers().keySet());
    replicas.kill9(leader);
    for (int i = 120; i < 240; i++) {
      write(client, i);
    }
    String successor = client.leader();
    assertThat(successor).as("a new leader took the writes after the kill").isNotEqualTo(leader)
        .isIn(group.peers().keySet());
    for (String id : group.peers().keySet()) {
      if (!id.equals(leader)) {
        assertHoldsEverything(client, replicas, id);
      }
    }
    replicas.start(leader);
    for (int i = 240; i < 260; i++) {
      write(client, i);
    }
    assertHoldsEverything(client, replicas, leader);
  }

  @Test
  void aReplicaThatMissedPurgedLogCatchesUpFromASnapshot() throws Exception {
    onShard("snapshots", 20, 4096, this::snapshotScenario);
  }

  private void snapshotScenario(ShardGroup group, ReplicaProcesses replicas, ShardClient client) throws Exception {
    for (int i = 0; i < 4; i++) {
      write(client, i);
    }
    String leader = client.leader();
    String follower = group.peers().keySet().stream().filter(id -> !id.equals(leader)).findFirst().orElseThrow();
    replicas.kill9(follower);
    for (int i = 4; i < 300; i++) {
      write(client, i);
    }
    replicas.start(follower);
    assertHoldsEverything(client, replicas, follower);
    assertThat(Files.readString(replicas.log(follower)))
        .as("the follower was sent a snapshot: the log it missed was purged")
        .contains(follower + ": loaded snapshot");
    for (String id : group.peers().keySet()) {
      assertHoldsEverything(client, replicas, id);
    }
  }
}
