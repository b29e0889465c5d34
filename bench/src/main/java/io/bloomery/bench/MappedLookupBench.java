package io.bloomery.bench;

import static io.bloomery.bench.BenchFigures.median;
import static io.bloomery.bench.BenchFigures.round;

import io.bloomery.blocked.BlockedBloomFilter;
import io.bloomery.cli.SyntheticUrls;
import io.bloomery.filter.BloomFilter;
import io.bloomery.format.FilterFormat;
import io.bloomery.format.MappedBlockedBloomFilter;
import io.bloomery.format.MappedBloomFilter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.IntSupplier;

/**
 * Lookups in a filter read in place from its file ({@code FilterFormat.map}: {@code MappedByteBuffer}
 * segments) against the same filter on the heap, classic and blocked at 1 % on the crawler workload
 * (synthetic URLs, {@link SyntheticUrls#BENCH_SEED}); every ratio is heap time over mapped time in the
 * same run. The heap filters are also timed in a first phase before any mapped filter has been opened
 * (no mapped class loaded), and that figure is compared with the heap figure of the interleaved phase:
 * a ratio near 1 says the mapped filters do not slow the heap path.
 *
 * <p>Method: n members added with {@code addAll}, written with {@code FilterFormat.write(filter, Path)}
 * to a temporary directory (page cache warm: the files were just written), mapped with the checksum
 * verified. q known non-members and q members; single-key {@code mightContain(byte[])} and batched
 * {@code mightContainAll(byte[][], boolean[])}; 2 warm-up and {@code rounds} measured passes per task in
 * a rotating order, medians in ns per lookup.
 *
 * <p>Run: {@code java -Xmx3g -cp bench/target/benchmarks.jar io.bloomery.bench.MappedLookupBench [n] [q]
 * [rounds]} (defaults 10,000,000, 1,000,000 and 5).
 */
public final class MappedLookupBench {

  private static final double FPP = 0.01;
  private static final int CHUNK = 1_000_000;

  private MappedLookupBench() {}

  public static void main(String[] args) throws IOException {
    BenchFigures.runMain(args, MappedLookupBench::run);
  }

