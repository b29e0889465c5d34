package io.bloomery.bench;

import com.dynatrace.hash4j.hashing.Hasher64;
import com.dynatrace.hash4j.hashing.Hashing;
import com.google.common.hash.BloomFilter;
import com.google.common.hash.Funnels;
import io.bloomery.blocked.BlockedBloomFilter;
import io.bloomery.blocked.SplitBlockBloomFilter;
import io.bloomery.cli.SyntheticUrls;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.LongSupplier;

/**
 * The quick benchmark behind {@code bloomery bench} and {@code bench/run}: Bloomery's blocked filter
 * beside Guava's {@code BloomFilter} in one JVM, on the crawler workload (synthetic ~80-byte URLs).
 *
 * <p>Method (same as docs/BENCHMARKS.md's harness): keys are generated in chunks of up to
 * 1M and every filter inserts each chunk in a rotating order (generation excluded from timings; half
 * of each chunk goes through {@code add}, half through {@code addAll}). Queries are q known non-members
 * (indexes n..n+q) and q members drawn at random (seed 42). Each lookup task runs 2 warm-up rounds and
 * {@code rounds} measured rounds in a rotating order; figures are medians in ns per key. Guava gets its
 * natural input ({@code String} through {@code Funnels.stringFunnel(UTF_8)}); Bloomery gets the UTF-8
 * bytes (the String path is reported too). The physical floor is XXH3 over the same keys plus one
 * independent random 64-byte line read per key from an array the size of the blocked filter.
 *
 * <p>Run: {@code java -Xmx3g -cp bench/target/benchmarks.jar io.bloomery.bench.QuickBench --keys 10000000 [--json]}.
 */
public final class QuickBench {

  private static final Hasher64 XXH3 = Hashing.xxh3_64();
  private static final int WARMUP_ROUNDS = 2;

  private QuickBench() {}

  /** Parameters of one run. */
  public record Options(long keys, double fpp, int queries, int rounds) {
    public Options {
      if (keys < 1000 || queries < 1000 || rounds < 1 || !(fpp > 0 && fpp < 1)) {
        throw new IllegalArgumentException("need keys >= 1000, queries >= 1000, rounds >= 1, fpp in (0, 1)");
      }
    }

    /** 10M URLs, 1%, 1M queries each way, 5 measured rounds. */
    public static Options defaults() {
      return new Options(10_000_000L, 0.01, 1_000_000, 5);
    }
  }

