package io.bloomery.sketch;

import io.bloomery.filter.FilterKind;
import io.bloomery.filter.FilterTooLargeException;
import io.bloomery.filter.Mergeable;
import io.bloomery.filter.Summary;
import io.bloomery.hash.ProtocolId;
import io.bloomery.internal.KindAccess;
import java.util.List;
import java.util.Objects;

/*
 * The merging t-digest (Dunning & Ertl, "Computing extremely accurate quantiles using t-digests", 2019) with the
 * arithmetic of RedisBloom's t-digest-c (RedisBloom/t-digest-c 5b89d70a, src/tdigest.c, as RedisBloom b28c2945
 * links it) and the command semantics of RedisBloom's src/rm_tdigest.c:
 *
 *  - centroids live in two parallel arrays of capacity 6 * compression + 10: merged ones (sorted) at the front,
 *    then unmerged ones appended by add; an add first compresses when merged + unmerged >= capacity - 1;
 *  - compress sorts all centroids with t-digest-c's quicksort (central pivot, strict "<" partition: the order of
 *    equal means, and so every later sum, depends on it), then makes one left-to-right pass merging centroid i into
 *    the current one while (w_cur + w_i) * compression / (2 pi W ln W) is at most q (1 - q) at both ends of the
 *    merged centroid (the k_1-like size bound of t-digest-c), with W the total weight; a digest whose total weight is
 *    at most 1 is sorted but left unmerged, so a digest of one observation answers NaN to quantiles and CDFs, as
 *    RedisBloom does;
 *  - quantile, CDF and trimmed mean interpolate between centroid midpoints, treat weight-1 centroids as exact
 *    samples and interpolate to min and max in the outer half-centroids; every expression is evaluated in the same
 *    order and with the same double conversions as the C code (weights are 64-bit integers converted per use), and
 *    C's comparison macros are kept where they differ from Math.min/max on NaN;
 *  - queries that read centroids compress first, which changes the observable state (merged/unmerged nodes, total
 *    compressions) and every later merge decision; MIN and MAX and out-of-range RANK/BYRANK arguments do not.
 */
/**
 * A t-digest with RedisBloom's {@code TDIGEST.*} semantics: a compact summary of a stream of doubles that answers
 * quantiles, ranks, CDF values and trimmed means with small relative error near the tails.
 *
 * <p><b>The contract.</b> Every observation added is counted ({@link #insertedCount()}), {@link #min()} and
 * {@link #max()} are exact, and every estimate lies within [min, max] (or is ±∞ / NaN where RedisBloom answers
 * those). The arithmetic is RedisBloom's bit for bit, so the same commands give byte-identical replies: centroid
 * merging, sort order and interpolation follow t-digest-c. Estimates are approximate: for a quantile q the error in
 * rank is bounded by roughly {@code q(1-q)·W·π/compression} plus one centroid's weight.
 *
 * <p>Queries compress the buffered observations first, as RedisBloom's do, so they change {@link #mergedNodes()},
 * {@link #unmergedNodes()} and {@link #totalCompressions()}, though never an answer.
 *
 * <p><b>Thread-safety.</b> Not thread-safe, and queries write: confine a digest to one thread or guard every call
 * (reads included) with one exclusive lock.
 */
public final class TDigest implements Summary, Mergeable<TDigest> {

  /** The compression {@code TDIGEST.CREATE} uses when none is given. */
  public static final long DEFAULT_COMPRESSION = 100;

  /** The largest compression whose centroid arrays fit a Java array: capacity 6·c + 10 ≤ 2^31 − 9. */
  public static final long MAX_COMPRESSION = (Integer.MAX_VALUE - 8 - 10) / 6;

  private static final String OVERFLOW = "the total weight would pass 2^63 - 1";


  /** Bytes RedisBloom counts for the C struct itself in {@code Memory usage}. */
  private static final long STRUCT_BYTES = 80;
  private static final double PI = 3.14159265358979323846;

  private final long compression;
  private final int capacity;
  private final double[] means;
  private final long[] weights;
  private double min;
  private double max;
  private int mergedNodes;
  private int unmergedNodes;
  private long totalCompressions;
  private long mergedWeight;
  private long unmergedWeight;

  private TDigest(long compression, int capacity, double[] means, long[] weights) {
    this.compression = compression;
    this.capacity = capacity;
    this.means = means;
    this.weights = weights;
    reset();
  }

