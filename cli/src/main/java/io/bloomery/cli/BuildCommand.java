package io.bloomery.cli;

import io.bloomery.filter.BloomFilter;
import io.bloomery.sizing.BloomMath;
import io.bloomery.sizing.CapacityUse;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;

/** {@code bloomery build}: a classic Bloom filter file from one item per line. */
@Command(
    name = "build",
    mixinStandardHelpOptions = true,
    header = "Build a classic filter file from one item per line.",
    sortOptions = false,
    description = {
      "OUTPUT is written atomically (temporary file, fsync, rename): a failure",
      "never leaves a half-written or corrupt file, and an old OUTPUT stays intact.",
      "",
      "Items: the bytes of each line exactly as in the file (UTF-8 text is not decoded,",
      "trimmed or normalised). Lines end at \\n; a \\r right before it is dropped, so",
      "\\r\\n files read the same. An empty line is the empty item; the last line needs",
      "no line end. With --hex each line is the item's bytes in hex.",
      "",
      "The file's inserted count is the number of items read, duplicates included:",
      "it does not depend on the order of the lines (info's estimated_cardinality",
      "estimates the distinct items from the set bits).",
      ""
    })
final class BuildCommand implements Callable<Integer> {
  @ParentCommand BloomeryCommand root;

  @Option(names = "--input", required = true, paramLabel = "FILE|-",
      description = "Items, one per line; - reads standard input.")
  String input;

  @Option(names = "--output", required = true, paramLabel = "FILE", description = "The filter file to write.")
  Path output;

  @Mixin FilterPlanOptions shape;

  @Option(names = "--hex", description = "Each input line is the item's bytes in hex (e.g. 0041).")
  boolean hex;

  @Option(names = "--output-format", paramLabel = "FORMAT", defaultValue = "bloomery",
      description = "bloomery (default) or guava (Guava's BloomFilter.writeTo; protocol guava-murmur128-mitz64, no seed).")
  FileFormat outputFormat;

  @Override
  public Integer call() throws IOException {
    refuseOutputThatIsInput();
    BloomFilter filter = shape.newFilter(outputFormat);
    PrintWriter err = root.err();
    long[] changed = {0};
    long items;
    try (ItemInput in = ItemInput.open(input, root.stdin());
        ProgressBar progress = new ProgressBar(err, root.terminal(), "reading",
            in.size(), in.size() >= 0 ? "bytes" : "items")) {
      items = in.forEach(hex, (line, bytes, offset, length) -> {
        try {
          if (filter.add(bytes, offset, length)) {
            changed[0]++;
          }
        } catch (IllegalArgumentException e) {
          throw CliException.failure(in.name() + " line " + line + ": " + e.getMessage(), e);
        }
        progress.update(in.size() >= 0 ? in.bytesRead() : line);
      });
    }
    // The file records the items read, not the adds that changed the filter: that count depends on
    // the order of the lines, this one does not, so every build of the same items (this command, the
    // spark module's builds over any partitioning) writes the same file, and merged files add up.
    long fileBytes = FilterFiles.write(output, filter, outputFormat, items);
    PrintWriter out = root.out();
    out.printf(Locale.ROOT, "wrote %s (%s format): classic Bloom filter, %s, %s, protocol %s, seed %s%n",
        output, outputFormat.name().toLowerCase(Locale.ROOT), Units.count(filter.bitSize(), "bit", "bits"),
        Units.count(filter.hashCount(), "hash", "hashes"), filter.protocolId().protocolName(),
        filter.seed().length == 0 ? "(empty)" : Hex.encode(filter.seed()));
    out.printf(Locale.ROOT, "  %s read, %s changed the filter; fill %.2f%%, estimated false-positive rate %s; %s%n",
        Units.count(items, "item", "items"), Units.grouped(changed[0]), filter.fillRatio() * 100,
        Units.probability(filter.estimatedFpp()), Units.bytes(fileBytes));
    out.flush();
    long distinct = filter.estimatedCardinality();
    CapacityUse use = CapacityUse.of(distinct, filter.capacity());
    if (use != CapacityUse.WITHIN) {
      String figures = String.format(Locale.ROOT, "about %s distinct items, %s of its capacity of %s (false-positive rate %s there)",
          Units.grouped(distinct), CapacityUse.percent(distinct, filter.capacity()), Units.grouped(filter.capacity()),
          Units.probability(BloomMath.designRate(filter.bitSize(), filter.hashCount())));
      err.printf(Locale.ROOT, use == CapacityUse.OVER
          ? "warning: the filter is over capacity: %s; false positives climb from here. Build a larger one.%n"
          : "note: the filter is near capacity: %s.%n", figures);
      err.flush();
    }
    return BloomeryCommand.EXIT_OK;
  }

  /**
   * Writing the filter over the items would destroy them: refused when OUTPUT is the input file, through
   * a symbolic or hard link too, or the file that standard input reads for {@code --input -}.
   */
  private void refuseOutputThatIsInput() throws IOException {
    Path source = "-".equals(input) ? StandardStreams.fileOfStdin(root.stdin()) : Path.of(input);
    if (source != null && FilterFiles.sameFile(source, output)) {
      throw CliException.usage("--output " + output + " is the input file" + ("-".equals(input) ? " (standard input)" : "")
          + "; writing the filter there would destroy the items. Choose another --output.");
    }
  }
}
