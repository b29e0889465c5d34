package io.bloomery.server.conformance;

import java.io.ByteArrayOutputStream;

/**
 * The one text form for bytes in conformance recordings: a double-quoted string in which printable
 * ASCII stands for itself and {@code \\ \" \r \n \t \xHH} are the only escapes. {@code record.py}
 * writes it; failure messages print bytes in it, so expected and actual read the same way.
 */
final class Escaped {

  private Escaped() {}

  /** {@code bytes} as a quoted, escaped string. */
  static String of(byte[] bytes) {
    StringBuilder out = new StringBuilder(bytes.length + 2).append('"');
    for (byte b : bytes) {
      int c = b & 0xff;
      switch (c) {
        case '\\' -> out.append("\\\\");
        case '"' -> out.append("\\\"");
        case '\r' -> out.append("\\r");
        case '\n' -> out.append("\\n");
        case '\t' -> out.append("\\t");
        default -> {
          if (c >= 0x20 && c <= 0x7e) {
            out.append((char) c);
          } else {
            out.append(String.format("\\x%02x", c));
          }
        }
      }
    }
    return out.append('"').toString();
  }

  /**
   * Reads one quoted string starting at {@code text[start]}.
   *
   * @return the bytes and the index just past the closing quote
   * @throws IllegalArgumentException naming the column when the string is not well formed
   */
  static Parsed parse(String text, int start) {
    if (start >= text.length() || text.charAt(start) != '"') {
      throw new IllegalArgumentException("column " + (start + 1) + ": expected a '\"'");
    }
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    int i = start + 1;
    while (true) {
      if (i >= text.length()) {
        throw new IllegalArgumentException("column " + (start + 1) + ": unterminated quoted string");
      }
      char c = text.charAt(i);
      if (c == '"') {
        return new Parsed(out.toByteArray(), i + 1);
      }
      if (c == '\\') {
        if (i + 1 >= text.length()) {
          throw new IllegalArgumentException("column " + (i + 1) + ": lone backslash at the end");
        }
        char e = text.charAt(i + 1);
        switch (e) {
          case '\\', '"' -> out.write(e);
          case 'r' -> out.write('\r');
          case 'n' -> out.write('\n');
          case 't' -> out.write('\t');
          case 'x' -> {
            if (i + 4 > text.length()) {
              throw new IllegalArgumentException("column " + (i + 1) + ": truncated \\x escape");
            }
            int hi = Character.digit(text.charAt(i + 2), 16);
            int lo = Character.digit(text.charAt(i + 3), 16);
            if (hi < 0 || lo < 0) {
              throw new IllegalArgumentException("column " + (i + 1) + ": bad \\x escape");
            }
            out.write(hi << 4 | lo);
            i += 2;
          }
          default -> throw new IllegalArgumentException("column " + (i + 1) + ": unknown escape \\" + e);
        }
        i += 2;
      } else if (c < 0x20 || c > 0x7e) {
        throw new IllegalArgumentException(
            "column " + (i + 1) + ": character U+" + String.format("%04X", (int) c) + " must be escaped");
      } else {
        out.write(c);
        i++;
      }
    }
  }

  /** A parsed string and where the text after it starts. */
  record Parsed(byte[] bytes, int end) {}
}
