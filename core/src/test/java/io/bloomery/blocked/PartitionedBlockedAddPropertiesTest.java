package io.bloomery.blocked;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomery.format.FilterFormat;
import io.bloomery.testkit.PartitionedAddCheck;
import java.util.List;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;

/**
 * The blocked kinds' block-range-partitioned {@code addAll} against the same keys added one by one in
 * order: the same serialized bytes (through {@link FilterFormat}), the same per-key "changed" answers and
 * the same count, over random block counts (down to one block, so most ranges are empty), k, seeds,
 * batches from empty to a few hundred keys with many equal ones, and 2 to 8 ranges. jqwik prints the
 * seed of a failing try.
 */
class PartitionedBlockedAddPropertiesTest {

  @Property(tries = 300)
  void blockedPartitionedEqualsSequential(
      @ForAll @Size(max = 40) List<byte[]> before,
      @ForAll @Size(max = 300) List<byte[]> batch,
      @ForAll @IntRange(min = 2, max = 8) int parts,
      @ForAll @IntRange(min = 1, max = 64) int blocks, @ForAll @IntRange(min = 1, max = 16) int hashes,
      @ForAll @Size(max = 3) byte[] seed) {
    BlockedBloomFilter sequential = BlockedBloomFilter.create(seed, blocks, hashes);
    BlockedBloomFilter partitioned = BlockedBloomFilter.create(seed, blocks, hashes);
    PartitionedAddCheck.check(sequential, partitioned,
        (items, changed) -> partitioned.addAllOwned(items, changed, parts), before, batch);
    assertThat(partitioned.insertedCount()).isEqualTo(sequential.insertedCount());
  }

  @Property(tries = 300)
  void splitBlockPartitionedEqualsSequential(
      @ForAll @Size(max = 40) List<byte[]> before,
      @ForAll @Size(max = 300) List<byte[]> batch,
      @ForAll @IntRange(min = 2, max = 8) int parts, @ForAll @IntRange(min = 1, max = 64) int blocks) {
    SplitBlockBloomFilter sequential = SplitBlockBloomFilter.ofBytes(32L * blocks);
    SplitBlockBloomFilter partitioned = SplitBlockBloomFilter.ofBytes(32L * blocks);
    PartitionedAddCheck.check(sequential, partitioned,
        (items, changed) -> partitioned.addAllOwned(items, changed, parts), before, batch);
    assertThat(partitioned.insertedCount()).isEqualTo(sequential.insertedCount());
  }

  /** The public calls partition a batch of several {@code MIN_PART}s and count exactly. */
  @Test
  void publicParallelAddAllIsExact() {
    byte[][] items = PartitionedAddCheck.urlsWithRepeats();
    for (int parallelism = 1; parallelism <= 8; parallelism++) {
      BlockedBloomFilter blocked = BlockedBloomFilter.create(40_000, 0.01);
      BlockedBloomFilter blockedParallel = BlockedBloomFilter.create(40_000, 0.01);
      SplitBlockBloomFilter split = SplitBlockBloomFilter.create(40_000, 0.01);
      SplitBlockBloomFilter splitParallel = SplitBlockBloomFilter.create(40_000, 0.01);
      int blockedChanged = 0;
      int splitChanged = 0;
      for (byte[] item : items) {
        blockedChanged += blocked.add(item) ? 1 : 0;
        splitChanged += split.add(item) ? 1 : 0;
      }
      assertThat(blockedParallel.addAll(items, parallelism)).isEqualTo(blockedChanged);
      assertThat(FilterFormat.toBytes(blockedParallel)).isEqualTo(FilterFormat.toBytes(blocked));
      assertThat(splitParallel.addAll(items, parallelism)).isEqualTo(splitChanged);
      assertThat(FilterFormat.toBytes(splitParallel)).isEqualTo(FilterFormat.toBytes(split));
    }
  }
}
