package io.bloomery.sketch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomery.filter.FilterTooLargeException;
import io.bloomery.format.FilterFormat;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.DoubleRange;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;
import net.jqwik.api.constraints.Size;

/** Properties of the t-digest against the exact sorted data (fixed jqwik seed). */
class TDigestPropertyTest {

  private static TDigest of(long compression, double[] values) {
    TDigest digest = TDigest.create(compression);
    for (double v : values) {
      digest.add(v);
    }
    return digest;
  }

  private static double[] sample(long seed, int n, int shape) {
    Random random = new Random(seed);
    double[] values = new double[n];
    for (int i = 0; i < n; i++) {
      values[i] = switch (shape) {
        case 0 -> random.nextDouble() * 2_000 - 1_000;
        case 1 -> random.nextGaussian() * 10 + 50;
        case 2 -> -Math.log(1 - random.nextDouble()) * 100;
        default -> random.nextInt(12);
      };
    }
    return values;
  }

  /** The exact fraction of the data below x plus half of that equal to it. */
  private static double exactCdf(double[] sorted, double x) {
    int below = 0;
    int equal = 0;
    for (double v : sorted) {
      if (v < x) {
        below++;
      } else if (v == x) {
        equal++;
      }
    }
    return (below + equal / 2.0) / sorted.length;
  }

  @Property(tries = 60, seed = "20261202")
  void countsMinMaxAndEstimatesStayWithinTheData(
      @ForAll @LongRange(min = 1, max = 300) long compression,
      @ForAll @IntRange(min = 0, max = 3_000) int n,
      @ForAll @IntRange(min = 0, max = 3) int shape,
      @ForAll long seed) {
    double[] values = sample(seed, n, shape);
    TDigest digest = of(compression, values);
    assertThat(digest.insertedCount()).isEqualTo(n);
    assertThat(digest.capacity()).isEqualTo(6 * compression + 10);
    if (n == 0) {
      assertThat(digest.min()).isNaN();
      assertThat(digest.max()).isNaN();
      assertThat(digest.rank(1)).isEqualTo(-2);
      assertThat(digest.byRank(0)).isNaN();
      return;
    }
    double min = Arrays.stream(values).min().orElseThrow();
    double max = Arrays.stream(values).max().orElseThrow();
    assertThat(digest.min()).isEqualTo(min);
    assertThat(digest.max()).isEqualTo(max);
    assertThat(digest.byRank(0)).isEqualTo(min);
    assertThat(digest.byRevRank(0)).isEqualTo(max);
    assertThat(digest.byRank(n)).isEqualTo(Double.POSITIVE_INFINITY);
    assertThat(digest.rank(min - 1)).isEqualTo(-1);
    assertThat(digest.rank(max + 1)).isEqualTo(n);
    assertThat(digest.revRank(max + 1)).isEqualTo(-1);
    if (n == 1) {
      assertThat(digest.quantile(0.5)).as("one observation is never merged, as in RedisBloom").isNaN();
      return;
    }
    double[] fractions = {0, 0.001, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999, 1};
    double[] estimates = digest.quantiles(fractions);
    for (int i = 0; i < estimates.length; i++) {
      assertThat(estimates[i]).as("q=%s", fractions[i]).isBetween(min, max);
      if (i > 0) {
        assertThat(estimates[i]).as("non-decreasing at q=%s", fractions[i]).isGreaterThanOrEqualTo(estimates[i - 1]);
      }
    }
    double previous = 0;
    for (int i = 0; i <= 20; i++) {
      double x = Math.min(max, min + (max - min) * i / 20);
      double cdf = digest.cdf(x);
      assertThat(cdf).isBetween(0.0, 1.0).isGreaterThanOrEqualTo(previous);
      previous = cdf;
      long rank = digest.rank(x);
      assertThat(rank).isBetween(0L, (long) n);
      assertThat(digest.revRank(x)).isBetween(0L, (long) n);
    }
    assertThat(digest.trimmedMean(0, 1)).isBetween(min, max);
  }

  /**
   * The accuracy the t-digest promises: at fraction q the estimate's true rank is off by at most about one
   * centroid, whose weight the size bound keeps near 2π·q(1−q)·n / compression; checked with a factor of 2 and two
   * observations of slack for interpolation between singletons.
   */
  @Property(tries = 30, seed = "20261202")
  void quantileEstimatesAreWithinTheSizeBound(
      @ForAll @LongRange(min = 50, max = 400) long compression,
      @ForAll @IntRange(min = 2_000, max = 20_000) int n,
      @ForAll @IntRange(min = 0, max = 2) int shape,
      @ForAll long seed) {
    double[] values = sample(seed, n, shape);
    TDigest digest = of(compression, values);
    double[] sorted = values.clone();
    Arrays.sort(sorted);
    for (double q : new double[] {0.001, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999}) {
      double estimate = digest.quantiles(q)[0];
      double bound = 2 * (2 * Math.PI * q * (1 - q) / compression) + 2.0 / n;
      assertThat(Math.abs(exactCdf(sorted, estimate) - q)).as("q=%s estimate %s", q, estimate).isLessThanOrEqualTo(bound);
    }
  }