  static {
    KindAccess.register(TDigest.class, new KindAccess.TDigests<TDigest>() {
      @Override
      public TDigest restore(long compression, double min, double max, long totalCompressions, int mergedNodes,
          double[] means, long[] weights) {
        return TDigest.restore(compression, min, max, totalCompressions, mergedNodes, means, weights);
      }

      @Override
      public KindAccess.TDigestState state(TDigest digest) {
        int n = digest.mergedNodes + digest.unmergedNodes;
        return new KindAccess.TDigestState(digest.min, digest.max, digest.mergedNodes,
            java.util.Arrays.copyOf(digest.means, n), java.util.Arrays.copyOf(digest.weights, n));
      }

      @Override
      public void compress(TDigest digest) {
        digest.compress();
      }
    });
  }

  /**
   * {@code TDIGEST.CREATE key [COMPRESSION c]}: an empty digest.
   *
   * @throws IllegalArgumentException if {@code compression < 1}
   * @throws FilterTooLargeException if it is above {@link #MAX_COMPRESSION} or the heap cannot hold the centroids
   */
  public static TDigest create(long compression) {
    if (compression < 1) {
      throw new IllegalArgumentException("compression " + compression + " is below 1");
    }
    TDigest digest = allocate(compression);
    if (digest == null) {
      throw tooLarge(compression);
    }
    return digest;
  }

  /** {@link #create(long)} with {@link #DEFAULT_COMPRESSION}. */
  public static TDigest create() {
    return create(DEFAULT_COMPRESSION);
  }

  /** The digest, or {@code null} when its arrays cannot be had (RedisBloom's failed {@code td_init}). */
  private static FilterTooLargeException tooLarge(long compression) {
    return new FilterTooLargeException("a t-digest of compression " + compression + " does not fit in this heap (at most "
        + MAX_COMPRESSION + ")");
  }

  private static TDigest allocate(long compression) {
    if (compression < 1 || compression > MAX_COMPRESSION) {
      return null;
    }
    int capacity = (int) (6 * compression + 10);
    try {
      return new TDigest(compression, capacity, new double[capacity], new long[capacity]);
    } catch (OutOfMemoryError cannotFit) {
      return null; // thrown only after a full collection: the heap really cannot hold it
    }
  }

  /**
   * Rebuilds a digest from its persisted state (the binary format): the raw min and max (the empty digest's are
   * {@link Double#MAX_VALUE} and its negation), the first {@code mergedNodes} centroids merged, the rest buffered.
   * The result answers and evolves exactly as the digest that was written.
   *
   * @throws IllegalArgumentException if the compression is out of range, there are more centroids than the
   *     capacity, a mean or min/max is not finite, a weight is below 1, or the weights overflow 2^63 − 1
   */
  static TDigest restore(long compression, double min, double max, long totalCompressions, int mergedNodes,
      double[] means, long[] weights) {
    if (compression < 1 || compression > MAX_COMPRESSION) {
      throw new IllegalArgumentException("compression " + compression + " outside [1, " + MAX_COMPRESSION + "]");
    }
    if (means.length != weights.length) {
      throw new IllegalArgumentException(means.length + " means but " + weights.length + " weights");
    }
    if (mergedNodes < 0 || mergedNodes > means.length) {
      throw new IllegalArgumentException(mergedNodes + " merged nodes of " + means.length + " centroids");
    }
    if (totalCompressions < 0) {
      throw new IllegalArgumentException("total compressions " + totalCompressions + " is negative");
    }
    if (!Double.isFinite(min) || !Double.isFinite(max)) {
      throw new IllegalArgumentException("min " + min + " and max " + max + " must be finite");
    }
    if (6 * compression + 10 < means.length) {
      throw new IllegalArgumentException(
          means.length + " centroids exceed the capacity " + (6 * compression + 10) + " of compression " + compression);
    }
    long merged = 0;
    long unmerged = 0;
    for (int i = 0; i < means.length; i++) {
      if (!Double.isFinite(means[i])) {
        throw new IllegalArgumentException("centroid " + i + " mean " + means[i] + " is not finite");
      }
      if (weights[i] < 1) {
        throw new IllegalArgumentException("centroid " + i + " weight " + weights[i] + " is below 1");
      }
      try {
        if (i < mergedNodes) {
          merged = Math.addExact(merged, weights[i]);
        } else {
          unmerged = Math.addExact(unmerged, weights[i]);
        }
        Math.addExact(merged, unmerged);
      } catch (ArithmeticException e) {
        throw new IllegalArgumentException("centroid weights overflow 2^63 - 1", e);
      }
    }
    TDigest digest = allocate(compression);
    if (digest == null) {
      throw tooLarge(compression);
    }
    System.arraycopy(means, 0, digest.means, 0, means.length);
    System.arraycopy(weights, 0, digest.weights, 0, weights.length);
    digest.min = min;
    digest.max = max;
    digest.totalCompressions = totalCompressions;
    digest.mergedNodes = mergedNodes;
    digest.unmergedNodes = means.length - mergedNodes;
    digest.mergedWeight = merged;
    digest.unmergedWeight = unmerged;
    return digest;
  }

