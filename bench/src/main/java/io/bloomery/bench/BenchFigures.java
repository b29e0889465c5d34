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

  /** {@code /proc/loadavg} as it reads now, or "unknown" where there is none. */
  static String loadAverage() throws java.io.IOException {
    java.nio.file.Path loadavg = java.nio.file.Path.of("/proc/loadavg");
    return java.nio.file.Files.isReadable(loadavg) ? java.nio.file.Files.readString(loadavg).strip() : "unknown";
  }
}