  /** Runs the benchmark; progress lines go to {@code log}. Returns the figures by snake_case name. */
  public static Map<String, Object> run(Options options, PrintStream log) {
    long n = options.keys();
    double fpp = options.fpp();
    int q = options.queries();
    SyntheticUrls urls = new SyntheticUrls(SyntheticUrls.BENCH_SEED);
    BloomFilter<CharSequence> guava = BloomFilter.create(Funnels.stringFunnel(StandardCharsets.UTF_8), n, fpp);
    BlockedBloomFilter blocked = BlockedBloomFilter.create(n, fpp);
    SplitBlockBloomFilter split = SplitBlockBloomFilter.create(n, fpp);
    RegisterBlockedPrototype register = RegisterBlockedPrototype.create(n, fpp);

    // ---- build ----
    int chunk = (int) Math.min(1_000_000, n);
    String[] strings = new String[chunk];
    byte[][] bytes = new byte[chunk][];
    long[] buildNanos = new long[5]; // guava, blocked single, blocked batch, split batch, register
    long singleKeys = 0;
    long batchKeys = 0;
    long totalBytes = 0;
    int chunkIndex = 0;
    for (long start = 0; start < n; start += chunk, chunkIndex++) {
      int size = (int) Math.min(chunk, n - start);
      for (int i = 0; i < size; i++) {
        strings[i] = urls.url(start + i);
        bytes[i] = strings[i].getBytes(StandardCharsets.UTF_8);
        totalBytes += bytes[i].length;
      }
      int half = size / 2;
      byte[][] firstHalf = java.util.Arrays.copyOfRange(bytes, 0, half);
      byte[][] secondHalf = java.util.Arrays.copyOfRange(bytes, half, size);
      for (int step = 0; step < 4; step++) {
        int task = (step + chunkIndex) % 4;
        long t0 = System.nanoTime();
        switch (task) {
          case 0:
            for (int i = 0; i < size; i++) {
              guava.put(strings[i]);
            }
            buildNanos[0] += System.nanoTime() - t0;
            break;
          case 1:
            for (byte[] key : firstHalf) {
              blocked.add(key);
            }
            long t1 = System.nanoTime();
            buildNanos[1] += t1 - t0;
            blocked.addAll(secondHalf);
            buildNanos[2] += System.nanoTime() - t1;
            break;
          case 2:
            split.addAll(bytes.length == size ? bytes : java.util.Arrays.copyOf(bytes, size));
            buildNanos[3] += System.nanoTime() - t0;
            break;
          default:
            for (int i = 0; i < size; i++) {
              register.add(XXH3.hashBytesToLong(bytes[i]));
            }
            buildNanos[4] += System.nanoTime() - t0;
            break;
        }
      }
      singleKeys += half;
      batchKeys += size - half;
      if (log != null && (chunkIndex + 1) % 10 == 0) {
        log.printf(Locale.ROOT, "  built %,d of %,d keys%n", start + size, n);
      }
    }
    java.util.Arrays.fill(strings, null);
    java.util.Arrays.fill(bytes, null);

    // ---- queries ----
    SyntheticUrls.Probes probes = urls.probes(n, q);
    String[] absentStrings = probes.absentStrings();
    String[] presentStrings = probes.presentStrings();
    byte[][] absent = probes.absent();
    byte[][] present = probes.present();
    boolean[] out = new boolean[q];
    long[] floorLines = new long[Math.toIntExact(blocked.bitSize() / 64)];
    int lines = floorLines.length / 8;
    for (int i = 0; i < floorLines.length; i++) {
      floorLines[i] = i;
    }

    Map<String, LongSupplier> tasks = new LinkedHashMap<>();
    tasks.put("guava_absent", () -> countGuava(guava, absentStrings));
    tasks.put("guava_present", () -> countGuava(guava, presentStrings));
    tasks.put("single_absent", () -> countSingle(blocked, absent));
    tasks.put("single_present", () -> countSingle(blocked, present));
    tasks.put("single_string_absent", () -> countStrings(blocked, absentStrings));
    tasks.put("single_getbytes_absent", () -> countGetBytes(blocked, absentStrings));
    tasks.put("batched_absent", () -> blocked.mightContainAll(absent, out));
    tasks.put("batched_present", () -> blocked.mightContainAll(present, out));
    tasks.put("split_batched_absent", () -> split.mightContainAll(absent, out));
    tasks.put("register_batched_absent", () -> countRegisterBatched(register, absent));
    tasks.put("hash_xxh3", () -> hashOnly(absent));
    tasks.put("floor", () -> floor(floorLines, lines, absent));
    Map<String, Double> medians = new LinkedHashMap<>();
    Map<String, Long> counts = new LinkedHashMap<>();
    measure(tasks, options.rounds(), q, medians, counts, log);

    // ---- figures ----
    Map<String, Object> figures = new LinkedHashMap<>();
    figures.put("keys", n);
    figures.put("fpp_target", fpp);
    figures.put("queries_each_way", (long) q);
    figures.put("warmup_rounds", (long) WARMUP_ROUNDS);
    figures.put("measured_rounds", (long) options.rounds());
    figures.put("avg_key_bytes", round((double) totalBytes / n, 1));
    figures.put("kind", blocked.kind().kindName());
    figures.put("hashes", (long) blocked.hashCount());
    double guavaInsert = buildNanos[0] / (double) n;
    double singleInsert = buildNanos[1] / (double) singleKeys;
    double batchInsert = buildNanos[2] / (double) batchKeys;
    figures.put("guava_insert_ns", round(guavaInsert, 1));
    figures.put("insert_ns", round(singleInsert, 1));
    figures.put("insert_batched_ns", round(batchInsert, 1));
    figures.put("insert_vs_guava", round(guavaInsert / singleInsert, 2));
    figures.put("insert_batched_vs_guava", round(guavaInsert / batchInsert, 2));
    figures.put("guava_build_s", round(buildNanos[0] / 1e9, 2));
    figures.put("build_s", round((buildNanos[1] + buildNanos[2]) / 1e9, 2));
    figures.put("build_vs_guava", round(buildNanos[0] / (double) (buildNanos[1] + buildNanos[2]), 2));
    for (Map.Entry<String, Double> entry : medians.entrySet()) {
      figures.put(entry.getKey() + "_ns", round(entry.getValue(), 1));
    }
    double guavaLookup = (medians.get("guava_absent") + medians.get("guava_present")) / 2;
    figures.put("lookup_single_vs_guava",
        round(guavaLookup / ((medians.get("single_absent") + medians.get("single_present")) / 2), 2));
    figures.put("lookup_batched_vs_guava",
        round(guavaLookup / ((medians.get("batched_absent") + medians.get("batched_present")) / 2), 2));
    figures.put("lookup_string_vs_guava", round(medians.get("guava_absent") / medians.get("single_string_absent"), 2));
    figures.put("floor_vs_guava", round(guavaLookup / medians.get("floor"), 2));
    figures.put("batched_vs_floor", round(((medians.get("batched_absent") + medians.get("batched_present")) / 2) / medians.get("floor"), 2));
    figures.put("register_batched_vs_guava", round(medians.get("guava_absent") / medians.get("register_batched_absent"), 2));
    figures.put("split_batched_vs_guava", round(medians.get("guava_absent") / medians.get("split_batched_absent"), 2));

    double bitsPerKey = blocked.bitSize() / (double) n;
    figures.put("bits_per_key", round(bitsPerKey, 3));
    figures.put("guava_bits_per_key", round(guavaBits(guava) / (double) n, 3));
    figures.put("classic_optimum_bits_per_key", round(-Math.log(fpp) / (Math.log(2) * Math.log(2)), 3));
    figures.put("split_bits_per_key", round(split.bitSize() / (double) n, 3));
    figures.put("register_bits_per_key", round(register.bitSize() / (double) n, 3));
    long falsePositives = counts.get("single_absent");
    double model = blocked.modelFpp(n);
    figures.put("false_positives", falsePositives);
    figures.put("realized_fpp", round(falsePositives / (double) q, 6));
    figures.put("model_fpp", round(model, 6));
    double spread = 3.2905 * Math.sqrt(q * model * (1 - model)) + 0.5;
    figures.put("model_fpp_999_low", round(Math.max(0, (q * model - spread) / q), 6));
    figures.put("model_fpp_999_high", round((q * model + spread) / q, 6));
    figures.put("realized_fpp_within_bound", Math.abs(falsePositives - q * model) <= spread);
    figures.put("guava_realized_fpp", round(counts.get("guava_absent") / (double) q, 6));
    figures.put("split_realized_fpp", round(counts.get("split_batched_absent") / (double) q, 6));
    figures.put("split_model_fpp", round(split.modelFpp(n), 6));
    figures.put("register_realized_fpp", round(counts.get("register_batched_absent") / (double) q, 6));
    figures.put("register_model_fpp", round(register.modelFpp(n), 6));
    figures.put("present_maybe", counts.get("single_present"));
    figures.put("guava_present_maybe", counts.get("guava_present"));
    return figures;
  }

