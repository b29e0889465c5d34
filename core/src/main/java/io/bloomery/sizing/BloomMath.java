package io.bloomery.sizing;

import java.util.List;

/*
 * Sizing cheat-sheet for a classic Bloom filter with m bits, k hash functions, n inserted items and
 * target false-positive rate p (Bloom 1970; Broder and Mitzenmacher, "Network Applications of Bloom
 * Filters: A Survey", 2004):
 *
 *   false-positive rate  FPR(m, k, n) = (1 - e^(-kn/m))^k
 *   optimal k for (m, n) k* = (m/n) ln 2                    -> rounded to nearest, at least 1
 *   optimal m for (n, p) m* = -n ln p / (ln 2)^2             -> rounded UP (never below the target)
 *   bits per key         m / n = -ln p / (ln 2)^2 = 1.44 log2(1/p)   (9.585 at 1%, 43.13 at 1e-9)
 *   capacity for (m,k,p) largest n with FPR(m, k, n) <= p:  n = floor(-(m/k) ln(1 - p^(1/k))),
 *                        then stepped by whole items so that the FPR formula itself agrees
 *   capacity for (m, k)  the most items for which k is still the optimal hash count for m bits, i.e. the
 *                        largest n with round(m/n ln 2) >= k: about m ln 2 / (k - 1/2). Every plan
 *                        (n, p) -> (m, k) rounds k from that same optimum, so its n is at most this;
 *                        the model rate there, the filter's design rate, is the highest rate a plan
 *                        with this k can target (about 2^-(k - 1/2): 1.1% for k = 7). k = 1 is
 *                        optimal for any load, so its capacity is the n at which the rate reaches 1/2.
 *
 * The model assumes independent uniform probes; it slightly underestimates the true FPR for tiny m
 * (Bose et al. 2008), which does not matter at the sizes this math is used for.
 * Numerics: e^(-x) near 1 is computed as -expm1(-x) and ln(1 - y) as log1p(-y) so that small rates
 * (p down to 1e-9, n up to 1e10 and beyond) keep full precision; every result that becomes a long is
 * checked against 2^63 before conversion.
 */
/**
 * Pure sizing formulas for classic Bloom filters. Every method is a function of its arguments;
 * invalid inputs (p outside (0, 1) or NaN, n, m or k not positive) throw {@link
 * IllegalArgumentException} saying which argument and why.
 *
 * <p>Rounding: m is rounded up, k to the nearest integer (at least 1), capacities down.
 */
public final class BloomMath {

  /** ln 2. */
  static final double LN2 = Math.log(2);
  /** (ln 2)^2. */
  static final double LN2_SQUARED = LN2 * LN2;

  /** The insertion levels, in percent of the expected insertions, that {@link #sizing} projects. */
  public static final List<Integer> OVERFILL_PERCENTS = List.of(50, 80, 100, 150, 200);

  private BloomMath() {}

  /**
   * Optimal bit count for n items at false-positive rate p: {@code ceil(-n ln p / (ln 2)^2)}.
   *
   * @throws IllegalArgumentException if {@code n <= 0}, p is not in (0, 1), or m would not fit a long
   */
  public static long optimalBits(long n, double p) {
    checkItems(n);
    checkRate(p);
    double bits = Math.ceil(n * bitsPerKey(p));
    if (!(bits < 0x1p63)) {
      throw new IllegalArgumentException(
          "optimal bit count for n = " + n + " at p = " + p + " is " + bits + ", beyond 2^63");
    }
    return (long) bits;
  }

  /**
   * The smallest power of two at least {@code bits}: a bit count a classic filter can later fold in half (and
   * again) without a rehash. Pair it with {@code optimalHashes(n, foldableBits(optimalBits(n, p)))}; the rounding
   * spends up to twice the bits and gives a rate at or below p.
   *
   * @throws IllegalArgumentException if {@code bits <= 0} or above 2^62
   */
  public static long foldableBits(long bits) {
    checkBits(bits);
    if (bits > 1L << 62) {
      throw new IllegalArgumentException("no power of two of at most 2^62 holds " + bits + " bits");
    }
    return bits == 1 ? 1 : Long.highestOneBit(bits - 1) << 1;
  }

  /**
   * Optimal hash count for n items in m bits: {@code max(1, round(m/n · ln 2))}, capped at {@link
   * Integer#MAX_VALUE}.
   *
   * @throws IllegalArgumentException if {@code n <= 0} or {@code m <= 0}
   */
  public static int optimalHashes(long n, long m) {
    checkItems(n);
    checkBits(m);
    double k = Math.rint((double) m / n * LN2);
    return (int) Math.max(1, Math.min(k, Integer.MAX_VALUE));
  }

  /**
   * The model false-positive rate after n insertions into m bits with k hashes: {@code (1 -
   * e^(-kn/m))^k}. Zero when n is 0.
   *
   * @throws IllegalArgumentException if {@code m <= 0}, {@code k <= 0} or {@code n < 0}
   */
  public static double falsePositiveRate(long m, int k, long n) {
    checkBits(m);
    checkHashes(k);
    if (n < 0) {
      throw new IllegalArgumentException("insertions n must be >= 0, was " + n);
    }
    double occupied = -Math.expm1(-(double) k * n / m);
    return Math.pow(occupied, k);
  }

