package io.bloomery.cli;

import io.bloomery.sizing.BloomMath;
import java.io.PrintWriter;
import java.util.Locale;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;

/** {@code bloomery plan}: the sizing math for N items at false-positive rate P, nothing built. */
@Command(
    name = "plan",
    mixinStandardHelpOptions = true,
    description = {
      "Size a classic Bloom filter for N items at false-positive rate P:",
      "m = -N ln P / (ln 2)^2 bits and k = (m / N) ln 2 hashes (rounded as BloomMath states),",
      "and the false-positive rate if it ends up holding 50..200%% of N."
    })
final class PlanCommand implements Runnable {
  /** Fill levels of the overfill table, in percent of the planned N. */
  static final int[] OVERFILL_PERCENTS = {50, 80, 100, 150, 200};

  @ParentCommand BloomeryCommand root;

  @Option(names = "--expected", required = true, paramLabel = "N", converter = CountConverter.class,
      description = "Number of distinct items the filter is sized for (1000000, 1_000_000, 1e6, 1M).")
  long expected;

  @Option(names = "--fpp", required = true, paramLabel = "P", converter = ProbabilityConverter.class,
      description = "Target false-positive rate on non-members, in (0, 1): 0.01 or 1%%.")
  double fpp;

  @Option(names = "--json", description = "Print JSON (snake_case keys) instead of text.")
  boolean json;

  @Override
  public void run() {
    BloomMath.Plan plan;
    try {
      plan = BloomMath.plan(expected, fpp);
    } catch (IllegalArgumentException e) {
      throw CliException.usage(e.getMessage(), e);
    }
    PrintWriter out = root.out();
    if (json) {
      JsonWriter w = new JsonWriter(out).beginObject();
      w.field("expected_insertions", plan.expectedInsertions())
          .field("fpp", plan.fpp())
          .field("bits", plan.bits())
          .field("hashes", plan.hashes())
          .field("bits_per_key", plan.bitsPerKey())
          .field("bitmap_bytes", plan.bitmapBytes());
      w.name("overfill").beginArray();
      for (int percent : OVERFILL_PERCENTS) {
        long items = itemsAt(percent);
        w.beginObject()
            .field("fill_percent", percent)
            .field("items", items)
            .field("fpp", BloomMath.falsePositiveRate(plan.bits(), plan.hashes(), items))
            .endObject();
      }
      w.endArray().endObject().finish();
      return;
    }
    out.printf(Locale.ROOT, "Plan for %s items at a false-positive rate of %s%n",
        Units.grouped(plan.expectedInsertions()), Units.probability(plan.fpp()));
    out.printf(Locale.ROOT, "  bits (m)       %s%n", Units.grouped(plan.bits()));
    out.printf(Locale.ROOT, "  hashes (k)     %d%n", plan.hashes());
    out.printf(Locale.ROOT, "  bits per key   %.3f%n", plan.bitsPerKey());
    out.printf(Locale.ROOT, "  bitmap         %s (the bit array alone; a file adds a small header)%n",
        Units.bytes(plan.bitmapBytes()));
    out.printf(Locale.ROOT, "Overfill: the false-positive rate once the filter holds%n");
    for (int percent : OVERFILL_PERCENTS) {
      long items = itemsAt(percent);
      out.printf(Locale.ROOT, "  %4d%%  %15s items  %s%s%n", percent, Units.grouped(items),
          Units.probability(BloomMath.falsePositiveRate(plan.bits(), plan.hashes(), items)),
          percent == 80 ? "   <- 'near capacity' warning from here" : "");
    }
    out.flush();
  }

  private long itemsAt(int percent) {
    return Math.max(1, Math.round(expected * (percent / 100.0)));
  }
}
