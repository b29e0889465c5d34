package io.bloomery.redisbloom;

import java.nio.charset.StandardCharsets;

/** Items the way RedisBloom's Python tests send them: {@code str(i)} as UTF-8. */
final class Items {
  private Items() {}

  static byte[] of(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }

  static byte[] number(long i) {
    return of(Long.toString(i));
  }
}
