package io.bloomery.cli;

import java.io.PrintStream;
import java.util.Optional;
import java.util.ServiceLoader;

/**
 * The quick benchmark behind {@code bloomery bench}, supplied by the bench artifact through
 * {@link ServiceLoader} ({@code META-INF/services/io.bloomery.cli.BenchHarness}). The product's
 * {@code bloomery.jar} carries no harness, so it ships neither JMH nor Guava; {@link BenchCommand} parses
 * and checks the options either way and, with no harness on the class path, says how to get one.
 */
public interface BenchHarness {

  /**
   * Runs the benchmark and returns its report: one JSON object (snake_case keys) when {@code json},
   * else a table.
   *
   * @param progress where progress lines go, or {@code null} for none
   */
  String run(long keys, double fpp, int queries, int rounds, boolean json, PrintStream progress);

  /** The harness on the class path, if any. */
  static Optional<BenchHarness> find() {
    return ServiceLoader.load(BenchHarness.class, BenchHarness.class.getClassLoader()).findFirst();
  }
}
