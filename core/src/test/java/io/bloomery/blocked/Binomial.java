package io.bloomery.blocked;

import static org.assertj.core.api.Assertions.assertThat;

/** Two-sided 99.9% binomial bound (normal approximation with continuity correction; n·p ≫ 10 here). */
final class Binomial {
  private static final double Z_999 = 3.2905;

  private Binomial() {}

  static void assertWithin999(long positives, long trials, double p, String what) {
    double mean = trials * p;
    double spread = Z_999 * Math.sqrt(trials * p * (1 - p)) + 0.5;
    assertThat((double) positives)
        .as("%s: %d positives in %d trials vs model p=%.6f (mean %.1f ± %.1f)", what, positives, trials, p, mean, spread)
        .isBetween(mean - spread, mean + spread);
  }
}
