package io.bloomery.server.rdb;

import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;

/**
 * Reads Redis's RDB encodings from a stream, the inverse of {@link RdbOutput}, and keeps the running CRC-64 of every
 * byte read. Every length from the input is checked before anything is allocated for it: a string is read only as
 * its bytes arrive (a declared length past the end fails at the end, holding no more than was read), an LZF string
 * whose declared size exceeds what its compressed bytes could ever expand to is refused unread, and no string may
 * pass {@link #MAX_STRING_BYTES}. Malformed input raises {@link RdbFormatException}; a truncated one, {@link
 * RdbFormatException} too (never an {@link EOFException} or a runtime exception).
 */
final class RdbInput {
  /** The longest string read into memory: the largest Java array. */
  static final int MAX_STRING_BYTES = Integer.MAX_VALUE - 8;
  /* One LZF back reference of 3 input bytes yields at most 264 output bytes, and one of 2 bytes at most 8, so no
   * input expands by more than 88 times. */
  private static final long LZF_MAX_EXPANSION = 88;

  private final InputStream in;
  private final byte[] scratch = new byte[8192];
  private long position;
  private long crc;

  RdbInput(InputStream in) {
    this.in = in;
  }

  /** Bytes read so far. */
  long position() {
    return position;
  }

  /** The CRC-64 of every byte read so far. */
  long crc() {
    return crc;
  }

  int u8() throws IOException {
    int b = in.read();
    if (b < 0) {
      throw truncated(1);
    }
    position++;
    crc = Crc64.update(crc, b);
    return b;
  }

  byte[] raw(int n) throws IOException {
    byte[] bytes = in.readNBytes(n);
    if (bytes.length != n) {
      throw truncated(n);
    }
    position += n;
    crc = Crc64.update(crc, bytes, 0, n);
    return bytes;
  }

  void skip(long n) throws IOException {
    long left = n;
    while (left > 0) {
      int chunk = in.read(scratch, 0, (int) Math.min(left, scratch.length));
      if (chunk < 0) {
        throw truncated(n);
      }
      crc = Crc64.update(crc, scratch, 0, chunk);
      position += chunk;
      left -= chunk;
    }
  }

  long littleEndian(int bytes) throws IOException {
    long value = 0;
    for (int i = 0; i < bytes; i++) {
      value |= (long) u8() << (8 * i);
    }
    return value;
  }

  private RdbFormatException truncated(long wanted) {
    return new RdbFormatException("unexpected end of data at offset " + position + " (wanted " + wanted + " bytes)");
  }

  /** A length or, when {@code encoded} is non-null, also a string encoding (sets {@code encoded[0]}). */
  private long length(boolean[] encoded) throws IOException {
    int first = u8();
    switch (first >>> 6) {
      case 0:
        return first & 0x3F;
      case 1:
        return ((first & 0x3F) << 8) | u8();
      case 3:
        if (encoded != null) {
          encoded[0] = true;
        }
        return first & 0x3F;
      default:
        if (first == 0x80) {
          long value = 0;
          for (int i = 0; i < 4; i++) {
            value = (value << 8) | u8();
          }
          return value;
        }
        if (first == 0x81) {
          long value = 0;
          for (int i = 0; i < 8; i++) {
            value = (value << 8) | u8();
          }
          return value;
        }
        throw new RdbFormatException("unknown length encoding 0x" + Integer.toHexString(first) + " at offset "
            + (position - 1));
    }
  }

  /** {@code rdbLoadLen}: a length (an encoded-string marker reads as its low 6 bits, as Redis reads it). */
  long length() throws IOException {
    return length(null);
  }

  /** A length that must fit an {@code int} count, at most {@code limit}. */
  int count(long limit, String what) throws IOException {
    long offset = position;
    long value = length();
    if (value < 0 || value > limit) {
      throw new RdbFormatException(what + " at offset " + offset + ": expected at most " + limit + ", found "
          + Long.toUnsignedString(value));
    }
    return (int) value;
  }

