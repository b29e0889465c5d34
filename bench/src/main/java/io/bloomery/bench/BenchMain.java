package io.bloomery.bench;

import io.bloomery.format.AtomicWrite;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.Options;
import org.openjdk.jmh.runner.options.OptionsBuilder;

/**
 * The one-command benchmark ({@code bench/run}): the JMH lookup and real-data benchmarks, then the
 * {@link QuickBench} crawler run (build, insert, FPR, floor) at {@code --keys} (default 50M), and a
 * Markdown table of ratios against Guava written to {@code --out} (default
 * {@code bench/target/benchmarks.md}).
 */
public final class BenchMain {

  private BenchMain() {}

  public static void main(String[] args) throws IOException, RunnerException {
    long keys = 50_000_000L;
    long jmhKeys = 10_000_000L;
    Path out = Path.of("bench/target/benchmarks.md");
    boolean skipJmh = false;
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--keys" -> keys = Long.parseLong(args[++i].replace("_", ""));
        case "--jmh-keys" -> jmhKeys = Long.parseLong(args[++i].replace("_", ""));
        case "--out" -> out = Path.of(args[++i]);
        case "--skip-jmh" -> skipJmh = true;
        default -> throw new IllegalArgumentException("unknown argument " + args[i]);
      }
    }
    StringBuilder report = new StringBuilder("# Bloomery vs Guava, one run\n\n");
    if (!skipJmh) {
      Options options = new OptionsBuilder()
          .include(LookupBenchmark.class.getSimpleName())
          .include(RealDataBenchmark.class.getSimpleName())
          .param("keys", Long.toString(jmhKeys))
          .build();
      Collection<RunResult> results = new Runner(options).run();
      Map<String, Double> scores = new LinkedHashMap<>();
      for (RunResult result : results) {
        String name = result.getParams().getBenchmark();
        scores.put(name.substring(name.lastIndexOf('.') + 1), result.getPrimaryResult().getScore());
      }
      report.append(jmhTable(scores, jmhKeys)).append('\n');
      writeReport(out, report);
    }
    System.err.printf(Locale.ROOT, "QuickBench at %,d keys%n", keys);
    Map<String, Object> figures = QuickBench.run(new QuickBench.Options(keys, 0.01, 1_000_000, 5), System.err);
    report.append("## Crawler workload (QuickBench)\n\n").append(QuickBench.toTable(figures)).append('\n')
        .append("JSON: `").append(QuickBench.toJson(figures)).append("`\n");
    writeReport(out, report);
    System.out.println(report);
  }

  /** Replaces {@code out} with the report so far (atomically, as every file the project writes). */
  private static void writeReport(Path out, CharSequence report) throws IOException {
    Files.createDirectories(out.toAbsolutePath().getParent());
    AtomicWrite.write(out, report.toString().getBytes(StandardCharsets.UTF_8));
  }

  static String jmhTable(Map<String, Double> scores, long keys) {
    StringBuilder table = new StringBuilder();
    table.append(String.format(Locale.ROOT, "## JMH, crawler URLs, %,d members, 1%% target (ns per key)%n%n", keys));
    table.append("| benchmark | ns/key | Guava / this |\n|---|---|---|\n");
    Double guavaAbsent = scores.get("guavaAbsent");
    Double guavaPresent = scores.get("guavaPresent");
    for (Map.Entry<String, Double> entry : scores.entrySet()) {
      String name = entry.getKey();
      if (name.startsWith("guavaQuery") || name.startsWith("blockedQuery")) {
        continue;
      }
      Double guava = name.contains("Present") ? guavaPresent : guavaAbsent;
      String ratio = guava == null ? "" : String.format(Locale.ROOT, "%.2f", guava / entry.getValue());
      table.append(String.format(Locale.ROOT, "| %s | %.1f | %s |%n", name, entry.getValue(), ratio));
    }
    Double guavaReal = scores.get("guavaQueryAll");
    if (guavaReal != null) {
      table.append("\n## JMH, real strings: 226,995 npm names inserted, 295,441 PyPI names queried (ms per pass)\n\n");
      table.append("| benchmark | ms/pass | Guava / this |\n|---|---|---|\n");
      for (String name : new String[] {"guavaQueryAll", "blockedQueryAllStrings", "blockedQueryAllBatched"}) {
        Double score = scores.get(name);
        if (score != null) {
          table.append(String.format(Locale.ROOT, "| %s | %.2f | %.2f |%n", name, score, guavaReal / score));
        }
      }
    }
    return table.toString();
  }
}
