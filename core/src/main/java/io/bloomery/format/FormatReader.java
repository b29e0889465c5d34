package io.bloomery.format;

import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.zip.CRC32C;

/**
 * A bounded reader for untrusted serialized filters, shared by every kind's body.
 *
 * Multi-byte fields are little-endian (the native format) unless a foreign format asks otherwise.
 *
 * <p>It reads exactly the bytes it is asked for (never ahead), so a caller can stop after one
 * envelope and leave the rest of the stream untouched. Every byte it returns is fed to a running
 * CRC-32C. It knows how many bytes may still follow ({@link #remaining()}: exact for byte arrays and
 * files, unknown for plain streams) and refuses, before anything is allocated, any read or
 * allocation larger than those bytes or than the configured cap. Every refusal is a {@link
 * FilterFormatException} whose message names the field, the offset, what was expected and what was
 * found.
 *
 * <p>Not thread-safe; one reader per decode.
 */
final class FormatReader {
  /** Marker for a source whose remaining length is unknown (a plain stream). */
  static final long UNKNOWN_LENGTH = -1;

  private static final int CHUNK = 1 << 16;
  /** Views of a byte[] as longs in each byte order; shared with {@link FormatWriter}. */
  static final VarHandle LITTLE_ENDIAN_LONGS =
      MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
  static final VarHandle BIG_ENDIAN_LONGS =
      MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);

  private final InputStream in;
  private final long totalLength;
  private final long allocationCap;
  private final boolean bigEndian;
  private final CRC32C crc = new CRC32C();
  private final byte[] scratch = new byte[Long.BYTES];
  private byte[] chunk;
  private long position;

  /**
   * @param in the source; read exactly as far as asked
   * @param totalLength bytes the source holds from the current position, or {@link #UNKNOWN_LENGTH}
   * @param allocationCap the largest number of bytes a single declared section may claim
   */
  FormatReader(InputStream in, long totalLength, long allocationCap) {
    this(in, totalLength, allocationCap, ByteOrder.LITTLE_ENDIAN);
  }

  /** As above, for a foreign format whose multi-byte fields use {@code order}. */
  FormatReader(InputStream in, long totalLength, long allocationCap, ByteOrder order) {
    this.in = in;
    this.bigEndian = order == ByteOrder.BIG_ENDIAN;
    this.totalLength = totalLength;
    this.allocationCap = allocationCap;
  }

  /** Bytes consumed so far. */
  long position() {
    return position;
  }

  /** Whether the number of bytes that remain is known (byte arrays and files). */
  boolean lengthKnown() {
    return totalLength != UNKNOWN_LENGTH;
  }

  /** Bytes that remain, or {@link #UNKNOWN_LENGTH} for a plain stream. */
  long remaining() {
    return lengthKnown() ? totalLength - position : UNKNOWN_LENGTH;
  }

  /** The CRC-32C of every byte consumed so far. */
  int checksumSoFar() {
    return (int) crc.getValue();
  }

  /**
   * Checks that a section of {@code bytes} declared by the input may be read and allocated: it must
   * not exceed the bytes that remain (when known) nor the allocation cap.
   */
  void requireAvailable(long bytes, String field) throws FilterFormatException {
    if (bytes < 0) {
      throw new FilterFormatException(
          field + " at offset " + position + ": expected a length in [0, 2^63), found " + Long.toUnsignedString(bytes));
    }
    if (lengthKnown() && bytes > remaining()) {
      throw new FilterFormatException(
          "truncated: "
              + field
              + " at offset "
              + position
              + " declares "
              + bytes
              + " bytes, expected at most the "
              + remaining()
              + " bytes that remain");
    }
    if (bytes > allocationCap) {
      throw new FilterFormatException(
          field
              + " at offset "
              + position
              + " declares "
              + bytes
              + " bytes, expected at most the read limit of "
              + allocationCap
              + " bytes");
    }
  }

  int u8(String field) throws IOException {
    fill(scratch, 1, field);
    return scratch[0] & 0xFF;
  }

  int u16(String field) throws IOException {
    fill(scratch, 2, field);
    return (int) decode(scratch, 0, 2);
  }

  /** An unsigned 32-bit little-endian value, as a non-negative long. */
  long u32(String field) throws IOException {
    fill(scratch, 4, field);
    return decode(scratch, 0, 4);
  }

  /** A 64-bit little-endian value; callers treat it as unsigned and range-check it. */
  long u64(String field) throws IOException {
    fill(scratch, 8, field);
    return decode(scratch, 0, 8);
  }

  /**
   * A field read and range-checked in one step, the idiom of every body: an unsigned 64-bit value in
   * {@code [min, max]} (both non-negative), else a {@link FilterFormatException} saying {@code "<field> at
   * offset <n>: expected <rule>, found <value>"}.
   */
  long u64(String field, long min, long max, String rule) throws IOException {
    long offset = position();
    return inRange(field, offset, u64(field), min, max, rule);
  }

  /** {@link #u64(String, long, long, String)} for an unsigned 32-bit field. */
  long u32(String field, long min, long max, String rule) throws IOException {
    long offset = position();
    return inRange(field, offset, u32(field), min, max, rule);
  }

  private static long inRange(String field, long offset, long value, long min, long max, String rule)
      throws FilterFormatException {
    if (value < min || value > max) { // a value >= 2^63 reads as negative, below every min
      throw new FilterFormatException(
          field + " at offset " + offset + ": expected " + rule + ", found " + Long.toUnsignedString(value));
    }
    return value;
  }

  /** Reads {@code length} bytes into a new array, after checking the length against the bounds. */
  byte[] bytes(int length, String field) throws IOException {
    requireAvailable(length, field);
    byte[] out = new byte[length];
    fill(out, length, field);
    return out;
  }

  /**
   * Reads {@code count} consecutive 64-bit little-endian words in bulk (a kind's payload), after
   * checking {@code 8 * count} bytes against the bounds.
   */
  WordStream words(long count, String field) throws FilterFormatException {
    if (count < 0 || count > Long.MAX_VALUE / Long.BYTES) {
      throw new FilterFormatException(
          field + " at offset " + position + ": expected a word count in [0, 2^60), found " + Long.toUnsignedString(count));
    }
    requireAvailable(count * Long.BYTES, field);
    return new WordStream(count, field);
  }

  /**
   * Reads the 4-byte CRC-32C that ends an envelope and compares it with the checksum of everything
   * consumed before it.
   */
  void verifyChecksum() throws IOException {
    int expected = checksumSoFar();
    long checksumOffset = position;
    long found = u32("CRC-32C");
    if ((int) found != expected) {
      throw new FilterFormatException(
          String.format(
              java.util.Locale.ROOT,
              "checksum mismatch: expected CRC-32C %08x over the %d bytes before offset %d, found %08x",
              expected,
              checksumOffset,
              checksumOffset,
              found));
    }
  }

  /** For sources of known length: the envelope must end exactly where the source ends. */
  void requireEnd() throws FilterFormatException {
    if (lengthKnown() && remaining() != 0) {
      throw new FilterFormatException(
          "trailing bytes: expected end of input at offset " + position + ", found " + remaining() + " more bytes");
    }
  }

  /** Reads exactly {@code length} bytes or fails naming the field; updates the checksum. */
  private void fill(byte[] target, int length, String field) throws IOException {
    int done = 0;
    while (done < length) {
      int n;
      try {
        n = in.read(target, done, length - done);
      } catch (EOFException e) {
        n = -1;
      }
      if (n < 0) {
        throw new FilterFormatException(
            "truncated: expected "
                + length
                + " bytes for "
                + field
                + " at offset "
                + position
                + ", found end of input after "
                + done);
      }
      done += n;
    }
    crc.update(target, 0, length);
    position += length;
  }

  /** The unsigned value of {@code length} bytes at {@code offset}, in this reader's byte order. */
  private long decode(byte[] bytes, int offset, int length) {
    long value = 0;
    if (bigEndian) {
      for (int i = 0; i < length; i++) {
        value = value << 8 | (bytes[offset + i] & 0xFF);
      }
    } else {
      for (int i = length - 1; i >= 0; i--) {
        value = value << 8 | (bytes[offset + i] & 0xFF);
      }
    }
    return value;
  }

  /** Buffered reads of a declared number of consecutive little-endian 64-bit words. */
  final class WordStream {
    private final String field;
    private long wordsLeft;
    private int available;
    private int next;

    private WordStream(long count, String field) {
      this.field = field;
      this.wordsLeft = count;
      int wanted = (int) Math.min(CHUNK, count * Long.BYTES);
      if (chunk == null || chunk.length < wanted) {
        chunk = new byte[wanted];
      }
    }

    /** Words not yet returned. */
    long wordsLeft() {
      return wordsLeft;
    }

    /** Returns the next word; never reads past the declared count. */
    long next() throws IOException {
      if (wordsLeft == 0) {
        throw new IllegalStateException("read past the declared " + field);
      }
      if (next == available) {
        int words = (int) Math.min(wordsLeft, chunk.length / Long.BYTES);
        fill(chunk, words * Long.BYTES, field);
        available = words * Long.BYTES;
        next = 0;
      }
      long word = (long) (bigEndian ? BIG_ENDIAN_LONGS : LITTLE_ENDIAN_LONGS).get(chunk, next);
      next += Long.BYTES;
      wordsLeft--;
      return word;
    }
  }
}
