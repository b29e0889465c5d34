package io.bloomery.testkit;

/**
 * Binomial acceptance bounds for false-positive counts.
 *
 * <p>A filter queried with N known non-members, each a false positive independently with probability
 * p, yields a Binomial(N, p) count. {@link #interval} returns the central interval holding at least
 * the requested confidence (e.g. 0.999: each tail at most 0.0005), so an honest implementation fails
 * a test at a fixed seed with probability below 0.1%, and a biased one (the Guava #1119 kind of bug,
 * off by a factor of two or more) fails at any useful N.
 *
 * <p>Method: exact when N·p ≤ 500 — the binomial pmf is accumulated from 0 by the ratio recurrence
 * pmf(x+1) = pmf(x)·(N−x)/(x+1)·p/(1−p), starting from (1−p)^N ≥ e^−500, well inside double range;
 * otherwise the normal approximation N·p ± (z·√(N·p·(1−p)) + 0.5) with continuity correction, whose
 * error at N·p > 500 is far below one count at the bounds used here.
 */
public final class FprAssert {

  private FprAssert() {}

  /**
   * The central interval [lower, upper] of Binomial(trials, p) holding at least {@code confidence}.
   */
  public static long[] interval(long trials, double p, double confidence) {
    if (trials < 0 || !(p >= 0 && p <= 1) || !(confidence > 0 && confidence < 1)) {
      throw new IllegalArgumentException("trials " + trials + ", p " + p + ", confidence " + confidence);
    }
    if (p == 0) {
      return new long[] {0, 0};
    }
    if (p == 1) {
      return new long[] {trials, trials};
    }
    double tail = (1 - confidence) / 2;
    double mean = trials * p;
    if (mean <= 500) {
      return exactInterval(trials, p, tail);
    }
    double z = normalQuantile(1 - tail);
    double half = z * Math.sqrt(mean * (1 - p)) + 0.5;
    return new long[] {Math.max(0, (long) Math.floor(mean - half)), Math.min(trials, (long) Math.ceil(mean + half))};
  }

  private static long[] exactInterval(long trials, double p, double tail) {
    double pmf = Math.exp(trials * Math.log1p(-p));
    double ratio = p / (1 - p);
    double cumulative = 0;
    long lower = -1;
    for (long x = 0; x <= trials; x++) {
      cumulative += pmf;
      if (lower < 0 && cumulative > tail) {
        lower = x; // P(X < lower) <= tail
      }
      if (cumulative >= 1 - tail) {
        return new long[] {lower, x}; // P(X > x) <= tail
      }
      pmf *= (double) (trials - x) / (x + 1) * ratio;
    }
    return new long[] {Math.max(lower, 0), trials};
  }

  /** The standard normal quantile (Acklam's rational approximation, relative error below 1.2e-9). */
  static double normalQuantile(double probability) {
    double[] a = {-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02,
        1.383577518672690e+02, -3.066479806614716e+01, 2.506628277459239e+00};
    double[] b = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
        6.680131188771972e+01, -1.328068155288572e+01};
    double[] c = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
        -2.549732539343734e+00, 4.374664141464968e+00, 2.938163982698783e+00};
    double[] d = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00, 3.754408661907416e+00};
    double low = 0.02425;
    if (probability < low) {
      double q = Math.sqrt(-2 * Math.log(probability));
      return (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5])
          / ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
    }
    if (probability > 1 - low) {
      return -normalQuantile(1 - probability);
    }
    double q = probability - 0.5;
    double r = q * q;
    return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q
        / (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
  }

  /**
   * Asserts that {@code falsePositives} out of {@code trials} non-member queries lies in the 99.9%
   * binomial interval of {@code modelRate}.
   */
  public static void assertWithinModel(String what, long falsePositives, long trials, double modelRate) {
    long[] bounds = interval(trials, modelRate, 0.999);
    if (falsePositives < bounds[0] || falsePositives > bounds[1]) {
      throw new AssertionError(String.format(java.util.Locale.ROOT,
          "%s: %d false positives in %d non-member queries (rate %.6g) is outside the 99.9%% binomial"
              + " interval [%d, %d] of the model rate %.6g (expected %.1f)",
          what, falsePositives, trials, (double) falsePositives / trials, bounds[0], bounds[1], modelRate,
          trials * modelRate));
    }
  }
}
