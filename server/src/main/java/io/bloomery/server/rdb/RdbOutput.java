package io.bloomery.server.rdb;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;

/**
 * Writes Redis's RDB encodings into a growing buffer, each exactly as Redis's {@code rdb.c} and {@code module.c}
 * write it, so the bytes equal a Redis server's: lengths ({@code rdbSaveLen}), strings ({@code rdbSaveRawString}:
 * integer encoding for short decimal strings, LZF for longer ones that compress by more than 4 bytes, else
 * verbatim), binary doubles, module type ids and the module value fields of RDB_TYPE_MODULE_2 ({@code
 * RedisModule_Save*}: an opcode before each field, {@link #moduleEof} after the last).
 */
final class RdbOutput {
  static final int MODULE_OPCODE_EOF = 0;
  static final int MODULE_OPCODE_SINT = 1;
  static final int MODULE_OPCODE_UINT = 2;
  static final int MODULE_OPCODE_FLOAT = 3;
  static final int MODULE_OPCODE_DOUBLE = 4;
  static final int MODULE_OPCODE_STRING = 5;

  private final ByteArrayOutputStream out = new ByteArrayOutputStream();

  /** The bytes written so far. */
  byte[] toByteArray() {
    return out.toByteArray();
  }

  void rawByte(int b) {
    out.write(b);
  }

  void raw(byte[] bytes) {
    out.writeBytes(bytes);
  }

  /** An unsigned 64-bit little-endian value. */
  void littleEndian64(long value) {
    for (int i = 0; i < 8; i++) {
      out.write((int) (value >>> (8 * i)));
    }
  }

  /** {@code rdbSaveLen}: 6-bit, 14-bit, 32-bit or 64-bit big-endian length (unsigned). */
  void length(long value) {
    if (value >= 0 && value < 1 << 6) {
      out.write((int) value);
    } else if (value >= 0 && value < 1 << 14) {
      out.write((int) ((value >>> 8) | 0x40));
      out.write((int) value);
    } else if (value >= 0 && value <= 0xFFFF_FFFFL) {
      out.write(0x80);
      for (int shift = 24; shift >= 0; shift -= 8) {
        out.write((int) (value >>> shift));
      }
    } else {
      out.write(0x81);
      for (int shift = 56; shift >= 0; shift -= 8) {
        out.write((int) (value >>> shift));
      }
    }
  }

  /** {@code rdbSaveRawString} with {@code rdbcompression yes}. */
  void string(byte[] s) {
    if (s.length <= 11) {
      Long value = strictDecimal(s);
      if (value != null && integerEncoding(value)) {
        return;
      }
    }
    if (s.length > 20) {
      byte[] compressed = Lzf.compress(s, s.length - 4);
      if (compressed != null) {
        out.write(0xC0 | 3);
        length(compressed.length);
        length(s.length);
        out.writeBytes(compressed);
        return;
      }
    }
    length(s.length);
    out.writeBytes(s);
  }

  void string(String s) {
    string(s.getBytes(StandardCharsets.UTF_8));
  }

  private boolean integerEncoding(long value) {
    if (value >= Byte.MIN_VALUE && value <= Byte.MAX_VALUE) {
      out.write(0xC0);
      out.write((int) value);
    } else if (value >= Short.MIN_VALUE && value <= Short.MAX_VALUE) {
      out.write(0xC1);
      out.write((int) value);
      out.write((int) (value >> 8));
    } else if (value >= Integer.MIN_VALUE && value <= Integer.MAX_VALUE) {
      out.write(0xC2);
      for (int i = 0; i < 4; i++) {
        out.write((int) (value >> (8 * i)));
      }
    } else {
      return false;
    }
    return true;
  }

  /**
   * Redis's {@code string2ll} for strings of at most 18 bytes (all that integer encoding considers): an optional
   * minus, then {@code 0} alone or digits without a leading zero; {@code null} for anything else.
   */
  static Long strictDecimal(byte[] s) {
    if (s.length == 0 || s.length > 18) {
      return null;
    }
    if (s.length == 1 && s[0] == '0') {
      return 0L;
    }
    boolean negative = s[0] == '-';
    int i = negative ? 1 : 0;
    if (i >= s.length || s[i] < '1' || s[i] > '9') {
      return null;
    }
    long magnitude = 0;
    for (; i < s.length; i++) {
      if (s[i] < '0' || s[i] > '9') {
        return null;
      }
      magnitude = magnitude * 10 + (s[i] - '0');
    }
    return negative ? -magnitude : magnitude;
  }

  /** A 64-bit IEEE-754 double, little-endian ({@code rdbSaveBinaryDoubleValue}). */
  void binaryDouble(double value) {
    littleEndian64(Double.doubleToRawLongBits(value));
  }

  /** {@code RedisModule_SaveUnsigned}. */
  void moduleUnsigned(long value) {
    length(MODULE_OPCODE_UINT);
    length(value);
  }

  /** {@code RedisModule_SaveSigned}: the value's two's-complement bits as an unsigned length. */
  void moduleSigned(long value) {
    length(MODULE_OPCODE_SINT);
    length(value);
  }

  /** {@code RedisModule_SaveDouble}. */
  void moduleDouble(double value) {
    length(MODULE_OPCODE_DOUBLE);
    binaryDouble(value);
  }

  /** {@code RedisModule_SaveStringBuffer}. */
  void moduleString(byte[] value) {
    length(MODULE_OPCODE_STRING);
    string(value);
  }

  /** The end of a module value. */
  void moduleEof() {
    length(MODULE_OPCODE_EOF);
  }
}
