package io.bloomery.cli;

import java.io.IOException;
import java.io.InputStream;
import java.util.Arrays;

/**
 * Reads items, one per line, as raw bytes.
 *
 * <p>The rules, also in the README and {@code --help}:
 *
 * <ul>
 *   <li>Lines end at {@code \n}; one {@code \r} directly before it is stripped too, so {@code \r\n}
 *       files read the same as {@code \n} files. A {@code \r} anywhere else is part of the item.
 *   <li>The bytes between line ends are the item, exactly: no decoding, trimming or Unicode
 *       normalisation (a UTF-8 text file gives the UTF-8 bytes of each line).
 *   <li>An empty line is the empty item. A final line without a line end is an item; the line end of
 *       the last line does not start another (empty) item. An empty file has no items.
 *   <li>With {@code hex}, each line is the item's bytes in hexadecimal (upper or lower case, even
 *       number of digits; an empty line is the empty item). Anything else is an error naming the line.
 * </ul>
 *
 * <p>Lines longer than {@link #MAX_LINE_BYTES} are refused rather than buffered without bound.
 */
final class LineItems {
  /** The longest line accepted (64 MiB): a guard against a binary file with no line ends. */
  static final int MAX_LINE_BYTES = 64 << 20;

  /** Receives each item; the array is reused, only {@code [offset, offset + length)} is the item. */
  @FunctionalInterface
  interface ItemConsumer {
    void accept(long lineNumber, byte[] bytes, int offset, int length) throws IOException;
  }

  private LineItems() {}

  /**
   * Feeds every item of {@code in} to {@code consumer}, in order.
   *
   * @param source names the input in error messages (a path, or "stdin")
   * @return the number of items
   * @throws CliException for bad hex or an over-long line, naming the line number, or a failed read
   */
  static long forEach(InputStream in, String source, boolean hex, ItemConsumer consumer)
      throws IOException {
    byte[] buffer = new byte[1 << 16];
    byte[] line = new byte[256];
    byte[] decoded = hex ? new byte[128] : null;
    int lineLength = 0;
    long lineNumber = 0;
    boolean pending = false; // bytes (possibly zero) of an unterminated line have been read
    int read;
    while ((read = read(in, buffer, source)) > 0) {
      int start = 0;
      for (int i = 0; i < read; i++) {
        if (buffer[i] != '\n') {
          continue;
        }
        int chunk = i - start;
        lineNumber++;
        if (lineLength == 0) {
          // The whole line is inside this buffer: no copy.
          deliver(buffer, start, chunk, lineNumber, source, decoded, consumer);
        } else {
          line = append(line, lineLength, buffer, start, chunk, lineNumber, source);
          deliver(line, 0, lineLength + chunk, lineNumber, source, decoded, consumer);
          lineLength = 0;
        }
        start = i + 1;
        pending = false;
      }
      if (start < read) {
        line = append(line, lineLength, buffer, start, read - start, lineNumber + 1, source);
        lineLength += read - start;
        pending = true;
      }
    }
    if (pending) {
      lineNumber++;
      deliver(line, 0, lineLength, lineNumber, source, decoded, consumer);
    }
    return lineNumber;
  }

  /**
   * One read; a failing read (standard input redirected from a directory, an I/O error) is one line that
   * names the source, as "stdin: cannot read: Is a directory", not the bare system message.
   */
  private static int read(InputStream in, byte[] buffer, String source) {
    try {
      return in.read(buffer);
    } catch (IOException e) {
      throw CliException.failure(source + ": cannot read: " + CliErrors.describe(e), e);
    }
  }

  private static byte[] append(
      byte[] line, int lineLength, byte[] src, int offset, int length, long lineNumber, String source) {
    long needed = (long) lineLength + length;
    if (needed > MAX_LINE_BYTES) {
      throw CliException.failure(
          source + " line " + lineNumber + ": longer than " + MAX_LINE_BYTES + " bytes; is this a text file with one item per line?");
    }
    if (needed > line.length) {
      line = Arrays.copyOf(line, (int) Math.min(MAX_LINE_BYTES, Math.max(needed, 2L * line.length)));
    }
    System.arraycopy(src, offset, line, lineLength, length);
    return line;
  }

  private static void deliver(
      byte[] bytes, int offset, int length, long lineNumber, String source, byte[] decoded,
      ItemConsumer consumer) throws IOException {
    if (length > 0 && bytes[offset + length - 1] == '\r') {
      length--;
    }
    if (decoded == null) {
      consumer.accept(lineNumber, bytes, offset, length);
      return;
    }
    byte[] out = decoded.length >= length / 2 ? decoded : new byte[length / 2];
    int items = Hex.decodeInto(bytes, offset, length, out);
    if (items < 0) {
      throw CliException.failure(source + " line " + lineNumber + ": " + Hex.describeError(bytes, offset, length));
    }
    consumer.accept(lineNumber, out, 0, items);
  }
}
