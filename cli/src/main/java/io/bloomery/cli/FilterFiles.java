package io.bloomery.cli;

import io.bloomery.filter.BloomFilter;
import io.bloomery.filter.MembershipFilter;
import io.bloomery.format.FilterFormat;
import io.bloomery.format.FilterFormatException;
import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Reads and writes filter files for the commands: the Bloomery format ({@link FilterFormat}), with
 * errors that name the file, and atomic replacement on write ({@link AtomicFile}).
 */
final class FilterFiles {
  private FilterFiles() {}

  /** Reads any filter kind the Bloomery format knows. */
  static Object read(Path path) throws IOException {
    requireReadableFile(path);
    try (InputStream in = new BufferedInputStream(Files.newInputStream(path), 1 << 16)) {
      return FilterFormat.read(in);
    } catch (FilterFormatException e) {
      throw CliException.failure(path + ": not a valid Bloomery filter file: " + e.getMessage(), e);
    }
  }

  /** Reads a filter that must be a classic Bloom filter (the kind build, merge and the demo make). */
  static BloomFilter readClassic(Path path) throws IOException {
    Object filter = read(path);
    if (filter instanceof BloomFilter bloom) {
      return bloom;
    }
    throw CliException.failure(path + ": holds a " + kindName(filter) + " filter; this command needs a classic Bloom filter");
  }

  /** Atomically replaces {@code path} with {@code filter} in the Bloomery format; returns the file size. */
  static long write(Path path, BloomFilter filter) throws IOException {
    return AtomicFile.write(path, out -> FilterFormat.write(filter, out));
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
