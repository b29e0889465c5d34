package io.bloomery.scalable;

import static io.bloomery.testkit.Rejections.fullReason;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomery.filter.FilterFullException;
import io.bloomery.testkit.RedisItems;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Known answers from RedisBloom's own flow tests ({@code tests/flow/test_overall.py} at master b28c29451ad4, quoted
 * in RedisBloom's tests): exact BF.DEBUG lines, BF.INFO values and layer counts.
 */
class ScalableBloomKnownAnswerTest {

  private static ScalableBloomFilter addNumbers(ScalableBloomFilter filter, int count) {
    for (int i = 0; i < count; i++) {
      filter.add(RedisItems.number(i));
    }
    return filter;
  }

  @Test
  void testDebugSmallFilter() {
    ScalableBloomFilter filter = addNumbers(ScalableBloomFilter.create(10, 0.01), 100);
    assertThat(filter.debug()).containsExactly(
        "size:99",
        "bytes:16 bits:128 hashes:8 hashwidth:64 capacity:10 size:10 ratio:0.005",
        "bytes:32 bits:256 hashes:9 hashwidth:64 capacity:20 size:20 ratio:0.0025",
        "bytes:72 bits:576 hashes:10 hashwidth:64 capacity:40 size:40 ratio:0.00125",
        "bytes:160 bits:1280 hashes:11 hashwidth:64 capacity:80 size:29 ratio:0.000625");
    assertThat(filter.insertedCount()).isEqualTo(99);
  }

  @Test
  void testDebugSixLayers() {
    ScalableBloomFilter filter = addNumbers(ScalableBloomFilter.create(100, 0.001), 4000);
    assertThat(filter.debug()).containsExactly(
        "size:3997",
        "bytes:200 bits:1600 hashes:11 hashwidth:64 capacity:100 size:100 ratio:0.0005",
        "bytes:432 bits:3456 hashes:12 hashwidth:64 capacity:200 size:200 ratio:0.00025",
        "bytes:936 bits:7488 hashes:13 hashwidth:64 capacity:400 size:400 ratio:0.000125",
        "bytes:2016 bits:16128 hashes:14 hashwidth:64 capacity:800 size:800 ratio:6.25e-05",
        "bytes:4320 bits:34560 hashes:15 hashwidth:64 capacity:1600 size:1600 ratio:3.125e-05",
        "bytes:9216 bits:73728 hashes:16 hashwidth:64 capacity:3200 size:897 ratio:1.5625e-05");
  }

  @Test
  void testInsertWithExplicitParameters() {
    ScalableBloomFilter filter = ScalableBloomFilter.create(50000, 0.001, 2);
    assertThat(filter.add(RedisItems.of("foo"))).isTrue();
    assertThat(filter.debug()).containsExactly(
        "size:1", "bytes:98880 bits:791040 hashes:11 hashwidth:64 capacity:50000 size:1 ratio:0.0005");
    // then BF.INSERT f ERROR 0.1 ITEMS foo bar baz -> [0,1,1]: options of an existing filter are ignored
    assertThat(filter.add(RedisItems.of("foo"))).isFalse();
    assertThat(filter.add(RedisItems.of("bar"))).isTrue();
    assertThat(filter.add(RedisItems.of("baz"))).isTrue();
  }

  @ParameterizedTest(name = "expansion {0} -> {1} filters")
  @CsvSource({"1, 23", "2, 5", "4, 4"})
  void testExpansionLayerCounts(int expansion, int filters) {
    ScalableBloomFilter filter = addNumbers(ScalableBloomFilter.create(4, 0.01, expansion), 100);
    for (int i = 0; i < 100; i++) {
      assertThat(filter.mightContain(RedisItems.number(i))).isTrue();
    }
    assertThat(filter.filterCount()).isEqualTo(filters);
    assertThat(filter.info().numberOfFilters()).isEqualTo(filters);
  }

  @Test
  void testInfo() {
    ScalableBloomFilter filter = ScalableBloomFilter.create(100, 0.001);
    Map<String, Long> expected = new LinkedHashMap<>();
    expected.put("Capacity", 100L);
    expected.put("Size", 296L);
    expected.put("Number of filters", 1L);
    expected.put("Number of items inserted", 0L);
    expected.put("Expansion rate", 2L);
    assertThat(filter.info().asMap()).containsExactlyEntriesOf(expected);
  }

  @Test
  void docsExampleInfoAfterOneAdd() {
    ScalableBloomFilter filter = ScalableBloomFilter.create(
        ScalableBloomFilter.DEFAULT_CAPACITY, ScalableBloomFilter.DEFAULT_ERROR_RATE);
    filter.add(RedisItems.of("x"));
    assertThat(filter.info()).isEqualTo(new ScalableBloomFilter.Info(100, 240, 1, 1, 2L));
  }

  @Test
  void testNonscalingErr() {
    ScalableBloomFilter filter = ScalableBloomFilter.createNonScaling(3, ScalableBloomFilter.DEFAULT_ERROR_RATE);
    for (String item : new String[] {"a", "b", "c"}) {
      assertThat(filter.add(RedisItems.of(item))).isTrue();
    }
    for (String item : new String[] {"a", "b", "c"}) {
      assertThat(filter.add(RedisItems.of(item))).isFalse(); // present items answer 0 even when full
    }
    assertThat(fullReason(() -> filter.add(RedisItems.of("d")))).isEqualTo(FilterFullException.Reason.AT_CAPACITY);
    Map<String, Long> expected = new LinkedHashMap<>();
    expected.put("Capacity", 3L);
    expected.put("Size", 104L);
    expected.put("Number of filters", 1L);
    expected.put("Number of items inserted", 3L);
    expected.put("Expansion rate", null);
    assertThat(filter.info().asMap()).containsExactlyEntriesOf(expected);
    assertThat(filter.options()).isEqualTo(13);
    assertThat(filter.growth()).isEqualTo(2);
  }

