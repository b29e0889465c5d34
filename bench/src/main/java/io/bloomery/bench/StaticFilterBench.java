package io.bloomery.bench;

import static io.bloomery.bench.BenchFigures.median;
import static io.bloomery.bench.BenchFigures.round;

import com.google.common.hash.BloomFilter;
import com.google.common.hash.Funnels;
import io.bloomery.blocked.BlockedBloomFilter;
import io.bloomery.cli.SyntheticUrls;
import io.bloomery.fuse.BinaryFuseFilter;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;

import java.util.Map;

/**
 * Static filters for immutable snapshots: binary fuse (8- and 16-bit fingerprints) beside the blocked
 * Bloom filter at 1 % and Guava's {@code BloomFilter} at 1 % (the anchor), on the crawler workload
 * (synthetic ~80-byte URLs, {@link SyntheticUrls#BENCH_SEED}), in one JVM.
 *
 * <p>Method: every filter is built from the same n URLs (build time is the whole construction: for
 * the fuse filters hashing, sorting and peeling; for the Bloom filters n adds). Lookups are q known
 * non-members and q members, one thread, 2 warm-up rounds and {@code rounds} measured rounds with the
 * filters in a rotating order; figures are medians in ns per lookup. The realized FPR is counted over
 * the q non-members. Bits per key are the filter's own storage bits over n.
 *
 * <p>Run: {@code java -Xmx6g -cp bench/target/benchmarks.jar io.bloomery.bench.StaticFilterBench [n] [q] [rounds]}
 * (defaults 10,000,000, 1,000,000 and 5).
 */
public final class StaticFilterBench {

  private StaticFilterBench() {}

  private interface Lookup {
    boolean test(int index, boolean member);
  }

  public static void main(String[] args) {
    long n = args.length > 0 ? Long.parseLong(args[0]) : 10_000_000L;
    int q = args.length > 1 ? Integer.parseInt(args[1]) : 1_000_000;
    int rounds = args.length > 2 ? Integer.parseInt(args[2]) : 5;
    Map<String, Object> result = run(n, q, rounds);
    result.forEach((key, value) -> System.out.println(key + " = " + value));
  }

  /** Runs the benchmark; returns figures by name. */
  public static Map<String, Object> run(long n, int q, int rounds) {
    SyntheticUrls urls = new SyntheticUrls(SyntheticUrls.BENCH_SEED);
    SyntheticUrls.Probes probes = urls.probes(n, q);
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("keys", n);
    out.put("queries", q);

    long start = System.nanoTime();
    long[] hashes = new long[(int) n];
    for (int i = 0; i < n; i++) {
      hashes[i] = BinaryFuseFilter.itemHash(urls.urlBytes(i));
    }
    long hashNanos = System.nanoTime() - start;
    start = System.nanoTime();
    BinaryFuseFilter fuse8 = BinaryFuseFilter.fromItemHashes(hashes.clone(), 8);
    long fuse8Nanos = System.nanoTime() - start + hashNanos;
    start = System.nanoTime();
    BinaryFuseFilter fuse16 = BinaryFuseFilter.fromItemHashes(hashes, 16);
    long fuse16Nanos = System.nanoTime() - start + hashNanos;
    hashes = null;

    start = System.nanoTime();
    BlockedBloomFilter blocked = BlockedBloomFilter.create(n, 0.01);
    for (long i = 0; i < n; i++) {
      blocked.add(urls.urlBytes(i));
    }
    long blockedNanos = System.nanoTime() - start;
    start = System.nanoTime();
    BloomFilter<CharSequence> guava = BloomFilter.create(Funnels.stringFunnel(StandardCharsets.UTF_8), n, 0.01);
    for (long i = 0; i < n; i++) {
      guava.put(urls.url(i));
    }
    long guavaNanos = System.nanoTime() - start;

    Map<String, Lookup> lookups = new LinkedHashMap<>();
    lookups.put("guava", (i, member) -> guava.mightContain(member ? probes.presentStrings()[i] : probes.absentStrings()[i]));
    lookups.put("blocked", (i, member) -> blocked.mightContain(member ? probes.present()[i] : probes.absent()[i]));
    lookups.put("fuse8", (i, member) -> fuse8.mightContain(member ? probes.present()[i] : probes.absent()[i]));
    lookups.put("fuse16", (i, member) -> fuse16.mightContain(member ? probes.present()[i] : probes.absent()[i]));

    Map<String, List<Double>> absentNs = new LinkedHashMap<>();
    Map<String, List<Double>> presentNs = new LinkedHashMap<>();
    Map<String, Long> falsePositives = new LinkedHashMap<>();
    List<String> order = new ArrayList<>(lookups.keySet());
    long sink = 0;
    for (int round = 0; round < 2 + rounds; round++) {
      Collections.rotate(order, 1);
      for (String name : order) {
        Lookup lookup = lookups.get(name);
        long t0 = System.nanoTime();
        long positives = 0;
        for (int i = 0; i < q; i++) {
          positives += lookup.test(i, false) ? 1 : 0;
        }
        long t1 = System.nanoTime();
        long members = 0;
        for (int i = 0; i < q; i++) {
          members += lookup.test(i, true) ? 1 : 0;
        }
        long t2 = System.nanoTime();
        if (members != q) {
          throw new AssertionError(name + ": " + (q - members) + " false negatives");
        }
        sink += positives;
        if (round >= 2) {
          absentNs.computeIfAbsent(name, k -> new ArrayList<>()).add((t1 - t0) / (double) q);
          presentNs.computeIfAbsent(name, k -> new ArrayList<>()).add((t2 - t1) / (double) q);
          falsePositives.put(name, positives);
        }
      }
    }
    double guavaAbsent = median(absentNs.get("guava"));
    double guavaPresent = median(presentNs.get("guava"));
    for (String name : lookups.keySet()) {
      double absent = median(absentNs.get(name));
      double present = median(presentNs.get(name));
      out.put(name + "_absent_ns", round(absent));
      out.put(name + "_present_ns", round(present));
      out.put(name + "_absent_vs_guava", round(guavaAbsent / absent));
      out.put(name + "_present_vs_guava", round(guavaPresent / present));
      out.put(name + "_realized_fpr_percent", round(100.0 * falsePositives.get(name) / q));
    }
    out.put("guava_bits_per_key", round(guava.approximateElementCount() > 0 ? guavaBits(n) / (double) n : 0));
    out.put("blocked_bits_per_key", round(blocked.bitSize() / (double) n));
    out.put("fuse8_bits_per_key", round(fuse8.bitsPerKey()));
    out.put("fuse16_bits_per_key", round(fuse16.bitsPerKey()));
    out.put("blocked_model_fpr_percent", round(100 * blocked.modelFpp(n)));
    out.put("fuse8_model_fpr_percent", round(100 * fuse8.estimatedFpp()));
    out.put("fuse16_model_fpr_percent", round(100 * fuse16.estimatedFpp()));
    out.put("build_ms_guava", guavaNanos / 1_000_000);
    out.put("build_ms_blocked", blockedNanos / 1_000_000);
    out.put("build_ms_fuse8", fuse8Nanos / 1_000_000);
    out.put("build_ms_fuse16", fuse16Nanos / 1_000_000);
    out.put("sink", sink);
    return out;
  }

  /** Guava's optimal bit count for n at 1 %, rounded up to whole words as its bit array does. */
  private static long guavaBits(long n) {
    long bits = (long) (-n * Math.log(0.01) / (Math.log(2) * Math.log(2)));
    return (bits + 63) / 64 * 64;
  }
}
