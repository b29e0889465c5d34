package io.bloomery.blocked;

/**
 * Pure false-positive models and sizing for cache-blocked Bloom filters.
 *
 * <pre>
 * Cheat-sheet (λ = keys per block = n / blocks, B = bits per block, k = bits set per key):
 *   classic Bloom        p = (1 - e^(-k n / m))^k                    (BloomMath; for comparison only)
 *   blocked (Putze)      p = Σ_{i≥0} Pois_λ(i) · (1 - (1 - 1/B)^(i k))^k
 *   split block (Apple)  p = Σ_{i≥0} Pois_λ(i) · (1 - (1 - 1/w)^i)^s   (s words of w bits, one bit per word)
 * </pre>
 *
 * <p>Why a mixture: a blocked filter sends every key to one block, so blocks do not all hold n/blocks
 * keys; their load is (very nearly) Poisson with mean λ. A lookup lands in a random block, and the
 * block's own classic-Bloom FPR is averaged over that load distribution. Overloaded blocks are what
 * cost blocked filters their extra memory (F. Putze, P. Sanders, J. Singler, "Cache-, Hash- and
 * Space-Efficient Bloom Filters", WEA 2007, §3; J. Apple, "Split block Bloom filters", arXiv
 * 2101.01719, eq. for SBBF).
 *
 * <p>The Poisson sum runs over i in [max(0, λ - 12√λ - 12), λ + 12√λ + 30]; the tails outside carry
 * less than 1e-25 of the mass. Above λ = 10⁶ keys per block (far outside any useful filter) the load
 * is taken as exactly λ. Rounding: sizing functions round the block count <em>up</em>, so the
 * returned filter's model FPR is at most the target.
 */
public final class BlockedBloomMath {

  /** Bits in one block of a {@link BlockedBloomFilter}: one 64-byte cache line. */
  public static final int BLOCKED_BLOCK_BITS = 512;

  /** Bits in one block of a {@link SplitBlockBloomFilter}: eight 32-bit words (Parquet SBBF). */
  public static final int SPLIT_BLOCK_BITS = 256;

  /** Most bits a {@link BlockedBloomFilter} sets per key (the protocol has 16 salts). */
  public static final int MAX_BLOCKED_HASHES = 16;

  private BlockedBloomMath() {}

  /**
   * Model FPR of a blocked Bloom filter with {@code blocks} blocks of {@code blockBits} bits and
   * {@code hashes} bits per key after {@code n} distinct keys (Putze et al.). Returns 0 for n = 0.
   */
  public static double blockedFalsePositiveRate(long n, long blocks, int blockBits, int hashes) {
    checkPositive(blocks, "blocks");
    checkPositive(blockBits, "blockBits");
    checkPositive(hashes, "hashes");
    checkNonNegative(n, "n");
    return blockedRate((double) n / blocks, blockBits, hashes);
  }

  private static double blockedRate(double keysPerBlock, int blockBits, int hashes) {
    double logMiss = hashes * log1mInverse(blockBits); // ln((1 - 1/B)^k)
    return poissonMixture(keysPerBlock, load -> Math.pow(-Math.expm1(load * logMiss), hashes));
  }

  private static double bestBlockedRate(double keysPerBlock) {
    double best = 1;
    for (int k = 1; k <= MAX_BLOCKED_HASHES; k++) {
      best = Math.min(best, blockedRate(keysPerBlock, BLOCKED_BLOCK_BITS, k));
    }
    return best;
  }

  /**
   * Model FPR of a split-block Bloom filter (one bit in each of {@code words} words of
   * {@code wordBits} bits per key) with {@code blocks} blocks after {@code n} distinct keys. For
   * Parquet SBBF, words = 8 and wordBits = 32.
   */
  public static double splitBlockFalsePositiveRate(long n, long blocks, int words, int wordBits) {
    checkPositive(blocks, "blocks");
    checkPositive(words, "words");
    checkPositive(wordBits, "wordBits");
    checkNonNegative(n, "n");
    return splitRate((double) n / blocks, words, wordBits);
  }

