package io.bloomery.redisbloom;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomery.cuckoo.CuckooFilter;
import io.bloomery.format.RedisBloomDump;
import io.bloomery.scalable.ScalableBloomFilter;
import io.bloomery.testkit.GoldenDumps;
import io.bloomery.testkit.RedisItems;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Byte-for-byte comparison with dumps written by <b>RedisBloom's own C code</b> ({@code src/sb.c},
 * {@code deps/bloom/bloom.c}, {@code src/cuckoo.c}, {@code src/cf.c} at master b28c29451ad4, compiled with a stub
 * allocator by {@code core/src/test/c/redisbloom-harness/build-and-dump.sh}; see the golden README). Each row
 * replays the same commands through Bloomery and requires the identical SCANDUMP replies, and loads the C dump
 * to the same filter.
 */
class RedisBloomCGoldenTest {

  private static List<RedisBloomDump.Chunk> cDump(String file) {
    return GoldenDumps.decode(GoldenDumps.read("from-c/" + file));
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource({
      "bf-reserve-0.1-10-item1.scandump, 0.1, 10, 2, item1, 0",
      "bf-reserve-0.01-10-str0-99.scandump, 0.01, 10, 2, '', 100",
      "bf-reserve-0.01-4-expansion4-str0-99.scandump, 0.01, 4, 4, '', 100",
      "bf-reserve-0.01-5-foo0-49.scandump, 0.01, 5, 2, foo, 50",
      "bf-reserve-0.01-3-expansion0-abc.scandump, 0.01, 3, 0, abc, 3",
      "bf-reserve-0.001-100-str0-3999.scandump, 0.001, 100, 2, '', 4000",
      "bf-reserve-0.01-4-expansion1-str0-99.scandump, 0.01, 4, 1, '', 100"})
  void scalableBloomMatchesRedisBloomsC(String file, double error, long capacity, int expansion, String prefix,
      int count) {
    ScalableBloomFilter filter = ScalableBloomFilter.create(capacity, error, expansion);
    if (count == 0) {
      filter.add(RedisItems.of(prefix));
    }
    for (int i = 0; i < count; i++) {
      filter.add(RedisItems.of(prefix + i));
    }
    assertThat(GoldenDumps.encode(RedisBloomDump.scanDumpAll(filter)))
        .isEqualTo(GoldenDumps.read("from-c/" + file));
    ScalableBloomFilter loaded = RedisBloomDump.loadBloom(cDump(file));
    assertThat(loaded.debug()).isEqualTo(filter.debug());
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource({
      "cf-reserve-64-bucketsize2-str0-999.scandump, 64, 2, 20, 1, 1000, 0, 0",
      "cf-reserve-64-expansion2-str0-999.scandump, 64, 2, 20, 2, 1000, 0, 0",
      "cf-reserve-1000-k1-deleted.scandump, 1000, 2, 20, 1, 0, 1, 0",
      "cf-reserve-64-bucketsize1-str0-999.scandump, 64, 1, 20, 1, 1000, 0, 0",
      "cf-reserve-256-bucketsize4-maxiter500-str0-999.scandump, 256, 4, 500, 1, 1000, 0, 0",
      "cf-reserve-64-expansion2-str0-999-del0-699.scandump, 64, 2, 20, 2, 1000, 0, 700",
      "cf-reserve-8-maxiter50-str0-99-del0-49.scandump, 8, 2, 50, 1, 100, 0, 50"})
  void cuckooMatchesRedisBloomsC(String file, long capacity, int bucketSize, int maxIterations, int expansion,
      int count, int k1Deleted, int deletes) {
    CuckooFilter filter = CuckooFilter.create(capacity, bucketSize, maxIterations, expansion);
    filter.setMaxExpansions(CuckooFilter.MAX_MAX_EXPANSIONS); // the C harness calls CuckooFilter_Insert directly
    for (int i = 0; i < count; i++) {
      filter.add(RedisItems.number(i));
    }
    if (k1Deleted > 0) {
      filter.add(RedisItems.of("k1"));
      filter.add(RedisItems.of("k1"));
      filter.remove(RedisItems.of("k1"));
    }
    for (int i = 0; i < deletes; i++) {
      filter.remove(RedisItems.number(i));
    }
    assertThat(GoldenDumps.encode(RedisBloomDump.scanDumpAll(filter)))
        .isEqualTo(GoldenDumps.read("from-c/" + file));
    CuckooFilter loaded = RedisBloomDump.loadCuckoo(cDump(file));
    assertThat(loaded.debug()).isEqualTo(filter.debug());
  }
}
