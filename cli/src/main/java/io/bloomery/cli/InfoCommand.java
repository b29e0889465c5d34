package io.bloomery.cli;

import io.bloomery.blocked.BlockedBloomFilter;
import io.bloomery.blocked.SplitBlockBloomFilter;
import io.bloomery.filter.BloomFilter;
import io.bloomery.sizing.BloomMath;
import io.bloomery.sizing.CapacityUse;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

/** {@code bloomery info}: what a filter file holds and how full it is. */
@Command(
    name = "info",
    mixinStandardHelpOptions = true,
    header = "Show a filter file's parameters, fill and estimated false-positive rate.",
    description = {
      "Kind, protocol, seed, bits and hashes; the inserted count, fill ratio, the",
      "false-positive rate estimated from the fill, the estimated number of",
      "distinct items (Swamidass-Baldi), the capacity at the design rate and",
      "whether it is near capacity (>= 80%%). Filters of at most 4096 bits also",
      "show their packed bits (little-endian: bit 0 is the low bit of byte 0).",
      "--plot draws the model false-positive rate against the number of items,",
      "the capacity marks and the filter's present position (classic, blocked and",
      "split-block filters)."
    })
final class InfoCommand implements Callable<Integer> {
  @ParentCommand BloomeryCommand root;

  @Parameters(index = "0", paramLabel = "FILTER", description = "A filter file.")
  Path filterPath;

  @Mixin FilterFormatOption filterFormat;

  @Option(names = "--json", description = "Print JSON (snake_case keys) instead of text.")
  boolean json;

  @Mixin PlotOptions plotOptions;

  @Override
  public Integer call() throws IOException {
    plotOptions.validate(json);
    Object filter = FilterFiles.read(filterPath, filterFormat.format);
    long fileBytes = Files.size(filterPath);
    PrintWriter out = root.out();
    if (plotOptions.wanted()) {
      plotOptions.draw(curveOf(filter), out, root.err());
      if (plotOptions.plot) {
        return BloomeryCommand.EXIT_OK;
      }
    }
    if (!(filter instanceof BloomFilter bloom)) {
      if (json) {
        new JsonWriter(out).beginObject()
            .field("kind", FilterFiles.kindName(filter))
            .field("file_bytes", fileBytes)
            .endObject().finish();
      } else {
        out.printf(Locale.ROOT, "%s: a %s filter, %s%n", filterPath, FilterFiles.kindName(filter), Units.bytes(fileBytes));
        out.flush();
      }
      return BloomeryCommand.EXIT_OK;
    }
    String seedHex = Hex.encode(bloom.seed());
    long distinct = bloom.estimatedCardinality();
    CapacityUse use = CapacityUse.of(distinct, bloom.capacity());
    String packedHex = bloom.bitSize() <= PackedBits.MAX_BITS_SHOWN ? Hex.encode(PackedBits.bytes(bloom)) : null;
    if (json) {
      JsonWriter w = new JsonWriter(out).beginObject();
      w.field("file", filterPath.toString())
          .field("format", filterFormat.format.name().toLowerCase(Locale.ROOT))
          .field("kind", bloom.kind().kindName())
          .field("protocol", bloom.protocolId().protocolName())
          .field("seed_hex", seedHex)
          .field("bits", bloom.bitSize())
          .field("hashes", bloom.hashCount())
          .field("inserted", bloom.insertedCount())
          .field("set_bits", bloom.bitCount())
          .field("fill_ratio", bloom.fillRatio())
          .field("estimated_fpp", bloom.estimatedFpp())
          .field("estimated_cardinality", bloom.estimatedCardinality())
          .field("capacity", bloom.capacity())
          .field("near_capacity", bloom.isNearCapacity())
          .field("over_capacity", use == CapacityUse.OVER)
          .field("design_fpp", BloomMath.designRate(bloom.bitSize(), bloom.hashCount()))
          .field("bitmap_bytes", PackedBits.byteCount(bloom))
          .field("file_bytes", fileBytes)
          .field("packed_bits_sha256", PackedBits.sha256Hex(bloom));
      if (packedHex != null) {
        w.field("packed_bits_hex", packedHex);
      }
      w.endObject().finish();
      return BloomeryCommand.EXIT_OK;
    }
    out.printf(Locale.ROOT, "%s%n", filterPath);
    row(out, "kind", bloom.kind().kindName() + " (" + (filterFormat.format == FileFormat.GUAVA ? "Guava writeTo" : "Bloomery") + " format)");
    row(out, "protocol", bloom.protocolId().protocolName());
    row(out, "seed", seedHex.isEmpty() ? "(empty)" : seedHex);
    row(out, "bits (m)", Units.grouped(bloom.bitSize()));
    row(out, "hashes (k)", Integer.toString(bloom.hashCount()));
    row(out, "inserted", Units.grouped(bloom.insertedCount()) + (filterFormat.format == FileFormat.GUAVA
        ? " (estimated from the set bits: Guava's file records no count)"
        : " (items a build was given, or adds that changed the filter; plus merged counts)"));
    row(out, "set bits", Units.grouped(bloom.bitCount()));
    row(out, "fill ratio", String.format(Locale.ROOT, "%.4f", bloom.fillRatio()));
    row(out, "estimated fpp", Units.probability(bloom.estimatedFpp()) + " (from the fill ratio)");
    row(out, "est. distinct", Units.grouped(bloom.estimatedCardinality()) + " (Swamidass-Baldi)");
    row(out, "capacity", Units.grouped(bloom.capacity()) + " (false-positive rate "
        + Units.probability(BloomMath.designRate(bloom.bitSize(), bloom.hashCount())) + " there)"
        + (use == CapacityUse.WITHIN ? "" : "  " + (use == CapacityUse.OVER ? "OVER" : "NEAR") + " CAPACITY ("
            + CapacityUse.percent(distinct, bloom.capacity()) + " by the distinct estimate)"));
    row(out, "bitmap", Units.bytes(PackedBits.byteCount(bloom)));
    row(out, "file", Units.bytes(fileBytes));
    row(out, "bits sha256", PackedBits.sha256Hex(bloom));
    if (packedHex != null) {
      row(out, "packed bits", packedHex);
    }
    out.flush();
    return BloomeryCommand.EXIT_OK;
  }

