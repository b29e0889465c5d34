package io.bloomery.bench;

import static io.bloomery.bench.BenchFigures.loadAverage;
import static io.bloomery.bench.BenchFigures.median;
import static io.bloomery.bench.BenchFigures.round;

import com.google.common.hash.BloomFilter;
import com.google.common.hash.Funnels;
import io.bloomery.blocked.BlockedBloomFilter;
import io.bloomery.cli.SyntheticUrls;
import io.bloomery.fuse.BinaryFuseFilter;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;

import java.util.Map;
import java.util.function.IntSupplier;

/**
 * The kinds side by side in one JVM on the crawler workload (synthetic ~80-byte URLs,
 * {@link SyntheticUrls#BENCH_SEED}), every ratio against an anchor measured in the same run:
 *
 * <ul>
 *   <li>static snapshots at 0.39 % (1/256, an 8-bit fingerprint's rate): binary fuse 8 and 16 beside the
 *       blocked and classic Bloom filters and Guava's {@code BloomFilter} at the same target, build
 *       ns/key, lookup ns/key, bits/key, realized FPR;
 *   <li>at 1 %: the classic kind's batched {@code mightContainAll} against Guava's {@code mightContain},
 *       single-key {@code String} lookups (classic, blocked, Guava) with the bytes each allocates per
 *       lookup (the thread's allocation counter; also for non-ASCII strings on classic and blocked);
 *   <li>{@code addAll(items, 2)} and {@code mightContainAll(items, out, 2)} against the same calls with
 *       parallelism 1, classic and blocked; {@code addAll} also on a single-writer classic filter (plain stores).
 * </ul>
 *
 * <p>Method: the n members are generated in chunks of 1M (generation is not timed); every build task
 * first consumes the first 2 chunks untimed into throw-away filters ({@link #warmUp}), then each chunk
 * in a rotating order into its own filters, so build figures are the filter's own time per key (for
 * Guava {@code put(String)}, whose hashing includes the UTF-8 encoding). Fuse build time is hashing plus
 * construction (sort and peel). Lookups: q known non-members and q members, 2 warm-up and
 * {@code rounds} measured passes per task in a rotating order, medians in ns per lookup.
 *
 * <p>Run: {@code java -Xmx3g -cp bench/target/benchmarks.jar io.bloomery.bench.KindSpeedBench [n] [q]
 * [rounds]} (defaults 10,000,000, 1,000,000 and 5). With a fourth argument {@code builds} only the parallel
 * builds run ({@link #runBuilds}): {@code rounds} passes, each building fresh filters, q unused; its first
 * pass is the cold one.
 */
public final class KindSpeedBench {

  private static final int CHUNK = 1_000_000;
  /** Chunks of members every build task consumes, untimed, before the timed builds ({@link #warmUp}). */
  private static final int WARM_UP_CHUNKS = 2;
  private static final double STATIC_FPP = 1.0 / 256;
  private static final double FPP = 0.01;

  private KindSpeedBench() {}

  /** A build step over one chunk of members. */
  private interface BuildTask {
    void add(String[] strings, byte[][] bytes, int base);
  }

  public static void main(String[] args) throws IOException {
    if (args.length > 3 && args[3].equals("builds")) {
      String[] numbers = Arrays.copyOf(args, 3);
      BenchFigures.runMain(numbers, (n, q, rounds) -> runBuilds(n, rounds));
    } else {
      BenchFigures.runMain(args, KindSpeedBench::run);
    }
  }