  @Override
  public FilterKind kind() {
    return FilterKind.T_DIGEST;
  }

  /** Always {@link ProtocolId#UNHASHED}: a t-digest holds numbers, not hashed items. */
  public ProtocolId protocolId() {
    return ProtocolId.UNHASHED;
  }

  /** The compression parameter δ (TDIGEST.INFO {@code Compression}). */
  public long compression() {
    return compression;
  }

  /** The centroid array size, 6·compression + 10 (TDIGEST.INFO {@code Capacity}). */
  public int capacity() {
    return capacity;
  }

  /** Centroids merged by the last compression (TDIGEST.INFO {@code Merged nodes}). */
  public int mergedNodes() {
    return mergedNodes;
  }

  /** Centroids buffered since (TDIGEST.INFO {@code Unmerged nodes}). */
  public int unmergedNodes() {
    return unmergedNodes;
  }

  /** Weight of the merged centroids. */
  public long mergedWeight() {
    return mergedWeight;
  }

  /** Weight of the buffered centroids. */
  public long unmergedWeight() {
    return unmergedWeight;
  }

  /** The number of observations (TDIGEST.INFO {@code Observations}). */
  public long insertedCount() {
    return mergedWeight + unmergedWeight;
  }

  /** How many compressions ran since creation or the last reset. */
  public long totalCompressions() {
    return totalCompressions;
  }

  /** RedisBloom's {@code Memory usage}: the C struct (80 bytes) plus 16 bytes per centroid slot. */
  public long memoryUsage() {
    return STRUCT_BYTES + 16L * capacity;
  }

  /** {@code TDIGEST.RESET}: forgets every observation; compression and capacity stay. */
  public void reset() {
    min = Double.MAX_VALUE;
    max = -min;
    mergedNodes = 0;
    mergedWeight = 0;
    unmergedNodes = 0;
    unmergedWeight = 0;
    totalCompressions = 0;
  }

  /**
   * {@code TDIGEST.ADD}: adds one observation.
   *
   * @throws IllegalArgumentException if {@code value} is infinite or NaN
   * @throws ArithmeticException if the total weight would pass 2^63 − 1
   */
  public void add(double value) {
    if (!Double.isFinite(value)) {
      throw new IllegalArgumentException("value " + value + " is not finite");
    }
    if (!addWeighted(value, 1)) {
      throw new ArithmeticException(OVERFLOW);
    }
  }

  /** t-digest-c's {@code td_add}; false where it answers EDOM (nothing is added then). */
  private boolean addWeighted(double mean, long weight) {
    if (mergedNodes + unmergedNodes >= capacity - 1 && !compress()) {
      return false;
    }
    int pos = mergedNodes + unmergedNodes;
    if (pos >= capacity) {
      return false;
    }
    if (!addSafe(unmergedWeight, weight)) {
      return false;
    }
    long newUnmergedWeight = unmergedWeight + weight;
    if (!addSafe(newUnmergedWeight, mergedWeight)) {
      return false;
    }
    long newTotalWeight = newUnmergedWeight + mergedWeight;
    if (overflows((double) newUnmergedWeight, (double) newTotalWeight)) {
      return false;
    }
    if (mean < min) {
      min = mean;
    }
    if (mean > max) {
      max = mean;
    }
    means[pos] = mean;
    weights[pos] = weight;
    unmergedNodes++;
    unmergedWeight = newUnmergedWeight;
    return true;
  }

