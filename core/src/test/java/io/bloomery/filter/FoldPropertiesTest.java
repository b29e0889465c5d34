package io.bloomery.filter;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomery.blocked.BlockedBloomFilter;
import io.bloomery.blocked.BlockedBloomMath;
import io.bloomery.hash.ProtocolId;
import io.bloomery.hash.Protocols;
import io.bloomery.sizing.BloomMath;
import java.util.List;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;

/**
 * Folding a classic or blocked filter in half: no member is lost after any number of folds, the folded filter is bit
 * for bit the filter of half the size built from the same items (which is what makes the fold correct for the
 * multiply-high index mapping), and its measured false-positive rate matches the model for the folded size.
 */
class FoldPropertiesTest {

  /** Standard deviations allowed between a measured false-positive count and the model's mean. */
  private static final double SIGMAS = 5;

  /** The highest model rate a rate property folds down to. */
  private static final double MAX_MODEL_RATE = 0.05;

  @Property(tries = 200)
  void classicFoldsKeepEveryMemberAndEqualTheHalfSizeFilter(
      @ForAll @Size(max = 300) List<byte[]> items, @ForAll @IntRange(min = 1, max = 14) int log2Bits,
      @ForAll @IntRange(min = 1, max = 12) int hashes, @ForAll @Size(max = 4) byte[] seed,
      @ForAll @IntRange(min = 1, max = 14) int folds) {
    BloomFilter filter = BloomFilter.create(Protocols.defaultProtocol(), seed, 1L << log2Bits, hashes);
    items.forEach(filter::add);
    long inserted = filter.insertedCount();
    for (int f = 0; f < Math.min(folds, log2Bits); f++) {
      filter = filter.fold();
      for (byte[] item : items) {
        assertThat(filter.mightContain(item)).as("member lost after %d folds", f + 1).isTrue();
      }
      BloomFilter direct = BloomFilter.create(Protocols.defaultProtocol(), seed, filter.bitSize(), hashes);
      items.forEach(direct::add);
      assertThat(filter.toPackedBytes()).isEqualTo(direct.toPackedBytes());
      assertThat(filter.bitCount()).isEqualTo(direct.bitCount());
      assertThat(filter.insertedCount()).isEqualTo(inserted);
    }
  }

  /**
   * A filter planned at a rate of 10^-e (m rounded up to a power of two) folds while the model for the folded size
   * stays at most {@value #MAX_MODEL_RATE}, where the model is accurate for filters this large; the measured rate
   * over a fixed sample of non-members is then within {@value #SIGMAS} binomial standard deviations of it.
   */
  @Property(tries = 10)
  void classicRateAfterFoldingMatchesTheModelForTheFoldedSize(
      @ForAll @IntRange(min = 20_000, max = 60_000) int members, @ForAll @IntRange(min = 4, max = 6) int exponent,
      @ForAll @IntRange(min = 0, max = 1 << 20) int offset) {
    long bits = BloomMath.foldableBits(BloomMath.optimalBits(members, Math.pow(10, -exponent)));
    int hashes = BloomMath.optimalHashes(members, bits);
    BloomFilter filter = BloomFilter.create(Protocols.defaultProtocol(), new byte[0], bits, hashes);
    for (long i = 0; i < members; i++) {
      filter.add(offset + i);
    }
    int folds = 0;
    while (BloomMath.falsePositiveRate(filter.bitSize() / 2, hashes, members) <= MAX_MODEL_RATE) {
      filter = filter.fold();
      folds++;
    }
    assertThat(folds).isPositive();
    double model = BloomMath.falsePositiveRate(filter.bitSize(), hashes, members);
    long positives = countFalsePositives(filter::mightContain, offset + members);
    assertRateNear(positives, filter.estimatedFpp(), "classic own estimate");
    assertRateNear(positives, model,
        "classic m=" + filter.bitSize() + " after " + folds + " folds");
  }

  /**
   * As {@link #classicRateAfterFoldingMatchesTheModelForTheFoldedSize}, for the blocked model; with more members,
   * since a blocked filter's own rate spreads around the model with the Poisson load of its few blocks.
   */
  @Property(tries = 10)
  void blockedRateAfterFoldingMatchesTheModelForTheFoldedSize(
      @ForAll @IntRange(min = 200_000, max = 400_000) int members, @ForAll @IntRange(min = 4, max = 6) int exponent,
      @ForAll @IntRange(min = 0, max = 1 << 20) int offset) {
    long blocks = BlockedBloomMath.foldableBlocks(BlockedBloomMath.blockedBlocks(members, Math.pow(10, -exponent)));
    int hashes = BlockedBloomMath.optimalBlockedHashes(members, blocks);
    BlockedBloomFilter filter = BlockedBloomFilter.create(new byte[0], blocks, hashes);
    for (long i = 0; i < members; i++) {
      filter.add(offset + i);
    }
    int folds = 0;
    while (BlockedBloomMath.blockedFalsePositiveRate(members, filter.blockCount() / 2,
        BlockedBloomMath.BLOCKED_BLOCK_BITS, hashes) <= MAX_MODEL_RATE) {
      filter = filter.fold();
      folds++;
    }
    assertThat(folds).isPositive();
    double model = BlockedBloomMath.blockedFalsePositiveRate(members, filter.blockCount(),
        BlockedBloomMath.BLOCKED_BLOCK_BITS, hashes);
    long positives = countFalsePositives(filter::mightContain, offset + members);
    assertRateNear(positives, filter.estimatedFpp(), "blocked own estimate");
    assertRateNear(positives, model,
        "blocked B=" + filter.blockCount() + " after " + folds + " folds");
  }

