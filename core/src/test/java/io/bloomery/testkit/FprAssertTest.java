package io.bloomery.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

class FprAssertTest {

  @Test
  void exactIntervalsMatchIndependentlyComputedQuantiles() {
    // Computed with exact rational binomial sums (Python math.comb), tails of at most 0.0005 each.
    assertThat(FprAssert.interval(1_000, 0.01, 0.999)).containsExactly(2, 22);
    assertThat(FprAssert.interval(40, 0.25, 0.999)).containsExactly(2, 20);
    assertThat(FprAssert.interval(10_000, 0.0073, 0.999)).containsExactly(47, 103);
    assertThat(FprAssert.interval(100, 0.5, 0.999)).containsExactly(34, 66);
  }

  @Test
  void normalApproximationForLargeMeans() {
    // N p = 10^4, sd = 99.499, z(0.9995) = 3.29053: 10^4 -/+ (327.40 + 0.5).
    assertThat(FprAssert.interval(1_000_000, 0.01, 0.999)).containsExactly(9_672, 10_328);
    assertThat(FprAssert.normalQuantile(0.9995)).isCloseTo(3.2905267314919, within(1e-8));
    assertThat(FprAssert.normalQuantile(0.5)).isCloseTo(0, within(1e-12));
    assertThat(FprAssert.normalQuantile(0.01)).isCloseTo(-2.3263478740408, within(1e-8));
  }

  @Test
  void degenerateRates() {
    assertThat(FprAssert.interval(100, 0, 0.999)).containsExactly(0, 0);
    assertThat(FprAssert.interval(100, 1, 0.999)).containsExactly(100, 100);
    assertThatThrownBy(() -> FprAssert.interval(100, 1.5, 0.999)).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void assertWithinModelFailsOutsideAndPassesInside() {
    FprAssert.assertWithinModel("inside", 10_000, 1_000_000, 0.01);
    assertThatThrownBy(() -> FprAssert.assertWithinModel("twice the model", 20_000, 1_000_000, 0.01))
        .isInstanceOf(AssertionError.class)
        .hasMessageContaining("twice the model")
        .hasMessageContaining("[9672, 10328]");
    assertThatThrownBy(() -> FprAssert.assertWithinModel("too few", 1, 1_000, 0.01)).isInstanceOf(AssertionError.class);
  }
}
