package io.bloomery.server.resp;

import java.util.Locale;

/**
 * Text a client chose (a key, a stray byte of a bad frame) made safe for a reply line or a log line: control
 * characters are escaped ({@code \r}, {@code \n}, {@code \t}, else {@code \xHH}), so a client can neither break a
 * reply's framing nor forge log lines or send terminal escape sequences to whoever reads the log. Other characters,
 * also non-ASCII letters, stay as they are.
 */
public final class ClientText {
  private ClientText() {}

  /** One byte of client input: printable ASCII as itself, anything else escaped. */
  public static String escape(byte b) {
    int c = b & 0xFF;
    return c >= 0x20 && c < 0x7F ? String.valueOf((char) c) : escaped(c);
  }

  /** {@code text} with its C0 and C1 control characters and DEL escaped. */
  public static String escape(CharSequence text) {
    StringBuilder out = null;
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      boolean control = c < 0x20 || (c >= 0x7F && c <= 0x9F);
      if (control && out == null) {
        out = new StringBuilder(text.length() + 8).append(text, 0, i);
      }
      if (out != null) {
        if (control) {
          out.append(escaped(c));
        } else {
          out.append(c);
        }
      }
    }
    return out == null ? text.toString() : out.toString();
  }

  private static String escaped(int c) {
    return switch (c) {
      case '\r' -> "\\r";
      case '\n' -> "\\n";
      case '\t' -> "\\t";
      default -> String.format(Locale.ROOT, "\\x%02x", c);
    };
  }
}