  @Test
  void refusesLayoutsThatCannotFold() {
    BloomFilter notPowerOfTwo = BloomFilter.create(Protocols.defaultProtocol(), new byte[0], 1000, 3);
    assertThat(notPowerOfTwo.isFoldable()).isFalse();
    assertThatThrownBy(notPowerOfTwo::fold).isInstanceOf(UnfoldableFilterException.class)
        .hasMessageContaining("m must be a power of two");
    BloomFilter oneBit = BloomFilter.create(Protocols.defaultProtocol(), new byte[0], 1, 1);
    assertThatThrownBy(oneBit::fold).isInstanceOf(UnfoldableFilterException.class);
    BloomFilter sha = BloomFilter.create(Protocols.of(ProtocolId.SHA256_DOC_V1), new byte[0], 1024, 3);
    assertThat(sha.isFoldable()).isFalse();
    assertThatThrownBy(sha::fold).isInstanceOf(UnfoldableFilterException.class).hasMessageContaining("protocol");
    assertThatThrownBy(() -> BlockedBloomFilter.create(new byte[0], 3, 4).fold())
        .isInstanceOf(UnfoldableFilterException.class).hasMessageContaining("power of two");
    assertThatThrownBy(() -> BlockedBloomFilter.create(new byte[0], 1, 4).fold())
        .isInstanceOf(UnfoldableFilterException.class);
  }

  @Test
  void foldWhileStopsBeforeTheTargetOrTheLimit() {
    BloomFilter filter = BloomFilter.create(Protocols.defaultProtocol(), new byte[0], 1 << 16, 5);
    for (long i = 0; i < 500; i++) {
      filter.add(i);
    }
    BloomFilter shrunk = filter.foldWhile(0.01, Long.MAX_VALUE);
    assertThat(shrunk.bitSize()).isLessThan(filter.bitSize());
    assertThat(shrunk.estimatedFpp()).isLessThanOrEqualTo(0.01);
    assertThat(shrunk.fold().estimatedFpp()).isGreaterThan(0.01);
    assertThat(filter.foldWhile(0.01, 1).bitSize()).isEqualTo(filter.bitSize() / 2);
    assertThat(filter.foldWhile(0.01, 0)).isSameAs(filter);
    assertThat(filter.foldWhile(1e-300, Long.MAX_VALUE)).isSameAs(filter);
    assertThat(filter.foldWhile(1, Long.MAX_VALUE).bitSize()).isEqualTo(1);
    BloomFilter notPowerOfTwo = BloomFilter.create(Protocols.defaultProtocol(), new byte[0], 1000, 3);
    assertThatThrownBy(() -> notPowerOfTwo.foldWhile(1, 0)).isInstanceOf(UnfoldableFilterException.class);
    BlockedBloomFilter blocked = BlockedBloomFilter.create(new byte[0], 8, 8);
    assertThat(blocked.foldWhile(1, Long.MAX_VALUE).blockCount()).isEqualTo(1);
    assertThatThrownBy(() -> BlockedBloomFilter.create(new byte[0], 6, 8).foldWhile(1, 0))
        .isInstanceOf(UnfoldableFilterException.class);
  }

  @Test
  void foldableSizesAreTheNextPowerOfTwo() {
    assertThat(BloomMath.foldableBits(1)).isEqualTo(1);
    assertThat(BloomMath.foldableBits(1024)).isEqualTo(1024);
    assertThat(BloomMath.foldableBits(1025)).isEqualTo(2048);
    assertThat(BlockedBloomMath.foldableBlocks(3)).isEqualTo(4);
    assertThat(BlockedBloomMath.foldableBlocks(64)).isEqualTo(64);
  }

  private static final int NON_MEMBERS = 200_000;

  private interface Probe {
    boolean mightContain(long item);
  }

  /** Positives among the fixed non-members {@code first, first + 1, ...} (distinct from every member). */
  private static long countFalsePositives(Probe filter, long first) {
    long positives = 0;
    for (long i = 0; i < NON_MEMBERS; i++) {
      if (filter.mightContain(first + i)) {
        positives++;
      }
    }
    return positives;
  }

  private static void assertRateNear(long positives, double model, String what) {
    double mean = NON_MEMBERS * model;
    double spread = SIGMAS * Math.sqrt(NON_MEMBERS * model * (1 - model)) + 1;
    assertThat((double) positives)
        .as("%s: %d false positives in %d non-members vs model %.6f (mean %.1f ± %.1f)", what, positives, NON_MEMBERS,
            model, mean, spread)
        .isBetween(mean - spread, mean + spread);
  }
}
