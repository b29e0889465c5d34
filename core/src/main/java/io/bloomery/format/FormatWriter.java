package io.bloomery.format;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.io.OutputStream;
import java.nio.ByteOrder;
import java.util.zip.CRC32C;

/**
 * The writing counterpart of {@link FormatReader}: buffered fixed-width fields in one byte order,
 * with a running CRC-32C over every byte written, shared by every kind's body.
 *
 * <p>Nothing reaches the underlying stream before {@link #flush()} or a full buffer; the writer never
 * closes the stream. Not thread-safe; one writer per encode.
 */
final class FormatWriter {
  private static final int BUFFER = 1 << 16;

  private final OutputStream out;
  private final boolean bigEndian;
  private final CRC32C crc = new CRC32C();
  private final byte[] buffer = new byte[BUFFER];
  private int used;
  private int checksummed;
  private long written;

  /** Something that writes a whole serialized form to a stream. */
  @FunctionalInterface
  interface Serializer {
    void writeTo(OutputStream out) throws IOException;
  }

  /**
   * Runs {@code serializer} into a new array of the announced {@code length}.
   *
   * @throws IllegalArgumentException if {@code length} does not fit in an array
   */
  static byte[] toBytes(long length, String what, Serializer serializer) {
    if (length > Integer.MAX_VALUE - 16) {
      throw new IllegalArgumentException(
          what + " of " + length + " bytes does not fit in a byte[]; write it to an OutputStream instead");
    }
    ByteArrayOutputStream out = new ByteArrayOutputStream((int) length);
    try {
      serializer.writeTo(out);
    } catch (IOException e) {
      throw new UncheckedIOException("unreachable: in-memory stream failed", e);
    }
    return out.toByteArray();
  }

  FormatWriter(OutputStream out) {
    this(out, ByteOrder.LITTLE_ENDIAN);
  }

  FormatWriter(OutputStream out, ByteOrder order) {
    this.out = out;
    this.bigEndian = order == ByteOrder.BIG_ENDIAN;
  }

  /** Bytes written so far (buffered or not). */
  long position() {
    return written;
  }

  /** The CRC-32C of every byte written so far. */
  int checksumSoFar() {
    crcPending();
    return (int) crc.getValue();
  }

  void u8(int value) throws IOException {
    ensure(1);
    buffer[used++] = (byte) value;
    written++;
  }

  void u16(int value) throws IOException {
    put(value, 2);
  }

  void u32(long value) throws IOException {
    put(value, 4);
  }

  void u64(long value) throws IOException {
    put(value, 8);
  }

  /** One 64-bit word of a payload, in this writer's byte order. */
  void word(long value) throws IOException {
    ensure(Long.BYTES);
    (bigEndian ? FormatReader.BIG_ENDIAN_LONGS : FormatReader.LITTLE_ENDIAN_LONGS).set(buffer, used, value);
    used += Long.BYTES;
    written += Long.BYTES;
  }

  void bytes(byte[] bytes) throws IOException {
    bytes(bytes, 0, bytes.length);
  }

  void bytes(byte[] bytes, int offset, int length) throws IOException {
    for (int done = 0; done < length; ) {
      ensure(1);
      int n = Math.min(length - done, buffer.length - used);
      System.arraycopy(bytes, offset + done, buffer, used, n);
      used += n;
      done += n;
      written += n;
    }
  }

  /** Appends the CRC-32C of everything written so far (the envelope's last field). */
  void checksum() throws IOException {
    u32(checksumSoFar() & 0xFFFF_FFFFL);
  }

  /** Hands every buffered byte to the stream and flushes it. */
  void flush() throws IOException {
    drain();
    out.flush();
  }

  private void put(long value, int length) throws IOException {
    ensure(length);
    for (int i = 0; i < length; i++) {
      int shift = 8 * (bigEndian ? length - 1 - i : i);
      buffer[used + i] = (byte) (value >>> shift);
    }
    used += length;
    written += length;
  }

  private void ensure(int bytes) throws IOException {
    if (buffer.length - used < bytes) {
      drain();
    }
  }

  /** Feeds buffered bytes not yet checksummed to the CRC. */
  private void crcPending() {
    crc.update(buffer, checksummed, used - checksummed);
    checksummed = used;
  }

  private void drain() throws IOException {
    crcPending();
    out.write(buffer, 0, used);
    used = 0;
    checksummed = 0;
  }
}