  /**
   * The parallel builds only: {@code addAll(items, 1)} and {@code addAll(items, 2)} on the classic (concurrent),
   * single-writer classic and blocked kinds. The n members are generated once (as byte arrays); each of the
   * {@code rounds} passes builds six fresh filters, every chunk of 1M consumed by each task in a rotating order,
   * and checks that each parallel build set the one-thread build's bits. Reports each pass's p2-vs-p1 ratio,
   * and the medians of the ns per key and of the ratio over the passes after the first (the first compiles
   * the code, with no warm-up before it; with one pass, over that one).
   */
  public static Map<String, Object> runBuilds(long n, int rounds) throws IOException {
    Map<String, Object> out = BenchFigures.startFigures(n, 1, rounds);
    SyntheticUrls urls = new SyntheticUrls(SyntheticUrls.BENCH_SEED);
    List<byte[][]> chunks = new ArrayList<>();
    for (long base = 0; base < n; base += CHUNK) {
      byte[][] bytes = new byte[(int) Math.min(CHUNK, n - base)][];
      for (int i = 0; i < bytes.length; i++) {
        bytes[i] = urls.url(base + i).getBytes(StandardCharsets.UTF_8);
      }
      chunks.add(bytes);
    }
    String[] kinds = {"classic", "classic_single_writer", "blocked"};
    Map<String, List<Double>> nsPerKey = new LinkedHashMap<>();
    for (int pass = 0; pass < rounds; pass++) {
      io.bloomery.filter.BloomFilter classic = io.bloomery.filter.BloomFilter.create(n, FPP);
      io.bloomery.filter.BloomFilter classic2 = io.bloomery.filter.BloomFilter.create(n, FPP);
      io.bloomery.filter.BloomFilter writer = io.bloomery.filter.BloomFilter.createSingleWriter(
          io.bloomery.hash.Protocols.defaultProtocol(), new byte[0], classic.bitSize(), classic.hashCount());
      io.bloomery.filter.BloomFilter writer2 = io.bloomery.filter.BloomFilter.createSingleWriter(
          io.bloomery.hash.Protocols.defaultProtocol(), new byte[0], classic.bitSize(), classic.hashCount());
      BlockedBloomFilter blocked = BlockedBloomFilter.create(n, FPP);
      BlockedBloomFilter blocked2 = BlockedBloomFilter.create(n, FPP);
      Map<String, java.util.function.Consumer<byte[][]>> builds = new LinkedHashMap<>();
      builds.put("classic_p1", bytes -> classic.addAll(bytes, 1));
      builds.put("classic_p2", bytes -> classic2.addAll(bytes, 2));
      builds.put("classic_single_writer_p1", bytes -> writer.addAll(bytes, 1));
      builds.put("classic_single_writer_p2", bytes -> writer2.addAll(bytes, 2));
      builds.put("blocked_p1", bytes -> blocked.addAll(bytes, 1));
      builds.put("blocked_p2", bytes -> blocked2.addAll(bytes, 2));
      Map<String, Long> nanos = new LinkedHashMap<>();
      List<String> order = new ArrayList<>(builds.keySet());
      for (byte[][] bytes : chunks) {
        Collections.rotate(order, 1);
        for (String name : order) {
          long start = System.nanoTime();
          builds.get(name).accept(bytes);
          nanos.merge(name, System.nanoTime() - start, Long::sum);
        }
      }
      if (classic.bitCount() != classic2.bitCount() || writer.bitCount() != classic.bitCount()
          || writer2.bitCount() != classic.bitCount() || blocked.bitCount() != blocked2.bitCount()
          || classic2.insertedCount() != classic.insertedCount() || blocked2.insertedCount() != blocked.insertedCount()) {
        throw new AssertionError("a parallel build set different bits or counts from the one-thread build");
      }
      for (String kind : kinds) {
        double p1 = nanos.get(kind + "_p1") / (double) n;
        double p2 = nanos.get(kind + "_p2") / (double) n;
        nsPerKey.computeIfAbsent(kind + "_p1", k -> new ArrayList<>()).add(p1);
        nsPerKey.computeIfAbsent(kind + "_p2", k -> new ArrayList<>()).add(p2);
        nsPerKey.computeIfAbsent("ratio_" + kind, k -> new ArrayList<>()).add(p1 / p2);
      }
      out.put("pass_" + pass, "load " + loadAverage());
    }
    int warm = rounds > 1 ? 1 : 0;
    for (String kind : kinds) {
      out.put("build_ns_per_key_" + kind + "_p1", round(median(nsPerKey.get(kind + "_p1").subList(warm, rounds))));
      out.put("build_ns_per_key_" + kind + "_p2", round(median(nsPerKey.get(kind + "_p2").subList(warm, rounds))));
      out.put("build_p2_vs_p1_" + kind, round(median(nsPerKey.get("ratio_" + kind).subList(warm, rounds))));
      out.put("build_p2_vs_p1_" + kind + "_passes", nsPerKey.get("ratio_" + kind).stream().map(BenchFigures::round).toList());
    }
    out.put("load_average_at_end", loadAverage());
    return out;
  }

