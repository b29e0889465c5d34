package io.bloomery.bench.guard;

import java.nio.charset.StandardCharsets;
import java.util.SplittableRandom;

/**
 * The crawler workload: a stream of URLs in which a given share of the items repeat an earlier URL
 * (uniformly chosen among those already emitted), the rest are new. Deterministic for a seed.
 *
 * <p>URL {@code k} is {@code https://host<k mod 4096>.example.com/section/<k / 7 mod 97>/page-<k>
 * ?ref=<scrambled k>}, about 70 bytes, like links extracted from crawled pages.
 */
public final class CrawlerUrls {
  private final SplittableRandom random;
  private final double repeatShare;
  private long distinct;

  public CrawlerUrls(long seed, double repeatShare) {
    if (!(repeatShare >= 0 && repeatShare < 1)) {
      throw new IllegalArgumentException("repeatShare must be in [0, 1), got " + repeatShare);
    }
    this.random = new SplittableRandom(seed);
    this.repeatShare = repeatShare;
  }

  /** The next URL of the stream, as UTF-8 bytes. */
  public byte[] next() {
    long k;
    if (distinct > 0 && random.nextDouble() < repeatShare) {
      k = random.nextLong(distinct);
    } else {
      k = distinct++;
    }
    return url(k).getBytes(StandardCharsets.UTF_8);
  }

  /** How many distinct URLs the stream has emitted so far. */
  public long distinct() {
    return distinct;
  }

  static String url(long k) {
    long scrambled = (k * 0x9E3779B97F4A7C15L) >>> 20;
    return "https://host" + (k & 4095) + ".example.com/section/" + (k / 7 % 97) + "/page-" + k
        + "?ref=" + Long.toHexString(scrambled);
  }
}
