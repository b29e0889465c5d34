package io.bloomery.cuckoo;

import static io.bloomery.testkit.Rejections.fullReason;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomery.filter.FilterFullException;
import io.bloomery.testkit.RedisItems;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Known answers from RedisBloom's own flow tests ({@code tests/flow/test_cuckoo.py}, {@code test_resp3.py} at master
 * b28c29451ad4): exact CF.DEBUG strings, CF.INFO values,
 * sub-filter counts.
 */
class CuckooKnownAnswerTest {

  private static CuckooFilter addNumbers(CuckooFilter filter, int count) {
    for (int i = 0; i < count; i++) {
      filter.add(RedisItems.number(i));
    }
    return filter;
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(delimiter = '|', value = {
      "64 BUCKETSIZE 1                  |64 |1|20 |1|bktsize:1 buckets:64 items:1000 deletes:0 filters:18 max_iterations:20 expansion:1",
      "64 BUCKETSIZE 2                  |64 |2|20 |1|bktsize:2 buckets:32 items:1000 deletes:0 filters:17 max_iterations:20 expansion:1",
      "256 BUCKETSIZE 4 MAXITERATIONS 500|256|4|500|1|bktsize:4 buckets:64 items:1000 deletes:0 filters:4 max_iterations:500 expansion:1",
      "64 EXPANSION 2                   |64 |2|20 |2|bktsize:2 buckets:32 items:1000 deletes:0 filters:5 max_iterations:20 expansion:2",
      "64 EXPANSION 4 MAXITERATIONS 500 |64 |2|500|4|bktsize:2 buckets:32 items:1000 deletes:0 filters:3 max_iterations:500 expansion:4"})
  void testBucketSizeAndExpansion(String reserve, long capacity, int bucketSize, int maxIterations, int expansion,
      String debug) {
    CuckooFilter filter = addNumbers(CuckooFilter.create(capacity, bucketSize, maxIterations, expansion), 1000);
    for (int i = 0; i < 1000; i++) {
      assertThat(filter.mightContain(RedisItems.number(i))).isTrue();
    }
    assertThat(filter.debug()).isEqualTo(debug);
  }

  @Test
  void testMaxExpansions() {
    CuckooFilter filter = CuckooFilter.create(4);
    for (int i = 0; i < 124; i++) {
      assertThat(filter.add(RedisItems.number(i))).isTrue();
    }
    assertThat(filter.filterCount()).isEqualTo(32);
    assertThat(fullReason(() -> filter.add(RedisItems.number(2048)))).isEqualTo(FilterFullException.Reason.GROWTH_LIMIT);
    assertThat(fullReason(() -> filter.insert(List.of(RedisItems.of("x")), false)))
        .isEqualTo(FilterFullException.Reason.GROWTH_LIMIT);
    filter.setMaxExpansions(33);
    assertThat(filter.add(RedisItems.number(2048))).isTrue();
  }

  @Test
  void testCount() {
    CuckooFilter filter = CuckooFilter.create(1000);
    byte[] k1 = RedisItems.of("k1");
    assertThat(filter.mightContain(k1)).isFalse();
    assertThat(filter.add(k1)).isTrue();
    assertThat(filter.add(k1)).isTrue();
    assertThat(filter.mightContain(k1)).isTrue();
    assertThat(filter.count(k1)).isEqualTo(2);
    assertThat(filter.remove(k1)).isTrue();
    assertThat(filter.count(k1)).isEqualTo(1);
    assertThat(filter.remove(k1)).isTrue();
    assertThat(filter.count(k1)).isZero();
    assertThat(filter.remove(k1)).isFalse();
    addNumbers(filter, 100);
    for (int i = 0; i < 100; i++) {
      assertThat(filter.mightContain(RedisItems.number(i))).isTrue();
    }
  }

  @Test
  void testSetnx() {
    CuckooFilter filter = CuckooFilter.create(1000);
    assertThat(filter.addIfAbsent(RedisItems.of("k1"))).isTrue();
    assertThat(filter.addIfAbsent(RedisItems.of("k1"))).isFalse();
    assertThat(filter.count(RedisItems.of("k1"))).isEqualTo(1);
    filter.add(RedisItems.of("k1"));
    assertThat(filter.count(RedisItems.of("k1"))).isEqualTo(2);
  }

  @Test
  void testInsertDefaultsAndCapacity10000() {
    CuckooFilter f1 = CuckooFilter.create(CuckooFilter.DEFAULT_CAPACITY);
    f1.add(RedisItems.of("foo"));
    CuckooFilter f2 = CuckooFilter.create(CuckooFilter.DEFAULT_CAPACITY);
    assertThat(f2.insert(List.of(RedisItems.of("foo")), false)).containsExactly(CuckooFilter.InsertResult.INSERTED);
    assertThat(f1.debug()).isEqualTo(f2.debug());
    assertThat(f1.insert(List.of(RedisItems.of("foo")), true)).containsExactly(CuckooFilter.InsertResult.EXISTS);

    CuckooFilter f3 = CuckooFilter.create(10000);
    f3.insert(List.of(RedisItems.of("foo")), false);
    assertThat(f3.debug())
        .isEqualTo("bktsize:2 buckets:8192 items:1 deletes:0 filters:1 max_iterations:20 expansion:1");
    assertThat(f3.insert(List.of(RedisItems.of("foo"), RedisItems.of("bar"), RedisItems.of("baz")), true))
        .extracting(CuckooFilter.InsertResult::reply).containsExactly(0, 1, 1);
  }

  @Test
  void testMaxIterationsDebug() {
    assertThat(CuckooFilter.create(10, 2, 10, 1).debug())
        .isEqualTo("bktsize:2 buckets:8 items:0 deletes:0 filters:1 max_iterations:10 expansion:1");
    assertThat(CuckooFilter.create(10).debug())
        .isEqualTo("bktsize:2 buckets:8 items:0 deletes:0 filters:1 max_iterations:20 expansion:1");
  }

  @Test
  void testInfo() {
    Map<String, Long> expected = new LinkedHashMap<>();
    expected.put("Size", 1080L);
    expected.put("Number of buckets", 512L);
    expected.put("Number of filters", 1L);
    expected.put("Number of items inserted", 0L);
    expected.put("Number of items deleted", 0L);
    expected.put("Bucket size", 2L);
    expected.put("Expansion rate", 1L);
    expected.put("Max iterations", 20L);
    assertThat(CuckooFilter.create(1000).info().asMap()).containsExactlyEntriesOf(expected);
  }

  @Test
  void jedisAndResp3InfoSizes() {
    assertThat(CuckooFilter.create(10).info().size()).isEqualTo(72);
    assertThat(CuckooFilter.create(10).info().numberOfBuckets()).isEqualTo(8);
    CuckooFilter.Info tenPerBucket = CuckooFilter.create(200, 10, 20, 1).info();
    assertThat(tenPerBucket.numberOfBuckets()).isEqualTo(32);
    assertThat(tenPerBucket.size()).isEqualTo(376);
    CuckooFilter.Info noExpansion = CuckooFilter.create(9, 2, 20, 0).info();
    assertThat(noExpansion.size()).isEqualTo(64);
    assertThat(noExpansion.numberOfBuckets()).isEqualTo(4);
    assertThat(noExpansion.expansionRate()).isZero();
  }

  @Test
  void testExpansion0() {
    CuckooFilter filter = CuckooFilter.create(4, 2, 20, 0);
    for (String item : new String[] {"1", "2", "3", "4"}) {
      assertThat(filter.add(RedisItems.of(item))).isTrue();
    }
    assertThat(filter.insert(List.of(RedisItems.of("5"), RedisItems.of("6")), false))
        .extracting(CuckooFilter.InsertResult::reply).containsExactly(-1, -1);
    assertThat(fullReason(() -> filter.add(RedisItems.of("7")))).isEqualTo(FilterFullException.Reason.NO_FREE_SLOT);
    assertThat(filter.insertedCount()).isEqualTo(4);
  }

  @Test
  void docsExampleBucketSizeOneExpansionZero() {
    CuckooFilter filter = CuckooFilter.create(2, 1, 20, 0);
    List<byte[]> ones = List.of(RedisItems.of("1"), RedisItems.of("1"), RedisItems.of("1"), RedisItems.of("1"));
    assertThat(filter.insert(ones, false)).extracting(CuckooFilter.InsertResult::reply).containsExactly(1, 1, -1, -1);
  }

  @Test
  void testReserveLimits() {
    CuckooFilter big = CuckooFilter.create(67108864, 255, 65535, 32768);
    CuckooFilter.Info info = big.info();
    assertThat(info.bucketSize()).isEqualTo(255);
    assertThat(info.expansionRate()).isEqualTo(32768);
    assertThat(info.maxIterations()).isEqualTo(65535);
  }

  @Test
  void validationInRedisBloomOrder() {
    assertThatThrownBy(() -> CuckooFilter.create(1000, 2, 0, 1))
        .hasMessage("max iterations must be in [1, 65535], was 0");
    assertThatThrownBy(() -> CuckooFilter.create(1000, 2, 65536, 1)).hasMessageStartingWith("max iterations");
    assertThatThrownBy(() -> CuckooFilter.create(1000, 0, 0, 1)).hasMessageStartingWith("max iterations");
    assertThatThrownBy(() -> CuckooFilter.create(1000, 0, 20, 1))
        .hasMessage("bucket size must be in [1, 255], was 0");
    assertThatThrownBy(() -> CuckooFilter.create(1000, 256, 20, 1)).hasMessageStartingWith("bucket size");
    assertThatThrownBy(() -> CuckooFilter.create(1000, 2, 20, -1))
        .hasMessage("expansion must be in [0, 32768], was -1");
    assertThatThrownBy(() -> CuckooFilter.create(1000, 2, 20, 32769)).hasMessageStartingWith("expansion");
    assertThatThrownBy(() -> CuckooFilter.create(1))
        .hasMessage("capacity must be in [2 x bucket size, 1073741824], was 1");
    assertThatThrownBy(() -> CuckooFilter.create(3)).hasMessageStartingWith("capacity");
    assertThatThrownBy(() -> CuckooFilter.create(-1)).hasMessageStartingWith("capacity");
    assertThatThrownBy(() -> CuckooFilter.create((1L << 30) + 1)).hasMessageStartingWith("capacity");
    assertThat(CuckooFilter.create(4).bucketCount()).isEqualTo(2);
    assertThat(CuckooFilter.create(1000, 2, 20, 3).expansion()).isEqualTo(4);
  }

  @Test
  void testCompactShrinksAndKeepsEveryItem() {
    CuckooFilter filter = CuckooFilter.create(8, 2, 50, 1);
    addNumbers(filter, 100);
    int before = filter.filterCount();
    assertThat(before).isGreaterThan(1);
    filter.compact();
    assertThat(filter.filterCount()).isLessThanOrEqualTo(before);
    for (int i = 0; i < 100; i++) {
      assertThat(filter.mightContain(RedisItems.number(i))).isTrue();
    }
    assertThat(filter.deletedCount()).isZero();
  }

  @Test
  void deletesTriggerAutoCompactionThatFreesEmptiedSubFilters() {
    CuckooFilter filter = CuckooFilter.create(64, 2, 20, 1);
    addNumbers(filter, 200);
    int grown = filter.filterCount();
    assertThat(grown).isGreaterThan(2);
    for (int i = 0; i < 150; i++) {
      assertThat(filter.remove(RedisItems.number(i))).isTrue();
    }
    assertThat(filter.filterCount()).isLessThan(grown);
    assertThat(filter.insertedCount()).isEqualTo(50);
    assertThat(filter.occupiedSlots()).isEqualTo(50);
    for (int i = 150; i < 200; i++) {
      assertThat(filter.mightContain(RedisItems.number(i))).isTrue();
    }
  }
}