  /**
   * The largest n for which {@link #falsePositiveRate falsePositiveRate(m, k, n)} {@code <= p}.
   *
   * @throws IllegalArgumentException if {@code m <= 0}, {@code k <= 0} or p is not in (0, 1)
   */
  public static long capacity(long m, int k, double p) {
    checkBits(m);
    checkHashes(k);
    checkRate(p);
    // (1 - e^(-kn/m))^k <= p  <=>  n <= -(m/k) ln(1 - p^(1/k))
    double bound = -((double) m / k) * Math.log1p(-Math.pow(p, 1.0 / k));
    long n = bound >= 0x1p62 ? 1L << 62 : (long) Math.floor(bound);
    // The closed form and the formula may disagree by an ulp near the boundary: let the formula rule.
    while (n > 0 && falsePositiveRate(m, k, n) > p) {
      n--;
    }
    while (n < (1L << 62) && falsePositiveRate(m, k, n + 1) <= p) {
      n++;
    }
    return n;
  }

  /**
   * The capacity of m bits with k hashes: the most items for which k is still the optimal hash count, the largest n
   * with {@link #optimalHashes optimalHashes(n, m)} {@code >= k} (about {@code m ln 2 / (k - 1/2)}). A filter planned
   * for n items at rate p ({@link #optimalBits}, {@link #optimalHashes}) therefore has a capacity of at least n, and
   * more only by the rounding of k. The model rate at the capacity ({@link #designRate}) is the highest rate a plan
   * with this k can target. For k = 1, optimal at any load, it is the n at which the model rate reaches 1/2.
   *
   * @throws IllegalArgumentException if {@code m <= 0} or {@code k <= 0}
   */
  public static long capacityForHashes(long m, int k) {
    checkBits(m);
    checkHashes(k);
    if (k == 1) {
      return capacity(m, 1, 0.5);
    }
    // rint(m ln2 / n) >= k  <=>  m ln2 / n > k - 1/2 (ties round to even): estimate, then let optimalHashes rule.
    double bound = m * LN2 / (k - 0.5);
    long n = bound >= 0x1p62 ? 1L << 62 : (long) Math.floor(bound);
    while (n > 0 && optimalHashes(n, m) < k) {
      n--;
    }
    while (n < (1L << 62) && optimalHashes(n + 1, m) >= k) {
      n++;
    }
    return n;
  }

  /**
   * The design rate of m bits with k hashes: the model false-positive rate at {@link #capacityForHashes
   * capacityForHashes(m, k)} items.
   *
   * @throws IllegalArgumentException if {@code m <= 0} or {@code k <= 0}
   */
  public static double designRate(long m, int k) {
    return falsePositiveRate(m, k, capacityForHashes(m, k));
  }

  /**
   * Bits per key of an optimally sized filter at rate p, unrounded: {@code -ln p / (ln 2)^2}
   * (9.585 at 1%).
   *
   * @throws IllegalArgumentException if p is not in (0, 1)
   */
  public static double bitsPerKey(double p) {
    checkRate(p);
    return -Math.log(p) / LN2_SQUARED;
  }

  /**
   * The sizing of a classic filter for n items at rate p: {@link #optimalBits}, {@link #optimalHashes}, the resulting bits
   * per key and bitmap size, and the model FPR at 50, 80, 100, 150 and 200% of n.
   *
   * @throws IllegalArgumentException as {@link #optimalBits} does
   */
  public static BloomSizing sizing(long n, double p) {
    long m = optimalBits(n, p);
    int k = optimalHashes(n, m);
    BloomSizing.Overfill[] overfill = new BloomSizing.Overfill[OVERFILL_PERCENTS.size()];
    for (int i = 0; i < overfill.length; i++) {
      int percent = OVERFILL_PERCENTS.get(i);
      long insertions = Math.multiplyExact(n, (long) percent) / 100;
      overfill[i] = new BloomSizing.Overfill(percent, insertions, falsePositiveRate(m, k, insertions));
    }
    return new BloomSizing(n, p, m, k, (double) m / n, (m + 7) / 8, List.of(overfill));
  }

  private static void checkRate(double p) {
    if (!(p > 0 && p < 1)) {
      throw new IllegalArgumentException("false-positive rate p must be in (0, 1), was " + p);
    }
  }

  private static void checkItems(long n) {
    if (n <= 0) {
      throw new IllegalArgumentException("expected insertions n must be > 0, was " + n);
    }
  }

  private static void checkBits(long m) {
    if (m <= 0) {
      throw new IllegalArgumentException("bit count m must be > 0, was " + m);
    }
  }

  private static void checkHashes(int k) {
    if (k <= 0) {
      throw new IllegalArgumentException("hash count k must be > 0, was " + k);
    }
  }
}
