package io.bloomery.bench.guard;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The benchmark's workload computes what it claims: the repeat share and the distinct count. */
class CrawlerUrlsTest {
  @Test
  void halfTheStreamRepeatsAndDistinctIsExact() {
    CrawlerUrls urls = new CrawlerUrls(1, 0.5);
    Set<ByteBuffer> seen = new HashSet<>();
    int n = 200_000;
    int repeats = 0;
    for (int i = 0; i < n; i++) {
      if (!seen.add(ByteBuffer.wrap(urls.next()))) {
        repeats++;
      }
    }
    assertThat(seen).hasSize((int) urls.distinct());
    assertThat(repeats + urls.distinct()).isEqualTo(n);
    // Binomial(200000, 0.5): 99.99% of runs lie within 0.5 +- 0.0044; the seed is fixed anyway.
    assertThat((double) repeats / n).isBetween(0.4956, 0.5044);
  }

  @Test
  void sameSeedSameStream() {
    CrawlerUrls a = new CrawlerUrls(7, 0.5);
    CrawlerUrls b = new CrawlerUrls(7, 0.5);
    for (int i = 0; i < 1_000; i++) {
      assertThat(a.next()).isEqualTo(b.next());
    }
  }
}