  /** {@code rdbGenericLoadStringObject}: a string in any encoding, as its bytes. */
  byte[] string() throws IOException {
    long offset = position;
    boolean[] encoded = {false};
    long len = length(encoded);
    if (encoded[0]) {
      switch ((int) len) {
        case 0:
          return Long.toString((byte) u8()).getBytes(StandardCharsets.US_ASCII);
        case 1:
          return Long.toString((short) littleEndian(2)).getBytes(StandardCharsets.US_ASCII);
        case 2:
          return Long.toString((int) littleEndian(4)).getBytes(StandardCharsets.US_ASCII);
        case 3:
          long compressed = length();
          long plain = length();
          if (compressed < 1 || compressed > MAX_STRING_BYTES || plain < 1 || plain > MAX_STRING_BYTES
              || plain > compressed * LZF_MAX_EXPANSION) {
            throw new RdbFormatException("LZF string at offset " + offset + ": " + Long.toUnsignedString(compressed)
                + " compressed bytes cannot make " + Long.toUnsignedString(plain));
          }
          return Lzf.decompress(raw((int) compressed), (int) plain);
        default:
          throw new RdbFormatException("unknown string encoding " + len + " at offset " + offset);
      }
    }
    if (len < 0 || len > MAX_STRING_BYTES) {
      throw new RdbFormatException("string at offset " + offset + ": length " + Long.toUnsignedString(len)
          + " passes the largest string, " + MAX_STRING_BYTES);
    }
    return raw((int) len);
  }

  /** Skips a string in any encoding without keeping it. */
  void skipString() throws IOException {
    long offset = position;
    boolean[] encoded = {false};
    long len = length(encoded);
    if (!encoded[0]) {
      if (len < 0) {
        throw new RdbFormatException("string at offset " + offset + ": length " + Long.toUnsignedString(len));
      }
      skip(len);
      return;
    }
    switch ((int) len) {
      case 0 -> skip(1);
      case 1 -> skip(2);
      case 2 -> skip(4);
      case 3 -> {
        long compressed = length();
        length();
        if (compressed < 0) {
          throw new RdbFormatException("LZF string at offset " + offset + ": length "
              + Long.toUnsignedString(compressed));
        }
        skip(compressed);
      }
      default -> throw new RdbFormatException("unknown string encoding " + len + " at offset " + offset);
    }
  }

  /** {@code rdbLoadBinaryDoubleValue}. */
  double binaryDouble() throws IOException {
    return Double.longBitsToDouble(littleEndian(8));
  }

  private void moduleOpcode(int expected, String what) throws IOException {
    long offset = position;
    long opcode = length();
    if (opcode != expected) {
      throw new RdbFormatException("module value at offset " + offset + ": expected " + what + " (opcode " + expected
          + "), found opcode " + Long.toUnsignedString(opcode));
    }
  }

  /** {@code RedisModule_LoadUnsigned}. */
  long moduleUnsigned() throws IOException {
    moduleOpcode(RdbOutput.MODULE_OPCODE_UINT, "an unsigned integer");
    return length();
  }

  /** {@code RedisModule_LoadSigned}. */
  long moduleSigned() throws IOException {
    moduleOpcode(RdbOutput.MODULE_OPCODE_SINT, "a signed integer");
    return length();
  }

  /** {@code RedisModule_LoadDouble}. */
  double moduleDouble() throws IOException {
    moduleOpcode(RdbOutput.MODULE_OPCODE_DOUBLE, "a double");
    return binaryDouble();
  }

  /** {@code RedisModule_LoadStringBuffer}. */
  byte[] moduleString() throws IOException {
    moduleOpcode(RdbOutput.MODULE_OPCODE_STRING, "a string");
    return string();
  }

  /** The end-of-value marker after a module's fields. */
  void moduleEof() throws IOException {
    moduleOpcode(RdbOutput.MODULE_OPCODE_EOF, "the end of the value");
  }

  /** Skips a module value's fields up to and including its end marker (any module's value, known or not). */
  void skipModuleValue() throws IOException {
    while (true) {
      long offset = position;
      long opcode = length();
      if (opcode == RdbOutput.MODULE_OPCODE_EOF) {
        return;
      } else if (opcode == RdbOutput.MODULE_OPCODE_SINT || opcode == RdbOutput.MODULE_OPCODE_UINT) {
        length();
      } else if (opcode == RdbOutput.MODULE_OPCODE_FLOAT) {
        skip(4);
      } else if (opcode == RdbOutput.MODULE_OPCODE_DOUBLE) {
        skip(8);
      } else if (opcode == RdbOutput.MODULE_OPCODE_STRING) {
        skipString();
      } else {
        throw new RdbFormatException("unknown module opcode " + Long.toUnsignedString(opcode) + " at offset " + offset);
      }
    }
  }
}