  private static void measure(Map<String, LongSupplier> tasks, int rounds, int q, Map<String, Double> medians,
      Map<String, Long> counts, PrintStream log) {
    List<String> names = new ArrayList<>(tasks.keySet());
    Map<String, List<Double>> samples = new LinkedHashMap<>();
    for (int round = 0; round < WARMUP_ROUNDS + rounds; round++) {
      List<String> order = new ArrayList<>(names);
      Collections.rotate(order, round * 3);
      for (String name : order) {
        long t0 = System.nanoTime();
        long count = tasks.get(name).getAsLong();
        double perKey = (System.nanoTime() - t0) / (double) q;
        Long previous = counts.put(name, count);
        if (previous != null && previous != count) {
          throw new IllegalStateException(name + " answered differently between rounds: " + previous + " vs " + count);
        }
        if (round >= WARMUP_ROUNDS) {
          samples.computeIfAbsent(name, k -> new ArrayList<>()).add(perKey);
        }
      }
      if (log != null) {
        // Warm-up rounds are named as such: --rounds counts only the measured ones.
        log.printf(Locale.ROOT, round < WARMUP_ROUNDS ? "  lookup warm-up round %d of %d done%n"
            : "  lookup measured round %d of %d done%n",
            round < WARMUP_ROUNDS ? round + 1 : round + 1 - WARMUP_ROUNDS, round < WARMUP_ROUNDS ? WARMUP_ROUNDS : rounds);
      }
    }
    for (String name : names) {
      List<Double> values = new ArrayList<>(samples.get(name));
      Collections.sort(values);
      medians.put(name, values.get(values.size() / 2));
    }
  }

