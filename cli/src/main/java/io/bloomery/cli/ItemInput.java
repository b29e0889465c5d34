package io.bloomery.cli;

import java.io.BufferedInputStream;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * An {@code --input FILE|-} source of line items: a file, or standard input for {@code -}. Counts
 * the bytes read so a progress bar can show how far through a file it is.
 */
final class ItemInput implements AutoCloseable {
  private final String name;
  private final long size;
  private final CountingStream stream;
  private final boolean standardInput;

  private ItemInput(String name, long size, InputStream in, boolean standardInput) {
    this.standardInput = standardInput;
    this.name = name;
    this.size = size;
    this.stream = new CountingStream(in);
  }

  /**
   * Opens {@code spec}: "-" for {@code stdin} (refused when the process's stdin is closed, see {@link
   * StandardStreams}), otherwise a path that must be a readable file.
   */
  static ItemInput open(String spec, InputStream stdin) throws IOException {
    if ("-".equals(spec)) {
      StandardStreams.requireStdinOpen(stdin);
      return new ItemInput("stdin", -1, stdin, true);
    }
    Path path = Path.of(spec);
    FilterFiles.requireReadableFile(path);
    long size = Files.isRegularFile(path) ? Files.size(path) : -1;
    return new ItemInput(spec, size, Files.newInputStream(path), false);
  }

  /** Reads every item; see {@link LineItems} for the line rules. */
  long forEach(boolean hex, LineItems.ItemConsumer consumer) throws IOException {
    return LineItems.forEach(stream, name, hex, consumer);
  }

  /** The name used in messages: the path as given, or "stdin". */
  String name() {
    return name;
  }

  /** The file's size in bytes, or -1 when unknown (stdin, pipes). */
  long size() {
    return size;
  }

  long bytesRead() {
    return stream.count;
  }

  /** Closes the file; standard input is left open for the embedding process. */
  @Override
  public void close() throws IOException {
    if (!standardInput) {
      stream.close();
    }
  }

  private static final class CountingStream extends FilterInputStream {
    long count;

    CountingStream(InputStream in) {
      super(new BufferedInputStream(in, 1 << 16));
    }

    @Override
    public int read() throws IOException {
      int b = super.read();
      if (b >= 0) {
        count++;
      }
      return b;
    }

    @Override
    public int read(byte[] buffer, int offset, int length) throws IOException {
      int n = super.read(buffer, offset, length);
      if (n > 0) {
        count += n;
      }
      return n;
    }
  }
}
