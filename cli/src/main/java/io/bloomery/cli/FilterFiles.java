package io.bloomery.cli;

import io.bloomery.filter.BloomFilter;
import io.bloomery.filter.FilterKind;
import io.bloomery.filter.Summary;
import io.bloomery.hash.ProtocolId;
import io.bloomery.format.FilterFormat;
import io.bloomery.format.FilterFormatException;
import io.bloomery.format.GuavaBloomFormat;
import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Reads and writes filter files for the commands: the Bloomery format ({@link FilterFormat}) or
 * Guava's {@code writeTo} format ({@link GuavaBloomFormat}), with errors that name the file, and
 * atomic replacement on write ({@link AtomicFile}).
 */
final class FilterFiles {
  /** Guava's writeTo header: strategy ordinal (1 byte), hash count (1 byte), word count (int, big-endian). */
  private static final int GUAVA_HEADER_BYTES = 6;

  private FilterFiles() {}

  /**
   * Reads any filter kind the format knows. The file must hold exactly one filter: bytes after its end
   * (its checksum, or Guava's last word) are refused, as docs/FORMAT.md promises.
   */
  static Object read(Path path, FileFormat format) throws IOException {
    requireReadableFile(path);
    if (Files.isRegularFile(path)) {
      CliErrors.requireHeap(path + " (" + Units.bytesShort(Files.size(path)) + ")", Files.size(path));
    }
    try (InputStream in = new BufferedInputStream(Files.newInputStream(path), 1 << 16)) {
      // A body declared larger than the file is refused before anything is allocated.
      long limit = Files.isRegularFile(path) ? Files.size(path) : FilterFormat.defaultReadLimit();
      Object filter = format == FileFormat.GUAVA ? GuavaBloomFormat.read(in) : FilterFormat.read(in, limit);
      long trailing = in.transferTo(OutputStream.nullOutputStream());
      if (trailing > 0) {
        throw new FilterFormatException("trailing bytes: " + Units.count(trailing, "byte", "bytes") + " after the end of the "
            + (format == FileFormat.GUAVA ? "Guava filter's last word" : "filter's checksum")
            + " (a filter file holds exactly one filter)");
      }
      return filter;
    } catch (FilterFormatException e) {
      String hint = format == FileFormat.BLOOMERY && looksLikeGuava(path)
          ? " (it looks like a Guava BloomFilter.writeTo file: add --format guava)" : "";
      throw CliException.failure(path + ": not a valid " + (format == FileFormat.GUAVA ? "Guava" : "Bloomery")
          + " filter file: " + e.getMessage() + hint, e);
    }
  }

  /**
   * Opens a filter that will only be queried: a classic or blocked Bloomery file is mapped read-only
   * ({@link FilterFormat#map(Path)}: header and checksum verified, nothing copied onto the heap, so a
   * filter larger than the heap can be queried); anything else is {@link #read} onto the heap.
   */
  static Object openForQueries(Path path, FileFormat format) throws IOException {
    requireReadableFile(path);
    if (format != FileFormat.BLOOMERY || !Files.isRegularFile(path)) {
      return read(path, format);
    }
    FilterKind kind;
    try {
      kind = FilterFormat.describe(path).kind();
    } catch (FilterFormatException e) {
      return read(path, format); // the heap reader's message, with its hints
    }
    if (kind != FilterKind.CLASSIC_BLOOM && kind != FilterKind.BLOCKED_BLOOM) {
      return read(path, format);
    }
    try {
      return FilterFormat.map(path);
    } catch (FilterFormatException e) {
      throw CliException.failure("not a valid Bloomery filter file: " + e.getMessage(), e);
    }
  }

  /**
   * Whether the file has the shape of Guava's {@code writeTo} output: strategy ordinal 0 or 1, a hash
   * count of at least 1, and a big-endian word count that accounts for the file's exact length.
   */
  static boolean looksLikeGuava(Path path) throws IOException {
    long size = Files.size(path);
    if (size < GUAVA_HEADER_BYTES || (size - GUAVA_HEADER_BYTES) % Long.BYTES != 0) {
      return false;
    }
    byte[] header = new byte[GUAVA_HEADER_BYTES];
    try (InputStream in = Files.newInputStream(path)) {
      if (in.readNBytes(header, 0, header.length) != header.length) {
        return false;
      }
    }
    int strategy = header[0];
    int hashes = header[1] & 0xff;
    long words = ByteBuffer.wrap(header, 2, Integer.BYTES).getInt() & 0xffffffffL;
    return (strategy == 0 || strategy == 1) && hashes >= 1 && GUAVA_HEADER_BYTES + words * Long.BYTES == size;
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

  /**
   * {@link #write(Path, BloomFilter, FileFormat)} recording {@code insertedCount} in the Bloomery
   * header instead of the filter's own count (Guava's format records none).
   */
  static long write(Path path, BloomFilter filter, FileFormat format, long insertedCount) throws IOException {
    if (format == FileFormat.GUAVA) {
      return write(path, filter, format);
    }
    return AtomicFile.write(path, out -> FilterFormat.write(filter, insertedCount, out));
  }

  /** Guava's format records neither protocol nor seed: only guava-murmur128-mitz64 filters fit. */
  static void requireGuavaCompatible(BloomFilter filter) {
    if (filter.protocolId() != ProtocolId.GUAVA_MURMUR128_MITZ64) {
      throw CliException.failure("--output-format guava needs a filter with protocol "
          + ProtocolId.GUAVA_MURMUR128_MITZ64.protocolName() + ", this one uses " + filter.protocolId().protocolName());
    }
  }

  static String kindName(Object filter) {
    if (filter instanceof Summary summary) {
      return summary.kind().kindName();
    }
    return "unknown";
  }

  /**
   * Whether two paths name the same file (symbolic links followed, hard links are the same file); false
   * when either does not exist.
   */
  static boolean sameFile(Path a, Path b) throws IOException {
    return Files.exists(a) && Files.exists(b) && Files.isSameFile(a, b);
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