  /** Runs the benchmark; returns figures by name. */
  public static Map<String, Object> run(long n, int q, int rounds) throws IOException {
    Map<String, Object> out = BenchFigures.startFigures(n, q, rounds);
    SyntheticUrls urls = new SyntheticUrls(SyntheticUrls.BENCH_SEED);

    Builds timed = new Builds(n);
    Map<String, BuildTask> builds = timed.tasks;
    BloomFilter<CharSequence> guava39 = timed.guava39;
    io.bloomery.filter.BloomFilter classic39 = timed.classic39;
    BlockedBloomFilter blocked39 = timed.blocked39;
    BloomFilter<CharSequence> guava = timed.guava;
    io.bloomery.filter.BloomFilter classic = timed.classic;
    io.bloomery.filter.BloomFilter classic2 = timed.classic2;
    io.bloomery.filter.BloomFilter classicWriter = timed.classicWriter;
    io.bloomery.filter.BloomFilter classicWriter2 = timed.classicWriter2;
    BlockedBloomFilter blocked = timed.blocked;
    BlockedBloomFilter blocked2 = timed.blocked2;
    long[] hashes = timed.hashes;
    warmUp(urls, n);

    Map<String, Long> buildNanos = new LinkedHashMap<>();
    consumeChunks(urls, n, builds, buildNanos);
    long start = System.nanoTime();
    BinaryFuseFilter fuse8 = BinaryFuseFilter.fromItemHashes(hashes.clone(), 8);
    buildNanos.put("fuse8", System.nanoTime() - start + buildNanos.get("fuse_hashing"));
    start = System.nanoTime();
    BinaryFuseFilter fuse16 = BinaryFuseFilter.fromItemHashes(hashes, 16);
    buildNanos.put("fuse16", System.nanoTime() - start + buildNanos.get("fuse_hashing"));
    buildNanos.remove("fuse_hashing");
    buildNanos.forEach((name, nanos) -> out.put("build_ns_per_key_" + name, round(nanos / (double) n)));
    out.put("build_p2_vs_p1_classic", round(buildNanos.get("classic_p1") / (double) buildNanos.get("classic_p2")));
    out.put("build_p2_vs_p1_classic_single_writer",
        round(buildNanos.get("classic_single_writer_p1") / (double) buildNanos.get("classic_single_writer_p2")));
    out.put("build_p2_vs_p1_blocked", round(buildNanos.get("blocked_p1") / (double) buildNanos.get("blocked_p2")));
    if (classic.bitCount() != classic2.bitCount() || blocked.bitCount() != blocked2.bitCount()
        || classicWriter.bitCount() != classic.bitCount() || classicWriter2.bitCount() != classic.bitCount()) {
      throw new AssertionError("a parallel build set different bits from the one-thread build");
    }

    SyntheticUrls.Probes probes = urls.probes(n, q);
    boolean[] answers = new boolean[q];
    Map<String, IntSupplier> lookups = new LinkedHashMap<>();
    for (boolean member : new boolean[] {false, true}) {
      String set = member ? "_present" : "_absent";
      String[] strings = member ? probes.presentStrings() : probes.absentStrings();
      byte[][] bytes = member ? probes.present() : probes.absent();
      lookups.put("guava_0.39" + set, () -> countGuava(guava39, strings));
      lookups.put("classic_0.39" + set, () -> classic39.mightContainAll(bytes, answers));
      lookups.put("blocked_0.39" + set, () -> blocked39.mightContainAll(bytes, answers));
      lookups.put("fuse8" + set, () -> fuse8.mightContainAll(bytes, answers));
      lookups.put("fuse16" + set, () -> fuse16.mightContainAll(bytes, answers));
      lookups.put("guava" + set, () -> countGuava(guava, strings));
      lookups.put("classic_single_bytes" + set, () -> countSingle(classic, bytes));
      lookups.put("classic_single_string" + set, () -> countStrings(classic, strings));
      lookups.put("blocked_single_string" + set, () -> countStrings(blocked, strings));
      lookups.put("classic_batched_p1" + set, () -> classic.mightContainAll(bytes, answers, 1));
      lookups.put("classic_batched_p2" + set, () -> classic.mightContainAll(bytes, answers, 2));
      lookups.put("blocked_batched_p1" + set, () -> blocked.mightContainAll(bytes, answers, 1));
      lookups.put("blocked_batched_p2" + set, () -> blocked.mightContainAll(bytes, answers, 2));
    }
    Map<String, List<Double>> nanos = new LinkedHashMap<>();
    Map<String, Integer> positives = new LinkedHashMap<>();
    List<String> order = new ArrayList<>(lookups.keySet());
    for (int round = 0; round < 2 + rounds; round++) {
      Collections.rotate(order, 3);
      for (String name : order) {
        long t0 = System.nanoTime();
        int maybe = lookups.get(name).getAsInt();
        long t1 = System.nanoTime();
        if (name.endsWith("_present") && maybe != q) {
          throw new AssertionError(name + ": " + (q - maybe) + " false negatives");
        }
        if (round >= 2) {
          nanos.computeIfAbsent(name, k -> new ArrayList<>()).add((t1 - t0) / (double) q);
          positives.put(name, maybe);
        }
      }
    }
    for (String name : lookups.keySet()) {
      out.put("lookup_ns_" + name, round(median(nanos.get(name))));
    }
    for (String set : new String[] {"_absent", "_present"}) {
      double guavaStatic = median(nanos.get("guava_0.39" + set));
      for (String kind : new String[] {"classic_0.39", "blocked_0.39", "fuse8", "fuse16"}) {
        out.put("lookup_vs_guava_" + kind + set, round(guavaStatic / median(nanos.get(kind + set))));
      }
      double guavaNs = median(nanos.get("guava" + set));
      for (String kind : new String[] {"classic_single_bytes", "classic_single_string", "blocked_single_string",
          "classic_batched_p1", "classic_batched_p2", "blocked_batched_p1"}) {
        out.put("lookup_vs_guava_" + kind + set, round(guavaNs / median(nanos.get(kind + set))));
      }
      for (String kind : new String[] {"classic", "blocked"}) {
        out.put("lookup_p2_vs_p1_" + kind + set,
            round(median(nanos.get(kind + "_batched_p1" + set)) / median(nanos.get(kind + "_batched_p2" + set))));
      }
    }
    for (String kind : new String[] {"guava_0.39", "classic_0.39", "blocked_0.39", "fuse8", "fuse16"}) {
      out.put("realized_fpr_percent_" + kind, round(100.0 * positives.get(kind + "_absent") / q));
    }
    out.put("bits_per_key_guava_0.39", round(QuickBench.guavaBits(guava39) / (double) n));
    out.put("bits_per_key_classic_0.39", round(classic39.bitSize() / (double) n));
    out.put("bits_per_key_blocked_0.39", round(blocked39.bitSize() / (double) n));
    out.put("bits_per_key_fuse8", round(fuse8.bitsPerKey()));
    out.put("bits_per_key_fuse16", round(fuse16.bitsPerKey()));
    out.put("model_fpr_percent_fuse8", round(100 * fuse8.estimatedFpp()));
    out.put("model_fpr_percent_fuse16", round(100 * fuse16.estimatedFpp()));

    out.put("alloc_bytes_per_lookup_guava_string", allocatedPerCall(() -> countGuava(guava, probes.absentStrings()), q));
    out.put("alloc_bytes_per_lookup_classic_string", allocatedPerCall(() -> countStrings(classic, probes.absentStrings()), q));
    out.put("alloc_bytes_per_lookup_blocked_string", allocatedPerCall(() -> countStrings(blocked, probes.absentStrings()), q));
    out.put("alloc_bytes_per_lookup_classic_bytes", allocatedPerCall(() -> countSingle(classic, probes.absent()), q));
    String[] nonAscii = new String[q];
    for (int i = 0; i < q; i++) {
      nonAscii[i] = "größe/日本/\uD83D\uDE00" + probes.absentStrings()[i]; // Latin-1, CJK and a surrogate pair
    }
    out.put("alloc_bytes_per_lookup_classic_string_non_ascii", allocatedPerCall(() -> countStrings(classic, nonAscii), q));
    out.put("alloc_bytes_per_lookup_blocked_string_non_ascii", allocatedPerCall(() -> countStrings(blocked, nonAscii), q));
    out.put("load_average_at_end", loadAverage());
    return out;
  }

