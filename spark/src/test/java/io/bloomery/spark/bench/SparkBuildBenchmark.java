package io.bloomery.spark.bench;

import io.bloomery.blocked.BlockedBloomMath;
import io.bloomery.filter.BloomFilter;
import io.bloomery.filter.FilterKind;
import io.bloomery.filter.MembershipFilter;
import io.bloomery.format.FilterFormat;
import io.bloomery.sizing.BloomMath;
import io.bloomery.spark.BloomerySpark;
import io.bloomery.spark.FilterSpec;
import io.bloomery.spark.ShardedBuild;
import io.bloomery.spark.SparkSketch;
import java.io.ByteArrayOutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/**
 * One Spark build variant in its own JVM, for docs/BENCHMARKS.md: build time, the process's peak
 * resident memory (VmHWM; local mode, so driver and executors together) and the realized false-positive
 * rate on 10^6 known non-members beside the model. Not a test; run (after a test-compile):
 *
 * <pre>
 * java [Spark's --add-opens list] -Xmx6g -cp spark/target/test-classes:spark/target/classes:CLASSPATH \
 *   io.bloomery.spark.bench.SparkBuildBenchmark build|sharded|blocked|sharded-blocked|sketch N
 * </pre>
 *
 * Items are {@code https://example.com/page/<i>} for i in [0, N), generated inside Spark by {@code
 * range}; non-members are i in [N, N + 10^6). local[2], 16 partitions, p = 1%. Per-task figures come
 * from a listener: the tasks' executor run time summed (core-seconds), shuffle bytes written, and for
 * {@code sharded} the slice tasks' file-write time and the driver's assembly time.
 *
 * <p>The apply variants take a filter file: {@code filter N FILE} writes the classic filter of the
 * items [0, N) to FILE with {@code buildSharded} (16 slices); {@code absent N FILE} and {@code
 * absent-sharded N FILE} then run {@code keepAbsent} (the filter read and broadcast) and {@code
 * keepAbsentSharded} (16 slices, from FILE) over the N rows i in [N/2, 3N/2), half members and half
 * new, and count the kept rows in one job; the realized FPR is the share of the N/2 new rows not
 * kept, and any kept member is reported as a false negative. The time covers reading the filter (for
 * {@code absent}) and the job.
 *
 * <p>{@code v1 N} runs no Spark job: it fills Spark's V1 sketch ({@code BloomFilter.create(V1, ...)})
 * and a classic Bloomery filter of the same m = 2^32 bits and k = 3 with the longs [0, N), and
 * measures both on the longs [N, N + 10^6) against the model for m and for 2^31 bits.
 */
public final class SparkBuildBenchmark {
  private static final int PROBES = 1_000_000;

  private SparkBuildBenchmark() {}