  private static boolean addSafe(long a, long b) {
    return b < 0 ? a >= Long.MAX_VALUE - b : a <= Long.MAX_VALUE - b;
  }

  private static boolean overflows(double unmergedWeight, double totalWeight) {
    if (unmergedWeight == Double.POSITIVE_INFINITY || totalWeight == Double.POSITIVE_INFINITY) {
      return true;
    }
    return 2 * PI * totalWeight * StrictMath.log(totalWeight) == Double.POSITIVE_INFINITY;
  }

  /** t-digest-c's {@code td_compress}; false where it answers EDOM. */
  private boolean compress() {
    if (unmergedNodes == 0) {
      return true;
    }
    int n = mergedNodes + unmergedNodes;
    sort(means, weights, 0, n - 1);
    double totalWeight = (double) mergedWeight + (double) unmergedWeight;
    if (overflows((double) unmergedWeight, totalWeight)) {
      return false;
    }
    if (totalWeight <= 1) {
      return true;
    }
    double denominator = 2 * PI * totalWeight * StrictMath.log(totalWeight);
    if (denominator == Double.POSITIVE_INFINITY) {
      return false;
    }
    double normalizer = compression / denominator;
    if (normalizer == Double.POSITIVE_INFINITY) {
      return false;
    }
    int cur = 0;
    double weightSoFar = 0;
    for (int i = 1; i < n; i++) {
      double proposedWeight = (double) weights[cur] + (double) weights[i];
      double z = proposedWeight * normalizer;
      double q0 = weightSoFar / totalWeight;
      double q2 = (weightSoFar + proposedWeight) / totalWeight;
      if (z <= q0 * (1 - q0) && z <= q2 * (1 - q2)) {
        weights[cur] += weights[i];
        double delta = means[i] - means[cur];
        double weightedDelta = (delta * weights[i]) / weights[cur];
        means[cur] += weightedDelta;
      } else {
        weightSoFar += weights[cur];
        cur++;
        weights[cur] = weights[i];
        means[cur] = means[i];
      }
      if (cur != i) {
        weights[i] = 0;
        means[i] = 0.0;
      }
    }
    mergedNodes = cur + 1;
    mergedWeight = (long) totalWeight;
    unmergedNodes = 0;
    unmergedWeight = 0;
    totalCompressions++;
    return true;
  }

  /*
   * t-digest-c's td_qsort over [start, end] (inclusive), rearranging weights alongside means. The sub-ranges are
   * disjoint, so sorting the smaller one recursively and looping on the larger gives exactly t-digest-c's result
   * with a stack depth of O(log n).
   */
  private static void sort(double[] means, long[] weights, int start, int end) {
    while (start < end) {
      if (end - start == 1) {
        if (means[start] > means[end]) {
          swap(means, weights, start, end);
        }
        return;
      }
      int pivot = partition(means, weights, start, end, (int) (((long) end + start) / 2));
      if (pivot - start < end - pivot) {
        if (pivot > start) {
          sort(means, weights, start, pivot - 1);
        }
        start = pivot + 1;
      } else {
        sort(means, weights, pivot + 1, end);
        if (pivot <= start) {
          return;
        }
        end = pivot - 1;
      }
    }
  }

  private static int partition(double[] means, long[] weights, int start, int end, int pivotIndex) {
    double pivotMean = means[pivotIndex];
    swap(means, weights, pivotIndex, end);
    int i = start - 1;
    for (int j = start; j < end; j++) {
      if (means[j] < pivotMean) {
        i++;
        swap(means, weights, i, j);
      }
    }
    swap(means, weights, i + 1, end);
    return i + 1;
  }

  private static void swap(double[] means, long[] weights, int i, int j) {
    double mean = means[i];
    means[i] = means[j];
    means[j] = mean;
    long weight = weights[i];
    weights[i] = weights[j];
    weights[j] = weight;
  }

  /** {@code TDIGEST.MIN}: the smallest observation, NaN when empty. */
  public double min() {
    return insertedCount() > 0 ? min : Double.NaN;
  }

  /** {@code TDIGEST.MAX}: the largest observation, NaN when empty. */
  public double max() {
    return insertedCount() > 0 ? max : Double.NaN;
  }