  static long countGuava(BloomFilter<CharSequence> guava, String[] keys) {
    long count = 0;
    for (String key : keys) {
      count += guava.mightContain(key) ? 1 : 0;
    }
    return count;
  }

  static long countSingle(BlockedBloomFilter filter, byte[][] keys) {
    long count = 0;
    for (byte[] key : keys) {
      count += filter.mightContain(key) ? 1 : 0;
    }
    return count;
  }

  static long countStrings(BlockedBloomFilter filter, String[] keys) {
    long count = 0;
    for (String key : keys) {
      count += filter.mightContain(key) ? 1 : 0;
    }
    return count;
  }

  /** The alternative String path: allocate {@code getBytes(UTF_8)} per key, then the byte[] lookup. */
  static long countGetBytes(BlockedBloomFilter filter, String[] keys) {
    long count = 0;
    for (String key : keys) {
      count += filter.mightContain(key.getBytes(StandardCharsets.UTF_8)) ? 1 : 0;
    }
    return count;
  }

  static long countRegisterBatched(RegisterBlockedPrototype filter, byte[][] keys) {
    long[] batch = new long[32];
    long count = 0;
    for (int start = 0; start < keys.length; start += batch.length) {
      int size = Math.min(batch.length, keys.length - start);
      for (int j = 0; j < size; j++) {
        batch[j] = XXH3.hashBytesToLong(keys[start + j]);
      }
      for (int j = 0; j < size; j++) {
        count += filter.mightContain(batch[j]) ? 1 : 0;
      }
    }
    return count;
  }

  static long hashOnly(byte[][] keys) {
    long sum = 0;
    for (byte[] key : keys) {
      sum += XXH3.hashBytesToLong(key);
    }
    return sum;
  }

  /** XXH3 of each key, then one independent read of a random 64-byte line: the physical floor. */
  static long floor(long[] array, int lines, byte[][] keys) {
    long sum = 0;
    for (byte[] key : keys) {
      long hash = XXH3.hashBytesToLong(key);
      sum += array[(int) (((hash >>> 32) * lines) >>> 32) << 3];
    }
    return sum;
  }