  private static double splitRate(double keysPerBlock, int words, int wordBits) {
    double logMiss = log1mInverse(wordBits);
    return poissonMixture(keysPerBlock, load -> Math.pow(-Math.expm1(load * logMiss), words));
  }

  /**
   * The number of bits per key (1..16) that minimises the blocked model at {@code blocks} blocks of
   * 512 bits after {@code n} keys; ties go to the smaller k (cheaper inserts).
   */
  public static int optimalBlockedHashes(long n, long blocks) {
    checkPositive(blocks, "blocks");
    checkNonNegative(n, "n");
    return optimalHashesAt((double) n / blocks);
  }

  /**
   * The capacity of a blocked filter of {@code blocks} 512-bit blocks setting {@code hashes} bits per key: the most
   * keys for which {@code hashes} is still the {@link #optimalBlockedHashes optimal} k, i.e. the largest n with
   * {@code optimalBlockedHashes(n, blocks) >= hashes}. A filter planned by {@link #blockedBlocks} and {@link
   * #optimalBlockedHashes} for n keys therefore has a capacity of at least n, and more only by the rounding of k. The
   * model rate there ({@link #blockedDesignRate}) is the highest rate a plan with this k can target. k = 1 is optimal
   * for any load, so its capacity is the n at which the model rate reaches 1/2.
   *
   * @throws IllegalArgumentException if blocks or hashes is not positive, or hashes exceeds {@link
   *     #MAX_BLOCKED_HASHES}
   */
  public static long blockedCapacity(long blocks, int hashes) {
    checkPositive(blocks, "blocks");
    checkPositive(hashes, "hashes");
    if (hashes > MAX_BLOCKED_HASHES) {
      throw new IllegalArgumentException("hashes must be <= " + MAX_BLOCKED_HASHES + ", was " + hashes);
    }
    double load = CapacityLoads.LOADS[hashes];
    long n = (long) Math.floor(blocks * load);
    if (hashes == 1) {
      while (n > 0 && blockedFalsePositiveRate(n, blocks, BLOCKED_BLOCK_BITS, 1) > 0.5) {
        n--;
      }
      while (blockedFalsePositiveRate(n + 1, blocks, BLOCKED_BLOCK_BITS, 1) <= 0.5) {
        n++;
      }
      return n;
    }
    while (n > 0 && optimalBlockedHashes(n, blocks) < hashes) {
      n--;
    }
    while (optimalBlockedHashes(n + 1, blocks) >= hashes) {
      n++;
    }
    return n;
  }

  /**
   * The design rate of a blocked filter: the model false-positive rate at {@link #blockedCapacity
   * blockedCapacity(blocks, hashes)} keys.
   *
   * @throws IllegalArgumentException as {@link #blockedCapacity}
   */
  public static double blockedDesignRate(long blocks, int hashes) {
    return blockedFalsePositiveRate(blockedCapacity(blocks, hashes), blocks, BLOCKED_BLOCK_BITS, hashes);
  }

  /**
   * Per k, the load (keys per block) at which k stops being the optimal blocked k (for k = 1: at which the rate
   * reaches 1/2), bisected once on first use. {@link #blockedCapacity} starts from it and settles the integer count.
   */
  private static final class CapacityLoads {
    static final double[] LOADS = new double[MAX_BLOCKED_HASHES + 1];

    static {
      for (int k = 1; k <= MAX_BLOCKED_HASHES; k++) {
        int hashes = k;
        LoadCheck within = hashes == 1
            ? load -> blockedRate(load, BLOCKED_BLOCK_BITS, 1) <= 0.5
            : load -> optimalHashesAt(load) >= hashes;
        double low = 0;
        double high = 1;
        while (within.holds(high)) {
          low = high;
          high *= 2;
        }
        for (int i = 0; i < 80 && high - low > 1e-13 * high; i++) {
          double mid = (low + high) / 2;
          if (within.holds(mid)) {
            low = mid;
          } else {
            high = mid;
          }
        }
        LOADS[k] = low;
      }
    }