  /**
   * t-digest-c's {@code td_quantile}: the estimated value below which a fraction {@code q} of the observations lie;
   * NaN when {@code q} is outside [0, 1] or nothing is merged (empty, or a single observation).
   */
  public double quantile(double q) {
    compress();
    if (q < 0.0 || q > 1.0 || mergedNodes == 0) {
      return Double.NaN;
    }
    if (mergedNodes == 1) {
      return means[0];
    }
    double index = q * (double) mergedWeight;
    if (index < 1) {
      return min;
    }
    double leftCentroidWeight = (double) weights[0];
    double[] weightSoFar = {leftCentroidWeight / 2};
    int[] nodePos = {0};
    return valueAtIndex(index, leftCentroidWeight, mergedNodes, weightSoFar, nodePos);
  }

  /**
   * {@code TDIGEST.QUANTILE key q…}: one estimate per fraction, as RedisBloom computes them: each non-decreasing run
   * of fractions is answered by one sweep over the centroids (t-digest-c's {@code td_quantiles}, which, unlike
   * {@link #quantile(double)}, interpolates below index 1 instead of answering min).
   *
   * @throws IllegalArgumentException if a fraction is outside [0, 1] or NaN
   */
  public double[] quantiles(double... fractions) {
    for (double q : fractions) {
      if (!(q >= 0 && q <= 1.0)) {
        throw new IllegalArgumentException("fraction " + q + " is outside [0, 1]");
      }
    }
    double[] values = new double[fractions.length];
    for (int i = 0; i < fractions.length; i++) {
      int start = i;
      while (i < fractions.length - 1 && fractions[i] <= fractions[i + 1]) {
        ++i;
      }
      sweepQuantiles(fractions, values, start, i - start + 1);
    }
    return values;
  }

  private void sweepQuantiles(double[] fractions, double[] values, int from, int length) {
    compress();
    int n = mergedNodes;
    if (n == 0) {
      for (int i = 0; i < length; i++) {
        values[from + i] = Double.NaN;
      }
      return;
    }
    if (n == 1) {
      for (int i = 0; i < length; i++) {
        double q = fractions[from + i];
        values[from + i] = q < 0.0 || q > 1.0 ? Double.NaN : means[0];
      }
      return;
    }
    double leftCentroidWeight = (double) weights[0];
    double[] weightSoFar = {leftCentroidWeight / 2};
    int[] nodePos = {0};
    for (int i = 0; i < length; i++) {
      double index = fractions[from + i] * (double) mergedWeight;
      values[from + i] = valueAtIndex(index, leftCentroidWeight, n, weightSoFar, nodePos);
    }
  }

  /** t-digest-c's {@code td_internal_iterate_centroids_to_index}; the cursor arrays carry over between calls. */
  private double valueAtIndex(double index, double leftCentroidWeight, int totalCentroids, double[] weightSoFar,
      int[] nodePos) {
    if (leftCentroidWeight > 1 && index < leftCentroidWeight / 2) {
      return min + (index - 1) / (leftCentroidWeight / 2 - 1) * (means[0] - min);
    }
    if (index > (double) (mergedWeight - 1)) {
      return max;
    }
    double rightCentroidWeight = (double) weights[totalCentroids - 1];
    double rightCentroidMean = means[totalCentroids - 1];
    if (rightCentroidWeight > 1 && (double) mergedWeight - index <= rightCentroidWeight / 2) {
      return max - ((double) mergedWeight - index - 1) / (rightCentroidWeight / 2 - 1) * (max - rightCentroidMean);
    }
    for (; nodePos[0] < totalCentroids - 1; nodePos[0]++) {
      int i = nodePos[0];
      double nodeWeight = (double) weights[i];
      double nodeWeightNext = (double) weights[i + 1];
      double nodeMean = means[i];
      double nodeMeanNext = means[i + 1];
      double dw = (nodeWeight + nodeWeightNext) / 2;
      if (weightSoFar[0] + dw > index) {
        double leftUnit = 0;
        if (nodeWeight == 1) {
          if (index - weightSoFar[0] < 0.5) {
            return nodeMean;
          }
          leftUnit = 0.5;
        }
        double rightUnit = 0;
        if (nodeWeightNext == 1) {
          if (weightSoFar[0] + dw - index <= 0.5) {
            return nodeMeanNext;
          }
          rightUnit = 0.5;
        }
        double z1 = index - weightSoFar[0] - leftUnit;
        double z2 = weightSoFar[0] + dw - index - rightUnit;
        return weightedAverage(nodeMean, z2, nodeMeanNext, z1);
      }
      weightSoFar[0] += dw;
    }
    double z1 = index - mergedWeight - rightCentroidWeight / 2.0;
    double z2 = rightCentroidWeight / 2 - z1;
    return weightedAverage(rightCentroidMean, z1, max, z2);
  }