  @Test
  void expansionZeroIsNonScalingWithGrowthZero() {
    ScalableBloomFilter filter = ScalableBloomFilter.create(3, 0.01, 0);
    assertThat(filter.isScaling()).isFalse();
    assertThat(filter.growth()).isZero();
    assertThat(filter.debug()).containsExactly(
        "size:0", "bytes:8 bits:64 hashes:7 hashwidth:64 capacity:3 size:0 ratio:0.01");
  }

  @Test
  void testIssue178SizeWithoutAllocating() {
    ScalableBloomFilter.Layer layer = ScalableBloomFilter.plannedFirstLayer(300_000_000L, 0.000001, false);
    assertThat(32 + 64 + layer.bytes()).isEqualTo(1_132_420_232L);
    assertThat(layer.capacity()).isEqualTo(300_000_000L);
  }

  @Test
  void aLayerThatCannotBeSizedIsRefusedBeforeAndAtCreation() {
    // half of the smallest double underflows to 0: neither the plan nor the filter can be sized
    assertThatThrownBy(() -> ScalableBloomFilter.plannedFirstLayer(100, 4.9e-324, false))
        .isExactlyInstanceOf(IllegalArgumentException.class).hasMessageContaining("no layer can be sized");
    assertThatThrownBy(() -> ScalableBloomFilter.create(100, 4.9e-324))
        .isExactlyInstanceOf(IllegalArgumentException.class).hasMessageContaining("no layer can be sized");
    // unhalved (NONSCALING) it is sizable: about 1549 bits per item
    ScalableBloomFilter.Layer layer = ScalableBloomFilter.plannedFirstLayer(100, 4.9e-324, true);
    assertThat(layer.bits()).isGreaterThan(100 * 1500L);
  }

  @Test
  void testVeryHighErrorRateIsCappedAndWorks() {
    for (double rate : new double[] {0.99, 0.95, 0.9999999999999999}) {
      ScalableBloomFilter filter = ScalableBloomFilter.createNonScaling(100, rate);
      assertThat(filter.add(RedisItems.of("1"))).isTrue();
      assertThat(filter.layers().get(0).errorRate()).isEqualTo(0.25);
    }
  }

  @Test
  void validationInRedisBloomOrder() {
    assertThatThrownBy(() -> ScalableBloomFilter.create(0, 0))
        .isExactlyInstanceOf(IllegalArgumentException.class).hasMessage("error rate must be in (0, 1), was 0.0");
    assertThatThrownBy(() -> ScalableBloomFilter.create(100, 1)).hasMessageStartingWith("error rate");
    assertThatThrownBy(() -> ScalableBloomFilter.create(100, Double.NaN)).hasMessageStartingWith("error rate");
    assertThatThrownBy(() -> ScalableBloomFilter.create(0, 0.01))
        .hasMessage("capacity must be in [1, 1073741824], was 0");
    assertThatThrownBy(() -> ScalableBloomFilter.create((1L << 30) + 1, 0.01)).hasMessageStartingWith("capacity");
    assertThatThrownBy(() -> ScalableBloomFilter.create(1, 0.1, -1))
        .hasMessage("expansion must be in [0, 32768], was -1");
    assertThatThrownBy(() -> ScalableBloomFilter.create(1, 0.1, 32769)).hasMessageStartingWith("expansion");
    assertThat(ScalableBloomFilter.create(1L << 30 >> 10, 0.5, 32768).growth()).isEqualTo(32768);
  }

  @Test
  void docsScanDumpExampleLayer() {
    ScalableBloomFilter filter = ScalableBloomFilter.create(10, 0.1);
    filter.add(RedisItems.of("item1"));
    ScalableBloomFilter.Layer layer = filter.layers().get(0);
    assertThat(layer.bytes()).isEqualTo(8);
    assertThat(layer.bits()).isEqualTo(64);
    assertThat(layer.hashes()).isEqualTo(5);
    assertThat(layer.errorRate()).isEqualTo(0.05);
    assertThat(layer.bitsPerEntry()).isEqualTo(-Math.log(0.05) / 0.480453013918201);
  }

  @Test
  void errorRateUnderflowEndsInProblemInserting() {
    // capacity 1, expansion 1: every add that is not a false positive needs a new layer at half the error.
    ScalableBloomFilter filter = ScalableBloomFilter.create(1, 0.5, 1);
    FilterFullException failure = null;
    for (int i = 0; i < 5000 && failure == null; i++) {
      try {
        filter.add(RedisItems.number(i));
      } catch (FilterFullException e) {
        failure = e;
      }
    }
    assertThat(failure).isNotNull();
    assertThat(failure.reason()).isEqualTo(FilterFullException.Reason.GROWTH_LIMIT);
    int layers = filter.filterCount();
    assertThat(filter.layers().get(layers - 1).errorRate()).isGreaterThan(0);
    assertThat(filter.layers().get(layers - 1).errorRate() * 0.5).isZero();
    assertThat(filter.mightContain(RedisItems.number(0))).isTrue();
  }
}