  /**
   * One set of the build tasks' filters, sized for n, and the tasks that fill them (chunk by chunk).
   */
  private static final class Builds {
    final BloomFilter<CharSequence> guava39;
    final io.bloomery.filter.BloomFilter classic39;
    final BlockedBloomFilter blocked39;
    final BloomFilter<CharSequence> guava;
    final io.bloomery.filter.BloomFilter classic;
    final io.bloomery.filter.BloomFilter classic2;
    final io.bloomery.filter.BloomFilter classicWriter;
    final io.bloomery.filter.BloomFilter classicWriter2;
    final BlockedBloomFilter blocked;
    final BlockedBloomFilter blocked2;
    final long[] hashes;
    final Map<String, BuildTask> tasks = new LinkedHashMap<>();

    Builds(long n) {
      guava39 = BloomFilter.create(Funnels.stringFunnel(StandardCharsets.UTF_8), n, STATIC_FPP);
      classic39 = io.bloomery.filter.BloomFilter.create(n, STATIC_FPP);
      blocked39 = BlockedBloomFilter.create(n, STATIC_FPP);
      guava = BloomFilter.create(Funnels.stringFunnel(StandardCharsets.UTF_8), n, FPP);
      classic = io.bloomery.filter.BloomFilter.create(n, FPP);
      classic2 = io.bloomery.filter.BloomFilter.create(n, FPP);
      classicWriter = io.bloomery.filter.BloomFilter.createSingleWriter(
          io.bloomery.hash.Protocols.defaultProtocol(), new byte[0], classic.bitSize(), classic.hashCount());
      classicWriter2 = io.bloomery.filter.BloomFilter.createSingleWriter(
          io.bloomery.hash.Protocols.defaultProtocol(), new byte[0], classic.bitSize(), classic.hashCount());
      blocked = BlockedBloomFilter.create(n, FPP);
      blocked2 = BlockedBloomFilter.create(n, FPP);
      hashes = new long[(int) n];
      tasks.put("guava_0.39", (strings, bytes, base) -> {
        for (String s : strings) {
          guava39.put(s);
        }
      });
      tasks.put("classic_0.39", (strings, bytes, base) -> classic39.addAll(bytes));
      tasks.put("blocked_0.39", (strings, bytes, base) -> blocked39.addAll(bytes));
      tasks.put("fuse_hashing", (strings, bytes, base) -> {
        for (int i = 0; i < bytes.length; i++) {
          hashes[base + i] = BinaryFuseFilter.itemHash(bytes[i]);
        }
      });
      tasks.put("guava", (strings, bytes, base) -> {
        for (String s : strings) {
          guava.put(s);
        }
      });
      tasks.put("classic_p1", (strings, bytes, base) -> classic.addAll(bytes, 1));
      tasks.put("classic_p2", (strings, bytes, base) -> classic2.addAll(bytes, 2));
      tasks.put("classic_single_writer_p1", (strings, bytes, base) -> classicWriter.addAll(bytes, 1));
      tasks.put("classic_single_writer_p2", (strings, bytes, base) -> classicWriter2.addAll(bytes, 2));
      tasks.put("blocked_p1", (strings, bytes, base) -> blocked.addAll(bytes, 1));
      tasks.put("blocked_p2", (strings, bytes, base) -> blocked2.addAll(bytes, 2));
    }
  }

