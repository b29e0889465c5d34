package io.bloomery.cli;

import io.bloomery.filter.BloomFilter;
import io.bloomery.sizing.CapacityUse;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

/** {@code bloomery merge}: the union of filters built with identical parameters. */
@Command(
    name = "merge",
    mixinStandardHelpOptions = true,
    header = "Write the union of filters built with identical parameters.",
    description = {
      "The union is the same as building one filter from all their items. It is",
      "refused (exit 1) unless every parameter that places a bit matches:",
      "protocol, seed, bits and hashes. OUTPUT is written atomically.",
      "",
      "A file cannot be merged with itself (the same path twice, or a symbolic or",
      "hard link to it: usage error, exit 2), nor with a byte-identical copy",
      "(exit 1): the union would be the same bits, but the inserted count would",
      "be added twice and every figure derived from it (the model's",
      "false-positive rate, the capacity warning) would be wrong."
    })
final class MergeCommand implements Callable<Integer> {
  @ParentCommand BloomeryCommand root;

  @Parameters(arity = "2..*", paramLabel = "FILTER", description = "Filter files to merge (at least two).")
  List<Path> inputs;

  @Option(names = "--output", required = true, paramLabel = "FILE", description = "The merged filter file to write.")
  Path output;

  @Mixin FilterFormatOption filterFormat;

  @Option(names = "--output-format", paramLabel = "FORMAT", defaultValue = "bloomery",
      description = "Format of OUTPUT: bloomery (default) or guava (needs protocol guava-murmur128-mitz64).")
  FileFormat outputFormat;

  @Override
  public Integer call() throws IOException {
    refuseSelfMerge();
    BloomFilter merged = FilterFiles.readClassic(inputs.get(0), filterFormat.format);
    for (Path next : inputs.subList(1, inputs.size())) {
      BloomFilter other = FilterFiles.readClassic(next, filterFormat.format);
      try {
        merged.mergeFrom(other);
      } catch (IllegalArgumentException e) {
        throw CliException.failure("cannot merge " + next + " into " + inputs.get(0) + ": " + e.getMessage(), e);
      }
    }
    long fileBytes = FilterFiles.write(output, merged, outputFormat);
    root.out().printf(Locale.ROOT, "wrote %s: union of %d filters; fill %.2f%%, estimated false-positive rate %s; %s%n",
        output, inputs.size(), merged.fillRatio() * 100, Units.probability(merged.estimatedFpp()), Units.bytes(fileBytes));
    root.out().flush();
    long distinct = merged.estimatedCardinality();
    CapacityUse use = CapacityUse.of(distinct, merged.capacity());
    if (use != CapacityUse.WITHIN) {
      root.err().printf(Locale.ROOT, "%s: the merged filter is %s capacity: about %s distinct items, %s of its capacity of %s%n",
          use == CapacityUse.OVER ? "warning" : "note", use == CapacityUse.OVER ? "over" : "near", Units.grouped(distinct),
          CapacityUse.percent(distinct, merged.capacity()), Units.grouped(merged.capacity()));
      root.err().flush();
    }
    return BloomeryCommand.EXIT_OK;
  }

  /** Same file (by path, symbolic or hard link): exit 2; a byte-identical copy: exit 1. */
  private void refuseSelfMerge() throws IOException {
    for (int i = 0; i < inputs.size(); i++) {
      for (int j = i + 1; j < inputs.size(); j++) {
        Path a = inputs.get(i);
        Path b = inputs.get(j);
        if (FilterFiles.sameFile(a, b)) {
          throw CliException.usage(a + " and " + b + " are the same file; merging a filter with itself would"
              + " count its items twice (the bits would not change)");
        }
        if (Files.isRegularFile(a) && Files.isRegularFile(b) && Files.mismatch(a, b) == -1) {
          throw CliException.failure(a + " and " + b + " are byte-identical copies of one filter; merging them"
              + " would count its items twice (the bits would not change)");
        }
      }
    }
  }
}
