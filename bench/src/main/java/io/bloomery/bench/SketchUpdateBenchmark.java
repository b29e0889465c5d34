package io.bloomery.bench;

import io.bloomery.server.keyspace.StateSeededDecay;
import io.bloomery.sketch.CountMinSketch;
import io.bloomery.sketch.TopK;
import java.nio.charset.StandardCharsets;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * One sketch update as the server's {@code TOPK.ADD} and {@code CMS.INCRBY} run it, without the server: the keys and
 * items of bench/pinned-vs-redisbloom ({@code TOPK.RESERVE topk 50 2000 7 0.925} with the server's journal-replayable
 * decay, {@code CMS.INITBYPROB cms 0.001 0.01}; items are redis-benchmark's {@code __rand_int__}, 12 digits drawn
 * from 10,000,000). The sketches are filled by a warm-up of 1M updates first, so the top-k heap is full and most
 * buckets hold another item, as in a server that has run for a while. Scores are ns per update.
 *
 * <p>Run: {@code java -jar bench/target/benchmarks.jar SketchUpdateBenchmark} (docs/BENCHMARKS.md, server section).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(value = 1)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class SketchUpdateBenchmark {
  private static final int ITEMS = 1 << 20;

  private final byte[][] items = new byte[ITEMS][];
  private TopK topK;
  private CountMinSketch cms;
  private int next;

  @Setup
  public void setUp() {
    SplittableRandom random = new SplittableRandom(42);
    for (int i = 0; i < ITEMS; i++) {
      items[i] = String.format("%012d", random.nextInt(10_000_000)).getBytes(StandardCharsets.US_ASCII);
    }
    topK = TopK.reserve(50, 2000, 7, 0.925, StateSeededDecay.INSTANCE);
    cms = CountMinSketch.initByProbability(0.001, 0.01);
    for (byte[] item : items) {
      topK.add(item);
      cms.incrementBy(item, 1);
    }
  }

  private byte[] nextItem() {
    return items[next++ & (ITEMS - 1)];
  }

  @Benchmark
  public byte[] topKAdd() {
    return topK.add(nextItem());
  }

  @Benchmark
  public long cmsIncrementBy() {
    return cms.incrementBy(nextItem(), 1);
  }
}
