package io.bloomery.cli;

import io.bloomery.sizing.BloomMath;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.LongToDoubleFunction;

/**
 * A filter's model false-positive rate as a function of the number of distinct items inserted, with the
 * points an operator looks for: the overfill marks (50, 80, 100, 150 and 200% of capacity) and, for an
 * existing filter, where it stands now. What {@link TextPlot}, {@link SvgPlot} and {@link PngPlot} draw.
 *
 * <p>The x axis runs from 0 to {@link #maxItems()} (220% of capacity, so the 200% mark is inside);
 * the y axis is logarithmic between {@link #lowRate()} and {@link #highRate()}, whole decades that
 * bracket the curve from its first point after 0 items ({@code 1/}{@link #FIRST_POINT} of the axis) to
 * the right edge, so no point drawn is flattened onto the bottom edge (only 0 items, rate 0, sits there;
 * rates below {@link #MIN_RATE} would too).
 *
 * @param title one line naming the filter ("classic Bloom filter, 9,585,059 bits, 7 hashes")
 * @param model the model FPR after n distinct items (core's {@link BloomMath#falsePositiveRate} or a
 *     kind's own {@code modelFpp})
 * @param capacity the number of items the filter is sized for (the 100% mark), at least 1
 * @param present the items it holds now, or -1 for a planned filter
 */
record FprCurve(String title, LongToDoubleFunction model, long capacity, long present) {
  /** How far right of capacity the x axis runs, in percent of capacity. */
  static final int X_AXIS_PERCENT = 220;

  /** The first point after 0 that the axes must show is at {@code maxItems() / FIRST_POINT}. */
  static final int FIRST_POINT = 200;

  /** The lowest rate the y axis reaches, whatever the curve does below it. */
  static final double MIN_RATE = 1e-30;

  FprCurve {
    Objects.requireNonNull(title, "title");
    Objects.requireNonNull(model, "model");
    if (capacity < 1) {
      throw new IllegalArgumentException("capacity must be >= 1, was " + capacity);
    }
  }

  /** One marked point on the curve. */
  record Mark(String label, long items, double rate, boolean present) {}

  /** The right end of the x axis. */
  long maxItems() {
    return Math.max(1, Math.round(capacity * (X_AXIS_PERCENT / 100.0)));
  }

  double rate(long items) {
    return model.applyAsDouble(items);
  }

  /** The overfill marks, then the present position (drawn past the axis when it is beyond 220%). */
  List<Mark> marks() {
    List<Mark> marks = new ArrayList<>();
    for (int percent : BloomMath.OVERFILL_PERCENTS) {
      long items = Math.round(capacity * (percent / 100.0));
      marks.add(new Mark(percent + "%", items, rate(items), false));
    }
    if (present >= 0) {
      marks.add(new Mark("now", present, rate(present), true));
    }
    return marks;
  }

  /** The bottom of the y axis: the decade at or below the rate at the first point after 0, at least {@link #MIN_RATE}. */
  double lowRate() {
    double first = rate(Math.max(1, maxItems() / FIRST_POINT));
    double floor = first > 0 ? Math.pow(10, Math.floor(Math.log10(first))) : MIN_RATE;
    return Math.max(MIN_RATE, Math.min(floor, highRate() / 10));
  }

  /** The top of the y axis: the decade at or above the rate at the right edge, at most 1. */
  double highRate() {
    double right = rate(maxItems());
    if (!(right > 0)) {
      return 1;
    }
    return Math.min(1, Math.pow(10, Math.ceil(Math.log10(right))));
  }

  /** Where {@code rate} sits on the y axis: 0 at the bottom, 1 at the top, clamped. */
  double yFraction(double rate) {
    double low = Math.log10(lowRate());
    double high = Math.log10(highRate());
    if (!(rate > 0)) {
      return 0;
    }
    return Math.max(0, Math.min(1, (Math.log10(rate) - low) / (high - low)));
  }

  /** Where {@code items} sits on the x axis: 0 at the left, 1 at the right (not clamped). */
  double xFraction(long items) {
    return (double) items / maxItems();
  }

  /** The y-axis labels, one per decade from the bottom up: 1e-3, 1e-2, ... */
  List<Double> decades() {
    List<Double> decades = new ArrayList<>();
    int low = (int) Math.round(Math.log10(lowRate()));
    int high = (int) Math.round(Math.log10(highRate()));
    for (int e = low; e <= high; e++) {
      decades.add(Math.pow(10, e));
    }
    return decades;
  }

  /** A decade's label: "1e-3", and "1" for the top of a saturated axis. */
  static String decadeLabel(double decade) {
    int exponent = (int) Math.round(Math.log10(decade));
    return exponent == 0 ? "1" : "1e" + exponent;
  }
}