  @Property(tries = 40, seed = "20261202")
  void mergingPartsCountsEveryObservationAndLeavesSourcesEquivalent(
      @ForAll @Size(min = 1, max = 4) List<@IntRange(min = 0, max = 800) Integer> sizes,
      @ForAll @LongRange(min = 1, max = 200) long compression,
      @ForAll long seed) throws Exception {
    TDigest[] parts = new TDigest[sizes.size()];
    long total = 0;
    double min = Double.POSITIVE_INFINITY;
    double max = Double.NEGATIVE_INFINITY;
    for (int i = 0; i < parts.length; i++) {
      double[] values = sample(seed + i, sizes.get(i), i % 4);
      parts[i] = of(compression + i, values);
      total += values.length;
      for (double v : values) {
        min = Math.min(min, v);
        max = Math.max(max, v);
      }
    }
    byte[][] before = Arrays.stream(parts).map(FilterFormat::toBytes).toArray(byte[][]::new);
    TDigest combined = TDigest.combine(null, List.of(parts), 0, false);
    assertThat(combined.compression()).isEqualTo(compression + parts.length - 1);
    assertThat(combined.insertedCount()).isEqualTo(total);
    if (total > 0) {
      assertThat(combined.min()).isEqualTo(min);
      assertThat(combined.max()).isEqualTo(max);
    }
    TDigest folded = TDigest.create(compression);
    for (int i = 0; i < parts.length; i++) {
      TDigest part = (TDigest) FilterFormat.fromBytes(before[i]);
      folded.mergeFrom(part);
      assertThat(FilterFormat.toBytes(part)).as("mergeFrom leaves its argument as it was").isEqualTo(before[i]);
    }
    assertThat(folded.insertedCount()).isEqualTo(total);
  }

  @Property(tries = 40, seed = "20261202")
  void copiesAndFormatRoundTripsEvolveIdentically(
      @ForAll @LongRange(min = 1, max = 120) long compression,
      @ForAll @IntRange(min = 0, max = 1_500) int n,
      @ForAll @DoubleRange(min = 0, max = 1) double probe,
      @ForAll long seed) throws Exception {
    double[] values = sample(seed, n, (int) (Math.abs(seed) % 4));
    TDigest digest = of(compression, Arrays.copyOf(values, n / 2));
    digest.cdf(1); // compresses, leaving merged centroids for the rest to join
    TDigest copy = digest.copy();
    TDigest read = (TDigest) FilterFormat.fromBytes(FilterFormat.toBytes(digest));
    for (int i = n / 2; i < n; i++) {
      digest.add(values[i]);
      copy.add(values[i]);
      read.add(values[i]);
    }
    byte[] expected = FilterFormat.toBytes(digest);
    assertThat(FilterFormat.toBytes(copy)).isEqualTo(expected);
    assertThat(FilterFormat.toBytes(read)).isEqualTo(expected);
    assertThat(Double.doubleToLongBits(read.quantile(probe))).isEqualTo(Double.doubleToLongBits(digest.quantile(probe)));
  }

  @Property(tries = 50, seed = "20261202")
  void badArgumentsAreRefusedInCoresOwnWordsAndChangeNothing(
      @ForAll @DoubleRange(min = 1.01, max = 1e9) double outside) {
    TDigest digest = of(10, new double[] {1, 2, 3});
    byte[] before = FilterFormat.toBytes(digest);
    assertThatThrownBy(() -> TDigest.create(0)).isExactlyInstanceOf(IllegalArgumentException.class)
        .hasMessage("compression 0 is below 1");
    assertThatThrownBy(() -> TDigest.create(TDigest.MAX_COMPRESSION + 1)).isInstanceOf(FilterTooLargeException.class)
        .hasMessageContaining("compression " + (TDigest.MAX_COMPRESSION + 1));
    assertThatThrownBy(() -> digest.add(Double.NaN)).hasMessage("value NaN is not finite");
    assertThatThrownBy(() -> digest.add(Double.POSITIVE_INFINITY)).hasMessage("value Infinity is not finite");
    assertThatThrownBy(() -> digest.quantiles(0.5, outside)).hasMessage("fraction " + outside + " is outside [0, 1]");
    assertThatThrownBy(() -> digest.quantiles(-outside)).hasMessage("fraction " + -outside + " is outside [0, 1]");
    assertThatThrownBy(() -> digest.byRank(-1)).hasMessage("rank -1 is negative");
    assertThatThrownBy(() -> digest.trimmedMean(0, outside)).hasMessage("cuts 0.0 and " + outside + " must be in [0, 1]");
    assertThatThrownBy(() -> digest.trimmedMean(0.5, 0.5)).hasMessage("low cut 0.5 is not below high cut 0.5");
    assertThatThrownBy(() -> digest.mergeFrom(digest)).isInstanceOf(IllegalArgumentException.class);
    assertThat(FilterFormat.toBytes(digest)).isEqualTo(before);
  }
}
