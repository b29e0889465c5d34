package io.bloomery.bench;

import io.bloomery.cli.BenchHarness;
import java.io.PrintStream;
import java.util.Map;

/**
 * {@link QuickBench} as the harness of {@code bloomery bench}: registered in
 * {@code META-INF/services/io.bloomery.cli.BenchHarness}, so the CLI finds it whenever the bench artifact
 * is on the class path ({@code java -cp benchmarks.jar io.bloomery.cli.BloomeryCommand bench ...}, which
 * is what {@code ./bloomery bench} runs).
 */
public final class QuickBenchHarness implements BenchHarness {

  @Override
  public String run(long keys, double fpp, int queries, int rounds, boolean json, PrintStream progress) {
    Map<String, Object> figures = QuickBench.run(new QuickBench.Options(keys, fpp, queries, rounds), progress);
    return json ? QuickBench.toJson(figures) : QuickBench.toTable(figures);
  }
}