  private static double weightedAverage(double x1, double w1, double x2, double w2) {
    return x1 <= x2 ? weightedAverageSorted(x1, w1, x2, w2) : weightedAverageSorted(x2, w2, x1, w1);
  }

  private static double weightedAverageSorted(double x1, double w1, double x2, double w2) {
    double x = (x1 * w1 + x2 * w2) / (w1 + w2);
    return cMax(x1, cMin(x, x2));
  }

  /** C's {@code ((x) < (y)) ? (x) : (y)}, which differs from {@link Math#min} on NaN and signed zeros. */
  private static double cMin(double x, double y) {
    return x < y ? x : y;
  }

  /** C's {@code ((x) > (y)) ? (x) : (y)}. */
  private static double cMax(double x, double y) {
    return x > y ? x : y;
  }

  /**
   * {@code TDIGEST.CDF}: the estimated fraction of observations at or below {@code x} (half of those equal to it);
   * NaN when nothing is merged, 0 below min, 1 above max.
   */
  public double cdf(double x) {
    compress();
    if (mergedNodes == 0) {
      return Double.NaN;
    }
    if (x < min) {
      return 0;
    }
    if (x > max) {
      return 1;
    }
    if (mergedNodes == 1) {
      double width = max - min;
      return x - min <= width ? 0.5 : (x - min) / width;
    }
    int n = mergedNodes;
    double leftCentroidMean = means[0];
    double leftCentroidWeight = (double) weights[0];
    double mergedWeightD = (double) mergedWeight;
    if (x < leftCentroidMean) {
      double width = leftCentroidMean - min;
      if (width > 0) {
        if (x == min) {
          return 0.5 / mergedWeightD;
        }
        return (1 + (x - min) / width * (leftCentroidWeight / 2 - 1)) / mergedWeightD;
      }
      return 0;
    }
    double rightCentroidMean = means[n - 1];
    double rightCentroidWeight = (double) weights[n - 1];
    if (x > rightCentroidMean) {
      double width = max - rightCentroidMean;
      if (width > 0) {
        if (x == max) {
          return 1 - 0.5 / mergedWeightD;
        }
        double dq = (1 + (max - x) / width * (rightCentroidWeight / 2 - 1)) / mergedWeightD;
        return 1 - dq;
      }
      return 1;
    }
    double weightSoFar = 0;
    for (int it = 0; it < n - 1; it++) {
      if (means[it] == x) {
        double dw = 0;
        while (it < n && means[it] == x) {
          dw += (double) weights[it];
          it++;
        }
        return (weightSoFar + dw / 2) / (double) mergedWeight;
      } else if (means[it] <= x && x < means[it + 1]) {
        double nodeWeight = (double) weights[it];
        double nodeWeightNext = (double) weights[it + 1];
        double nodeMean = means[it];
        double nodeMeanNext = means[it + 1];
        if (nodeMeanNext - nodeMean > 0) {
          double leftExcludedW = 0;
          double rightExcludedW = 0;
          if (nodeWeight == 1) {
            if (nodeWeightNext == 1) {
              return (weightSoFar + 1) / mergedWeightD;
            }
            leftExcludedW = 0.5;
          } else if (nodeWeightNext == 1) {
            rightExcludedW = 0.5;
          }
          double dw = (nodeWeight + nodeWeightNext) / 2;
          double dwNoSingleton = dw - leftExcludedW - rightExcludedW;
          double base = weightSoFar + nodeWeight / 2 + leftExcludedW;
          return (base + dwNoSingleton * (x - nodeMean) / (nodeMeanNext - nodeMean)) / mergedWeightD;
        }
        double dw = (nodeWeight + nodeWeightNext) / 2;
        return (weightSoFar + dw) / mergedWeightD;
      } else {
        weightSoFar += (double) weights[it];
      }
    }
    return 1 - 0.5 / mergedWeightD;
  }

