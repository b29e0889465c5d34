package io.bloomery.spark.bench;

import io.bloomery.blocked.BlockedBloomMath;
import io.bloomery.filter.BloomFilter;
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
 *   io.bloomery.spark.bench.SparkBuildBenchmark build|sharded|blocked|sketch N
 * </pre>
 *
 * Items are {@code https://example.com/page/<i>} for i in [0, N), generated inside Spark by {@code
 * range}; non-members are i in [N, N + 10^6). local[2], 16 partitions, p = 1%.
 */
public final class SparkBuildBenchmark {
  private static final int PROBES = 1_000_000;

  private SparkBuildBenchmark() {}

  public static void main(String[] args) throws Exception {
    String variant = args[0];
    long n = Long.parseLong(args[1]);
    double p = 0.01;
    SparkSession spark = SparkSession.builder().master("local[2]").appName("bloomery-bench")
        .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "16").getOrCreate();
    spark.sparkContext().setLogLevel("WARN");
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
        model = variant.equals("build") ? BloomMath.falsePositiveRate(spec.bitSize(), spec.hashCount(), n)
            : BlockedBloomMath.blockedFalsePositiveRate(n, spec.blockCount(), 512, spec.hashCount());
      }
      case "sharded" -> {
        FilterSpec spec = FilterSpec.classic(n, p);
        Path file = Files.createTempFile("bench-sharded", ".blmf");
        ShardedBuild.Result result = BloomerySpark.buildSharded(urls, "url", spec, file.toString(), 16);
        BloomFilter filter = FilterFormat.readBloom(file);
        Files.delete(file);
        probe = filter::mightContain;
        shape = spec + ", " + result.slices() + " slices";
        model = BloomMath.falsePositiveRate(spec.bitSize(), spec.hashCount(), n);
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
      default -> throw new IllegalArgumentException("variant: build, blocked, sharded or sketch");
    }
    double seconds = (System.nanoTime() - start) / 1e9;
    long maybe = 0;
    for (long i = n; i < n + PROBES; i++) {
      maybe += probe.mightContain("https://example.com/page/" + i) ? 1 : 0;
    }
    for (long i = 0; i < n; i += Math.max(1, n / 100_000)) {
      if (!probe.mightContain("https://example.com/page/" + i)) {
        throw new AssertionError("false negative: member " + i);
      }
    }
    String peak = Files.readAllLines(Path.of("/proc/self/status")).stream()
        .filter(line -> line.startsWith("VmHWM")).findFirst().orElse("VmHWM: ?").replaceAll("\\s+", " ");
    System.out.printf(Locale.ROOT, "%s n=%d: %.1f s build, %s, realized FPR %.4f%% (%d of %d non-members), model %.4f%%; %s%n",
        variant, n, seconds, peak, 100.0 * maybe / PROBES, maybe, PROBES, 100 * model, shape);
    spark.stop();
  }

  @FunctionalInterface
  interface Probe {
    boolean mightContain(String item);
  }
}
