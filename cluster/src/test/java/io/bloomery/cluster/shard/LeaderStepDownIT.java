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
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A leader that steps down because no follower answered within the election timeout may hold the only log that can
 * win the next election (an entry it appended alone): once a follower is back it must stand again and commit that
 * entry, acknowledged once, rather than leave the shard without a leader. Real processes on loopback. How long the
 * shard is without a leader meanwhile is a figure, not a test condition: the test prints it.
 */
@Timeout(300)
class LeaderStepDownIT {
  private static final long ELECTION_TIMEOUT_MILLIS = 300;

  @TempDir
  Path dir;

  @Test
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
            return client.write(argv("CF.ADD", "counted", "while-alone"));
          } catch (IOException e) {
            throw new UncheckedIOException(e);
          }
        });
        awaitLine(replicas.log(leader), "Lost leadership on term");
        replicas.start(followers.get(0));
        long back = System.nanoTime();
        ShardClient.Answer answer = pending.get(120, TimeUnit.SECONDS);
        System.out.printf("step-down: %.2f s from the follower's return to the acknowledgement%n",
            (System.nanoTime() - back) / 1e9);
        assertThat(answer.reply()).isEqualTo(new Reply.Bool(true));
        assertThat(client.leader()).as("only the replica that stepped down holds the pending entry, so it won")
            .isEqualTo(leader);
        assertThat(client.read(argv("CF.COUNT", "counted", "while-alone")).reply())
            .as("the write acknowledged after the step-down, applied once").isEqualTo(new Reply.Int(1));
        assertThat(client.read(argv("BF.EXISTS", "urls", "before")).reply()).isEqualTo(new Reply.Bool(true));
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
