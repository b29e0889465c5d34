package io.bloomery.bench;

import com.google.common.hash.BloomFilter;
import com.google.common.hash.Funnels;
import io.bloomery.blocked.BlockedBloomFilter;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Real strings: the npm package names inserted, every bundled PyPI name queried (one invocation =
 * the whole PyPI list, scores in ms per pass). Names on both registries are true members.
 *
 * <p>Run alone: {@code java -jar bench/target/benchmarks.jar RealDataBenchmark}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Fork(value = 1, jvmArgsAppend = {"-Xms2g", "-Xmx2g"})
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 1)
public class RealDataBenchmark {
  RealData.Workload workload;
  BloomFilter<CharSequence> guava;
  BlockedBloomFilter blocked;
  String[] queries;
  byte[][] queryBytes;
  boolean[] out;

  @Setup(Level.Trial)
  public void setUp() {
    workload = RealData.load();
    guava = BloomFilter.create(Funnels.stringFunnel(StandardCharsets.UTF_8), workload.inserted().size(), 0.01);
    blocked = BlockedBloomFilter.create(workload.inserted().size(), 0.01);
    for (String name : workload.inserted()) {
      guava.put(name);
      blocked.add(name);
    }
    queries = workload.queries().toArray(new String[0]);
    queryBytes = new byte[queries.length][];
    for (int i = 0; i < queries.length; i++) {
      queryBytes[i] = queries[i].getBytes(StandardCharsets.UTF_8);
    }
    out = new boolean[queries.length];
  }

  @Benchmark
  public int guavaQueryAll() {
    int maybe = 0;
    for (String query : queries) {
      maybe += guava.mightContain(query) ? 1 : 0;
    }
    return maybe;
  }

  @Benchmark
  public int blockedQueryAllStrings() {
    int maybe = 0;
    for (String query : queries) {
      maybe += blocked.mightContain(query) ? 1 : 0;
    }
    return maybe;
  }

  @Benchmark
  public int blockedQueryAllBatched() {
    return blocked.mightContainAll(queryBytes, out);
  }
}