  /** Guava's bit count, from its own serialized form: 6 header bytes then 8-byte words. */
  static long guavaBits(BloomFilter<CharSequence> guava) {
    long[] size = new long[1];
    try {
      guava.writeTo(new OutputStream() {
        @Override
        public void write(int b) {
          size[0]++;
        }

        @Override
        public void write(byte[] b, int off, int len) {
          size[0] += len;
        }
      });
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
    return (size[0] - 6) * 8;
  }

  private static double round(double value, int digits) {
    double scale = Math.pow(10, digits);
    return Math.round(value * scale) / scale;
  }

  /** The figures as one JSON object (keys in order, snake_case). */
  public static String toJson(Map<String, Object> figures) {
    StringBuilder json = new StringBuilder("{");
    for (Map.Entry<String, Object> entry : figures.entrySet()) {
      if (json.length() > 1) {
        json.append(", ");
      }
      json.append('"').append(entry.getKey()).append("\": ");
      Object value = entry.getValue();
      if (value instanceof String) {
        json.append('"').append(value).append('"');
      } else {
        json.append(value);
      }
    }
    return json.append('}').toString();
  }

  /** The figures as a Markdown table of ratios and absolute values. */
  public static String toTable(Map<String, Object> figures) {
    StringBuilder table = new StringBuilder();
    table.append(String.format(Locale.ROOT,
        "n = %,d URLs (avg %s bytes), target fpp %s, %,d queries each way; lookups: medians of %d measured round%s after %d warm-up rounds%n%n",
        (Long) figures.get("keys"), figures.get("avg_key_bytes"), figures.get("fpp_target"), (Long) figures.get("queries_each_way"),
        (Long) figures.get("measured_rounds"), (Long) figures.get("measured_rounds") == 1 ? "" : "s", (Long) figures.get("warmup_rounds")));
    table.append("| figure | Bloomery blocked | Guava | ratio (Guava / ours) |\n|---|---|---|---|\n");
    row(table, "lookup, single key, absent (ns)", figures.get("single_absent_ns"), figures.get("guava_absent_ns"), ratio(figures, "guava_absent_ns", "single_absent_ns"));
    row(table, "lookup, single key, present (ns)", figures.get("single_present_ns"), figures.get("guava_present_ns"), ratio(figures, "guava_present_ns", "single_present_ns"));
    row(table, "lookup, single String key, absent (ns)", figures.get("single_string_absent_ns"), figures.get("guava_absent_ns"), figures.get("lookup_string_vs_guava"));
    row(table, "lookup, String via getBytes(UTF_8) per key, absent (ns)", figures.get("single_getbytes_absent_ns"), figures.get("guava_absent_ns"), ratio(figures, "guava_absent_ns", "single_getbytes_absent_ns"));
    row(table, "lookup, batched, absent (ns)", figures.get("batched_absent_ns"), figures.get("guava_absent_ns"), ratio(figures, "guava_absent_ns", "batched_absent_ns"));
    row(table, "lookup, batched, present (ns)", figures.get("batched_present_ns"), figures.get("guava_present_ns"), ratio(figures, "guava_present_ns", "batched_present_ns"));
    row(table, "insert, add (ns)", figures.get("insert_ns"), figures.get("guava_insert_ns"), figures.get("insert_vs_guava"));
    row(table, "insert, addAll (ns)", figures.get("insert_batched_ns"), figures.get("guava_insert_ns"), figures.get("insert_batched_vs_guava"));
    row(table, "full build (s)", figures.get("build_s"), figures.get("guava_build_s"), figures.get("build_vs_guava"));
    row(table, "bits per key", figures.get("bits_per_key"), figures.get("guava_bits_per_key"), "classic optimum " + figures.get("classic_optimum_bits_per_key"));
    row(table, "realized FPR (model, 99.9% bound)", figures.get("realized_fpp") + " (" + figures.get("model_fpp") + ", ["
        + figures.get("model_fpp_999_low") + ", " + figures.get("model_fpp_999_high") + "])", figures.get("guava_realized_fpp"), "within bound: " + figures.get("realized_fpp_within_bound"));
    row(table, "physical floor: XXH3 + 1 random line (ns)", figures.get("floor_ns"), figures.get("guava_absent_ns"), figures.get("floor_vs_guava"));
    row(table, "XXH3 over the key alone (ns)", figures.get("hash_xxh3_ns"), "", "");
    row(table, "split-block (Parquet) batched absent (ns)", figures.get("split_batched_absent_ns") + " at " + figures.get("split_bits_per_key") + " bits/key, FPR " + figures.get("split_realized_fpp"), figures.get("guava_absent_ns"), figures.get("split_batched_vs_guava"));
    row(table, "register-blocked prototype batched absent (ns)", figures.get("register_batched_absent_ns") + " at " + figures.get("register_bits_per_key") + " bits/key, FPR " + figures.get("register_realized_fpp"), figures.get("guava_absent_ns"), figures.get("register_batched_vs_guava"));
    return table.toString();
  }

  private static Object ratio(Map<String, Object> figures, String numerator, String denominator) {
    return round((Double) figures.get(numerator) / (Double) figures.get(denominator), 2);
  }

  private static void row(StringBuilder table, String name, Object ours, Object guava, Object ratio) {
    table.append("| ").append(name).append(" | ").append(ours).append(" | ").append(guava).append(" | ").append(ratio).append(" |\n");
  }

  /** {@code QuickBench [--keys N] [--fpp P] [--queries Q] [--rounds R] [--json]}. */
  public static void main(String[] args) {
    Options defaults = Options.defaults();
    long keys = defaults.keys();
    double fpp = defaults.fpp();
    int queries = defaults.queries();
    int rounds = defaults.rounds();
    boolean json = false;
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--keys" -> keys = Long.parseLong(args[++i].replace("_", ""));
        case "--fpp" -> fpp = Double.parseDouble(args[++i]);
        case "--queries" -> queries = Integer.parseInt(args[++i].replace("_", ""));
        case "--rounds" -> rounds = Integer.parseInt(args[++i]);
        case "--json" -> json = true;
        default -> throw new IllegalArgumentException("unknown argument " + args[i]);
      }
    }
    Map<String, Object> figures = run(new Options(keys, fpp, queries, rounds), json ? null : System.err);
    System.out.println(json ? toJson(figures) : toTable(figures));
  }
}
