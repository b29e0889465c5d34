package io.bloomery.bench;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

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
  static String loadAverage() throws IOException {
    java.nio.file.Path loadavg = java.nio.file.Path.of("/proc/loadavg");
    return java.nio.file.Files.isReadable(loadavg) ? java.nio.file.Files.readString(loadavg).strip() : "unknown";
  }

  /** A benchmark over n member keys, q queries and a number of passes, returning its figures by name. */
  interface KeysQueriesRounds {
    Map<String, Object> run(long n, int q, int rounds) throws IOException;
  }

  /**
   * The main of such a benchmark: arguments {@code [n [q [rounds]]]} (defaults 10M, 1M, 5), the figures printed one
   * {@code name = value} per line.
   */
  static void runMain(String[] args, KeysQueriesRounds bench) throws IOException {
    long n = args.length > 0 ? Long.parseLong(args[0]) : 10_000_000L;
    int q = args.length > 1 ? Integer.parseInt(args[1]) : 1_000_000;
    int rounds = args.length > 2 ? Integer.parseInt(args[2]) : 5;
    bench.run(n, q, rounds).forEach((key, value) -> System.out.println(key + " = " + value));
  }

  /**
   * Checks a run's arguments and returns its figures map, begun with the parameters, the CPU count and the load
   * average at the start.
   */
  static Map<String, Object> startFigures(long n, int q, int rounds) throws IOException {
    if (n < 1 || n > Integer.MAX_VALUE - 16L || q < 1 || rounds < 1) {
      throw new IllegalArgumentException("need 1 <= n < 2^31 - 16, q >= 1, rounds >= 1");
    }
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("keys", n);
    out.put("queries", q);
    out.put("rounds", rounds);
    out.put("cpus", Runtime.getRuntime().availableProcessors());
    out.put("load_average_at_start", loadAverage());
    return out;
  }
}
