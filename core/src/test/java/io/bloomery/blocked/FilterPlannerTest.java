package io.bloomery.blocked;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomery.filter.FilterKind;
import io.bloomery.sizing.BloomMath;
import org.junit.jupiter.api.Test;

class FilterPlannerTest {

  @Test
  void blockedAtOnePercentWithReasonFromTheModels() {
    FilterPlanner.Plan plan = FilterPlanner.plan(50_000_000L, 0.01);
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
    FilterPlanner.Plan plan = FilterPlanner.plan(1_000_000, 1e-6);
    assertThat(plan.kind()).isEqualTo(FilterKind.CLASSIC_BLOOM);
    assertThat(plan.reason()).startsWith("classic: blocked would need").contains("over the 15% limit");
    assertThat(plan.modelFpp()).isLessThanOrEqualTo(1e-6 * 1.001);
  }

  @Test
  void budgetBetweenClassicAndBlockedPicksClassic() {
    long classicBytes = (long) Math.ceil(1_000_000 * BloomMath.bitsPerKey(0.01) / 8);
    FilterPlanner.Plan plan = FilterPlanner.plan(1_000_000, 0.01, classicBytes + 1000);
    assertThat(plan.kind()).isEqualTo(FilterKind.CLASSIC_BLOOM);
    assertThat(plan.reason()).contains("over the budget");
    assertThat(plan.bitmapBytes()).isLessThanOrEqualTo(classicBytes + 1000);
  }

  @Test
  void budgetBelowClassicSaysWhatIsReachable() {
    FilterPlanner.Plan plan = FilterPlanner.plan(1_000_000, 0.01, 600_000);
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
}
