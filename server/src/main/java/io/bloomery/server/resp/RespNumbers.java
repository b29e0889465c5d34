package io.bloomery.server.resp;

/**
 * Redis's {@code string2ll}: an optional {@code -}, then decimal digits without leading zeros ({@code "0"} alone is
 * fine, {@code "-0"} is not), no sign {@code +}, no spaces, within int64. Used for the protocol's own lengths and for
 * every integer argument, so both reject exactly what Redis rejects.
 */
public final class RespNumbers {
  private RespNumbers() {}

  /** Parses {@code bytes[from, to)}; throws {@link NumberFormatException} when Redis's {@code string2ll} fails. */
  public static long parseLong(byte[] bytes, int from, int to) {
    int len = to - from;
    if (len <= 0 || len > 20) {
      throw new NumberFormatException("not an integer");
    }
    if (len == 1 && bytes[from] == '0') {
      return 0;
    }
    int i = from;
    boolean negative = false;
    if (bytes[i] == '-') {
      negative = true;
      i++;
      if (i == to) {
        throw new NumberFormatException("not an integer");
      }
    }
    if (bytes[i] < '1' || bytes[i] > '9') {
      throw new NumberFormatException("not an integer");
    }
    long value = 0; // accumulated as a negative number so that Long.MIN_VALUE fits
    for (; i < to; i++) {
      int digit = bytes[i] - '0';
      if (digit < 0 || digit > 9) {
        throw new NumberFormatException("not an integer");
      }
      if (value < (Long.MIN_VALUE + digit) / 10) {
        throw new NumberFormatException("out of range");
      }
      value = value * 10 - digit;
    }
    if (!negative) {
      if (value == Long.MIN_VALUE) {
        throw new NumberFormatException("out of range");
      }
      return -value;
    }
    return value;
  }

  /** {@link #parseLong(byte[], int, int)} over the whole array. */
  public static long parseLong(byte[] bytes) {
    return parseLong(bytes, 0, bytes.length);
  }
}
