package io.bloomery.cli;

import picocli.CommandLine.Option;

/** {@code --format}: how the commands that read filter files parse them. A picocli mixin. */
final class FilterFormatOption {
  @Option(names = "--format", paramLabel = "FORMAT", defaultValue = "bloomery",
      description = "Format of the filter file(s): bloomery (default) or guava (a Guava BloomFilter.writeTo file).")
  FileFormat format;
}
