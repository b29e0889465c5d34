package io.bloomery.scalable;

import io.bloomery.internal.HeapBudget;
import io.bloomery.internal.Unsigned;

/**
 * One RedisBloom Bloom layer ({@code struct bloom} plus the link's item count), sized exactly as
 * {@code bloom_init} in {@code deps/bloom/bloom.c} does it:
 *
 * <pre>
 *   bpe    = |-(ln(error) / 0.480453013918201)|             ln(2)^2 as written in the C source
 *   NOROUND (every filter since v2.2):
 *     bits = (uint64)(entries * bpe), at least 1;  n2 = 0
 *   legacy power-of-two (no NOROUND):
 *     n2 = logb(entries * bpe) + 1;  bits = 2^n2;  entries += (size_t)((size_t)(bits - entries*bpe) / bpe)
 *   ENTS_IS_BITS (legacy): n2 = entries (≤ 64); bits = 2^n2; entries = (uint64)(bits / bpe)
 *   bytes  = bits rounded UP to a whole number of 64-bit words, in bytes;  bits = bytes * 8
 *   hashes = (int) ceil(0.693147180559945 * bpe)
 * </pre>
 *
 * Bit x lives in byte x>>3 under mask 1<<(x&7) (LSB first); the bytes are held little-endian in {@code long}
 * words, so bit x is bit (x & 63) of word x>>>6 and the SCANDUMP bytes are the words' little-endian bytes.
 * Positions are ((a + i·b) mod 2^64) mod m, where m is 2^n2 when n2 &gt; 0 and {@code bits} otherwise.
 *
 * <p>Not thread-safe by itself: {@link ScalableBloomFilter} guards it.
 */
final class BloomLayer {
  static final int OPT_NOROUND = 1;
  static final int OPT_ENTS_IS_BITS = 2;
  static final int OPT_FORCE64 = 4;
  static final int OPT_NO_SCALING = 8;
  static final int OPT_ALL = OPT_NOROUND | OPT_ENTS_IS_BITS | OPT_FORCE64 | OPT_NO_SCALING;

  static final double LN2_SQUARED = 0.480453013918201;
  static final double LN2 = 0.693147180559945;
  /**
   * Our own ceiling on a loaded layer's bits per entry. The smallest positive double error gives bpe ≈ 1550, so
   * every layer RedisBloom can build stays below; larger values only come from crafted headers and would make
   * each lookup loop for millions of hashes.
   */
  static final double MAX_BITS_PER_ENTRY = 2000;

  final long bytes;
  final long bits;
  final int hashes;
  /** Unsigned capacity ({@code entries}). */
  final long entries;
  final double error;
  final double bitsPerEntry;
  final int n2;
  /** Items added to this layer (adds that set at least one new bit). */
  long size;
  final long[] words;
  private final long mask;
  private final boolean powerOfTwo;

  BloomLayer(long bytes, long bits, int hashes, long entries, double error, double bitsPerEntry, int n2, long size,
      long[] words) {
    this.bytes = bytes;
    this.bits = bits;
    this.hashes = hashes;
    this.entries = entries;
    this.error = error;
    this.bitsPerEntry = bitsPerEntry;
    this.n2 = n2;
    this.size = size;
    this.words = words;
    this.powerOfTwo = n2 > 0;
    this.mask = powerOfTwo ? (n2 == 64 ? -1L : (1L << n2) - 1) : 0;
  }

  /** The layer parameters RedisBloom's {@code bloom_init} computes; {@code null} where it returns "invalid". */
  static BloomLayer plan(long entries, double error, int options) {
    if (entries == 0 || !(error > 0) || error >= 1.0) {
      return null;
    }
    double bpe = Math.abs(-(Math.log(error) / LN2_SQUARED));
    long bits;
    int n2;
    long capacity = entries;
    if ((options & OPT_ENTS_IS_BITS) != 0) {
      if (Long.compareUnsigned(entries, 63) > 0) {
        return null; // 64 would overflow the shift in C as well
      }
      n2 = (int) entries;
      bits = 1L << n2;
      capacity = doubleToUnsigned(bits / bpe);
    } else if ((options & OPT_NOROUND) != 0) {
      double exact = Unsigned.toDouble(entries) * bpe;
      if (!(exact < 0x1p64)) {
        return null;
      }
      bits = doubleToUnsigned(exact);
      if (bits == 0) {
        bits = 1;
      }
      n2 = 0;
    } else {
      double exact = Unsigned.toDouble(entries) * bpe;
      if (!(exact >= 0.5) || Double.isInfinite(exact)) {
        return null;
      }
      int exponent = Math.getExponent(exact); // logb for normal numbers
      if (exponent > 62) {
        return null; // RedisBloom accepts logb 63 and then shifts by 64 (undefined); we refuse
      }
      n2 = exponent + 1;
      bits = 1L << n2;
      long bitDiff = doubleToUnsigned(bits - exact);
      long itemDiff = doubleToUnsigned(Unsigned.toDouble(bitDiff) / bpe);
      capacity = entries + itemDiff;
    }
    long bytes;
    if ((bits & 63) != 0) {
      bytes = ((bits >>> 6) + 1) * 8;
    } else {
      bytes = bits >>> 3;
    }
    int hashes = (int) Math.ceil(LN2 * bpe);
    return new BloomLayer(bytes, bytes * 8, hashes, capacity, error, bpe, n2, 0, null);
  }

