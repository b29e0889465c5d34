package io.bloomery.server.resp;

import io.netty.buffer.ByteBuf;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * Writes {@link Reply} frames in RESP2 or RESP3. RESP3-only kinds take the RESP2 form Redis gives them: booleans
 * become {@code :1}/{@code :0}, doubles and verbatim strings bulk strings, maps flat arrays, sets arrays, and both
 * nulls {@code $-1} / {@code *-1}.
 */
public final class RespEncoder {
  private static final byte[] CRLF = {'\r', '\n'};

  private RespEncoder() {}

  /** Appends {@code reply} to {@code out} in protocol 2 or 3. */
  public static void encode(Reply reply, int protocol, ByteBuf out) {
    boolean resp3 = protocol >= 3;
    switch (reply) {
      case Reply.Simple s -> line(out, '+', s.text());
      case Reply.Error e -> line(out, '-', e.text().replace('\r', ' ').replace('\n', ' '));
      case Reply.Int i -> integer(out, i.value());
      case Reply.Bulk b -> bulk(out, b.bytes());
      case Reply.Nil n -> out.writeBytes(resp3 ? NULL3 : NULL_BULK);
      case Reply.NilArray n -> out.writeBytes(resp3 ? NULL3 : NULL_ARRAY);
      case Reply.Array a -> aggregate(out, '*', a.elements(), protocol);
      case Reply.SetReply s -> aggregate(out, resp3 ? '~' : '*', s.elements(), protocol);
      case Reply.MapReply m -> {
        if (resp3) {
          header(out, '%', m.keysAndValues().size() / 2);
          for (Reply r : m.keysAndValues()) {
            encode(r, protocol, out);
          }
        } else {
          aggregate(out, '*', m.keysAndValues(), protocol);
        }
      }
      case Reply.Bool b -> {
        if (resp3) {
          out.writeBytes(b.value() ? TRUE3 : FALSE3);
        } else {
          out.writeBytes(b.value() ? SMALL_INTS[1] : SMALL_INTS[0]);
        }
      }
      case Reply.Dbl d -> {
        if (resp3) {
          line(out, ',', formatDouble(d.value()));
        } else {
          bulk(out, formatDouble(d.value()).getBytes(StandardCharsets.US_ASCII));
        }
      }
      case Reply.Constant c -> out.writeBytes(c.bytes(protocol));
      case Reply.Verbatim v -> {
        if (resp3) {
          byte[] body = (v.format() + ":" + v.text()).getBytes(StandardCharsets.UTF_8);
          header(out, '=', body.length);
          out.writeBytes(body);
          out.writeBytes(CRLF);
        } else {
          bulk(out, v.text().getBytes(StandardCharsets.UTF_8));
        }
      }
    }
  }

  /** {@code :0\r\n} … {@code :15\r\n}, the integer replies nearly every command gives. */
  private static final byte[][] SMALL_INTS = new byte[16][];

  static {
    for (int i = 0; i < SMALL_INTS.length; i++) {
      SMALL_INTS[i] = (":" + i + "\r\n").getBytes(StandardCharsets.US_ASCII);
    }
  }

  private static void integer(ByteBuf out, long value) {
    if (value >= 0 && value < SMALL_INTS.length) {
      out.writeBytes(SMALL_INTS[(int) value]);
    } else {
      out.writeByte(':');
      decimal(out, value);
      out.writeBytes(CRLF);
    }
  }

  private static final byte[] NULL_BULK = "$-1\r\n".getBytes(StandardCharsets.US_ASCII);
  private static final byte[] NULL_ARRAY = "*-1\r\n".getBytes(StandardCharsets.US_ASCII);
  private static final byte[] NULL3 = "_\r\n".getBytes(StandardCharsets.US_ASCII);
  private static final byte[] TRUE3 = "#t\r\n".getBytes(StandardCharsets.US_ASCII);
  private static final byte[] FALSE3 = "#f\r\n".getBytes(StandardCharsets.US_ASCII);

  private static void aggregate(ByteBuf out, char type, List<Reply> elements, int protocol) {
    header(out, type, elements.size());
    for (Reply r : elements) {
      encode(r, protocol, out);
    }
  }

  private static void header(ByteBuf out, char type, long count) {
    out.writeByte(type);
    decimal(out, count);
    out.writeBytes(CRLF);
  }

  /**
   * Writes {@code value} as {@link Long#toString(long)} spells it, straight into {@code out}: every integer reply,
   * bulk length and aggregate size passes here, and a String for each cost a share of the replies' encoding.
   */
  static void decimal(ByteBuf out, long value) {
    if (value == Long.MIN_VALUE) { // the one value whose negation does not fit
      out.writeBytes(LONG_MIN);
      return;
    }
    if (value < 0) {
      out.writeByte('-');
      value = -value;
    }
    int digits = 1;
    for (long rest = value; rest >= 10; rest /= 10) {
      digits++;
    }
    int start = out.writerIndex();
    out.ensureWritable(digits);
    for (int i = start + digits - 1; i >= start; i--) {
      out.setByte(i, (int) ('0' + value % 10));
      value /= 10;
    }
    out.writerIndex(start + digits);
  }

  private static final byte[] LONG_MIN = Long.toString(Long.MIN_VALUE).getBytes(StandardCharsets.US_ASCII);

  private static void bulk(ByteBuf out, byte[] bytes) {
    header(out, '$', bytes.length);
    out.writeBytes(bytes);
    out.writeBytes(CRLF);
  }

  private static void line(ByteBuf out, char type, String text) {
    out.writeByte(type);
    out.writeCharSequence(text, StandardCharsets.UTF_8);
    out.writeBytes(CRLF);
  }

  /** The fewest significant digits that read back as {@code d} (Java's toString keeps at least two). */
  private static BigDecimal shortestDigits(double d) {
    BigDecimal exact = new BigDecimal(d);
    for (int digits = 1; digits <= 17; digits++) {
      BigDecimal rounded = exact.round(new java.math.MathContext(digits, java.math.RoundingMode.HALF_EVEN));
      if (rounded.doubleValue() == d) {
        return rounded.stripTrailingZeros();
      }
    }
    return new BigDecimal(Double.toString(d)).stripTrailingZeros();
  }

  /**
   * A double as Redis 7.2+ prints it (shortest text that reads back to the same value): {@code 1}, {@code 0.9},
   * {@code 1e-05}, {@code inf}, {@code -inf}, {@code nan}.
   */
  public static String formatDouble(double d) {
    if (Double.isNaN(d)) {
      return "nan";
    }
    if (Double.isInfinite(d)) {
      return d > 0 ? "inf" : "-inf";
    }
    if (d == 0) {
      return (1 / d < 0) ? "-0" : "0";
    }
    BigDecimal shortest = shortestDigits(d);
    int exponent = shortest.precision() - shortest.scale() - 1;
    if (exponent >= -5 && exponent < 21) {
      return shortest.toPlainString();
    }
    String digits = shortest.unscaledValue().abs().toString();
    StringBuilder sb = new StringBuilder();
    if (shortest.signum() < 0) {
      sb.append('-');
    }
    sb.append(digits.charAt(0));
    if (digits.length() > 1) {
      sb.append('.').append(digits, 1, digits.length());
    }
    sb.append('e').append(exponent < 0 ? '-' : '+');
    int abs = Math.abs(exponent);
    if (abs < 10) {
      sb.append('0');
    }
    return sb.append(abs).toString();
  }
}
