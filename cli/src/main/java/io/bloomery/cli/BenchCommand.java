package io.bloomery.cli;

import java.io.PrintStream;
import java.io.PrintWriter;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;

/**
 * {@code bloomery bench}: the quick benchmark of Bloomery's blocked filter against Guava's
 * {@code BloomFilter}, measured in this JVM on synthetic crawler URLs. The measuring lives in the bench
 * artifact ({@link BenchHarness}, found on the class path); this command only parses options and prints.
 * {@code bloomery.jar} has no harness: there the command checks its options and then says how to run it
 * ({@code ./bloomery bench} builds and uses {@code bench/target/benchmarks.jar}).
 */
@Command(
    name = "bench",
    mixinStandardHelpOptions = true,
    header = "Quick crawler benchmark against Guava in the same JVM (10M URLs by default).",
    description = {
      "Quick benchmark against Guava in the same JVM on synthetic ~80-byte URLs: single and",
      "batched lookups (present/absent), insert, full build, bits per key, realized FPR on",
      "1M known non-members against the model, and the physical floor (XXH3 + one random",
      "cache-line read). Ratios are Guava's time divided by ours. Default 10M URLs, under",
      "3 minutes on 2 cores; needs about 3 GB of heap (./bloomery gives the JVM 6 GB).",
      "The full JMH suite: bench/run (docs/BENCHMARKS.md). Runs from the bench artifact:",
      "./bloomery bench builds bench/target/benchmarks.jar on demand; bloomery.jar alone has no harness."
    })
final class BenchCommand implements Callable<Integer> {

  @ParentCommand BloomeryCommand root;

  @Option(names = "--keys", paramLabel = "N", defaultValue = "10000000", converter = CountConverter.class,
      description = "How many URLs to insert (default: ${DEFAULT-VALUE}, at least 1000; the heap must hold five"
          + " filters of that size and the probe keys).")
  long keys;

  @Option(names = "--fpp", paramLabel = "P", defaultValue = "0.01", converter = ProbabilityConverter.class,
      description = "Target false-positive rate (default: ${DEFAULT-VALUE}).")
  double fpp;

  @Option(names = "--queries", paramLabel = "Q", defaultValue = "1000000", converter = CountConverter.class,
      description = "Known non-members and members queried each (default: ${DEFAULT-VALUE}, at least 1000).")
  long queries;

  @Option(names = "--rounds", paramLabel = "R", defaultValue = "5",
      description = "Measured rounds per lookup figure, medians reported (default: ${DEFAULT-VALUE});"
          + " 2 warm-up rounds run first and are labelled as such.")
  int rounds;

  @Option(names = "--json", description = "Print the figures as one JSON object (snake_case keys) instead of a table.")
  boolean json;

  @Override
  public Integer call() {
    if (keys < 1000 || queries < 1000 || queries > Integer.MAX_VALUE || rounds < 1) {
      throw CliException.usage("need --keys >= 1000, 1000 <= --queries <= " + Integer.MAX_VALUE + " and --rounds >= 1");
    }
    long maxKeys = maxKeys(fpp);
    if (keys > maxKeys) {
      throw CliException.usage("--keys " + Units.grouped(keys) + " is more than the benchmark's filters hold at --fpp " + fpp
          + ": at most " + Units.grouped(maxKeys) + " (" + Units.grouped(MAX_WORDS) + " 64-bit words per filter)");
    }
    CliErrors.requireHeap("--keys " + Units.grouped(keys) + " (five filter-sized arrays and the probe keys)",
        heapNeeded(keys, fpp, queries));
    BenchHarness harness = BenchHarness.find().orElseThrow(() -> CliException.failure(NO_HARNESS));
    PrintWriter out = root.out();
    PrintStream progress = json ? null : System.err;
    out.println(harness.run(keys, fpp, (int) queries, rounds, json, progress));
    out.flush();
    return 0;
  }

  static final String NO_HARNESS = "the benchmark harness is not in this jar (bloomery.jar ships without JMH and Guava):"
      + " from a source checkout run ./bloomery bench, which builds bench/target/benchmarks.jar,"
      + " or run java -cp benchmarks.jar io.bloomery.cli.BloomeryCommand bench";

  /** Each filter's bitmap is a {@code long[]}: Guava's and the blocked filter's word counts must fit an int. */
  static final long MAX_WORDS = Integer.MAX_VALUE - 8L;

  /**
   * The most keys whose classic plan at {@code fpp} (m = -n ln p / ln² 2, rounded down) stays within
   * seven eighths of {@link #MAX_WORDS}: headroom for the blocked layouts, which round up to whole blocks.
   */
  static long maxKeys(double fpp) {
    double maxBits = MAX_WORDS * (double) Long.SIZE * 7 / 8;
    return (long) Math.floor(maxBits * Math.log(2) * Math.log(2) / -Math.log(fpp));
  }

  /**
   * A lower estimate of the heap the run holds at once: Guava's, the blocked, split-block and register
   * filters and the floor's array, each about a classic plan's bitmap (blocked layouts a quarter more),
   * plus about 400 bytes for each generated key held as a String and its bytes (a 1M-key build chunk
   * and the queries both ways).
   */
  static long heapNeeded(long keys, double fpp, long queries) {
    double bitmapBytes = -keys * Math.log(fpp) / (Math.log(2) * Math.log(2)) / Byte.SIZE;
    double filters = 5 * 1.25 * bitmapBytes;
    double heldKeys = 400.0 * (Math.min(1_000_000, keys) + 2 * queries);
    return (long) Math.min(Long.MAX_VALUE, filters + heldKeys);
  }
}
