package io.bloomery.hash;

/**
 * The position derivation of {@code xxh3-edh-v1}: enhanced double hashing over one 64-bit hash,
 * with multiply-high range reduction. Public so that a filter can walk an item's positions without
 * allocating an array per call; the derivation is part of the protocol's frozen definition.
 *
 * <p>Given an item hash {@code h} (an unsigned 64-bit value), bit count {@code m} and hash count
 * {@code k}, with all arithmetic modulo 2<sup>64</sup>:
 *
 * <pre>
 *   x = h
 *   y = stride(h)                               // splitmix64 finalizer of h, forced odd
 *   d = G                                       // G = 0x9E3779B97F4A7C15, 2^64 / golden ratio
 *   for i in 0 .. k-1:
 *     position[i] = reduce(x, m)                // unsigned high 64 bits of x * m
 *     x = x + y
 *     y = y + d
 *     d = d + G
 * </pre>
 *
 * which is {@code x_i = h + i*stride(h) + G*(i^3 - i)/6}. Plain double hashing (Kirsch and
 * Mitzenmacher, "Less Hashing, Same Performance", 2006) degenerates when the stride is close to a
 * fraction with a small denominator (a stride near m/2 alternates between two bits); the cubic term
 * of enhanced double hashing (Dillinger and Manolios, "Bloom Filters in Probabilistic Verification",
 * 2004) breaks such cycles. Because positions come from the <em>high</em> bits of {@code x}, the
 * textbook cubic term {@code (i^3 - i)/6} (below 2<sup>14</sup> for any k we allow in practice) would
 * never reach them; scaling it by G, an odd constant whose multiples are spread evenly over
 * [0, 2<sup>64</sup>), makes it act on the high bits. Reducing with the high half of a 64×64-bit
 * product (Lemire's "fastrange") needs no division and is unbiased to within m/2<sup>64</sup> for
 * every m below 2<sup>63</sup>, so filters far beyond 2<sup>32</sup> bits are addressed uniformly
 * (the failure of Guava's MITZ_32, issue #1119, and Spark's V1).
 */
public final class EnhancedDoubleHashing {

  /** G, the cubic term's scale: 2^64 divided by the golden ratio, rounded to odd. */
  public static final long CUBIC_SCALE = 0x9E3779B97F4A7C15L;

  private EnhancedDoubleHashing() {}

  /**
   * The second hash: the splitmix64 finalizer (Steele, Lea and Flood 2014; Stafford's "Mix13"
   * constants) of {@code hash}, with its lowest bit forced to 1 so the stride is odd.
   */
  public static long stride(long hash) {
    long z = hash;
    z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
    z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
    z = z ^ (z >>> 31);
    return z | 1L;
  }

  /**
   * Maps an unsigned 64-bit value to [0, m): the unsigned high 64 bits of {@code x * m}.
   *
   * @param m the bit count, 1 &lt;= m &lt; 2<sup>63</sup>
   */
  public static long reduce(long x, long m) {
    // Unsigned multiply-high from the signed one (JDK 17 has no unsignedMultiplyHigh): since m >= 0,
    // only x's sign bit needs the correction term, which adds m when x is "negative".
    return Math.multiplyHigh(x, m) + ((x >> 63) & m);
  }

  /** Writes the k positions of the item whose hash is {@code hash} into {@code out[0..k)}. */
  public static void positions(long hash, long m, int k, long[] out) {
    long x = hash;
    long y = stride(hash);
    long d = CUBIC_SCALE;
    for (int i = 0; i < k; i++) {
      out[i] = reduce(x, m);
      x += y;
      y += d;
      d += CUBIC_SCALE;
    }
  }
}
