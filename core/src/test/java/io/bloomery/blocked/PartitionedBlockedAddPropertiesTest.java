package io.bloomery.blocked;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomery.filter.MembershipFilter;
import io.bloomery.format.FilterFormat;
import io.bloomery.testkit.PartitionedAddCheck;
import java.nio.charset.StandardCharsets;
import java.util.List;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.Chars;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import net.jqwik.api.constraints.StringLength;
import org.junit.jupiter.api.Test;

/**
 * The blocked kinds' block-range-partitioned {@code addAll} against the same keys added one by one in
 * order: the same serialized bytes (through {@link FilterFormat}), the same per-key "changed" answers and
 * the same count, over random block counts (down to one block, so most ranges are empty), k, seeds,
 * batches from empty to a few hundred keys with many equal ones, and 2 to 8 ranges; for keys given as
 * byte arrays, as slices of one packed buffer and as {@code CharSequence}s. jqwik prints the seed of a
 * failing try.
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

  /** The packed-buffer source ({@code addAll(buffer, offsets, lengths, count, parallelism)}'s) partitions exactly. */
  @Property(tries = 200)
  void packedPartitionedEqualsSequential(
      @ForAll @Size(max = 40) List<byte[]> before,
      @ForAll @Size(max = 300) List<byte[]> batch,
      @ForAll @IntRange(min = 2, max = 8) int parts,
      @ForAll @IntRange(min = 1, max = 64) int blocks, @ForAll @IntRange(min = 1, max = 16) int hashes,
      @ForAll boolean splitBlock) {
    MembershipFilter sequential = splitBlock ? SplitBlockBloomFilter.ofBytes(32L * blocks)
        : BlockedBloomFilter.create(new byte[0], blocks, hashes);
    MembershipFilter partitioned = splitBlock ? SplitBlockBloomFilter.ofBytes(32L * blocks)
        : BlockedBloomFilter.create(new byte[0], blocks, hashes);
    PartitionedAddCheck.check(sequential, partitioned, (items, changed) -> {
      KeyBatches.Source packed = packed(items);
      return splitBlock ? ((SplitBlockBloomFilter) partitioned).addAllOwned(packed, changed, parts)
          : ((BlockedBloomFilter) partitioned).addAllOwned(packed, changed, parts);
    }, before, batch);
  }

  /**
   * The {@code CharSequence[]} source partitions exactly: the same bytes, per-key answers and count as
   * {@code add(CharSequence)} one by one (few distinct characters, so keys repeat; non-ASCII included).
   */
  @Property(tries = 200)
  void charSequencePartitionedEqualsSequential(
      @ForAll @Size(max = 300) List<@StringLength(max = 3) @Chars({'a', 'b', 'é', '日'}) String> batch,
      @ForAll @IntRange(min = 2, max = 8) int parts, @ForAll @IntRange(min = 1, max = 64) int blocks,
      @ForAll @IntRange(min = 1, max = 16) int hashes, @ForAll boolean splitBlock) {
    MembershipFilter sequential = splitBlock ? SplitBlockBloomFilter.ofBytes(32L * blocks)
        : BlockedBloomFilter.create(new byte[0], blocks, hashes);
    MembershipFilter partitioned = splitBlock ? SplitBlockBloomFilter.ofBytes(32L * blocks)
        : BlockedBloomFilter.create(new byte[0], blocks, hashes);
    CharSequence[] items = batch.stream().map(StringBuilder::new).toArray(CharSequence[]::new);
    PartitionedAddCheck.checkBatch(sequential, partitioned, items, sequential::add, (keys, changed) -> {
      KeyBatches.Source source = KeyBatches.of(keys);
      return splitBlock ? ((SplitBlockBloomFilter) partitioned).addAllOwned(source, changed, parts)
          : ((BlockedBloomFilter) partitioned).addAllOwned(source, changed, parts);
    });
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

  /** The packed and {@code CharSequence[]} overloads with parallelism give the one-thread filter and count. */
  @Test
  void publicParallelPackedAndStringAddAllAreExact() {
    byte[][] items = PartitionedAddCheck.urlsWithRepeats();
    KeyBatches.Source packedSource = packed(items);
    String[] strings = new String[items.length];
    for (int i = 0; i < items.length; i++) {
      strings[i] = new String(items[i], StandardCharsets.UTF_8);
    }
    BlockedBloomFilter blocked = BlockedBloomFilter.create(40_000, 0.01);
    SplitBlockBloomFilter split = SplitBlockBloomFilter.create(40_000, 0.01);
    int blockedChanged = blocked.addAll(items);
    int splitChanged = split.addAll(items);
    for (int parallelism = 1; parallelism <= 8; parallelism++) {
      BlockedBloomFilter blockedPacked = BlockedBloomFilter.create(40_000, 0.01);
      BlockedBloomFilter blockedStrings = BlockedBloomFilter.create(40_000, 0.01);
      SplitBlockBloomFilter splitPacked = SplitBlockBloomFilter.create(40_000, 0.01);
      SplitBlockBloomFilter splitStrings = SplitBlockBloomFilter.create(40_000, 0.01);
      assertThat(blockedPacked.addAll(packedBuffer, packedOffsets, packedLengths, items.length, parallelism))
          .isEqualTo(blockedChanged);
      assertThat(blockedStrings.addAll(strings, parallelism)).isEqualTo(blockedChanged);
      assertThat(splitPacked.addAll(packedBuffer, packedOffsets, packedLengths, items.length, parallelism))
          .isEqualTo(splitChanged);
      assertThat(splitStrings.addAll(strings, parallelism)).isEqualTo(splitChanged);
      for (MembershipFilter filter : List.of(blockedPacked, blockedStrings)) {
        assertThat(FilterFormat.toBytes(filter)).isEqualTo(FilterFormat.toBytes(blocked));
      }
      for (MembershipFilter filter : List.of(splitPacked, splitStrings)) {
        assertThat(FilterFormat.toBytes(filter)).isEqualTo(FilterFormat.toBytes(split));
      }
    }
    assertThat(packedSource.count()).isEqualTo(items.length);
  }

  /** A bad key anywhere in a parallel batch is refused before any thread adds anything. */
  @Test
  void aParallelBatchWithABadKeyAddsNothing() {
    byte[][] items = PartitionedAddCheck.urlsWithRepeats();
    byte[] empty = FilterFormat.toBytes(BlockedBloomFilter.create(40_000, 0.01));
    BlockedBloomFilter filter = BlockedBloomFilter.create(40_000, 0.01);
    byte[][] withNull = items.clone();
    withNull[items.length - 1] = null;
    assertThatThrownBy(() -> filter.addAll(withNull, 2)).isInstanceOf(NullPointerException.class);
    String[] strings = new String[items.length];
    java.util.Arrays.fill(strings, "x");
    strings[items.length / 2] = null;
    assertThatThrownBy(() -> filter.addAll(strings, 2)).isInstanceOf(NullPointerException.class);
    packed(items);
    int[] lengths = packedLengths.clone();
    lengths[items.length - 1] = packedBuffer.length; // runs past the buffer's end
    assertThatThrownBy(() -> filter.addAll(packedBuffer, packedOffsets, lengths, items.length, 2))
        .isInstanceOf(IndexOutOfBoundsException.class);
    assertThat(FilterFormat.toBytes(filter)).isEqualTo(empty);
    assertThat(filter.insertedCount()).isZero();
  }

  /**
   * Run from the only worker of a one-thread pool with parallelism 8, the call cannot count on any
   * other thread: it runs every part itself and is still exact.
   */
  @Test
  void aParallelBatchInsideABusyPoolFinishesAlone() throws Exception {
    byte[][] items = PartitionedAddCheck.urlsWithRepeats();
    BlockedBloomFilter sequential = BlockedBloomFilter.create(40_000, 0.01);
    int expected = sequential.addAll(items);
    java.util.concurrent.ForkJoinPool pool = new java.util.concurrent.ForkJoinPool(1);
    try {
      BlockedBloomFilter parallel = BlockedBloomFilter.create(40_000, 0.01);
      int count = pool.submit(() -> parallel.addAll(items, 8)).get(60, java.util.concurrent.TimeUnit.SECONDS);
      assertThat(count).isEqualTo(expected);
      assertThat(FilterFormat.toBytes(parallel)).isEqualTo(FilterFormat.toBytes(sequential));
    } finally {
      pool.shutdownNow();
    }
  }

  /**
   * A batch of many chunks, in an overfilled filter (many keys change nothing): every chunk's records are
   * inserted in key order although a part may scatter chunks ahead and the buffers are reused; also when
   * the call runs alone inside a one-worker pool.
   */
  @Test
  void aBatchOfManyChunksIsExact() throws Exception {
    byte[][] items = PartitionedAddCheck.manyChunksWithRepeats();
    BlockedBloomFilter blocked = BlockedBloomFilter.create(20_000, 0.01);
    SplitBlockBloomFilter split = SplitBlockBloomFilter.create(20_000, 0.01);
    int blockedChanged = blocked.addAll(items);
    int splitChanged = split.addAll(items);
    assertThat(blockedChanged).isLessThan(200_000); // overfilled: some new keys found their bits set
    java.util.concurrent.ForkJoinPool pool = new java.util.concurrent.ForkJoinPool(1);
    try {
      for (int parallelism : new int[] {2, 3, 8, 0}) {
        BlockedBloomFilter blockedParallel = BlockedBloomFilter.create(20_000, 0.01);
        SplitBlockBloomFilter splitParallel = SplitBlockBloomFilter.create(20_000, 0.01);
        int count = parallelism > 0 ? blockedParallel.addAll(items, parallelism)
            : pool.submit(() -> blockedParallel.addAll(items, 2)).get(60, java.util.concurrent.TimeUnit.SECONDS);
        assertThat(count).as("parallelism %d (0: alone in a busy pool)", parallelism).isEqualTo(blockedChanged);
        assertThat(FilterFormat.toBytes(blockedParallel)).isEqualTo(FilterFormat.toBytes(blocked));
        assertThat(splitParallel.addAll(items, Math.max(2, parallelism))).isEqualTo(splitChanged);
        assertThat(FilterFormat.toBytes(splitParallel)).isEqualTo(FilterFormat.toBytes(split));
      }
    } finally {
      pool.shutdownNow();
    }
  }

  /**
   * The blocked kind's parallel batch keeps its bit sets atomic: adds from another thread at the same
   * time, into the same blocks, are never lost (no false negatives for either).
   */
  @Test
  void concurrentAddsDuringAParallelBatchAreKept() {
    PartitionedAddCheck.concurrentAddsAreKept(() -> BlockedBloomFilter.create(200_000, 0.01), (filter, batch) -> filter.addAll(batch, 2));
  }

  private byte[] packedBuffer;
  private int[] packedOffsets;
  private int[] packedLengths;

  /** Packs {@code items} back to back into one buffer (kept in the fields) and returns its source. */
  private KeyBatches.Source packed(byte[][] items) {
    int total = 0;
    for (byte[] item : items) {
      total += item.length + 1;
    }
    packedBuffer = new byte[total + 1];
    packedOffsets = new int[items.length];
    packedLengths = new int[items.length];
    int at = 1; // slices start past 0 and leave a gap, so offsets are exercised
    for (int i = 0; i < items.length; i++) {
      System.arraycopy(items[i], 0, packedBuffer, at, items[i].length);
      packedOffsets[i] = at;
      packedLengths[i] = items[i].length;
      at += items[i].length + 1;
    }
    return KeyBatches.of(packedBuffer, packedOffsets, packedLengths, items.length);
  }
}
