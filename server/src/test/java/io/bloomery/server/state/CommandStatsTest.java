package io.bloomery.server.state;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The per-command counters: each latency lands in the power-of-two bucket whose bound holds it, the histogram's
 * count is the sum of its buckets, INFO's figures follow Redis's meaning and are cleared by RESETSTAT while the
 * /metrics ones keep counting.
 */
class CommandStatsTest {

  @Test
  void aLatencyLandsInTheSmallestBucketWhoseBoundHoldsIt() {
    assertThat(CommandStats.bucket(0)).isZero();
    assertThat(CommandStats.bucket(1_000)).isZero(); // exactly 1 µs: le=1e-6
    assertThat(CommandStats.bucket(1_001)).isEqualTo(1);
    assertThat(CommandStats.bucket(2_000)).isEqualTo(1);
    assertThat(CommandStats.bucket(2_001)).isEqualTo(2);
    assertThat(CommandStats.bucket(4_000)).isEqualTo(2);
    assertThat(CommandStats.bucket(4_001)).isEqualTo(3);
    long top = (1L << (CommandStats.FINITE_BUCKETS - 1)) * 1_000; // the largest finite bound, in ns
    assertThat(CommandStats.bucket(top)).isEqualTo(CommandStats.FINITE_BUCKETS - 1);
    assertThat(CommandStats.bucket(top + 1)).isEqualTo(CommandStats.FINITE_BUCKETS);
    assertThat(CommandStats.bucket(Long.MAX_VALUE)).isEqualTo(CommandStats.FINITE_BUCKETS);
    for (int i = 0; i < CommandStats.FINITE_BUCKETS; i++) {
      long boundNanos = Math.round(CommandStats.bucketUpperBoundSeconds(i) * 1e9);
      assertThat(CommandStats.bucket(boundNanos)).as("bound of bucket %d", i).isEqualTo(i);
      assertThat(CommandStats.bucket(boundNanos + 1)).as("just above bucket %d", i).isEqualTo(i + 1);
    }
  }

  @Test
  void infoAndMetricsCountWhatTheyPromiseAndResetClearsOnlyInfo() {
    CommandStats stats = new CommandStats();
    stats.executed("bf.add", 1_500, false);
    stats.executed("bf.add", 3_000_000, true);
    stats.rejected("bf.add", 0);
    stats.rejected("unknown", 0);

    Map<String, CommandStats.Latency> metrics = stats.latencies();
    CommandStats.Latency add = metrics.get("bf.add");
    assertThat(add.count()).isEqualTo(3);
    assertThat(add.errors()).isEqualTo(2);
    assertThat(add.buckets()[0]).isEqualTo(1); // the rejection, at 0 ns
    assertThat(add.buckets()[1]).isEqualTo(1); // 1.5 µs
    assertThat(add.buckets()[12]).isEqualTo(1); // 3 ms: (2048, 4096] µs
    assertThat(add.sumSeconds()).isEqualTo(3_001_500 / 1e9);
    assertThat(metrics.get("unknown").count()).isEqualTo(1);
    assertThat(metrics.get("unknown").errors()).isEqualTo(1);

    assertThat(stats.infoFields()).containsOnlyKeys("cmdstat_bf.add").containsEntry("cmdstat_bf.add",
        "calls=2,usec=3001,usec_per_call=1500.50,rejected_calls=1,failed_calls=1");

    stats.reset();
    assertThat(stats.infoFields()).isEmpty();
    assertThat(stats.latencies().get("bf.add").count()).isEqualTo(3);
    stats.executed("bf.add", 10, false);
    assertThat(stats.infoFields()).containsEntry("cmdstat_bf.add",
        "calls=1,usec=0,usec_per_call=0.00,rejected_calls=0,failed_calls=0");
    assertThat(stats.latencies().get("bf.add").count()).isEqualTo(4);
  }

  /**
   * Each thread records into a shard of its own: the sums over threads are exact once they are done (their shards then
   * folded into one), and a reset from yet another thread clears INFO's figures of every shard while /metrics keeps
   * them.
   */
  @Test
  void threadsRecordIntoTheirOwnShardsAndTheSumsAreExact() throws InterruptedException {
    CommandStats stats = new CommandStats();
    ServerStats server = new ServerStats();
    List<Thread> threads = new ArrayList<>();
    for (int t = 0; t < 4; t++) {
      threads.add(Thread.ofPlatform().start(() -> {
        for (int i = 0; i < 10_000; i++) {
          stats.executed("bf.add", 2_000, i % 10 == 0);
          server.commandsProcessed.increment();
        }
        stats.rejected("bf.add", 0);
      }));
    }
    for (Thread t : threads) {
      t.join();
    }
    assertThat(server.commandsProcessed.sum()).isEqualTo(40_000);
    assertThat(server.commandsProcessed.sum()).as("an ended thread's cell is folded in once").isEqualTo(40_000);
    assertThat(stats.infoFields()).containsEntry("cmdstat_bf.add",
        "calls=40000,usec=80000,usec_per_call=2.00,rejected_calls=4,failed_calls=4000");
    assertThat(stats.infoFields()).as("the ended threads' shards are folded in once").containsEntry("cmdstat_bf.add",
        "calls=40000,usec=80000,usec_per_call=2.00,rejected_calls=4,failed_calls=4000");
    CommandStats.Latency add = stats.latencies().get("bf.add");
    assertThat(add.count()).isEqualTo(40_004);
    assertThat(add.buckets()[1]).isEqualTo(40_000);
    assertThat(add.errors()).isEqualTo(4_004);

    stats.reset();
    assertThat(stats.infoFields()).isEmpty();
    Thread.ofPlatform().start(() -> stats.executed("bf.add", 5_000, false)).join();
    stats.executed("bf.exists", 1_000, false);
    assertThat(stats.infoFields()).containsOnlyKeys("cmdstat_bf.add", "cmdstat_bf.exists")
        .containsEntry("cmdstat_bf.add", "calls=1,usec=5,usec_per_call=5.00,rejected_calls=0,failed_calls=0");
    assertThat(stats.latencies().get("bf.add").count()).isEqualTo(40_005);
  }

  /** While a read's commands run back to back each starts at the previous one's end; outside a read, at the clock. */
  @Test
  void chainedCommandsStartWhereThePreviousOneEnded() {
    ClientState client = new ClientState(1, "a", "b", System.currentTimeMillis(), true);
    client.chaining(true);
    client.commandEnded(42);
    assertThat(client.commandStartNanos()).isEqualTo(42);
    client.chaining(false);
    long before = System.nanoTime();
    assertThat(client.commandStartNanos()).isGreaterThanOrEqualTo(before);
    client.commandEnded(7);
    assertThat(client.commandStartNanos()).as("not chaining: the end is not kept").isGreaterThanOrEqualTo(before);
    long wallBefore = System.currentTimeMillis();
    client.touched("bf.add", System.nanoTime());
    long wallAfter = System.currentTimeMillis();
    assertThat(client.lastCommand()).isEqualTo("bf.add");
    // the wall clock at creation plus the monotonic time since: the command's wall time, up to the two clocks' drift
    // (bounded by the clocks read around the call, so a pause of the test thread after it cannot fail this)
    assertThat(client.lastInteractionMillis()).isBetween(wallBefore - 1_000, wallAfter + 1_000);
  }
}
