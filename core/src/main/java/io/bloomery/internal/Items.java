package io.bloomery.internal;

import java.nio.charset.StandardCharsets;
import java.util.Objects;

/** How the typed overloads of every kind turn an item into bytes (core only; not exported). */
public final class Items {
  private Items() {}

  /** UTF-8 bytes of {@code text}, without normalisation; {@code null} is rejected naming {@code argument}. */
  public static byte[] utf8(CharSequence text, String argument) {
    Objects.requireNonNull(text, argument);
    return text.toString().getBytes(StandardCharsets.UTF_8);
  }

  /** The 8 little-endian bytes of {@code value}. */
  public static byte[] littleEndian(long value) {
    byte[] bytes = new byte[Long.BYTES];
    for (int i = 0; i < Long.BYTES; i++) {
      bytes[i] = (byte) (value >>> (8 * i));
    }
    return bytes;
  }
}