  /**
   * {@code TDIGEST.RANK}: the estimated number of observations below {@code x} plus half of those equal to it;
   * −2 when empty, −1 below min, the observation count above max.
   */
  public long rank(double x) {
    return rank(x, false);
  }

  /**
   * {@code TDIGEST.REVRANK}: the estimated number of observations above {@code x} plus half of those equal to it;
   * −2 when empty, −1 above max, the observation count below min.
   */
  public long revRank(double x) {
    return rank(x, true);
  }

  private long rank(double x, boolean reverse) {
    double size = insertedCount();
    double rank;
    if (size == 0) {
      rank = -2;
    } else if (x < min) {
      rank = reverse ? size : -1;
    } else if (x > max) {
      rank = reverse ? -1 : size;
    } else {
      double scaled = cdf(x) * size;
      double absolute = reverse ? cRound(scaled) : halfRoundDown(scaled);
      rank = reverse ? cRound(size - absolute) : absolute;
    }
    return toLongLong(rank);
  }

  /** C's {@code round}: halves away from zero. */
  private static double cRound(double x) {
    if (!Double.isFinite(x)) {
      return x;
    }
    double magnitude = Math.abs(x);
    double whole = Math.floor(magnitude);
    if (magnitude - whole >= 0.5) {
      whole += 1;
    }
    return Math.copySign(whole, x);
  }

  /** RedisBloom's {@code _halfRoundDown}: halves toward zero, other fractions to the nearest integer. */
  private static double halfRoundDown(double f) {
    if (!Double.isFinite(f)) {
      return f;
    }
    double intPart = f < 0 ? Math.ceil(f) : Math.floor(f);
    double fracPart = f - intPart;
    if (Math.abs(fracPart) <= 0.5) {
      return intPart;
    }
    return intPart >= 0.0 ? intPart + 1.0 : intPart - 1.0;
  }

  /** x86-64's double to {@code long long} conversion: NaN and out-of-range values become Long.MIN_VALUE. */
  private static long toLongLong(double x) {
    if (Double.isNaN(x) || x >= 0x1p63 || x < -0x1p63) {
      return Long.MIN_VALUE;
    }
    return (long) x;
  }

  /**
   * {@code TDIGEST.BYRANK}: the estimated value of the observation with rank {@code rank} (0 = the smallest): NaN
   * when empty, min at 0, +∞ at or beyond the observation count.
   *
   * @throws IllegalArgumentException if {@code rank < 0}
   */
  public double byRank(long rank) {
    return byRank(rank, false);
  }

  /**
   * {@code TDIGEST.BYREVRANK}: the estimated value of the observation with reverse rank {@code rank} (0 = the
   * largest): NaN when empty, max at 0, −∞ at or beyond the observation count.
   *
   * @throws IllegalArgumentException if {@code rank < 0}
   */
  public double byRevRank(long rank) {
    return byRank(rank, true);
  }

  private double byRank(long inputRank, boolean reverse) {
    if (inputRank < 0) {
      throw new IllegalArgumentException("rank " + inputRank + " is negative");
    }
    double size = (double) insertedCount();
    double rank = inputRank;
    if (size == 0) {
      return Double.NaN;
    }
    if (rank == 0) {
      return reverse ? max : min;
    }
    if (rank >= size) {
      return reverse ? Double.NEGATIVE_INFINITY : Double.POSITIVE_INFINITY;
    }
    return quantile((reverse ? size - rank - 1 : rank) / size);
  }

  /**
   * {@code TDIGEST.TRIMMED_MEAN}: the mean of the observations between the {@code low} and {@code high} fractions
   * (weights counted in whole observations, floor at the low end and ceiling at the high end); NaN when nothing is
   * merged.
   *
   * @throws IllegalArgumentException if a cut is outside [0, 1] or NaN, or unless {@code low < high}
   */
  public double trimmedMean(double low, double high) {
    if (!(low >= 0.0 && low <= 1.0 && high >= 0.0 && high <= 1.0)) {
      throw new IllegalArgumentException("cuts " + low + " and " + high + " must be in [0, 1]");
    }
    if (low >= high) {
      throw new IllegalArgumentException("low cut " + low + " is not below high cut " + high);
    }
    compress();
    if (mergedNodes == 0) {
      return Double.NaN;
    }
    if (mergedNodes == 1) {
      return means[0];
    }
    double leftmostWeight = Math.floor((double) mergedWeight * low);
    double rightmostWeight = Math.ceil((double) mergedWeight * high);
    double countDone = 0;
    double trimmedSum = 0;
    double trimmedCount = 0;
    for (int i = 0; i < mergedNodes; i++) {
      double nodeWeight = (double) weights[i];
      double countAdd = nodeWeight;
      countAdd -= cMin(cMax(0, leftmostWeight - countDone), countAdd);
      countAdd = cMin(cMax(0, rightmostWeight - countDone), countAdd);
      countDone += nodeWeight;
      trimmedSum += means[i] * countAdd;
      trimmedCount += countAdd;
      if (countDone >= rightmostWeight) {
        break;
      }
    }
    return trimmedSum / trimmedCount;
  }

