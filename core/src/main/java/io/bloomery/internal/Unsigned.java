package io.bloomery.internal;

/** C's conversions between {@code uint64_t} (held in a {@code long}) and {@code double}, as RedisBloom's kinds use them. */
public final class Unsigned {
  private Unsigned() {}

  /** {@code (double) value} for {@code value} read as unsigned, rounded as C rounds it. */
  public static double toDouble(long value) {
    if (value >= 0) {
      return value;
    }
    return ((value >>> 1) | (value & 1)) * 2.0;
  }
}