    private interface LoadCheck {
      boolean holds(double load);
    }

    private CapacityLoads() {}
  }

  /** {@link #optimalBlockedHashes} at a load of {@code keysPerBlock}. */
  private static int optimalHashesAt(double keysPerBlock) {
    int best = 1;
    double bestRate = Double.POSITIVE_INFINITY;
    for (int k = 1; k <= MAX_BLOCKED_HASHES; k++) {
      double rate = blockedRate(keysPerBlock, BLOCKED_BLOCK_BITS, k);
      if (rate < bestRate) {
        bestRate = rate;
        best = k;
      }
    }
    return best;
  }

  /**
   * The fewest 512-bit blocks whose blocked model, at its best k, is at most {@code fpp} after
   * {@code n} keys (at least one block). Rounded up.
   *
   * @throws IllegalArgumentException if fpp is outside (0, 1), n &lt; 0, or the filter would need
   *     more blocks than a {@link BlockedBloomFilter} can hold
   */
  public static long blockedBlocks(long n, double fpp) {
    checkNonNegative(n, "n");
    checkProbability(fpp);
    long blocks = smallestBlocks(n, fpp, BlockedBloomFilter.MAX_BLOCKS, load -> bestBlockedRate(load));
    if (blocks > BlockedBloomFilter.MAX_BLOCKS) {
      throw new IllegalArgumentException("n=" + n + " at fpp=" + fpp + " needs " + blocks
          + " blocks of 512 bits; a blocked filter holds at most " + BlockedBloomFilter.MAX_BLOCKS);
    }
    return blocks;
  }

  /**
   * The smallest power of two at least {@code blocks}: a block count a {@link BlockedBloomFilter} can later fold in
   * half (and again) without a rehash. The rounding spends up to twice the blocks and lowers the rate.
   *
   * @throws IllegalArgumentException if {@code blocks < 1} or the power of two exceeds {@link
   *     BlockedBloomFilter#MAX_BLOCKS}
   */
  public static long foldableBlocks(long blocks) {
    if (blocks < 1) {
      throw new IllegalArgumentException("blocks must be >= 1, was " + blocks);
    }
    long rounded = blocks == 1 ? 1 : Long.highestOneBit(blocks - 1) << 1;
    if (rounded > BlockedBloomFilter.MAX_BLOCKS) {
      throw new IllegalArgumentException(blocks + " blocks round up to " + rounded
          + "; a blocked filter holds at most " + BlockedBloomFilter.MAX_BLOCKS);
    }
    return rounded;
  }

  /**
   * The fewest 256-bit Parquet SBBF blocks whose model is at most {@code fpp} after {@code n} keys
   * (at least one block). Rounded up; not rounded to a power of two (see
   * {@link SplitBlockBloomFilter#createParquetSized}).
   */
  public static long splitBlocks(long n, double fpp) {
    checkNonNegative(n, "n");
    checkProbability(fpp);
    long blocks = smallestBlocks(n, fpp, SplitBlockBloomFilter.MAX_BLOCKS, load -> splitRate(load, 8, 32));
    if (blocks > SplitBlockBloomFilter.MAX_BLOCKS) {
      throw new IllegalArgumentException("n=" + n + " at fpp=" + fpp + " needs " + blocks
          + " blocks of 256 bits; a split-block filter holds at most " + SplitBlockBloomFilter.MAX_BLOCKS);
    }
    return blocks;
  }

  /** Model bits per key of the smallest blocked filter for (n, fpp), for plans and docs. */
  public static double blockedBitsPerKey(double fpp) {
    long n = 10_000_000L;
    return (double) blockedBlocks(n, fpp) * BLOCKED_BLOCK_BITS / n;
  }

