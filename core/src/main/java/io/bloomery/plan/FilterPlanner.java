package io.bloomery.plan;

import io.bloomery.blocked.BlockedBloomFilter;
import io.bloomery.blocked.BlockedBloomMath;
import io.bloomery.filter.FilterKind;
import io.bloomery.fuse.BinaryFuseFilter;
import io.bloomery.sizing.BloomMath;
import java.util.Locale;

/**
 * Picks a Bloom filter kind for (n, p, optional memory budget) and says why, with figures from the
 * models (never from timings).
 *
 * <p>Rules, in order:
 *
 * <ol>
 *   <li>If the classic optimum does not fit the budget, the target cannot be met: pick whichever of
 *       classic and blocked reaches the lower model FPR within the budget, and say what it reaches.
 *   <li>Otherwise pick {@link FilterKind#BLOCKED_BLOOM} when it fits the budget and costs at most 15%
 *       more memory than the classic optimum (true for p down to about 10⁻⁴): one cache-line miss per
 *       lookup instead of up to k.
 *   <li>Otherwise {@link FilterKind#CLASSIC_BLOOM}: the blocked penalty grows as p shrinks because
 *       overloaded blocks need more bits.
 * </ol>
 *
 * <p>The lookup-cost figure in the reason is the model count of cache lines a lookup touches: 1 for a
 * blocked filter; for a classic filter k for a member and Σ_{j&lt;k} f^j ≈ 2 for a non-member (f = the
 * fill, ½ at the optimum; the lookup stops at the first unset bit). On a filter larger than the
 * cache each line is a miss, which dominates lookup cost (docs/BENCHMARKS.md measures it). Split-block
 * (Parquet) filters are chosen by the caller when Parquet must read them; the planner reports them as
 * the alternative only. A {@link FilterPlan} builds the filter it describes.
 */
public final class FilterPlanner {

  /** Memory overhead over the classic optimum that the blocked kind may cost and still be picked. */
  public static final double BLOCKED_MAX_OVERHEAD = 1.15;

  private FilterPlanner() {}

  /** Plans without a memory budget. */
  public static FilterPlan plan(long n, double fpp) {
    return plan(n, fpp, Long.MAX_VALUE);
  }

  /**
   * Plans for {@code n} distinct keys at target FPR {@code fpp} within {@code memoryBudgetBytes}
   * bytes of bitmap.
   *
   * @throws IllegalArgumentException if n &lt; 1, fpp is outside (0, 1) or the budget is below 64 bytes
   */
  public static FilterPlan plan(long n, double fpp, long memoryBudgetBytes) {
    if (n < 1) {
      throw new IllegalArgumentException("n must be >= 1, was " + n);
    }
    if (!(fpp > 0 && fpp < 1)) {
      throw new IllegalArgumentException("fpp must be in (0, 1), was " + fpp);
    }
    if (memoryBudgetBytes < 64) {
      throw new IllegalArgumentException("memory budget must be at least 64 bytes, was " + memoryBudgetBytes);
    }
    long classicBits = BloomMath.optimalBits(n, fpp);
    int classicHashes = classicHashes(classicBits, n);
    long blocks = BlockedBloomMath.blockedBlocks(n, fpp);
    long blockedBits = blocks * BlockedBloomMath.BLOCKED_BLOCK_BITS;
    int blockedHashes = BlockedBloomMath.optimalBlockedHashes(n, blocks);
    double overhead = (double) blockedBits / classicBits;
    long budgetBits = memoryBudgetBytes > Long.MAX_VALUE / 8 ? Long.MAX_VALUE : memoryBudgetBytes * 8;
    String target = "p=" + percent(fpp);

    if (classicBits > budgetBits) {
      long bitsInBudget = Math.min(budgetBits, BlockedBloomFilter.MAX_BLOCKS * 512);
      long budgetBlocks = Math.max(1, bitsInBudget / BlockedBloomMath.BLOCKED_BLOCK_BITS);
      int budgetBlockedHashes = BlockedBloomMath.optimalBlockedHashes(n, budgetBlocks);
      double blockedRate = BlockedBloomMath.blockedFalsePositiveRate(
          n, budgetBlocks, BlockedBloomMath.BLOCKED_BLOCK_BITS, budgetBlockedHashes);
      long budgetClassicBits = Math.max(64, bitsInBudget / 64 * 64);
      int budgetClassicHashes = classicHashes(budgetClassicBits, n);
      double classicRate = BloomMath.falsePositiveRate(budgetClassicBits, budgetClassicHashes, n);
      String shortBy = String.format(Locale.ROOT, "the budget of %d bytes cannot reach %s for n=%d (classic needs %d bytes)",
          memoryBudgetBytes, target, n, (classicBits + 7) / 8);
      if (blockedRate <= classicRate) {
        return new FilterPlan(FilterKind.BLOCKED_BLOOM, budgetBlocks * 512, budgetBlockedHashes, budgetBlocks * 64,
            budgetBlocks * 512.0 / n, blockedRate,
            "blocked: " + shortBy + "; within it blocked reaches " + percent(blockedRate) + " vs classic " + percent(classicRate));
      }
      return new FilterPlan(FilterKind.CLASSIC_BLOOM, budgetClassicBits, budgetClassicHashes, budgetClassicBits / 8,
          (double) budgetClassicBits / n, classicRate,
          "classic: " + shortBy + "; within it classic reaches " + percent(classicRate) + " vs blocked " + percent(blockedRate));
    }

    double absentLines = classicAbsentLines(classicHashes);
    String memory = String.format(Locale.ROOT, "%.2f vs %.2f bits/key", blockedBits / (double) n, classicBits / (double) n);
    double blockedRate = BlockedBloomMath.blockedFalsePositiveRate(n, blocks, BlockedBloomMath.BLOCKED_BLOCK_BITS, blockedHashes);
    if (blockedBits <= budgetBits && overhead <= BLOCKED_MAX_OVERHEAD) {
      return new FilterPlan(FilterKind.BLOCKED_BLOOM, blockedBits, blockedHashes, blockedBits / 8, blockedBits / (double) n,
          blockedRate,
          String.format(Locale.ROOT,
              "blocked: 1 cache-line miss per lookup instead of %d for a member and %.1f for a non-member (classic, k=%d),"
                  + " i.e. %.1f× fewer misses on absent keys, for %.1f%% more memory at %s (%s)",
              classicHashes, absentLines, classicHashes, absentLines, 100 * (overhead - 1), target, memory));
    }
    String why = blockedBits > budgetBits
        ? String.format(Locale.ROOT, "blocked needs %d bytes, over the budget of %d", blockedBits / 8, memoryBudgetBytes)
        : String.format(Locale.ROOT, "blocked would need %.1f%% more memory at %s (%s), over the %.0f%% limit",
            100 * (overhead - 1), target, memory, 100 * (BLOCKED_MAX_OVERHEAD - 1));
    long roundedClassic = (classicBits + 63) / 64 * 64;
    return new FilterPlan(FilterKind.CLASSIC_BLOOM, roundedClassic, classicHashes, roundedClassic / 8,
        roundedClassic / (double) n, BloomMath.falsePositiveRate(roundedClassic, classicHashes, n),
        "classic: " + why + "; classic touches up to k=" + classicHashes + " lines per lookup");
  }

