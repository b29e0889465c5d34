package io.bloomery.format;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomery.blocked.BlockedBloomFilter;
import io.bloomery.blocked.ScalableBlockedBloomFilter;
import io.bloomery.counting.CountingBloomFilter;
import io.bloomery.filter.BloomFilter;
import io.bloomery.filter.Summary;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** {@link FilterFormat#serializedRange} is exactly the corresponding slice of the whole file, at every boundary. */
class SerializedRangeTest {
  private static final long SEED = 20261201L;

  private static List<Summary> filters() {
    BloomFilter classic = BloomFilter.create(1_000, 0.01); // m not a multiple of 64: the last word's padding
    BlockedBloomFilter blocked = BlockedBloomFilter.create(1_000, 0.01);
    CountingBloomFilter counting = CountingBloomFilter.create(200, 0.01);
    // a seeded chain of four layers: the payload runs across layer boundaries
    ScalableBlockedBloomFilter chain = ScalableBlockedBloomFilter.create(new byte[] {5, 6}, 50, 0.01, 2);
    for (int i = 0; i < 700; i++) {
      classic.add("item-" + i);
      blocked.add("item-" + i);
      if (i < 500) {
        chain.add("item-" + i);
      }
      if (i < 150) {
        counting.add("item-" + i);
      }
    }
    return List.of(classic, blocked, counting, chain);
  }

  @Test
  void everyRangeEqualsTheSliceOfTheWholeFile() {
    Random random = new Random(SEED);
    for (Summary filter : filters()) {
      byte[] whole = FilterFormat.toBytes(filter);
      assertThat(FilterFormat.serializedLength(filter)).isEqualTo(whole.length);
      // every single byte (each boundary between header, fields, payload and trailer), then random ranges
      for (int at = 0; at < whole.length; at++) {
        assertThat(FilterFormat.serializedRange(filter, at, at + 1)).as("%s byte %d (seed %d)",
            filter.getClass().getSimpleName(), at, SEED).containsExactly(whole[at]);
      }
      for (int t = 0; t < 200; t++) {
        int from = random.nextInt(whole.length + 1);
        int to = from + random.nextInt(whole.length - from + 1);
        assertThat(FilterFormat.serializedRange(filter, from, to)).as("[%d, %d) seed %d", from, to, SEED)
            .isEqualTo(Arrays.copyOfRange(whole, from, to));
      }
      assertThat(FilterFormat.serializedRange(filter, 0, whole.length)).isEqualTo(whole);
    }
  }

  @Test
  void refusesARangeOutsideTheFile() {
    BloomFilter filter = BloomFilter.create(100, 0.01);
    long total = FilterFormat.serializedLength(filter);
    assertThatThrownBy(() -> FilterFormat.serializedRange(filter, -1, 2)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> FilterFormat.serializedRange(filter, 5, 4)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> FilterFormat.serializedRange(filter, 0, total + 1))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("not within");
  }
}
