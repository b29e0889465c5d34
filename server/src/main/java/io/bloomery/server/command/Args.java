package io.bloomery.server.command;

import io.bloomery.server.resp.RespNumbers;
import java.nio.charset.StandardCharsets;
import java.util.Locale;

/** Argument parsing with Redis's rules: {@code string2ll} for integers and a full-string {@code strtod}. */
public final class Args {
  private Args() {}

  /** Redis's {@code string2ll}; {@code null} if the text is not a valid int64. */
  public static Long parseLong(byte[] arg) {
    try {
      return RespNumbers.parseLong(arg);
    } catch (NumberFormatException e) {
      return null;
    }
  }

  /**
   * {@code strtod} over the whole argument, as {@code RedisModule_StringToDouble}: decimal or exponent notation,
   * {@code inf}/{@code infinity} with a sign; no spaces, no NaN, nothing left over. {@code null} if invalid.
   */
  public static Double parseDouble(byte[] arg) {
    if (arg.length == 0 || arg.length > 128) {
      return null;
    }
    String s = new String(arg, StandardCharsets.US_ASCII);
    String lower = s.toLowerCase(Locale.ROOT);
    String unsigned = lower.startsWith("-") || lower.startsWith("+") ? lower.substring(1) : lower;
    if (unsigned.equals("inf") || unsigned.equals("infinity")) {
      return lower.startsWith("-") ? Double.NEGATIVE_INFINITY : Double.POSITIVE_INFINITY;
    }
    if (unsigned.startsWith("0x")) {
      return parseHex(s, lower, unsigned);
    }
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      boolean ok = (c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '-' || c == '+';
      if (!ok) {
        return null;
      }
    }
    try {
      double d = Double.parseDouble(s);
      // Redis's string2d refuses what strtod flags ERANGE for with an infinite or zero result (1e400, 1e-400);
      // subnormal results such as 4.9e-324 pass.
      if (Double.isNaN(d) || Double.isInfinite(d) || (d == 0 && hasNonZeroMantissa(s))) {
        return null;
      }
      return d;
    } catch (NumberFormatException e) {
      return null;
    }
  }

  private static boolean hasNonZeroMantissa(String s) {
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == 'e' || c == 'E') {
        return false;
      }
      if (c >= '1' && c <= '9') {
        return true;
      }
    }
    return false;
  }

  /** strtod's hexadecimal form, {@code 0x1p-4} or {@code 0x10} (the binary exponent is optional there). */
  private static Double parseHex(String s, String lower, String unsigned) {
    String body = unsigned.substring(2);
    if (body.isEmpty()) {
      return null;
    }
    for (int i = 0; i < body.length(); i++) {
      char c = body.charAt(i);
      boolean ok = Character.digit(c, 16) >= 0 || c == '.' || c == 'p' || c == '-' || c == '+';
      if (!ok) {
        return null;
      }
    }
    String java = (lower.startsWith("-") ? "-" : "") + "0x" + body + (body.contains("p") ? "" : "p0");
    try {
      return Double.parseDouble(java);
    } catch (NumberFormatException e) {
      return null;
    }
  }

  /** Case-insensitive ASCII comparison. */
  public static boolean is(byte[] arg, String word) {
    if (arg.length != word.length()) {
      return false;
    }
    for (int i = 0; i < arg.length; i++) {
      if (Character.toLowerCase((char) (arg[i] & 0xFF)) != Character.toLowerCase(word.charAt(i))) {
        return false;
      }
    }
    return true;
  }

  /** RedisModule's {@code RMUtil_ArgIndex}: the first index whose argument equals {@code word}, or -1. */
  public static int indexOf(java.util.List<byte[]> argv, String word) {
    for (int i = 0; i < argv.size(); i++) {
      if (is(argv.get(i), word)) {
        return i;
      }
    }
    return -1;
  }

  /** The lower-cased ASCII text of an argument. */
  public static String lower(byte[] arg) {
    return new String(arg, StandardCharsets.UTF_8).toLowerCase(Locale.ROOT);
  }

  public static String text(byte[] arg) {
    return new String(arg, StandardCharsets.UTF_8);
  }

  public static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }
}
