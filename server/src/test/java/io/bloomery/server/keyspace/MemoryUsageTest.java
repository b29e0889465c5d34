package io.bloomery.server.keyspace;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomery.cuckoo.CuckooFilter;
import io.bloomery.scalable.ScalableBloomFilter;
import io.bloomery.sketch.CountMinSketch;
import io.bloomery.sketch.DecayRandom;
import io.bloomery.sketch.TopK;
import org.junit.jupiter.api.Test;

/**
 * MEMORY USAGE against the figures Redis 8.0.2 (MALLOC=libc) + RedisBloom b28c294 answered for the same commands on
 * 2026-12-02 (the reference server of {@code tools/conformance/README.md}).
 */
class MemoryUsageTest {
  private static long usage(String key, Object value) {
    return MemoryUsage.of(Key.of(key.getBytes(java.nio.charset.StandardCharsets.UTF_8)), value);
  }

  @Test
  void equalsRedisBloomOnTheReferenceServer() {
    // CMS.INITBYDIM cms1 20 5; CMS.INITBYPROB cmsp 0.001 0.01
    assertThat(usage("cms1", CountMinSketch.initByDimensions(20, 5))).isEqualTo(480);
    assertThat(usage("cmsp", CountMinSketch.initByProbability(0.001, 0.01))).isEqualTo(56080);
    // CF.RESERVE cf 1000, and under a 20- and a 40-byte name
    assertThat(usage("cf", CuckooFilter.create(1000))).isEqualTo(1128);
    assertThat(usage("k".repeat(20), CuckooFilter.create(1000))).isEqualTo(1128);
    assertThat(usage("k".repeat(40), CuckooFilter.create(1000))).isEqualTo(1160);
    // BF.RESERVE bf 0.05 1000
    assertThat(usage("bf", ScalableBloomFilter.create(1000, 0.05))).isEqualTo(1104);
    // BF.RESERVE bfy 0.01 10 EXPANSION 2, then BF.MADD bfy 1..80 in steps (4 layers)
    ScalableBloomFilter scaled = ScalableBloomFilter.create(10, 0.01, 2);
    for (int i = 1; i <= 80; i++) {
      scaled.add(Integer.toString(i).getBytes(java.nio.charset.StandardCharsets.UTF_8));
    }
    assertThat(scaled.info().numberOfFilters()).isEqualTo(4);
    assertThat(usage("bfy", scaled)).isEqualTo(616);
    // TOPK.RESERVE tk 10; TOPK.RESERVE tk2 50 100 5 0.9
    assertThat(usage("tk", TopK.reserve(10, DecayRandom.glibc(1)))).isEqualTo(2824);
    assertThat(usage("tk2", TopK.reserve(50, 100, 5, 0.9, DecayRandom.glibc(1)))).isEqualTo(7336);
  }

  @Test
  void keyOverheadFollowsSdsHeadersAndMallocChunks() {
    assertThat(MemoryUsage.keyOverhead(2)).isEqualTo(24 + 24);
    assertThat(MemoryUsage.keyOverhead(22)).isEqualTo(24 + 24); // 1 + 22 + 1 = 24 fits the smallest chunk
    assertThat(MemoryUsage.keyOverhead(23)).isEqualTo(40 + 24);
    assertThat(MemoryUsage.keyOverhead(32)).isEqualTo(40 + 24); // sds type 8: 3 + 32 + 1 = 36
    assertThat(MemoryUsage.usableSize(1)).isEqualTo(24);
    assertThat(MemoryUsage.usableSize(41)).isEqualTo(56);
  }
}
