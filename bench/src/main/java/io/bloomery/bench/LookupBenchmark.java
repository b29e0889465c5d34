package io.bloomery.bench;

import com.dynatrace.hash4j.hashing.Hasher64;
import com.dynatrace.hash4j.hashing.Hashing;
import com.google.common.hash.BloomFilter;
import com.google.common.hash.Funnels;
import io.bloomery.blocked.BlockedBloomFilter;
import io.bloomery.cli.SyntheticUrls;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.BenchmarkParams;

/**
 * JMH lookups on the crawler workload (synthetic ~80-byte URLs, {@code keys} members, 1% target):
 * Guava, Bloomery's blocked filter single and batched, XXH3 alone, and the physical floor (XXH3 plus
 * one independent random 64-byte line read). Each invocation queries {@value #BATCH} keys; scores are
 * ns per key. Members are indexes [0, keys); queries are known non-members (indexes keys..) or members
 * drawn with seed 42, cycled.
 *
 * <p>Run alone: {@code java -jar bench/target/benchmarks.jar LookupBenchmark -p keys=10000000}; the
 * whole suite with a ratio table: {@code bench/run}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(value = 1, jvmArgsAppend = {"-Xmx3g", "-Xms3g"})
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 1)
public class LookupBenchmark {
  static final int BATCH = 1024;
  private static final int QUERIES = 1 << 20;
  private static final Hasher64 XXH3 = Hashing.xxh3_64();

  @Param("10000000")
  public long keys;

  BloomFilter<CharSequence> guava;
  BlockedBloomFilter blocked;
  long[] floorLines;
  String[] absentStrings;
  String[] presentStrings;
  byte[][] absent;
  byte[][] present;
  private final boolean[] out = new boolean[BATCH];
  private final byte[][] window = new byte[BATCH][];
  int cursor;

  /** Builds only what the running benchmark needs (Guava's build is the slow part). */
  @Setup(Level.Trial)
  public void setUp(BenchmarkParams params) {
    String method = params == null ? "all" : params.getBenchmark();
    boolean all = method.equals("all");
    setUp(all || method.contains("guava"), all || method.contains("blocked"), all || method.contains("floor"));
  }

  void setUp(boolean withGuava, boolean withBlocked, boolean withFloor) {
    SyntheticUrls urls = new SyntheticUrls(SyntheticUrls.BENCH_SEED);
    int queries = (int) Math.min(QUERIES, Math.max(BATCH, keys));
    queries = queries / BATCH * BATCH;
    if (withGuava) {
      guava = BloomFilter.create(Funnels.stringFunnel(StandardCharsets.UTF_8), keys, 0.01);
    }
    blocked = BlockedBloomFilter.create(keys, 0.01);
    if (withGuava || withBlocked) {
      byte[][] chunk = new byte[(int) Math.min(1 << 20, keys)][];
      for (long start = 0; start < keys; start += chunk.length) {
        int size = (int) Math.min(chunk.length, keys - start);
        for (int i = 0; i < size; i++) {
          String url = urls.url(start + i);
          chunk[i] = url.getBytes(StandardCharsets.UTF_8);
          if (withGuava) {
            guava.put(url);
          }
        }
        if (withBlocked) {
          blocked.addAll(size == chunk.length ? chunk : java.util.Arrays.copyOf(chunk, size));
        }
      }
    }
    if (withFloor) {
      floorLines = new long[Math.toIntExact(blocked.bitSize() / 64)];
    }
    SyntheticUrls.Probes probes = urls.probes(keys, queries);
    absentStrings = probes.absentStrings();
    presentStrings = probes.presentStrings();
    absent = probes.absent();
    present = probes.present();
  }

  private int next() {
    int start = cursor;
    cursor = (cursor + BATCH) % absent.length;
    return start;
  }

  @Benchmark
  @OperationsPerInvocation(BATCH)
  public int guavaAbsent() {
    int start = next();
    int maybe = 0;
    for (int i = start; i < start + BATCH; i++) {
      maybe += guava.mightContain(absentStrings[i]) ? 1 : 0;
    }
    return maybe;
  }

  @Benchmark
  @OperationsPerInvocation(BATCH)
  public int guavaPresent() {
    int start = next();
    int maybe = 0;
    for (int i = start; i < start + BATCH; i++) {
      maybe += guava.mightContain(presentStrings[i]) ? 1 : 0;
    }
    return maybe;
  }

  @Benchmark
  @OperationsPerInvocation(BATCH)
  public int blockedSingleAbsent() {
    int start = next();
    int maybe = 0;
    for (int i = start; i < start + BATCH; i++) {
      maybe += blocked.mightContain(absent[i]) ? 1 : 0;
    }
    return maybe;
  }

  @Benchmark
  @OperationsPerInvocation(BATCH)
  public int blockedSinglePresent() {
    int start = next();
    int maybe = 0;
    for (int i = start; i < start + BATCH; i++) {
      maybe += blocked.mightContain(present[i]) ? 1 : 0;
    }
    return maybe;
  }

  @Benchmark
  @OperationsPerInvocation(BATCH)
  public int blockedBatchedAbsent() {
    System.arraycopy(absent, next(), window, 0, BATCH);
    return blocked.mightContainAll(window, out);
  }

  @Benchmark
  @OperationsPerInvocation(BATCH)
  public int blockedBatchedPresent() {
    System.arraycopy(present, next(), window, 0, BATCH);
    return blocked.mightContainAll(window, out);
  }

  @Benchmark
  @OperationsPerInvocation(BATCH)
  public long hashXxh3() {
    int start = next();
    long sum = 0;
    for (int i = start; i < start + BATCH; i++) {
      sum += XXH3.hashBytesToLong(absent[i]);
    }
    return sum;
  }

  @Benchmark
  @OperationsPerInvocation(BATCH)
  public long floor() {
    int start = next();
    int lines = floorLines.length / 8;
    long sum = 0;
    for (int i = start; i < start + BATCH; i++) {
      long hash = XXH3.hashBytesToLong(absent[i]);
      sum += floorLines[(int) (((hash >>> 32) * lines) >>> 32) << 3];
    }
    return sum;
  }
}
