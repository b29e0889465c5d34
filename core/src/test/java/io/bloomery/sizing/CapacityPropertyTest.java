package io.bloomery.sizing;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomery.blocked.BlockedBloomFilter;
import io.bloomery.blocked.BlockedBloomMath;
import io.bloomery.filter.BloomFilter;
import io.bloomery.filter.FilterKind;
import io.bloomery.plan.FilterPlan;
import io.bloomery.plan.FilterPlanner;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.DoubleRange;
import net.jqwik.api.constraints.Scale;

/**
 * One capacity for planning and reporting: a filter planned for n items at rate p, in either layout, has a capacity
 * of at least n and more only by the rounding of its k, so n items read at most 100% and never "over". Random (n, p)
 * with n from 1 to 10^10 and p from 10^-9 to 1/2, both spread evenly on a log scale; jqwik prints the seed of a
 * failing run.
 */
class CapacityPropertyTest {

  @Property(tries = 2000)
  void aClassicPlanForNItemsHasACapacityOfAtLeastN(
      @ForAll @DoubleRange(min = 0, max = 10) @Scale(6) double log10Items,
      @ForAll @DoubleRange(min = -9, max = -0.30103) @Scale(6) double log10Rate) {
    long n = items(log10Items);
    double p = Math.pow(10, log10Rate);
    long m = BloomMath.optimalBits(n, p);
    int k = BloomMath.optimalHashes(n, m);
    long capacity = BloomMath.capacityForHashes(m, k);

    assertThat(capacity).as("capacity of m=%d k=%d planned for n=%d at p=%s", m, k, n, p).isGreaterThanOrEqualTo(n);
    if (k >= 2) {
      // k = round(m ln2 / n) puts m ln2 / n within [k - 1/2, k + 1/2]; the capacity's own ratio is k - 1/2.
      assertThat((double) capacity).isLessThanOrEqualTo(n * (k + 0.5) / (k - 0.5) + 1);
    }
    assertReadsAtMostFull(n, capacity);
    assertThat(BloomMath.designRate(m, k)).isGreaterThanOrEqualTo(BloomMath.falsePositiveRate(m, k, n));
  }

  @Property(tries = 300)
  void aBlockedPlanForNItemsHasACapacityOfAtLeastN(
      @ForAll @DoubleRange(min = 0, max = 9) @Scale(6) double log10Items,
      @ForAll @DoubleRange(min = -9, max = -0.30103) @Scale(6) double log10Rate) {
    long n = items(log10Items);
    double p = Math.pow(10, log10Rate);
    long blocks = BlockedBloomMath.blockedBlocks(n, p);
    int k = BlockedBloomMath.optimalBlockedHashes(n, blocks);
    long capacity = BlockedBloomMath.blockedCapacity(blocks, k);

    assertThat(capacity).as("capacity of %d blocks k=%d planned for n=%d at p=%s", blocks, k, n, p)
        .isGreaterThanOrEqualTo(n);
    if (k < BlockedBloomMath.MAX_BLOCKED_HASHES) {
      // One more bit per key would have been optimal below the next capacity, so n is above it: the two capacities
      // bracket n, and they are at most 1.75 apart (k = 2 against 3: 246 against 143 keys per block).
      assertThat(n).isGreaterThan(BlockedBloomMath.blockedCapacity(blocks, k + 1));
      assertThat((double) capacity).isLessThanOrEqualTo(1.75 * n + 1);
    }
    assertReadsAtMostFull(n, capacity);
    assertThat(BlockedBloomMath.blockedDesignRate(blocks, k)).isGreaterThanOrEqualTo(
        BlockedBloomMath.blockedFalsePositiveRate(n, blocks, BlockedBloomMath.BLOCKED_BLOCK_BITS, k));
  }

  @Property(tries = 300)
  void whateverLayoutThePlannerPicksItsPlanHoldsN(
      @ForAll @DoubleRange(min = 0, max = 9) @Scale(6) double log10Items,
      @ForAll @DoubleRange(min = -9, max = -0.30103) @Scale(6) double log10Rate) {
    long n = items(log10Items);
    double p = Math.pow(10, log10Rate);
    FilterPlan plan = FilterPlanner.plan(n, p);
    long capacity = plan.kind() == FilterKind.BLOCKED_BLOOM
        ? BlockedBloomMath.blockedCapacity(plan.bits() / BlockedBloomMath.BLOCKED_BLOCK_BITS, plan.hashes())
        : BloomMath.capacityForHashes(plan.bits(), plan.hashes());
    assertThat(capacity).as("%s plan %s for n=%d at p=%s", plan.kind(), plan, n, p).isGreaterThanOrEqualTo(n);
    assertReadsAtMostFull(n, capacity);
  }

  @Example
  void twoMillionAtOnePercentIsWithinItsCapacityInEitherLayout() {
    BloomFilter classic = BloomFilter.create(2_000_000, 0.01);
    assertThat(classic.bitSize()).isEqualTo(19_170_117);
    assertThat(classic.hashCount()).isEqualTo(7);
    assertThat(classic.capacity()).isEqualTo(2_044_263);
    assertThat(CapacityUse.of(2_000_000, classic.capacity())).isEqualTo(CapacityUse.NEAR);
    assertThat(CapacityUse.percent(2_000_000, classic.capacity())).isEqualTo("97%");

    BlockedBloomFilter blocked = BlockedBloomFilter.create(2_000_000, 0.01);
    assertThat(blocked.capacity()).isGreaterThanOrEqualTo(2_000_000)
        .isEqualTo(BlockedBloomMath.blockedCapacity(blocked.blockCount(), blocked.hashCount()));
    assertThat(CapacityUse.of(2_000_000, blocked.capacity())).isNotEqualTo(CapacityUse.OVER);
  }

  @Example
  void percentAndWordAgreeAtTheEdges() {
    assertThat(CapacityUse.of(0, 100)).isEqualTo(CapacityUse.WITHIN);
    assertThat(CapacityUse.of(79, 100)).isEqualTo(CapacityUse.WITHIN);
    assertThat(CapacityUse.of(80, 100)).isEqualTo(CapacityUse.NEAR);
    assertThat(CapacityUse.of(100, 100)).isEqualTo(CapacityUse.NEAR);
    assertThat(CapacityUse.of(101, 100)).isEqualTo(CapacityUse.OVER);
    assertThat(CapacityUse.percent(100, 100)).isEqualTo("100%");
    assertThat(CapacityUse.percent(999_999_999, 1_000_000_000)).isEqualTo("99%");
    assertThat(CapacityUse.percent(1_000_000_001, 1_000_000_000)).isEqualTo("101%");
    assertThat(CapacityUse.percent(5_001, 1_000)).isEqualTo("501%");
  }

  private static long items(double log10) {
    return Math.max(1, Math.round(Math.pow(10, log10)));
  }

  private static void assertReadsAtMostFull(long n, long capacity) {
    assertThat(CapacityUse.of(n, capacity)).isNotEqualTo(CapacityUse.OVER);
    assertThat(Integer.parseInt(CapacityUse.percent(n, capacity).replace("%", ""))).isLessThanOrEqualTo(100);
  }
}
