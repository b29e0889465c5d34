package io.bloomery.bench;

import com.dynatrace.hash4j.hashing.Hasher64;
import com.dynatrace.hash4j.hashing.Hashing;
import io.bloomery.cli.SyntheticUrls;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.LongBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;

/**
 * Measures the storage choices behind {@code BlockedBloomFilter} on the running JVM, without Unsafe:
 *
 * <ol>
 *   <li>Random 64-byte block reads (all 8 longs) from a 64 MB {@code long[]} starting at each offset
 *       0..7: the offset whose blocks sit on cache lines is the fastest, because the others straddle
 *       two lines per block. This is how the filter's base index 6 was confirmed.
 *   <li>The same reads from a direct {@code ByteBuffer.alignedSlice(64)} through a {@code VarHandle}
 *       view and through a {@code LongBuffer} view (aligned by API contract).
 *   <li>UTF-8 conversion plus XXH3 of URL strings: {@code String.getBytes(UTF_8)} against the
 *       filter's per-thread scratch encoder path (through {@code BlockedBloomFilter.mightContain}).
 * </ol>
 *
 * <p>Run: {@code java -Xmx2g -cp bench/target/benchmarks.jar io.bloomery.bench.AlignmentProbe}. Prints
 * medians of 5 rounds in ns per block read (or per key).
 */
public final class AlignmentProbe {
  private static final int BYTES = 64 << 20;
  private static final int READS = 5_000_000;
  private static final VarHandle LONGS = MethodHandles.byteBufferViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
  private static final Hasher64 XXH3 = Hashing.xxh3_64();

  private AlignmentProbe() {}

  public static void main(String[] args) {
    long[] array = new long[BYTES / 8 + 8];
    int lines = BYTES / 64 - 1;
    ByteBuffer direct = ByteBuffer.allocateDirect(BYTES + 64).alignedSlice(64).order(ByteOrder.LITTLE_ENDIAN);
    LongBuffer longView = direct.asLongBuffer();
    long sink = 0;
    for (int offset = 0; offset < 8; offset++) {
      int base = offset;
      double ns = median(() -> readArray(array, base, lines));
      System.out.printf(Locale.ROOT, "long[] base index %d: %.1f ns per 64-byte block read%n", offset, ns);
    }
    System.out.printf(Locale.ROOT, "direct ByteBuffer.alignedSlice(64) + VarHandle: %.1f ns per block read%n",
        median(() -> readVarHandle(direct, lines)));
    System.out.printf(Locale.ROOT, "direct ByteBuffer.alignedSlice(64) as LongBuffer: %.1f ns per block read%n",
        median(() -> readLongBuffer(longView, lines)));
    SyntheticUrls urls = new SyntheticUrls(SyntheticUrls.BENCH_SEED);
    String[] keys = new String[1_000_000];
    for (int i = 0; i < keys.length; i++) {
      keys[i] = urls.url(i);
    }
    io.bloomery.blocked.BlockedBloomFilter tiny = io.bloomery.blocked.BlockedBloomFilter.create(new byte[0], 1, 7);
    System.out.printf(Locale.ROOT, "getBytes(UTF_8) + XXH3, per key: %.1f ns%n", median(() -> {
      long sum = 0;
      for (String key : keys) {
        sum += XXH3.hashBytesToLong(key.getBytes(StandardCharsets.UTF_8));
      }
      return sum;
    }) * READS / keys.length);
    System.out.printf(Locale.ROOT, "scratch UTF-8 + XXH3 + 1-block probe (mightContain(String)), per key: %.1f ns%n", median(() -> {
      long sum = 0;
      for (String key : keys) {
        sum += tiny.mightContain(key) ? 1 : 0;
      }
      return sum;
    }) * READS / keys.length);
    System.out.printf(Locale.ROOT, "getBytes(UTF_8) + XXH3 + 1-block probe (mightContain(byte[])), per key: %.1f ns%n", median(() -> {
      long sum = 0;
      for (String key : keys) {
        sum += tiny.mightContain(key.getBytes(StandardCharsets.UTF_8)) ? 1 : 0;
      }
      return sum;
    }) * READS / keys.length);
    System.out.println("(sink " + sink + ")");
  }

  interface Task {
    long run();
  }

  private static double median(Task task) {
    List<Double> samples = new ArrayList<>();
    long sink = 0;
    for (int round = 0; round < 7; round++) {
      long t0 = System.nanoTime();
      sink += task.run();
      double ns = (System.nanoTime() - t0) / (double) READS;
      if (round >= 2) {
        samples.add(ns);
      }
    }
    Collections.sort(samples);
    return samples.get(samples.size() / 2) + (sink == 42 ? 1e-9 : 0);
  }

  private static long readArray(long[] array, int base, int lines) {
    long x = 1;
    long sum = 0;
    for (int i = 0; i < READS; i++) {
      x = x * 6364136223846793005L + 1442695040888963407L;
      int start = base + ((int) (((x >>> 32) * lines) >>> 32) << 3);
      for (int w = 0; w < 8; w++) {
        sum += array[start + w];
      }
    }
    return sum;
  }

  private static long readVarHandle(ByteBuffer buffer, int lines) {
    long x = 1;
    long sum = 0;
    for (int i = 0; i < READS; i++) {
      x = x * 6364136223846793005L + 1442695040888963407L;
      int start = (int) (((x >>> 32) * lines) >>> 32) << 6;
      for (int w = 0; w < 8; w++) {
        sum += (long) LONGS.get(buffer, start + 8 * w);
      }
    }
    return sum;
  }

  private static long readLongBuffer(LongBuffer buffer, int lines) {
    long x = 1;
    long sum = 0;
    for (int i = 0; i < READS; i++) {
      x = x * 6364136223846793005L + 1442695040888963407L;
      int start = (int) (((x >>> 32) * lines) >>> 32) << 3;
      for (int w = 0; w < 8; w++) {
        sum += buffer.get(start + w);
      }
    }
    return sum;
  }
}