  /**
   * Plans for a <em>static</em> set: {@code n} distinct keys known in full before the filter is built,
   * never added to afterwards (an immutable snapshot). Besides the Bloom kinds of {@link #plan} it
   * considers {@link FilterKind#BINARY_FUSE binary fuse} filters with 8-bit (FPR 2<sup>-8</sup>) and
   * 16-bit (2<sup>-16</sup>) fingerprints, and picks a fuse filter when one meets {@code fpp}, fits the
   * budget and needs fewer bits than the Bloom plan. The fuse plan's {@code hashes} is 3: the slots a
   * lookup reads (in three consecutive segments), against one cache line for a blocked filter.
   *
   * @throws IllegalArgumentException as {@link #plan(long, double, long)}
   */
  public static FilterPlan planStatic(long n, double fpp, long memoryBudgetBytes) {
    FilterPlan bloom = plan(n, fpp, memoryBudgetBytes);
    long budgetBits = memoryBudgetBytes > Long.MAX_VALUE / 8 ? Long.MAX_VALUE : memoryBudgetBytes * 8;
    BinaryFuseFilter.Shape shape;
    try {
      shape = BinaryFuseFilter.shapeFor(n);
    } catch (IllegalArgumentException tooLarge) {
      return bloom;
    }
    for (int bits : new int[] {8, 16}) {
      double rate = Math.scalb(1.0, -bits);
      long fuseBits = shape.slots() * bits;
      if (rate > fpp || fuseBits > budgetBits) {
        continue;
      }
      if (fuseBits < bloom.bits() || bloom.modelFpp() > fpp) {
        return new FilterPlan(FilterKind.BINARY_FUSE, fuseBits, 3, fuseBits / 8, fuseBits / (double) n, rate,
            String.format(Locale.ROOT,
                "binary fuse (%d-bit fingerprints): a static set needs %.2f bits/key for %s (meets %s), vs %.2f bits/key"
                    + " for the %s Bloom plan at %s; a lookup reads 3 slots instead of %s",
                bits, fuseBits / (double) n, percent(rate), percent(fpp), bloom.bitsPerKey(), bloom.kind().kindName(),
                percent(bloom.modelFpp()), bloom.kind() == FilterKind.BLOCKED_BLOOM ? "1 cache line" : "up to k lines"));
      }
    }
    return new FilterPlan(bloom.kind(), bloom.bits(), bloom.hashes(), bloom.bitmapBytes(), bloom.bitsPerKey(), bloom.modelFpp(),
        bloom.reason() + String.format(Locale.ROOT, "; a binary fuse filter would need %.2f (8-bit, %s) or %.2f (16-bit, %s)"
            + " bits/key", shape.slots() * 8.0 / n, percent(0x1p-8), shape.slots() * 16.0 / n, percent(0x1p-16)));
  }

  /** {@link BloomMath#optimalHashes}, at most 64. */
  private static int classicHashes(long bits, long n) {
    return Math.min(64, BloomMath.optimalHashes(n, bits));
  }

  /** Expected lines a classic lookup of a non-member touches at fill ½: Σ_{j<k} (½)^j. */
  private static double classicAbsentLines(int hashes) {
    return 2 * (1 - Math.pow(0.5, hashes));
  }

  private static String percent(double p) {
    return String.format(Locale.ROOT, "%.3g%%", 100 * p);
  }
}
