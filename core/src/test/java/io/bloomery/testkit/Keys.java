package io.bloomery.testkit;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Deterministic key generators. Every key is a pure function of (seed, index), and keys with
 * distinct indexes are distinct (the index is embedded), so members ({@code [0, n)}) and known
 * non-members ({@code [n, n + q)}) never overlap. No global or time-based randomness.
 */
public final class Keys {

  private static final String[] HOST_WORDS = {
    "news", "shop", "blog", "wiki", "docs", "cdn", "forum", "media", "store", "maps", "mail", "static"
  };
  private static final String[] PATH_WORDS = {
    "article", "product", "category", "user", "page", "tag", "archive", "search", "item", "post", "view"
  };

  private Keys() {}

  /**
   * A synthetic crawl URL of roughly 80 bytes (between ~65 and ~100), for example {@code
   * https://www.shop-4821.example.org/article/category/2024/0000000012345?ref=a81f02c9d6e1b734}.
   */
  public static String url(long seed, long index) {
    SplittableRandom random = new SplittableRandom(seed * 0x9E3779B97F4A7C15L + index);
    StringBuilder url = new StringBuilder(96);
    url.append("https://www.")
        .append(HOST_WORDS[random.nextInt(HOST_WORDS.length)])
        .append('-')
        .append(random.nextInt(10_000))
        .append(".example.org/")
        .append(PATH_WORDS[random.nextInt(PATH_WORDS.length)])
        .append('/');
    int extraSegments = random.nextInt(3);
    for (int s = 0; s < extraSegments; s++) {
      url.append(PATH_WORDS[random.nextInt(PATH_WORDS.length)]).append('/');
    }
    String number = Long.toString(index);
    for (int pad = number.length(); pad < 13; pad++) {
      url.append('0');
    }
    url.append(number)
        .append("?ref=")
        .append(Long.toHexString(random.nextLong() | Long.MIN_VALUE));
    return url.toString();
  }

  /** The UTF-8 bytes of {@link #url}. */
  public static byte[] urlBytes(long seed, long index) {
    return url(seed, index).getBytes(StandardCharsets.UTF_8);
  }

  /** {@code count} URLs with indexes {@code from .. from+count-1}, as UTF-8 bytes. */
  public static List<byte[]> urls(long seed, long from, int count) {
    List<byte[]> keys = new ArrayList<>(count);
    for (int i = 0; i < count; i++) {
      keys.add(urlBytes(seed, from + i));
    }
    return keys;
  }

  /**
   * Random bytes of length 8 to {@code 8 + extraLength}: the index as 8 little-endian bytes (making
   * keys distinct) followed by seeded random bytes. Exercises every byte value, including 0.
   */
  public static byte[] binary(long seed, long index, int extraLength) {
    SplittableRandom random = new SplittableRandom(seed ^ (index * 0xBF58476D1CE4E5B9L));
    byte[] key = new byte[8 + random.nextInt(extraLength + 1)];
    for (int i = 0; i < 8; i++) {
      key[i] = (byte) (index >>> (8 * i));
    }
    for (int i = 8; i < key.length; i++) {
      key[i] = (byte) random.nextInt(256);
    }
    return key;
  }
}