  /** Runs the benchmark; returns figures by name. */
  public static Map<String, Object> run(long n, int q, int rounds) throws IOException {
    Map<String, Object> out = BenchFigures.startFigures(n, q, rounds);
    SyntheticUrls urls = new SyntheticUrls(SyntheticUrls.BENCH_SEED);
    BloomFilter classic = BloomFilter.create(n, FPP);
    BlockedBloomFilter blocked = BlockedBloomFilter.create(n, FPP);
    for (long base = 0; base < n; base += CHUNK) {
      int size = (int) Math.min(CHUNK, n - base);
      byte[][] bytes = new byte[size][];
      for (int i = 0; i < size; i++) {
        bytes[i] = urls.url(base + i).getBytes(StandardCharsets.UTF_8);
      }
      classic.addAll(bytes);
      blocked.addAll(bytes);
    }
    SyntheticUrls.Probes probes = urls.probes(n, q);
    boolean[] answers = new boolean[q];

    Map<String, IntSupplier> heap = new LinkedHashMap<>();
    for (boolean member : new boolean[] {false, true}) {
      String set = member ? "_present" : "_absent";
      byte[][] keys = member ? probes.present() : probes.absent();
      heap.put("classic_heap_single" + set, () -> countClassic(classic, keys));
      heap.put("classic_heap_batched" + set, () -> classic.mightContainAll(keys, answers));
      heap.put("blocked_heap_single" + set, () -> countBlocked(blocked, keys));
      heap.put("blocked_heap_batched" + set, () -> blocked.mightContainAll(keys, answers));
    }
    Map<String, List<Double>> before = time(heap, q, rounds);

    Path directory = Files.createTempDirectory("mapped-bench");
    Path classicFile = directory.resolve("classic" + FilterFormat.FILE_EXTENSION);
    Path blockedFile = directory.resolve("blocked" + FilterFormat.FILE_EXTENSION);
    try {
      FilterFormat.write(classic, classicFile);
      FilterFormat.write(blocked, blockedFile);
      long start = System.nanoTime();
      MappedBloomFilter mappedClassic = FilterFormat.map(classicFile, MappedBloomFilter.class);
      out.put("map_with_checksum_ms_classic", round((System.nanoTime() - start) / 1e6));
      start = System.nanoTime();
      MappedBlockedBloomFilter mappedBlocked = FilterFormat.map(blockedFile, MappedBlockedBloomFilter.class);
      out.put("map_with_checksum_ms_blocked", round((System.nanoTime() - start) / 1e6));
      out.put("file_bytes_classic", Files.size(classicFile));
      out.put("file_bytes_blocked", Files.size(blockedFile));

      Map<String, IntSupplier> all = new LinkedHashMap<>(heap);
      for (boolean member : new boolean[] {false, true}) {
        String set = member ? "_present" : "_absent";
        byte[][] keys = member ? probes.present() : probes.absent();
        all.put("classic_mapped_single" + set, () -> countMappedClassic(mappedClassic, keys));
        all.put("classic_mapped_batched" + set, () -> mappedClassic.mightContainAll(keys, answers));
        all.put("blocked_mapped_single" + set, () -> countMappedBlocked(mappedBlocked, keys));
        all.put("blocked_mapped_batched" + set, () -> mappedBlocked.mightContainAll(keys, answers));
      }
      Map<String, List<Double>> nanos = time(all, q, rounds);
      for (String name : all.keySet()) {
        out.put("lookup_ns_" + name, round(median(nanos.get(name))));
      }
      for (String set : new String[] {"_absent", "_present"}) {
        for (String kind : new String[] {"classic", "blocked"}) {
          for (String how : new String[] {"_single", "_batched"}) {
            String heapName = kind + "_heap" + how + set;
            out.put("heap_vs_mapped_" + kind + how + set,
                round(median(nanos.get(heapName)) / median(nanos.get(kind + "_mapped" + how + set))));
            out.put("heap_before_vs_after_mapping_" + kind + how + set,
                round(median(before.get(heapName)) / median(nanos.get(heapName))));
          }
        }
      }
    } finally {
      Files.deleteIfExists(classicFile);
      Files.deleteIfExists(blockedFile);
      Files.delete(directory);
    }
    out.put("load_average_at_end", BenchFigures.loadAverage());
    return out;
  }

  /** Times every task: 2 warm-up and {@code rounds} measured passes in a rotating order; checks members. */
  private static Map<String, List<Double>> time(Map<String, IntSupplier> tasks, int q, int rounds) {
    Map<String, List<Double>> nanos = new LinkedHashMap<>();
    List<String> order = new ArrayList<>(tasks.keySet());
    for (int round = 0; round < 2 + rounds; round++) {
      Collections.rotate(order, 3);
      for (String name : order) {
        long t0 = System.nanoTime();
        int maybe = tasks.get(name).getAsInt();
        long t1 = System.nanoTime();
        if (name.endsWith("_present") && maybe != q) {
          throw new AssertionError(name + ": " + (q - maybe) + " false negatives");
        }
        if (round >= 2) {
          nanos.computeIfAbsent(name, k -> new ArrayList<>()).add((t1 - t0) / (double) q);
        }
      }
    }
    return nanos;
  }

  // One loop per type, so that no call site in the harness sees two filter classes.

  private static int countClassic(BloomFilter filter, byte[][] keys) {
    int maybe = 0;
    for (byte[] key : keys) {
      maybe += filter.mightContain(key) ? 1 : 0;
    }
    return maybe;
  }

  private static int countBlocked(BlockedBloomFilter filter, byte[][] keys) {
    int maybe = 0;
    for (byte[] key : keys) {
      maybe += filter.mightContain(key) ? 1 : 0;
    }
    return maybe;
  }

  private static int countMappedClassic(MappedBloomFilter filter, byte[][] keys) {
    int maybe = 0;
    for (byte[] key : keys) {
      maybe += filter.mightContain(key) ? 1 : 0;
    }
    return maybe;
  }

  private static int countMappedBlocked(MappedBlockedBloomFilter filter, byte[][] keys) {
    int maybe = 0;
    for (byte[] key : keys) {
      maybe += filter.mightContain(key) ? 1 : 0;
    }
    return maybe;
  }
}
