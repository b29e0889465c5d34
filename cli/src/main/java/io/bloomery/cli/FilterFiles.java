package io.bloomery.cli;

import io.bloomery.filter.BloomFilter;
import io.bloomery.filter.MembershipFilter;
import io.bloomery.hash.ProtocolId;
import io.bloomery.format.FilterFormat;
import io.bloomery.format.FilterFormatException;
import io.bloomery.format.GuavaBloomFormat;
import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Reads and writes filter files for the commands: the Bloomery format ({@link FilterFormat}) or
 * Guava's {@code writeTo} format ({@link GuavaBloomFormat}), with errors that name the file, and
 * atomic replacement on write ({@link AtomicFile}).
 */
final class FilterFiles {
  private FilterFiles() {}

  /** Reads any filter kind the format knows. */
  static Object read(Path path, FileFormat format) throws IOException {
    requireReadableFile(path);
    try (InputStream in = new BufferedInputStream(Files.newInputStream(path), 1 << 16)) {
      if (format == FileFormat.GUAVA) {
        BloomFilter filter = GuavaBloomFormat.read(in);
        if (in.read() != -1) {
          throw new FilterFormatException("trailing bytes after the Guava filter's last word");
        }
        return filter;
      }
      return FilterFormat.read(in);
    } catch (FilterFormatException e) {
      String hint = format == FileFormat.BLOOMERY ? " (for a Guava BloomFilter.writeTo file, add --format guava)" : "";
      throw CliException.failure(path + ": not a valid " + (format == FileFormat.GUAVA ? "Guava" : "Bloomery")
          + " filter file: " + e.getMessage() + hint, e);
    }
  }

  /** Reads a filter that must be a classic Bloom filter (the kind build, merge and the demo make). */
  static BloomFilter readClassic(Path path, FileFormat format) throws IOException {
    Object filter = read(path, format);
    if (filter instanceof BloomFilter bloom) {
      return bloom;
    }
    throw CliException.failure(path + ": holds a " + kindName(filter) + " filter; this command needs a classic Bloom filter");
  }

  /**
   * Atomically replaces {@code path} with {@code filter}; returns the file size.
   *
   * @throws CliException if the format cannot hold the filter (Guava needs its own protocol)
   */
  static long write(Path path, BloomFilter filter, FileFormat format) throws IOException {
    if (format == FileFormat.GUAVA) {
      requireGuavaCompatible(filter);
      return AtomicFile.write(path, out -> GuavaBloomFormat.write(filter, out));
    }
    return AtomicFile.write(path, out -> FilterFormat.write(filter, out));
  }

  /** Guava's format records neither protocol nor seed: only guava-murmur128-mitz64 filters fit. */
  static void requireGuavaCompatible(BloomFilter filter) {
    if (filter.protocol().id() != ProtocolId.GUAVA_MURMUR128_MITZ64) {
      throw CliException.failure("--output-format guava needs a filter with protocol "
          + ProtocolId.GUAVA_MURMUR128_MITZ64.protocolName() + ", this one uses " + filter.protocol().name());
    }
  }

  static String kindName(Object filter) {
    if (filter instanceof MembershipFilter membership) {
      return membership.kind().kindName();
    }
    return filter.getClass().getSimpleName();
  }

  /** Fails with a one-line message unless {@code path} is a readable regular file. */
  static void requireReadableFile(Path path) {
    if (!Files.exists(path)) {
      throw CliException.failure("no such file: " + path);
    }
    if (Files.isDirectory(path)) {
      throw CliException.failure(path + " is a directory, not a file");
    }
    if (!Files.isReadable(path)) {
      throw CliException.failure("permission denied: " + path);
    }
  }
}
