package io.bloomery.hash;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.Objects;

/**
 * Austin Appleby's MurmurHash2 family exactly as RedisBloom vendors it ({@code deps/murmur2/MurmurHash2.c}):
 * {@link #hash64A MurmurHash64A} (BF.* filters since v1.1.1 and every CF.* filter) and the 32-bit
 * {@link #hash32 MurmurHash2} (legacy BF.* filters without the FORCE64 option).
 *
 * <p>Both read their input as little-endian blocks, as the C code does on the x86/ARM hosts RedisBloom runs on.
 * hash4j ships neither variant and Apache commons-codec's {@code hash64} only takes an {@code int} seed, which
 * cannot express RedisBloom's Bloom seed {@code 0xc6a4a7935bd1e995}; hence this class. Pinned by the vectors in
 * RedisBloom's own test expectations (master b28c29451ad4).
 *
 * <p>Stateless and thread-safe.
 */
public final class MurmurHash2 {
  /** RedisBloom's seed for {@code a} in BF.* filters ({@code bloom_calc_hash64}); {@code b} is seeded with {@code a}. */
  public static final long REDISBLOOM_BF_SEED = 0xc6a4a7935bd1e995L;
  /** RedisBloom's seed for {@code a} in legacy 32-bit BF.* filters ({@code bloom_calc_hash}). */
  public static final int REDISBLOOM_BF_SEED_32 = 0x9747b28c;
  private static final long M64 = 0xc6a4a7935bd1e995L;
  private static final int R64 = 47;
  private static final int M32 = 0x5bd1e995;
  private static final int R32 = 24;
  // One load per block (C2 does not merge the eight byte loads of a hand-written little-endian read into one):
  // the same values as the byte-wise reads, on any host.
  private static final VarHandle LE_LONG = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
  private static final VarHandle LE_INT = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.LITTLE_ENDIAN);

  private MurmurHash2() {}

  /**
   * MurmurHash64A of {@code data[offset, offset + length)} with a 64-bit seed; all arithmetic is modulo 2^64.
   */
  public static long hash64A(byte[] data, int offset, int length, long seed) {
    Objects.checkFromIndexSize(offset, length, Objects.requireNonNull(data, "data").length);
    long h = seed ^ (length * M64);
    int blocks = length >>> 3;
    int p = offset;
    for (int i = 0; i < blocks; i++, p += 8) {
      long k = littleEndianLong(data, p);
      k *= M64;
      k ^= k >>> R64;
      k *= M64;
      h ^= k;
      h *= M64;
    }
    int tail = length & 7;
    if (tail > 0) {
      for (int i = tail - 1; i >= 0; i--) {
        h ^= (data[p + i] & 0xFFL) << (8 * i);
      }
      h *= M64;
    }
    h ^= h >>> R64;
    h *= M64;
    h ^= h >>> R64;
    return h;
  }

  /** MurmurHash64A of the whole array. */
  public static long hash64A(byte[] data, long seed) {
    return hash64A(data, 0, data.length, seed);
  }

  /**
   * The 32-bit MurmurHash2 of {@code data[offset, offset + length)}; the result is an unsigned 32-bit value in the
   * low bits of the returned {@code int}.
   */
  public static int hash32(byte[] data, int offset, int length, int seed) {
    Objects.checkFromIndexSize(offset, length, Objects.requireNonNull(data, "data").length);
    int h = seed ^ length;
    int p = offset;
    int remaining = length;
    while (remaining >= 4) {
      int k = (int) LE_INT.get(data, p);
      k *= M32;
      k ^= k >>> R32;
      k *= M32;
      h *= M32;
      h ^= k;
      p += 4;
      remaining -= 4;
    }
    if (remaining > 0) {
      for (int i = remaining - 1; i >= 0; i--) {
        h ^= (data[p + i] & 0xFF) << (8 * i);
      }
      h *= M32;
    }
    h ^= h >>> 13;
    h *= M32;
    h ^= h >>> 15;
    return h;
  }

  static long littleEndianLong(byte[] data, int p) {
    return (long) LE_LONG.get(data, p);
  }
}
