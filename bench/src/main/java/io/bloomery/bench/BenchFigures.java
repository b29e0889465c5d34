package io.bloomery.bench;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;

/** Small helpers the benchmark mains share for turning passes into reported figures. */
final class BenchFigures {

  private BenchFigures() {}

  /** The median of {@code values} (the mean of the middle two for an even count). */
  static double median(List<Double> values) {
    List<Double> sorted = new ArrayList<>(values);
    Collections.sort(sorted);
    int size = sorted.size();
    return size % 2 == 1 ? sorted.get(size / 2) : (sorted.get(size / 2 - 1) + sorted.get(size / 2)) / 2;
  }

  /** {@code value} rounded to three decimals, as the figures are printed. */
  static double round(double value) {
    return Double.parseDouble(String.format(Locale.ROOT, "%.3f", value));
  }
}
