package io.bloomery.internal;

import java.math.BigDecimal;
import java.math.MathContext;
import java.math.RoundingMode;

/** C's printf {@code %g} (precision 6), which BF.DEBUG uses for a layer's error ratio; Java's {@code %g} differs. */
public final class CFormat {
  private static final int PRECISION = 6;

  private CFormat() {}

  public static String g(double value) {
    if (Double.isNaN(value)) {
      return "nan";
    }
    if (Double.isInfinite(value)) {
      return value > 0 ? "inf" : "-inf";
    }
    if (value == 0) {
      return (1 / value < 0) ? "-0" : "0";
    }
    BigDecimal rounded = new BigDecimal(value).round(new MathContext(PRECISION, RoundingMode.HALF_EVEN));
    int exponent = rounded.precision() - rounded.scale() - 1;
    if (exponent < -4 || exponent >= PRECISION) {
      BigDecimal mantissa = rounded.movePointLeft(exponent).stripTrailingZeros();
      String digits = mantissa.scale() <= 0 ? mantissa.toBigInteger().toString() : mantissa.toPlainString();
      String sign = exponent < 0 ? "-" : "+";
      int magnitude = Math.abs(exponent);
      return digits + "e" + sign + (magnitude < 10 ? "0" : "") + magnitude;
    }
    BigDecimal plain = rounded.stripTrailingZeros();
    return plain.scale() < 0 ? plain.toBigInteger().toString() : plain.toPlainString();
  }
}
