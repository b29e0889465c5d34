package io.bloomery.server.keyspace;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomery.aging.AgePartitionedFilter;
import io.bloomery.blocked.BlockedBloomFilter;
import io.bloomery.blocked.ScalableBlockedBloomFilter;
import io.bloomery.counting.CountingBloomFilter;
import io.bloomery.cuckoo.CuckooFilter;
import io.bloomery.filter.BloomFilter;
import io.bloomery.filter.FilterKind;
import io.bloomery.hash.Protocols;
import io.bloomery.scalable.ScalableBloomFilter;
import io.bloomery.sketch.CountMinSketch;
import io.bloomery.sketch.TopK;
import java.time.Duration;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class ValueTypeTest {
  /** One value of every class the keyspace holds, and the type the table must give it. */
  private static Map<Object, ValueType> samples() {
    Map<Object, ValueType> m = new LinkedHashMap<>();
    m.put(ScalableBloomFilter.create(100, 0.01), ValueType.SCALABLE_BLOOM);
    m.put(CuckooFilter.create(1024, 2, 20, 1), ValueType.CUCKOO);
    m.put(CountMinSketch.initByDimensions(100, 4), ValueType.COUNT_MIN_SKETCH);
    m.put(TopK.reserve(5, 16, 4, 0.9, StateSeededDecay.INSTANCE), ValueType.TOP_K);
    m.put(io.bloomery.sketch.TDigest.create(100), ValueType.T_DIGEST);
    m.put(CountingBloomFilter.create(Protocols.defaultProtocol(), new byte[0], 256, 3, 4), ValueType.COUNTING_BLOOM);
    m.put(AgePartitionedFilter.create(Duration.ofHours(1), 4, 1_000, 0.01, () -> 0L),
        ValueType.AGE_PARTITIONED_BLOOM);
    m.put(BloomFilter.create(1_000, 0.01), ValueType.CLASSIC_BLOOM);
    m.put(BlockedBloomFilter.create(1_000, 0.01), ValueType.BLOCKED_BLOOM);
    m.put(ScalableBlockedBloomFilter.create(100, 0.01), ValueType.SCALABLE_BLOCKED_BLOOM);
    return m;
  }

  @Test
  void everyStoredKindMapsToExactlyOneType() {
    Set<FilterKind> seen = EnumSet.noneOf(FilterKind.class);
    samples().forEach((value, expected) -> {
      ValueType type = ValueType.of(value);
      assertThat(type).as(value.getClass().getName()).isEqualTo(expected);
      assertThat(type.valueClass()).isEqualTo(value.getClass());
      assertThat(seen.add(type.kind())).as("%s has a kind of its own", type).isTrue();
    });
    assertThat(seen).hasSize(ValueType.values().length - 1); // every type but the guarded set holds a core kind
    assertThat(ValueType.GUARDED_SET.kind()).isNull();
    assertThat(ValueType.GUARDED_SET.valueClass()).isNull();
  }

  @Test
  void typeRepliesAndModuleTypeNamesAreRedisBloomsForItsKinds() {
    assertThat(ValueType.SCALABLE_BLOOM.typeReply()).isEqualTo("MBbloom--");
    assertThat(ValueType.CUCKOO.typeReply()).isEqualTo("MBbloomCF");
    assertThat(ValueType.COUNT_MIN_SKETCH.typeReply()).isEqualTo("CMSk-TYPE");
    assertThat(ValueType.TOP_K.typeReply()).isEqualTo("TopK-TYPE");
    assertThat(ValueType.T_DIGEST.typeReply()).isEqualTo("TDIS-TYPE");
    for (ValueType t : EnumSet.of(ValueType.SCALABLE_BLOOM, ValueType.CUCKOO, ValueType.COUNT_MIN_SKETCH,
        ValueType.TOP_K, ValueType.T_DIGEST)) {
      assertThat(t.moduleTypeName()).isEqualTo(t.typeReply());
    }
    assertThat(ValueType.COUNTING_BLOOM.typeReply()).isEqualTo("BLcounting");
    assertThat(ValueType.AGE_PARTITIONED_BLOOM.typeReply()).isEqualTo("BLagepart");
    assertThat(ValueType.CLASSIC_BLOOM.typeReply()).isEqualTo("BLbloom");
    assertThat(ValueType.BLOCKED_BLOOM.typeReply()).isEqualTo("BLbloom");
    assertThat(ValueType.SCALABLE_BLOCKED_BLOOM.typeReply()).isEqualTo("BLbloom");
    assertThat(ValueType.GUARDED_SET.typeReply()).isEqualTo("guard");
    for (ValueType t : EnumSet.complementOf(EnumSet.of(ValueType.SCALABLE_BLOOM, ValueType.CUCKOO,
        ValueType.COUNT_MIN_SKETCH, ValueType.TOP_K, ValueType.T_DIGEST))) {
      assertThat(t.moduleTypeName()).as("%s is ours, not RedisBloom's", t).isNull();
    }
  }

  @Test
  void labelsAreTheOnesMetricsInfoAndTheDashboardShow() {
    Map<ValueType, String> labels = new LinkedHashMap<>();
    for (ValueType t : ValueType.values()) {
      labels.put(t, t.label());
    }
    assertThat(labels).containsExactly(Map.entry(ValueType.SCALABLE_BLOOM, "bloom"),
        Map.entry(ValueType.CUCKOO, "cuckoo"), Map.entry(ValueType.COUNT_MIN_SKETCH, "cms"),
        Map.entry(ValueType.TOP_K, "topk"), Map.entry(ValueType.T_DIGEST, "tdigest"),
        Map.entry(ValueType.COUNTING_BLOOM, "counting"),
        Map.entry(ValueType.AGE_PARTITIONED_BLOOM, "aging"), Map.entry(ValueType.CLASSIC_BLOOM, "classic"),
        Map.entry(ValueType.BLOCKED_BLOOM, "blocked"), Map.entry(ValueType.SCALABLE_BLOCKED_BLOOM, "scalable-blocked"),
        Map.entry(ValueType.GUARDED_SET, "guard"));
  }

  @Test
  void bfFamilyAndLockedReadsAreTheTypesTheCommandsExpect() {
    Set<ValueType> bloom = EnumSet.noneOf(ValueType.class);
    Set<ValueType> locked = EnumSet.noneOf(ValueType.class);
    for (ValueType t : ValueType.values()) {
      if (t.isBloom()) {
        bloom.add(t);
      }
      if (t != ValueType.GUARDED_SET && !t.concurrentReads()) {
        locked.add(t);
      }
    }
    assertThat(bloom).containsExactlyInAnyOrder(ValueType.SCALABLE_BLOOM, ValueType.CLASSIC_BLOOM,
        ValueType.BLOCKED_BLOOM, ValueType.SCALABLE_BLOCKED_BLOOM);
    assertThat(locked).containsExactlyInAnyOrder(ValueType.COUNT_MIN_SKETCH, ValueType.TOP_K, ValueType.T_DIGEST);
  }

  @Test
  void copiesAreIndependentValuesOfTheSameTypeAndSize() {
    samples().forEach((value, type) -> {
      Object copy = type.copy(value);
      assertThat(copy).as("%s", type).isNotSameAs(value);
      assertThat(ValueType.of(copy)).isEqualTo(type);
      assertThat(type.memoryUsage(copy)).isEqualTo(type.memoryUsage(value)).isPositive();
    });
  }

  @Test
  void aValueOfAnUnknownClassIsRefusedByName() {
    assertThatThrownBy(() -> ValueType.of("not a filter")).isInstanceOf(IllegalArgumentException.class)
        .hasMessage("not a keyspace value: java.lang.String");
    Object frozen = ScalableBloomFilter.create(100, 0.01).freeze();
    assertThatThrownBy(() -> ValueType.of(frozen)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(frozen.getClass().getName());
    assertThat(ValueType.SCALABLE_BLOOM.holds(frozen)).isFalse();
    assertThat(ValueType.CUCKOO.holds(null)).isFalse();
  }

  @Test
  void holdsIsTrueForItsOwnTypeOnly() {
    samples().forEach((value, type) -> {
      for (ValueType t : ValueType.values()) {
        assertThat(t.holds(value)).as("%s holds a %s", t, type).isEqualTo(t == type);
      }
    });
  }

  @Test
  void theGuardedSetHoldsNoKeyspaceValue() {
    assertThatThrownBy(() -> ValueType.GUARDED_SET.memoryUsage(new Object()))
        .isInstanceOf(IllegalStateException.class).hasMessageContaining("guarded set");
  }
}
