package io.bloomery.server.dashboard;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomery.blocked.ScalableBlockedBloomFilter;
import io.bloomery.counting.CountingBloomFilter;
import io.bloomery.scalable.ScalableBloomFilter;
import io.bloomery.sizing.BloomMath;
import java.nio.charset.StandardCharsets;
import org.assertj.core.data.Offset;
import org.junit.jupiter.api.Test;

/** The dashboard's figures per kind, and its query parser with hostile input. */
class KeyHealthTest {
  @Test
  void scalableFilter_modelAtItsPresentItemsIsItsEstimate_andGrowsWithItems() {
    ScalableBloomFilter filter = ScalableBloomFilter.create(1000, 0.01, 2);
    for (int i = 0; i < 2500; i++) { // past the first layer's capacity: a second layer is added
      filter.add(("item-" + i).getBytes(StandardCharsets.UTF_8));
    }
    KeyHealth health = KeyHealth.of("k", filter, -1);
    assertThat(health.layers()).isEqualTo(filter.layers().size()).isGreaterThan(1);
    assertThat(health.items()).isEqualTo(filter.insertedCount());
    assertThat(health.capacity()).isEqualTo(filter.capacity());
    assertThat(health.targetFpr()).isEqualTo(0.01);
    assertThat(health.model().applyAsDouble(health.items())).isCloseTo(health.estimatedFpr(), Offset.offset(1e-12));
    assertModelGrowsFromZero(health, 20_000, 500, 1.0);
  }

  @Test
  void scalingBlockedFilter_modelAtItsPresentItemsIsItsEstimate_andStaysBelowItsTarget() {
    ScalableBlockedBloomFilter filter = ScalableBlockedBloomFilter.create(1000, 0.01, 2);
    for (int i = 0; i < 2500; i++) { // past the first layer's capacity: a second layer is added
      filter.add(("item-" + i).getBytes(StandardCharsets.UTF_8));
    }
    KeyHealth health = KeyHealth.of("k", filter, -1);
    assertThat(health.kind()).isEqualTo("scalable-blocked");
    assertThat(health.layers()).isEqualTo(2);
    assertThat(health.items()).isEqualTo(filter.insertedCount());
    assertThat(health.capacity()).isEqualTo(3000);
    assertThat(health.targetFpr()).isEqualTo(0.01);
    assertThat(health.model().applyAsDouble(health.items())).isCloseTo(health.estimatedFpr(), Offset.offset(1e-12));
    assertThat(health.estimatedFpr()).isCloseTo(filter.estimatedFpp(), Offset.offset(0.3 * filter.estimatedFpp()));
    assertModelGrowsFromZero(health, 50_000, 2500, 0.01); // into layers the chain has not grown yet
  }

  /** The model is 0 at no items and never falls as items are added, staying at most {@code ceiling}. */
  private static void assertModelGrowsFromZero(KeyHealth health, long upTo, long step, double ceiling) {
    double previous = -1;
    for (long n = 0; n <= upTo; n += step) {
      double rate = health.model().applyAsDouble(n);
      assertThat(rate).as("n = %d", n).isBetween(previous, ceiling);
      previous = rate;
    }
    assertThat(health.model().applyAsDouble(0)).isZero();
  }

  @Test
  void nonScalingFilter_overfillsItsLastLayer() {
    ScalableBloomFilter filter = ScalableBloomFilter.createNonScaling(1000, 0.01);
    KeyHealth health = KeyHealth.of("k", filter, -1);
    ScalableBloomFilter.Layer only = filter.layers().get(0);
    assertThat(health.model().applyAsDouble(3000))
        .isCloseTo(BloomMath.falsePositiveRate(only.bits(), only.hashes(), 3000), Offset.offset(1e-12)); // 1 - (1 - p)
    assertThat(health.targetFpr()).isEqualTo(0.01);
  }

  @Test
  void countingFilter_capacityAndTargetFollowItsShape() {
    CountingBloomFilter filter = CountingBloomFilter.create(1000, 0.01);
    KeyHealth health = KeyHealth.of("k", filter, 1234);
    assertThat(health.capacity()).isEqualTo(BloomMath.capacityForHashes(filter.counterCount(), filter.hashCount()));
    assertThat(health.targetFpr()).isBetween(0.005, 0.0115); // the model rate at capacity: 1.11% for k = 7
    assertThat(health.expireAtMillis()).isEqualTo(1234);
    assertThat(health.nearCapacity()).isFalse();
  }

  @Test
  void queryParameter_isDecodedOrAbsent() {
    assertThat(Dashboard.queryParameter(null, "name")).isNull();
    assertThat(Dashboard.queryParameter("other=1", "name")).isNull();
    assertThat(Dashboard.queryParameter("name=a%20b&name=c", "name")).isEqualTo("a b");
    assertThat(Dashboard.queryParameter("name", "name")).isEmpty();
    assertThat(Dashboard.queryParameter("name=%zz", "name")).isNull();
    assertThat(Dashboard.queryParameter("name=%", "name")).isNull();
  }
}
