package io.bloomery.scalable;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomery.format.FilterFormat;
import io.bloomery.format.RedisBloomDump;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * A {@link ScalableBloomFilter#freeze() frozen view} stays exactly as taken while the filter changes (adds, growth,
 * merges, chunk loads, another thread), copying only the pages the changes touch.
 */
class FrozenViewTest {

  private static byte[] item(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  @Test
  void aFrozenViewWritesTheFilterAsTakenWhileAddsGrowItAndCopiesOnlyThePagesTheyChange() throws IOException {
    ScalableBloomFilter filter = ScalableBloomFilter.create(2_000_000, 0.01); // one 2.7 MB layer, 8 hashes
    for (int i = 0; i < 1000; i++) {
      filter.add(item("before-" + i));
    }
    byte[] taken = FilterFormat.toBytes(filter);
    try (ScalableBloomFilter.Frozen view = filter.freeze()) {
      for (int i = 0; i < 10; i++) {
        filter.add(item("during-" + i));
      }
      long afterTen = view.copiedBytes();
      assertThat(afterTen).isPositive().isLessThanOrEqualTo(10L * 8 * ScalableBloomFilter.Frozen.PAGE_BYTES);
      for (int i = 10; i < 2_100_000; i++) { // fills the layer and appends a second one
        filter.addAsSoleWriter(item("during-" + i), 0, item("during-" + i).length);
      }
      assertThat(filter.filterCount()).isEqualTo(2);
      assertThat(FilterFormat.toBytes(view)).isEqualTo(taken);
      // the appended layer is not in the view and cost it nothing
      assertThat(view.copiedBytes()).isLessThanOrEqualTo(filter.layers().get(0).bytes() + ScalableBloomFilter.Frozen.PAGE_BYTES);
    }
    ScalableBloomFilter loaded = (ScalableBloomFilter) FilterFormat.fromBytes(taken);
    assertThat(loaded.insertedCount()).isEqualTo(1000);
    assertThat(FilterFormat.toBytes(filter)).isNotEqualTo(taken);
  }

  @Test
  void aFrozenViewIgnoresMergesAndChunkLoadsAndStopsCopyingOnceClosed() throws IOException {
    ScalableBloomFilter filter = ScalableBloomFilter.create(500_000, 0.01);
    ScalableBloomFilter other = ScalableBloomFilter.create(500_000, 0.01);
    for (int i = 0; i < 5000; i++) {
      filter.add(item("mine-" + i));
      other.add(item("theirs-" + i));
    }
    byte[] taken = FilterFormat.toBytes(filter);
    ScalableBloomFilter.Frozen view = filter.freeze();
    filter.mergeFrom(other);
    assertThat(FilterFormat.toBytes(view)).isEqualTo(taken);
    for (RedisBloomDump.Chunk chunk : RedisBloomDump.scanDumpAll(other)) {
      if (chunk.iterator() > 1) {
        RedisBloomDump.loadChunk(filter, chunk.iterator(), chunk.data());
      }
    }
    assertThat(FilterFormat.toBytes(view)).isEqualTo(taken);
    long copied = view.copiedBytes();
    view.close();
    filter.add(item("after-close"));
    assertThat(view.copiedBytes()).isEqualTo(copied);
    assertThat(filter.mightContain(item("theirs-1"))).isTrue();
  }

  @Test
  void aFrozenViewHoldsWhileAnotherThreadAdds() throws Exception {
    ScalableBloomFilter filter = ScalableBloomFilter.create(1_000_000, 0.01);
    for (int i = 0; i < 500; i++) {
      filter.add(item("before-" + i));
    }
    byte[] taken = FilterFormat.toBytes(filter);
    try (ScalableBloomFilter.Frozen view = filter.freeze()) {
      Thread adder = new Thread(() -> {
        for (int i = 0; i < 200_000; i++) {
          filter.add(item("during-" + i));
        }
      });
      adder.start();
      for (int round = 0; round < 5; round++) {
        assertThat(FilterFormat.toBytes(view)).isEqualTo(taken);
      }
      adder.join();
      assertThat(FilterFormat.toBytes(view)).isEqualTo(taken);
    }
  }
}
