package io.bloomery.server.rdb;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

/**
 * Writes Redis's RDB encodings into a growing buffer (or any stream that does not fail: {@link DumpPayload}'s
 * window of a payload), each exactly as Redis's {@code rdb.c} and {@code module.c}
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

  private final OutputStream out;

  /** Writes into a growing buffer: {@link #toByteArray()}. */
  RdbOutput() {
    this(new ByteArrayOutputStream());
  }

  /** Writes into {@code out}, which must not fail (an {@link IOException} from it becomes unchecked). */
  RdbOutput(OutputStream out) {
    this.out = out;
  }

  /** The bytes written so far, where this writes into its own buffer. */
  byte[] toByteArray() {
    return ((ByteArrayOutputStream) out).toByteArray();
  }

  void rawByte(int b) {
    put(b);
  }

  void raw(byte[] bytes) {
    put(bytes);
  }

  /** An unsigned 64-bit little-endian value. */
  void littleEndian64(long value) {
    for (int i = 0; i < 8; i++) {
      put((int) (value >>> (8 * i)));
    }
  }

  private void put(int b) {
    try {
      out.write(b);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private void put(byte[] bytes) {
    put(bytes, bytes.length);
  }

  private void put(byte[] bytes, int length) {
    try {
      out.write(bytes, 0, length);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** {@code rdbSaveLen}: 6-bit, 14-bit, 32-bit or 64-bit big-endian length (unsigned). */
  void length(long value) {
    if (value >= 0 && value < 1 << 6) {
      put((int) value);
    } else if (value >= 0 && value < 1 << 14) {
      put((int) ((value >>> 8) | 0x40));
      put((int) value);
    } else if (value >= 0 && value <= 0xFFFF_FFFFL) {
      put(0x80);
      for (int shift = 24; shift >= 0; shift -= 8) {
        put((int) (value >>> shift));
      }
    } else {
      put(0x81);
      for (int shift = 56; shift >= 0; shift -= 8) {
        put((int) (value >>> shift));
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
      byte[] compressed = new byte[s.length - 1]; // the limit, length - 4, and the 3 bytes LZF may pass it by
      int compressedLength = Lzf.compress(s, compressed, s.length - 4);
      if (compressedLength > 0) {
        put(0xC0 | 3);
        length(compressedLength);
        length(s.length);
        put(compressed, compressedLength);
        return;
      }
    }
    length(s.length);
    put(s);
  }

  void string(String s) {
    string(s.getBytes(StandardCharsets.UTF_8));
  }

  private boolean integerEncoding(long value) {
    if (value >= Byte.MIN_VALUE && value <= Byte.MAX_VALUE) {
      put(0xC0);
      put((int) value);
    } else if (value >= Short.MIN_VALUE && value <= Short.MAX_VALUE) {
      put(0xC1);
      put((int) value);
      put((int) (value >> 8));
    } else if (value >= Integer.MIN_VALUE && value <= Integer.MAX_VALUE) {
      put(0xC2);
      for (int i = 0; i < 4; i++) {
        put((int) (value >> (8 * i)));
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