  /**
   * The model curve of the kinds that have one, with the filter's inserted count as its present
   * position and the kind's capacity as its 100% mark.
   */
  private FprCurve curveOf(Object filter) {
    String where = filterPath.getFileName() == null ? filterPath.toString() : filterPath.getFileName().toString();
    if (filter instanceof BloomFilter bloom) {
      long bits = bloom.bitSize();
      int hashes = bloom.hashCount();
      return new FprCurve(title(where, bloom.kind().kindName(), bits, hashes),
          n -> BloomMath.falsePositiveRate(bits, hashes, n), bloom.capacity(), bloom.insertedCount());
    }
    if (filter instanceof BlockedBloomFilter blocked) {
      return new FprCurve(title(where, blocked.kind().kindName(), blocked.bitSize(), blocked.hashCount()),
          blocked::modelFpp, blocked.capacity(), blocked.insertedCount());
    }
    if (filter instanceof SplitBlockBloomFilter split) {
      return new FprCurve(title(where, split.kind().kindName(), split.bitSize(), split.hashCount()),
          split::modelFpp, split.capacity(), split.insertedCount());
    }
    throw CliException.failure(filterPath + ": holds a " + FilterFiles.kindName(filter)
        + " filter; --plot and --plot-output draw classic, blocked and split-block Bloom filters");
  }

  private static String title(String file, String kind, long bits, int hashes) {
    return String.format(Locale.ROOT, "%s (%s, %s, %s)", file, kind, Units.count(bits, "bit", "bits"),
        Units.count(hashes, "hash", "hashes"));
  }

  private static void row(PrintWriter out, String name, String value) {
    out.printf(Locale.ROOT, "  %-14s %s%n", name, value);
  }
}