  public static void main(String[] args) throws Exception {
    String variant = args[0];
    long n = Long.parseLong(args[1]);
    if (variant.equals("v1")) {
      v1(n);
      return;
    }
    double p = 0.01;
    SparkSession spark = SparkSession.builder().master("local[2]").appName("bloomery-bench")
        .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "16").getOrCreate();
    spark.sparkContext().setLogLevel("WARN");
    TaskTotals totals = new TaskTotals();
    spark.sparkContext().addSparkListener(totals);
    if (variant.equals("filter") || variant.startsWith("absent")) {
      apply(spark, totals, variant, n, p, args[2]);
      spark.stop();
      return;
    }
    Dataset<Row> urls = spark.range(0, n, 1, 16).selectExpr("concat('https://example.com/page/', CAST(id AS STRING)) AS url");
    long start = System.nanoTime();
    Probe probe;
    String shape;
    double model;
    switch (variant) {
      case "build", "blocked" -> {
        FilterSpec spec = variant.equals("build") ? FilterSpec.classic(n, p) : FilterSpec.blocked(n, p);
        MembershipFilter filter = BloomerySpark.build(urls, "url", spec);
        probe = filter::mightContain;
        shape = spec.toString();
        model = model(spec, n);
      }
      case "sharded", "sharded-blocked" -> {
        boolean classic = variant.equals("sharded");
        FilterSpec spec = classic ? FilterSpec.classic(n, p) : FilterSpec.blocked(n, p);
        Path file = Files.createTempFile("bench-sharded", ".blmf");
        ShardedBuild.Result result = BloomerySpark.buildSharded(urls, "url", spec, file.toString(), 16);
        MembershipFilter filter = (MembershipFilter) FilterFormat.read(file);
        Files.delete(file);
        probe = filter::mightContain;
        shape = spec + ", " + result.slices() + " slices" + String.format(Locale.ROOT,
            "; slice file writes %.2f s summed over tasks (%.0f MB/s), driver assembly %.2f s (%.0f MB/s)",
            result.sliceWriteNanos() / 1e9, result.fileBytes() / 1e6 / (result.sliceWriteNanos() / 1e9),
            result.assemblyNanos() / 1e9, result.fileBytes() / 1e6 / (result.assemblyNanos() / 1e9));
        model = model(spec, n);
      }
      case "sketch" -> {
        org.apache.spark.util.sketch.BloomFilter sketch = urls.stat().bloomFilter("url", n, p);
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        sketch.writeTo(bytes);
        SparkSketch ours = SparkSketch.fromBytes(bytes.toByteArray());
        probe = ours::mightContain;
        shape = "Spark sketch V" + ours.version() + ", m = " + ours.bitSize() + ", k = " + ours.hashCount();
        model = BloomMath.falsePositiveRate(ours.bitSize(), ours.hashCount(), n);
      }
      default -> throw new IllegalArgumentException("variant: build, blocked, sharded, sharded-blocked, sketch, filter, absent or absent-sharded");
    }
    double seconds = (System.nanoTime() - start) / 1e9;
    String tasks = totals.describe(n);
    long maybe = 0;
    for (long i = n; i < n + PROBES; i++) {
      maybe += probe.mightContain("https://example.com/page/" + i) ? 1 : 0;
    }
    for (long i = 0; i < n; i += Math.max(1, n / 100_000)) {
      if (!probe.mightContain("https://example.com/page/" + i)) {
        throw new AssertionError("false negative: member " + i);
      }
    }
    System.out.printf(Locale.ROOT, "%s n=%d: %.1f s build, %s, realized FPR %.4f%% (%d of %d non-members), model %.4f%%; %s; %s%n",
        variant, n, seconds, peak(), 100.0 * maybe / PROBES, maybe, PROBES, 100 * model, shape, tasks);
    spark.stop();
  }

  /** The model FPR of a classic or blocked spec holding n items. */
  private static double model(FilterSpec spec, long n) {
    return spec.kind() == FilterKind.CLASSIC_BLOOM ? BloomMath.falsePositiveRate(spec.bitSize(), spec.hashCount(), n)
        : BlockedBloomMath.blockedFalsePositiveRate(n, spec.blockCount(), 512, spec.hashCount());
  }

  /** The process's peak resident memory, as /proc reports it. */
  private static String peak() throws java.io.IOException {
    return Files.readAllLines(Path.of("/proc/self/status")).stream()
        .filter(line -> line.startsWith("VmHWM")).findFirst().orElse("VmHWM: ?").replaceAll("\\s+", " ");
  }

  /** {@code filter}: writes the classic filter of [0, n) to {@code file}; {@code absent*}: applies it to [n/2, 3n/2). */
  private static void apply(SparkSession spark, TaskTotals totals, String variant, long n, double p, String file) throws Exception {
    FilterSpec spec = FilterSpec.classic(n, p);
    long start = System.nanoTime();
    if (variant.equals("filter")) {
      Dataset<Row> members = spark.range(0, n, 1, 16).selectExpr("concat('https://example.com/page/', CAST(id AS STRING)) AS url");
      BloomerySpark.buildSharded(members, "url", spec, file, 16);
      System.out.printf(Locale.ROOT, "filter n=%d: %s written to %s in %.1f s%n", n, spec, file, (System.nanoTime() - start) / 1e9);
      return;
    }
    Dataset<Row> rows = spark.range(n / 2, n / 2 + n, 1, 16)
        .selectExpr("id", "concat('https://example.com/page/', CAST(id AS STRING)) AS url");
    Dataset<Row> kept = switch (variant) {
      case "absent" -> BloomerySpark.keepAbsent(rows, "url", BloomerySpark.readFilter(spark, file));
      case "absent-sharded" -> BloomerySpark.keepAbsentSharded(rows, "url", file, FilterSpec.Nulls.REFUSE, 16);
      default -> throw new IllegalArgumentException("variant: filter, absent or absent-sharded");
    };
    Row counts = kept.selectExpr("count(*)", "count_if(id < " + n + ")").first();
    double seconds = (System.nanoTime() - start) / 1e9;
    long newRows = n / 2; // the rows [n, n / 2 + n)
    long absent = counts.getLong(0);
    long keptMembers = counts.getLong(1);
    System.out.printf(Locale.ROOT, "%s n=%d rows over a filter of %d: %.1f s, %s, kept %d of %d new rows, %d members kept (false negatives),"
        + " realized FPR %.4f%% (%d), model %.4f%%; %s; %s%n", variant, n, n, seconds, peak(), absent, newRows, keptMembers,
        100.0 * (newRows - absent) / newRows, newRows - absent, 100 * model(spec, n), spec, totals.describe(n));
  }

  /** Sums over finished tasks: executor run time and shuffle bytes written. */
  static final class TaskTotals extends org.apache.spark.scheduler.SparkListener {
    private final java.util.concurrent.atomic.AtomicLong runMillis = new java.util.concurrent.atomic.AtomicLong();
    private final java.util.concurrent.atomic.AtomicLong shuffleBytes = new java.util.concurrent.atomic.AtomicLong();
    private final java.util.concurrent.atomic.AtomicLong shuffleRecords = new java.util.concurrent.atomic.AtomicLong();

    private final java.util.Map<Integer, Long> stageMillis = new java.util.concurrent.ConcurrentSkipListMap<>();
    private final java.util.Map<Integer, String> stageNames = new java.util.concurrent.ConcurrentHashMap<>();

    @Override
    public void onStageCompleted(org.apache.spark.scheduler.SparkListenerStageCompleted completed) {
      stageNames.put(completed.stageInfo().stageId(), completed.stageInfo().name());
    }

    @Override
    public void onTaskEnd(org.apache.spark.scheduler.SparkListenerTaskEnd end) {
      if (end.taskMetrics() != null) {
        stageMillis.merge(end.stageId(), end.taskMetrics().executorRunTime(), Long::sum);
        runMillis.addAndGet(end.taskMetrics().executorRunTime());
        shuffleBytes.addAndGet(end.taskMetrics().shuffleWriteMetrics().bytesWritten());
        shuffleRecords.addAndGet(end.taskMetrics().shuffleWriteMetrics().recordsWritten());
      }
    }

    String describe(long n) {
      double coreSeconds = runMillis.get() / 1e3;
      StringBuilder stages = new StringBuilder();
      stageMillis.forEach((stage, millis) -> stages.append(String.format(Locale.ROOT, " [stage %d %s: %.1f core-s]", stage,
          stageNames.getOrDefault(stage, "?"), millis / 1e3)));
      return String.format(Locale.ROOT, "tasks %.1f core-s (%.0f items/s per core), shuffle written %d bytes in %d records (%.2f bytes/item);%s",
          coreSeconds, n / coreSeconds, shuffleBytes.get(), shuffleRecords.get(), (double) shuffleBytes.get() / n, stages);
    }
  }

  /** Spark's V1 sketch and a Bloomery classic filter, both m = 2^32 bits and k = 3, over the longs [0, n). */
  private static void v1(long n) {
    long bits = 1L << 32;
    int k = 3;
    // V1's k is chosen from (expected items, bits): round(m / n' * ln 2) = 3 for n' = 1e9.
    org.apache.spark.util.sketch.BloomFilter sketch = org.apache.spark.util.sketch.BloomFilter.create(
        org.apache.spark.util.sketch.BloomFilter.Version.V1, 1_000_000_000L, bits, 0);
    long[] sketchRun = fillAndProbe(n, sketch::putLong, sketch::mightContainLong);
    long sketchBits = sketch.bitSize();
    sketch = null; // let the 512 MiB go before ours is allocated
    System.gc();
    BloomFilter ours = BloomFilter.createSingleWriter(io.bloomery.hash.Protocols.defaultProtocol(), new byte[0], bits, k);
    long[] oursRun = fillAndProbe(n, ours::add, ours::mightContain);
    long sketchMaybe = sketchRun[0];
    long oursMaybe = oursRun[0];
    double sketchSeconds = sketchRun[1] / 1e9;
    double oursSeconds = oursRun[1] / 1e9;
    System.out.printf(Locale.ROOT, "v1 n=%d, m=%d (sketch reports %d), k=%d: model FPR %.4f%% for m, %.4f%% for 2^31 bits;"
        + " Spark V1 realized %.4f%% (%d of %d, %.1f s to fill); Bloomery classic (%s) realized %.4f%% (%d of %d, %.1f s)%n",
        n, bits, sketchBits, k, 100 * BloomMath.falsePositiveRate(bits, k, n), 100 * BloomMath.falsePositiveRate(1L << 31, k, n),
        100.0 * sketchMaybe / PROBES, sketchMaybe, PROBES, sketchSeconds, ours.protocolId().protocolName(),
        100.0 * oursMaybe / PROBES, oursMaybe, PROBES, oursSeconds);
  }

  /**
   * Adds the longs [0, n), checks a sample of them, and probes [n, n + 10^6).
   *
   * @return {maybe answers among the non-members, nanoseconds spent adding}
   */
  private static long[] fillAndProbe(long n, java.util.function.LongPredicate add, java.util.function.LongPredicate probe) {
    long start = System.nanoTime();
    for (long i = 0; i < n; i++) {
      add.test(i);
    }
    long nanos = System.nanoTime() - start;
    long maybe = 0;
    for (long i = n; i < n + PROBES; i++) {
      maybe += probe.test(i) ? 1 : 0;
    }
    for (long i = 0; i < n; i += Math.max(1, n / 100_000)) {
      if (!probe.test(i)) {
        throw new AssertionError("false negative: " + i);
      }
    }
    return new long[] {maybe, nanos};
  }

  @FunctionalInterface
  interface Probe {
    boolean mightContain(String item);
  }
}
