package io.bloomery.cli;

import java.util.HexFormat;

/** Hexadecimal for item lines, seeds and packed bits. */
final class Hex {
  private static final HexFormat LOWER = HexFormat.of();

  private Hex() {}

  static String encode(byte[] bytes) {
    return LOWER.formatHex(bytes);
  }

  /**
   * Decodes the hex digits in {@code src[offset, offset + length)} into {@code out}.
   *
   * @return the number of bytes decoded, or -1 if the text is not an even number of hex digits
   */
  static int decodeInto(byte[] src, int offset, int length, byte[] out) {
    if ((length & 1) != 0) {
      return -1;
    }
    for (int i = 0; i < length; i += 2) {
      int high = Character.digit(src[offset + i], 16);
      int low = Character.digit(src[offset + i + 1], 16);
      if (high < 0 || low < 0) {
        return -1;
      }
      out[i >>> 1] = (byte) (high << 4 | low);
    }
    return length >>> 1;
  }

  /** Why {@code src[offset, offset + length)} is not hex, for an error message. */
  static String describeError(byte[] src, int offset, int length) {
    for (int i = 0; i < length; i++) {
      if (Character.digit(src[offset + i], 16) < 0) {
        int b = src[offset + i] & 0xff;
        String shown = b >= 0x21 && b < 0x7f ? "'" + (char) b + "'" : String.format(java.util.Locale.ROOT, "byte 0x%02x", b);
        return "not hex: " + shown + " at column " + (i + 1) + " (expected digits 0-9, a-f)";
      }
    }
    return "not hex: an odd number of digits (" + length + "); each byte is two digits";
  }

  /**
   * Decodes a hex option value such as {@code --seed-hex}.
   *
   * @throws CliException (usage) naming the option when the text is not hex
   */
  static byte[] decodeOption(String option, String text) {
    byte[] ascii = text.getBytes(java.nio.charset.StandardCharsets.ISO_8859_1);
    byte[] out = new byte[ascii.length / 2];
    if (text.chars().anyMatch(c -> c > 0xff) || decodeInto(ascii, 0, ascii.length, out) < 0) {
      throw CliException.usage(option + " '" + text + "' is " + describeError(ascii, 0, ascii.length));
    }
    return out;
  }
}
