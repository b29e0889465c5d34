package io.bloomery.testkit;

import java.nio.charset.StandardCharsets;

/** Items the way RedisBloom's Python tests send them: {@code str(i)} as UTF-8. */
public final class RedisItems {
  private RedisItems() {}

  public static byte[] of(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }

  public static byte[] number(long i) {
    return of(Long.toString(i));
  }
}
