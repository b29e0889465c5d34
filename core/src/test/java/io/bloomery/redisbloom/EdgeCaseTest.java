package io.bloomery.redisbloom;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomery.cuckoo.CuckooFilter;
import io.bloomery.filter.FilterFullException;
import io.bloomery.filter.FilterTooLargeException;
import io.bloomery.filter.IncompatibleFilterException;
import io.bloomery.format.RedisBloomDump;
import io.bloomery.internal.HeapBudget;
import io.bloomery.scalable.ScalableBloomFilter;
import io.bloomery.testkit.RedisItems;
import org.junit.jupiter.api.Test;

/** Merge refusals, allocation refusals and kick-out rollback. */
class EdgeCaseTest {

  @Test
  void mergeIsALayerByLayerUnionAndSumsCounts() {
    ScalableBloomFilter left = ScalableBloomFilter.create(1000, 0.01);
    ScalableBloomFilter right = ScalableBloomFilter.create(1000, 0.01);
    for (int i = 0; i < 300; i++) {
      left.add(RedisItems.of("l" + i));
      right.add(RedisItems.of("r" + i));
    }
    long leftItems = left.insertedCount();
    long rightItems = right.insertedCount();
    left.mergeFrom(right);
    for (int i = 0; i < 300; i++) {
      assertThat(left.mightContain(RedisItems.of("l" + i))).isTrue();
      assertThat(left.mightContain(RedisItems.of("r" + i))).isTrue();
    }
    assertThat(left.insertedCount()).isEqualTo(leftItems + rightItems);
    assertThat(right.insertedCount()).isEqualTo(rightItems);
  }

  @Test
  void mergeIntoItselfIsRefusedAndChangesNothing() {
    ScalableBloomFilter filter = ScalableBloomFilter.create(100, 0.01);
    filter.add(RedisItems.of("x"));
    String before = filter.debug().toString();
    assertThat(filter.isCompatible(filter)).isFalse();
    assertThatThrownBy(() -> filter.mergeFrom(filter))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("itself");
    assertThat(filter.debug().toString()).isEqualTo(before);
    assertThat(filter.insertedCount()).isEqualTo(1);
  }

  @Test
  void mergeRefusesDifferentGeometryNamingTheParameter() {
    ScalableBloomFilter target = ScalableBloomFilter.create(100, 0.01);
    target.add(RedisItems.of("x"));
    String before = target.debug().toString();
    assertThatThrownBy(() -> target.mergeFrom(ScalableBloomFilter.create(100, 0.01, 4)))
        .isInstanceOf(IncompatibleFilterException.class).hasMessageContaining("expansion");
    assertThatThrownBy(() -> target.mergeFrom(ScalableBloomFilter.create(200, 0.01)))
        .isInstanceOf(IncompatibleFilterException.class).hasMessageContaining("layer 0");
    assertThatThrownBy(() -> target.mergeFrom(ScalableBloomFilter.createNonScaling(100, 0.01)))
        .isInstanceOf(IncompatibleFilterException.class).hasMessageContaining("options");
    ScalableBloomFilter grown = ScalableBloomFilter.create(100, 0.01);
    for (int i = 0; i < 300; i++) {
      grown.add(RedisItems.number(i));
    }
    assertThatThrownBy(() -> target.mergeFrom(grown))
        .isInstanceOf(IncompatibleFilterException.class).hasMessageContaining("number of layers");
    assertThat(target.debug().toString()).isEqualTo(before);
  }

  @Test
  void impossibleFiltersAreRefusedBeforeAllocating() {
    // 2^30 items at 1e-300: ~1.9e11 bytes, beyond a Java long[] and any heap here
    assertThatThrownBy(() -> ScalableBloomFilter.create(1L << 30, 1e-300))
        .isInstanceOf(FilterTooLargeException.class).hasMessageContaining("does not fit in the heap");
    assertThat(HeapBudget.zeroedWords(Long.MAX_VALUE)).isNull();
    assertThat(HeapBudget.zeroedWords(-1)).isNull();
  }

  @Test
  void aFailedKickOutIsRolledBackLeavingTheTablesUnchanged() {
    CuckooFilter filter = CuckooFilter.create(16, 2, 30, 0);
    int i = 0;
    while (true) {
      byte[] before = io.bloomery.internal.KindAccess.cuckooDumps(CuckooFilter.class).cuckooSlots(filter, 0, 16);
      try {
        filter.add(RedisItems.number(i++));
      } catch (FilterFullException full) {
        assertThat(full.reason()).isEqualTo(FilterFullException.Reason.NO_FREE_SLOT);
        assertThat(io.bloomery.internal.KindAccess.cuckooDumps(CuckooFilter.class).cuckooSlots(filter, 0, 16)).isEqualTo(before);
        break;
      }
    }
    assertThat(filter.insertedCount()).isEqualTo(i - 1);
    for (int j = 0; j < i - 1; j++) {
      assertThat(filter.mightContain(RedisItems.number(j))).isTrue();
    }
  }
}
