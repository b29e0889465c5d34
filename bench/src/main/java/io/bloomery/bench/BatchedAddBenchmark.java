package io.bloomery.bench;

import io.bloomery.scalable.ScalableBloomFilter;
import java.nio.charset.StandardCharsets;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The server's {@code BF.MADD} of 100 new items and {@code BF.MEXISTS} of 100 absent ones on a RedisBloom-layout key
 * ({@code BF.RESERVE bench 0.01 50000000}: one 60 MB layer), without the server: {@link
 * ScalableBloomFilter#addAllAsSoleWriter} and {@link ScalableBloomFilter#mightContainAll}. Items are 12-digit
 * strings drawn from 10^12, so nearly every add is of a new item; each iteration starts from an empty filter, and
 * 3 iterations of 1 s stay well below its capacity. Scores are ns per item.
 *
 * <p>Run: {@code taskset -c 1 java -jar bench/target/benchmarks.jar BatchedAddBenchmark} (docs/BENCHMARKS.md,
 * server section).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(value = 1)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 1)
public class BatchedAddBenchmark {
  static final int ITEMS_PER_COMMAND = 100;
  private static final int COMMANDS = 1 << 14;

  private final byte[][][] commands = new byte[COMMANDS][ITEMS_PER_COMMAND][];
  private final boolean[] answers = new boolean[ITEMS_PER_COMMAND];
  private ScalableBloomFilter filter;
  private int next;

  @Setup(Level.Trial)
  public void items() {
    SplittableRandom random = new SplittableRandom(42);
    for (byte[][] command : commands) {
      for (int i = 0; i < ITEMS_PER_COMMAND; i++) {
        command[i] = String.format("%012d", random.nextLong(1_000_000_000_000L)).getBytes(StandardCharsets.US_ASCII);
      }
    }
  }

  @Setup(Level.Iteration)
  public void emptyFilter() {
    filter = ScalableBloomFilter.create(50_000_000, 0.01);
  }

  @Benchmark
  @OperationsPerInvocation(ITEMS_PER_COMMAND)
  public int madd() {
    byte[][] items = commands[next++ & (COMMANDS - 1)];
    return filter.addAllAsSoleWriter(items, 0, items.length, answers);
  }

  @Benchmark
  @OperationsPerInvocation(ITEMS_PER_COMMAND)
  public int mexists() {
    byte[][] items = commands[next++ & (COMMANDS - 1)];
    return filter.mightContainAll(items, 0, items.length, answers);
  }
}