  /** Whether {@link #mergeFrom} accepts {@code other}: any other digest (compressions may differ). */
  @Override
  public boolean isCompatible(TDigest other) {
    Objects.requireNonNull(other, "other");
    return other != this;
  }

  /**
   * Adds {@code other}'s centroids (as t-digest-c's {@code td_merge}: this digest compresses, then takes each
   * centroid of {@code other} compressed); {@code other} is unchanged.
   *
   * @throws IllegalArgumentException if {@code other} is this digest
   * @throws ArithmeticException if the total weight would overflow; then this digest holds
   *     the centroids added before the overflow, as RedisBloom's does
   */
  @Override
  public void mergeFrom(TDigest other) {
    Objects.requireNonNull(other, "other");
    if (other == this) {
      throw new IllegalArgumentException("cannot merge a digest into itself");
    }
    TDigest source = other.copy();
    if (!mergeCompressing(source)) {
      throw new ArithmeticException(OVERFLOW);
    }
  }

  /** t-digest-c's {@code td_merge}: compresses both (the source too), then adds the source's centroids. */
  private boolean mergeCompressing(TDigest source) {
    if (!compress() || !source.compress()) {
      return false;
    }
    int count = source.mergedNodes + source.unmergedNodes;
    for (int i = 0; i < count; i++) {
      if (!addWeighted(source.means[i], source.weights[i])) {
        return false;
      }
    }
    return true;
  }

  /**
   * {@code TDIGEST.MERGE dest numkeys src… [COMPRESSION c] [OVERRIDE]}: a new digest of the given compression holding
   * {@code destination} (unless {@code override}) and every source, merged in RedisBloom's order. As in RedisBloom,
   * the existing destination and each source are compressed in place first (a source named twice is merged
   * twice).
   *
   * @param destination the existing destination, or {@code null}
   * @param compression the new digest's compression, or 0 for the largest among the sources (and the destination
   *     unless {@code override}); RedisBloom keeps an existing destination's compression when none is given
   *     without OVERRIDE, which the caller passes here
   * @throws FilterTooLargeException if the new digest cannot be allocated
   * @throws ArithmeticException if the total weight would overflow; nothing is returned
   *     then (sources stay compressed)
   */
  public static TDigest combine(TDigest destination, List<TDigest> sources, long compression, boolean override) {
    Objects.requireNonNull(sources, "sources");
    long chosen = compression;
    if (chosen == 0) {
      for (TDigest source : sources) {
        chosen = Math.max(chosen, source.compression);
      }
    }
    TDigest merged = allocate(chosen);
    if (merged == null) {
      throw tooLarge(chosen);
    }
    if (destination != null && !override) {
      merged.mergeCompressing(destination);
    }
    for (TDigest source : sources) {
      if (!merged.mergeCompressing(source)) {
        throw new ArithmeticException(OVERFLOW);
      }
    }
    return merged;
  }

  /** An independent copy with the same state (buffered centroids included). */
  public TDigest copy() {
    TDigest copy = new TDigest(compression, capacity, means.clone(), weights.clone());
    copy.min = min;
    copy.max = max;
    copy.mergedNodes = mergedNodes;
    copy.unmergedNodes = unmergedNodes;
    copy.totalCompressions = totalCompressions;
    copy.mergedWeight = mergedWeight;
    copy.unmergedWeight = unmergedWeight;
    return copy;
  }

  @Override
  public String toString() {
    return "TDigest{compression=" + compression + ", observations=" + insertedCount() + ", centroids="
        + (mergedNodes + unmergedNodes) + "}";
  }
}