  /**
   * Runs every build task, untimed, over the first {@value #WARM_UP_CHUNKS} chunks of members into throw-away
   * filters of the same size, so that the timed builds start with their code compiled, as the lookups do
   * after their 2 warm-up passes. Without it the task that happened to run first paid for the JVM's first
   * compilation of the code the tasks share (XXH3, the blocked insert), and the two-thread tasks paid for
   * their own with both cores busy (the JIT compiler threads then compete with them): in runs A to J the
   * first task of the first chunk was the two-thread blocked build.
   */
  private static void warmUp(SyntheticUrls urls, long n) {
    consumeChunks(urls, Math.min(n, (long) WARM_UP_CHUNKS * CHUNK), new Builds(n).tasks, new LinkedHashMap<>());
  }

  /**
   * Generates the members {@code [0, limit)} chunk by chunk and has every task consume each chunk, in an
   * order rotated by one per chunk; adds each task's time to {@code nanos}.
   */
  private static void consumeChunks(SyntheticUrls urls, long limit, Map<String, BuildTask> tasks,
      Map<String, Long> nanos) {
    List<String> order = new ArrayList<>(tasks.keySet());
    for (long base = 0; base < limit; base += CHUNK) {
      int size = (int) Math.min(CHUNK, limit - base);
      String[] strings = new String[size];
      byte[][] bytes = new byte[size][];
      for (int i = 0; i < size; i++) {
        strings[i] = urls.url(base + i);
        bytes[i] = strings[i].getBytes(StandardCharsets.UTF_8);
      }
      Collections.rotate(order, 1);
      for (String name : order) {
        long start = System.nanoTime();
        tasks.get(name).add(strings, bytes, (int) base);
        nanos.merge(name, System.nanoTime() - start, Long::sum);
      }
    }
  }

  private static int countGuava(BloomFilter<CharSequence> filter, String[] keys) {
    int maybe = 0;
    for (String key : keys) {
      maybe += filter.mightContain(key) ? 1 : 0;
    }
    return maybe;
  }

  private static int countSingle(io.bloomery.filter.MembershipFilter filter, byte[][] keys) {
    int maybe = 0;
    for (byte[] key : keys) {
      maybe += filter.mightContain(key) ? 1 : 0;
    }
    return maybe;
  }

  private static int countStrings(io.bloomery.filter.MembershipFilter filter, String[] keys) {
    int maybe = 0;
    for (String key : keys) {
      maybe += filter.mightContain(key) ? 1 : 0;
    }
    return maybe;
  }

  /** Bytes the calling thread allocated per key over one (already warm) pass of {@code pass}. */
  private static double allocatedPerCall(IntSupplier pass, int keys) {
    com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    pass.getAsInt();
    long before = threads.getCurrentThreadAllocatedBytes();
    pass.getAsInt();
    return round((threads.getCurrentThreadAllocatedBytes() - before) / (double) keys);
  }

}
