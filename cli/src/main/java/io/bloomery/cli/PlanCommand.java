package io.bloomery.cli;

import io.bloomery.sizing.BloomMath;
import io.bloomery.sizing.BloomSizing;
import io.bloomery.sizing.CapacityUse;
import java.io.IOException;
import java.io.PrintWriter;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;

/** {@code bloomery plan}: the sizing math for N items at false-positive rate P, nothing built. */
@Command(
    name = "plan",
    mixinStandardHelpOptions = true,
    header = "Size a classic Bloom filter: bits, hashes, bits per key, overfill.",
    description = {
      "For N items at false-positive rate P: m = -N ln P / (ln 2)^2 bits (rounded",
      "up) and k = (m / N) ln 2 hashes (rounded to nearest), the bits per key, the",
      "bitmap size, and the false-positive rate if the filter ends up holding",
      "50, 80, 100, 150 or 200%% of N. The capacity is the most items for which k",
      "stays the optimal hash count for m bits: at least N, and what build, info,",
      "BF.INFO and the dashboard call its capacity. --plot draws the rate against",
      "the number of items, the marks included."
    })
final class PlanCommand implements Callable<Integer> {
  @ParentCommand BloomeryCommand root;

  @Mixin FilterPlanOptions.Planned target;

  @Option(names = "--json", description = "Print JSON (snake_case keys) instead of text.")
  boolean json;

  @Mixin PlotOptions plotOptions;

  @Override
  public Integer call() throws IOException {
    plotOptions.validate(json);
    BloomSizing plan;
    try {
      plan = BloomMath.sizing(target.expected, target.fpp);
    } catch (IllegalArgumentException e) {
      throw CliException.usage(e.getMessage(), e);
    }
    PrintWriter out = root.out();
    long capacity = BloomMath.capacityForHashes(plan.bits(), plan.hashes());
    if (plotOptions.wanted()) {
      long bits = plan.bits();
      int hashes = plan.hashes();
      FprCurve curve = new FprCurve(String.format(Locale.ROOT, "planned classic Bloom filter, %s, %s",
          Units.count(bits, "bit", "bits"), Units.count(hashes, "hash", "hashes")),
          n -> BloomMath.falsePositiveRate(bits, hashes, n), plan.expectedInsertions(), -1);
      if (plotOptions.plot) {
        printPlan(out, plan, capacity, false); // the plot's legend is the overfill table
        out.println();
      }
      plotOptions.draw(curve, out, root.err());
      if (plotOptions.plot) {
        return BloomeryCommand.EXIT_OK;
      }
    }
    if (json) {
      JsonWriter w = new JsonWriter(out).beginObject();
      w.field("expected_insertions", plan.expectedInsertions())
          .field("fpp", plan.fpp())
          .field("bits", plan.bits())
          .field("hashes", plan.hashes())
          .field("bits_per_key", plan.bitsPerKey())
          .field("bitmap_bytes", plan.bitmapBytes())
          .field("capacity", capacity)
          .field("design_fpp", BloomMath.falsePositiveRate(plan.bits(), plan.hashes(), capacity));
      w.name("overfill").beginArray();
      for (BloomSizing.Overfill level : plan.overfill()) {
        w.beginObject()
            .field("percent_of_expected", level.percentOfExpected())
            .field("insertions", level.insertions())
            .field("fpp", level.falsePositiveRate())
            .endObject();
      }
      w.endArray().endObject().finish();
      return BloomeryCommand.EXIT_OK;
    }
    printPlan(out, plan, capacity, true);
    out.flush();
    return BloomeryCommand.EXIT_OK;
  }

  /** The plan as text: m, k, bits per key, bitmap, capacity and, if asked for, the overfill table. */
  private static void printPlan(PrintWriter out, BloomSizing plan, long capacity, boolean overfill) {
    out.printf(Locale.ROOT, "Plan for %s items at a false-positive rate of %s%n",
        Units.grouped(plan.expectedInsertions()), Units.probability(plan.fpp()));
    out.printf(Locale.ROOT, "  bits (m)       %s%n", Units.grouped(plan.bits()));
    out.printf(Locale.ROOT, "  hashes (k)     %d%n", plan.hashes());
    out.printf(Locale.ROOT, "  bits per key   %.3f%n", plan.bitsPerKey());
    out.printf(Locale.ROOT, "  bitmap         %s: the bit array alone; a file adds a small header%n",
        Units.bytes(plan.bitmapBytes()));
    out.printf(Locale.ROOT, "  capacity       %s items (%s there): near capacity from %s, over it above%n",
        Units.grouped(capacity), Units.probability(BloomMath.falsePositiveRate(plan.bits(), plan.hashes(), capacity)),
        Units.grouped((long) Math.ceil(CapacityUse.NEAR_SHARE * capacity)));
    if (!overfill) {
      return;
    }
    out.printf(Locale.ROOT, "Overfill: the false-positive rate once the filter holds%n");
    for (BloomSizing.Overfill level : plan.overfill()) {
      out.printf(Locale.ROOT, "  %4d%%  %15s items  %s  %s%n", level.percentOfExpected(),
          Units.grouped(level.insertions()), Units.probability(level.falsePositiveRate()),
          CapacityUse.percent(level.insertions(), capacity) + " of capacity");
    }
  }
}
