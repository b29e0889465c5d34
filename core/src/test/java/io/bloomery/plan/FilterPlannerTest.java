package io.bloomery.plan;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomery.filter.FilterKind;
import io.bloomery.sizing.BloomMath;
import java.util.List;
import org.junit.jupiter.api.Test;

class FilterPlannerTest {

  @Test
  void blockedAtOnePercentWithReasonFromTheModels() {
    FilterPlan plan = FilterPlanner.plan(50_000_000L, 0.01);
    assertThat(plan.kind()).isEqualTo(FilterKind.BLOCKED_BLOOM);
    assertThat(plan.bitsPerKey()).isBetween(9.89, 9.91);
    assertThat(plan.hashes()).isEqualTo(6);
    assertThat(plan.modelFpp()).isLessThanOrEqualTo(0.01);
    assertThat(plan.reason())
        .startsWith("blocked: 1 cache-line miss per lookup instead of 7 for a member and 2.0 for a non-member")
        .contains("3.2% more memory at p=1.00%")
        .contains("9.90 vs 9.59 bits/key");
  }

  @Test
  void classicWhenBlockedCostsTooMuchMemory() {
    FilterPlan plan = FilterPlanner.plan(1_000_000, 1e-6);
    assertThat(plan.kind()).isEqualTo(FilterKind.CLASSIC_BLOOM);
    assertThat(plan.reason()).startsWith("classic: blocked would need").contains("over the 15% limit");
    assertThat(plan.modelFpp()).isLessThanOrEqualTo(1e-6 * 1.001);
  }

  @Test
  void budgetBetweenClassicAndBlockedPicksClassic() {
    long classicBytes = (long) Math.ceil(1_000_000 * BloomMath.bitsPerKey(0.01) / 8);
    FilterPlan plan = FilterPlanner.plan(1_000_000, 0.01, classicBytes + 1000);
    assertThat(plan.kind()).isEqualTo(FilterKind.CLASSIC_BLOOM);
    assertThat(plan.reason()).contains("over the budget");
    assertThat(plan.bitmapBytes()).isLessThanOrEqualTo(classicBytes + 1000);
  }

  @Test
  void budgetBelowClassicSaysWhatIsReachable() {
    FilterPlan plan = FilterPlanner.plan(1_000_000, 0.01, 600_000);
    assertThat(plan.reason()).contains("cannot reach p=1.00%");
    assertThat(plan.modelFpp()).isGreaterThan(0.01);
    assertThat(plan.bitmapBytes()).isLessThanOrEqualTo(600_000);
  }

  @Test
  void rejectsNonsense() {
    assertThatThrownBy(() -> FilterPlanner.plan(0, 0.01)).hasMessageContaining("n must");
    assertThatThrownBy(() -> FilterPlanner.plan(10, 1.5)).hasMessageContaining("fpp");
    assertThatThrownBy(() -> FilterPlanner.plan(10, 0.01, 10)).hasMessageContaining("budget");
  }

  @Test
  void staticSetAtOnePercentPicksAnEightBitFuseFilterThatBeatsTheTargetInLessMemory() {
    FilterPlan bloom = FilterPlanner.plan(10_000_000, 0.01);
    FilterPlan plan = FilterPlanner.planStatic(10_000_000, 0.01, Long.MAX_VALUE);
    assertThat(plan.kind()).isEqualTo(FilterKind.BINARY_FUSE);
    assertThat(plan.modelFpp()).isEqualTo(0x1p-8);
    assertThat(plan.bits()).isEqualTo(io.bloomery.fuse.BinaryFuseFilter.shapeFor(10_000_000).slots() * 8)
        .isLessThan(bloom.bits());
    assertThat(plan.bitsPerKey()).isBetween(9.0, 9.1);
    assertThat(plan.reason()).startsWith("binary fuse (8-bit fingerprints)").contains("vs 9.9");
  }

  @Test
  void staticSetAtOnePerMillePrefersTheSmallerBloomPlanAndSaysWhatFuseWouldCost() {
    FilterPlan plan = FilterPlanner.planStatic(10_000_000, 0.001, Long.MAX_VALUE);
    // 16-bit fuse needs ~18 bits/key; the blocked plan meets 0.1% in ~15.5.
    assertThat(plan.kind()).isEqualTo(FilterKind.BLOCKED_BLOOM);
    assertThat(plan.reason()).contains("a binary fuse filter would need");
  }

  @Test
  void staticSetBelowTheEightBitRateTakesSixteenBitsWhenBloomWouldNeedMore() {
    FilterPlan plan = FilterPlanner.planStatic(1_000_000, 2e-5, Long.MAX_VALUE);
    assertThat(plan.kind()).isEqualTo(FilterKind.BINARY_FUSE);
    assertThat(plan.modelFpp()).isEqualTo(0x1p-16);
    assertThat(plan.bitsPerKey()).isLessThan(FilterPlanner.plan(1_000_000, 2e-5).bitsPerKey());
  }

  @Test
  void aPlanBuildsTheFilterItDescribes() {
    FilterPlan blocked = FilterPlanner.plan(100_000, 0.01);
    assertThat(blocked.kind()).isEqualTo(FilterKind.BLOCKED_BLOOM);
    io.bloomery.blocked.BlockedBloomFilter built = (io.bloomery.blocked.BlockedBloomFilter) blocked.build();
    assertThat(List.of(built.bitSize(), (long) built.hashCount())).containsExactly(blocked.bits(), (long) blocked.hashes());
    assertThat(built.isCompatible((io.bloomery.blocked.BlockedBloomFilter) blocked.build())).as("equal plans merge").isTrue();

    FilterPlan classic = FilterPlanner.plan(1_000_000, 1e-6);
    assertThat(classic.kind()).isEqualTo(FilterKind.CLASSIC_BLOOM);
    io.bloomery.filter.BloomFilter bloom = (io.bloomery.filter.BloomFilter) classic.build();
    assertThat(List.of(bloom.bitSize(), (long) bloom.hashCount())).containsExactly(classic.bits(), (long) classic.hashes());

    List<byte[]> items = io.bloomery.testkit.Keys.urls(7, 0, 20_000);
    FilterPlan fuse = FilterPlanner.planStatic(items.size(), 0.01, Long.MAX_VALUE);
    assertThat(fuse.kind()).isEqualTo(FilterKind.BINARY_FUSE);
    assertThatThrownBy(fuse::build).isInstanceOf(IllegalStateException.class).hasMessageContaining("build(items)");
    io.bloomery.fuse.BinaryFuseFilter set = (io.bloomery.fuse.BinaryFuseFilter) fuse.build(items);
    assertThat(set.fingerprintBits()).isEqualTo(8);
    assertThat(set.estimatedFpp()).isEqualTo(fuse.modelFpp());
    for (byte[] item : items) {
      assertThat(set.mightContain(item)).isTrue();
    }
    assertThat(blocked.build(items.subList(0, 100)).mightContain(items.get(99))).isTrue();
  }
}
