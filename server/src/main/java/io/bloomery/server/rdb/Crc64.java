package io.bloomery.server.rdb;

/**
 * Redis's CRC-64 (Jones coefficients: polynomial {@code 0xad93d23594c935a9}, reflected input and output, initial
 * value 0, no final XOR), the checksum of a {@code DUMP} payload's footer and of an RDB file's end. Check value: the
 * nine bytes {@code "123456789"} give {@code 0xe9c6d914c4b8d9ca}.
 */
final class Crc64 {
  /* Byte-at-a-time table for the reflected polynomial (the Jones polynomial bit-reversed). */
  private static final long REFLECTED_POLY = 0x95AC9329AC4BC9B5L;
  private static final long[] TABLE = new long[256];

  static {
    for (int i = 0; i < 256; i++) {
      long crc = i;
      for (int bit = 0; bit < 8; bit++) {
        crc = (crc & 1) != 0 ? (crc >>> 1) ^ REFLECTED_POLY : crc >>> 1;
      }
      TABLE[i] = crc;
    }
  }

  private Crc64() {}

  /** The CRC of {@code data[offset, offset + length)} continued from {@code crc} (0 to start). */
  static long update(long crc, byte[] data, int offset, int length) {
    long c = crc;
    for (int i = offset; i < offset + length; i++) {
      c = TABLE[(int) ((c ^ data[i]) & 0xFF)] ^ (c >>> 8);
    }
    return c;
  }

  /** The CRC continued from {@code crc} by one byte. */
  static long update(long crc, int b) {
    return TABLE[(int) ((crc ^ b) & 0xFF)] ^ (crc >>> 8);
  }
}