  /** This plan with zeroed storage, or {@code null} if the heap cannot hold it. */
  BloomLayer allocate() {
    long[] storage = HeapBudget.zeroedWords(bytes);
    return storage == null ? null : new BloomLayer(bytes, bits, hashes, entries, error, bitsPerEntry, n2, size, storage);
  }

  /**
   * RedisBloom's {@code bloom_validate_integrity} plus our own bounds for values only a crafted header has
   * (non-finite rates, absurd bits per entry); {@code true} if a loaded layer is acceptable.
   */
  static boolean validLoaded(long bytes, long bits, long hashes, double error, double bpe, int n2) {
    if (!(error > 0) || error >= 1.0 || n2 > 63) {
      return false;
    }
    if (n2 != 0 && Long.compareUnsigned(bits, 1L << n2) < 0) {
      return false;
    }
    if (bits == 0 || bytes < 0 || bytes > (Long.MAX_VALUE >>> 3) || bits != bytes * 8) {
      return false;
    }
    if (!Double.isFinite(bpe) || bpe > MAX_BITS_PER_ENTRY) {
      return false;
    }
    return hashes == (long) (int) Math.ceil(LN2 * bpe);
  }

  boolean contains(long a, long b) {
    for (int i = 0; i < hashes; i++) {
      long x = position(a + i * b);
      if ((words[(int) (x >>> 6)] & (1L << x)) == 0) {
        return false;
      }
    }
    return true;
  }

  /**
   * {@code hit[j] &= 0} unless every bit of key j, placed by ({@code a[j]}, {@code b[j]}), is set, for j &lt;
   * {@code count}: bit 0 of {@code hit[j]} then answers {@link #contains} for that key. The loads go round by round
   * (the i-th bit of every key, then the (i+1)-th) with no branch on what a load returns, so the cache misses of
   * the keys are in flight together.
   */
  void gather(long[] a, long[] b, int count, long[] hit) {
    for (int i = 0; i < hashes; i++) {
      for (int j = 0; j < count; j++) {
        long x = position(a[j] + i * b[j]);
        hit[j] &= words[(int) (x >>> 6)] >>> x;
      }
    }
  }

  /** Sets the item's bits; {@code true} if at least one was unset (RedisBloom: "not previously present"). */
  boolean set(long a, long b) {
    boolean changed = false;
    for (int i = 0; i < hashes; i++) {
      long x = position(a + i * b);
      int word = (int) (x >>> 6);
      long bit = 1L << x;
      if ((words[word] & bit) == 0) {
        words[word] |= bit;
        changed = true;
      }
    }
    return changed;
  }

  /** The word that {@link #set} changes for hash {@code i} of (a, b), or -1 if that bit is set already. */
  int changedWord(long a, long b, int i) {
    long x = position(a + i * b);
    int word = (int) (x >>> 6);
    return (words[word] & (1L << x)) == 0 ? word : -1;
  }

  private long position(long hash) {
    return powerOfTwo ? hash & mask : Long.remainderUnsigned(hash, bits);
  }

  byte byteAt(long index) {
    return (byte) (words[(int) (index >>> 3)] >>> (8 * (index & 7)));
  }

  void setByte(long index, byte value) {
    int word = (int) (index >>> 3);
    int shift = (int) (8 * (index & 7));
    words[word] = (words[word] & ~(0xFFL << shift)) | ((value & 0xFFL) << shift);
  }

  long bitCount() {
    long count = 0;
    for (long word : words) {
      count += Long.bitCount(word);
    }
    return count;
  }

  BloomLayer copy() {
    return new BloomLayer(bytes, bits, hashes, entries, error, bitsPerEntry, n2, size, words.clone());
  }

  /** C's conversion of a non-negative double below 2^64 to uint64 (truncation toward zero). */
  static long doubleToUnsigned(double value) {
    if (!(value > 0)) {
      return 0;
    }
    if (value < 0x1p63) {
      return (long) value;
    }
    if (value >= 0x1p64) {
      return -1L;
    }
    return ((long) (value - 0x1p63)) ^ Long.MIN_VALUE;
  }
}
