package io.bloomery.sizing;

import java.util.List;
import java.util.Objects;

/**
 * The sizing of one classic Bloom filter, made by {@link BloomMath#sizing}: m, k and the overfill table.
 * (Choosing a kind is {@code io.bloomery.plan.FilterPlanner}'s, whose answer is a {@code FilterPlan}.)
 *
 * @param expectedInsertions n, the number of distinct items the filter is sized for
 * @param fpp p, the target false-positive rate at n items
 * @param bits m, rounded up ({@link BloomMath#optimalBits})
 * @param hashes k, rounded to nearest ({@link BloomMath#optimalHashes})
 * @param bitsPerKey m / n for the rounded m
 * @param bitmapBytes {@code ceil(m / 8)}: the bitmap alone, without headers or object overhead
 * @param overfill the model FPR at 50, 80, 100, 150 and 200% of n, in that order
 */
public record BloomSizing(
    long expectedInsertions,
    double fpp,
    long bits,
    int hashes,
    double bitsPerKey,
    long bitmapBytes,
    List<Overfill> overfill) {

  /** Copies {@code overfill}. */
  public BloomSizing {
    overfill = List.copyOf(Objects.requireNonNull(overfill, "overfill"));
  }

  /**
   * The model false-positive rate once {@code insertions} items are in the filter.
   *
   * @param percentOfExpected insertions as a percentage of the planned n (50, 80, 100, 150, 200)
   * @param insertions {@code floor(n * percent / 100)}
   * @param falsePositiveRate {@link BloomMath#falsePositiveRate} at that many insertions
   */
  public record Overfill(int percentOfExpected, long insertions, double falsePositiveRate) {}
}
