package io.bloomery.cluster.shard;

import static io.bloomery.cluster.shard.ShardClient.argv;
import static org.assertj.core.api.Assertions.assertThat;

import io.bloomery.server.resp.Reply;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A leader that steps down because no follower answered within the election timeout may hold the only log that can
 * win the next election: it must stand again within a few election timeouts once a follower is back, or the shard
 * has no leader meanwhile. Real processes on loopback.
 */
@Timeout(300)
class LeaderStepDownIT {
  /** Short, so that the bound below is many election timeouts wide and still far under Ratis's 10 s default wait. */
  private static final long ELECTION_TIMEOUT_MILLIS = 300;

  @TempDir
  Path dir;

  /**
   * Opt-in ({@code -Dcluster.stepdown=true}): it shows a defect that is open. Ratis keeps a leader that stepped
   * down out of elections for its default 10 s; shortening that wait made this pass, but CI runs of the other
   * failover tests then lost progress for minutes, so the wait is back at Ratis's default (docs/CLUSTER.md,
   * "Known defects").
   */
  @Test
  @EnabledIfSystemProperty(named = "cluster.stepdown", matches = "true")
  void aLeaderThatSteppedDownWithTheLongestLogLeadsAgainOnceAFollowerIsBack() throws Exception {
    ShardGroup group = FreePorts.group("step-down", 3);
    try (ReplicaProcesses replicas = new ReplicaProcesses(group, dir, ELECTION_TIMEOUT_MILLIS,
        ShardReplica.Options.DEFAULT_SNAPSHOT_EVERY, ShardReplica.Options.DEFAULT_LOG_SEGMENT_BYTES);
        ShardClient client = new ShardClient(group, Duration.ofSeconds(120))) {
      replicas.startAll();
      replicas.explainFailures(() -> {
        client.write(argv("BF.ADD", "urls", "before"));
        String leader = client.leader();
        List<String> followers = group.peers().keySet().stream().filter(id -> !id.equals(leader)).toList();
        for (String follower : followers) {
          replicas.kill9(follower);
        }
        // The leader appends this write but cannot commit it: its log is now longer than either follower's.
        CompletableFuture<ShardClient.Answer> pending = CompletableFuture.supplyAsync(() -> {
          try {
            return client.write(argv("BF.ADD", "urls", "while-alone"));
          } catch (IOException e) {
            throw new UncheckedIOException(e);
          }
        });
        awaitLine(replicas.log(leader), "Lost leadership on term");
        replicas.start(followers.get(0));
        long back = System.nanoTime();
        ShardClient.Answer answer = pending.get(120, TimeUnit.SECONDS);
        double seconds = (System.nanoTime() - back) / 1e9;
        assertThat(answer.reply()).isEqualTo(new Reply.Bool(true));
        assertThat(seconds).as("seconds from a follower's return to the write's acknowledgement (only the replica "
            + "that stepped down can win: the follower's log is behind)").isLessThan(5.0);
      });
    }
  }

  /** Waits (60 s at most) until {@code log} has a line containing {@code text}. */
  private static void awaitLine(Path log, String text) throws Exception {
    long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
    while (!Files.readString(log).contains(text)) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError(log + " has no line with '" + text + "' after 60 s");
      }
      Thread.sleep(20);
    }
  }
}