  /** Model bits per key of the smallest split-block filter for (n, fpp), for plans and docs. */
  public static double splitBitsPerKey(double fpp) {
    long n = 10_000_000L;
    return (double) splitBlocks(n, fpp) * SPLIT_BLOCK_BITS / n;
  }

  private interface LoadModel {
    /** The model FPR at {@code load} keys per block. */
    double rate(double load);
  }

  /**
   * The least block count meeting the target. The models depend on n and blocks only through the
   * load λ = n / blocks and grow with it, so bisect λ once, then settle the integer block count.
   */
  private static long smallestBlocks(long n, double fpp, long maxBlocks, LoadModel model) {
    if (n == 0) {
      return 1;
    }
    if (model.rate(n) <= fpp) {
      return 1; // one block holding every key already meets the target
    }
    double low = 0; // rate(low) <= fpp
    double high = 1;
    while (model.rate(high) <= fpp) {
      low = high;
      high *= 2; // stays below n: rate(n) > fpp and the model grows with the load
    }
    for (int i = 0; i < 60 && high - low > 1e-12 * high; i++) {
      double mid = (low + high) / 2;
      if (model.rate(mid) <= fpp) {
        low = mid;
      } else {
        high = mid;
      }
    }
    if (low == 0) {
      throw new IllegalArgumentException("no block count reaches fpp=" + fpp + " for n=" + n);
    }
    double estimate = Math.ceil(n / low);
    if (estimate > maxBlocks) {
      return (long) Math.min(Long.MAX_VALUE, estimate); // the caller reports the limit
    }
    long blocks = Math.max(1, (long) estimate);
    while (model.rate((double) n / blocks) > fpp) {
      blocks++;
    }
    while (blocks > 1 && model.rate((double) n / (blocks - 1)) <= fpp) {
      blocks--;
    }
    return blocks;
  }

  private interface LoadRate {
    double rate(double load);
  }

  /** Σ Pois_λ(i) f(i) over the part of the distribution that carries any mass. */
  private static double poissonMixture(double lambda, LoadRate rate) {
    if (lambda == 0) {
      return 0;
    }
    if (lambda > 1e6) {
      // Relative spread 1/√λ < 0.1%: every block holds ~λ keys; the sum would take 24√λ terms.
      return Math.min(1.0, rate.rate(lambda));
    }
    double spread = 12 * Math.sqrt(lambda);
    long from = (long) Math.max(0, Math.floor(lambda - spread - 12));
    long to = (long) Math.ceil(lambda + spread + 30);
    double logLambda = Math.log(lambda);
    double sum = 0;
    double logPmf = from * logLambda - lambda - logFactorial(from);
    for (long i = from; i <= to; i++) {
      sum += Math.exp(logPmf) * rate.rate(i);
      logPmf += logLambda - Math.log(i + 1);
    }
    return Math.min(1.0, sum);
  }

  /** ln(i!) exactly summed below 256, Stirling's series (error &lt; 1e-15 relative) above. */
  static double logFactorial(long i) {
    if (i < 256) {
      double sum = 0;
      for (long j = 2; j <= i; j++) {
        sum += Math.log(j);
      }
      return sum;
    }
    double x = i;
    return x * Math.log(x) - x + 0.5 * Math.log(2 * Math.PI * x) + 1 / (12 * x) - 1 / (360 * x * x * x);
  }

  /** ln(1 - 1/b). */
  private static double log1mInverse(int b) {
    return Math.log1p(-1.0 / b);
  }

  private static void checkPositive(long value, String name) {
    if (value <= 0) {
      throw new IllegalArgumentException(name + " must be positive, was " + value);
    }
  }

  private static void checkNonNegative(long value, String name) {
    if (value < 0) {
      throw new IllegalArgumentException(name + " must be >= 0, was " + value);
    }
  }

  private static void checkProbability(double fpp) {
    if (!(fpp > 0 && fpp < 1)) {
      throw new IllegalArgumentException("fpp must be in (0, 1), was " + fpp);
    }
  }
}
