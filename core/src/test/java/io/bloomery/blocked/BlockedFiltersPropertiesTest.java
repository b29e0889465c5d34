package io.bloomery.blocked;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomery.format.FilterFormat;
import io.bloomery.format.FilterFormatException;
import io.bloomery.format.ParquetBloomFormat;
import java.util.List;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;

/** Model-free properties of both blocked kinds over arbitrary byte items and sizes. */
class BlockedFiltersPropertiesTest {

  @Property(tries = 200)
  void blockedNeverForgetsAndBatchEqualsSingle(
      @ForAll @Size(max = 300) List<byte[]> items, @ForAll @IntRange(min = 1, max = 40) int blocks,
      @ForAll @IntRange(min = 1, max = 16) int hashes, @ForAll @Size(max = 4) byte[] seed) throws FilterFormatException {
    BlockedBloomFilter single = BlockedBloomFilter.create(seed, blocks, hashes);
    BlockedBloomFilter batched = BlockedBloomFilter.create(seed, blocks, hashes);
    byte[][] array = items.toArray(new byte[0][]);
    for (byte[] item : array) {
      single.add(item);
    }
    batched.addAll(array);
    boolean[] out = new boolean[array.length];
    assertThat(batched.mightContainAll(array, out)).isEqualTo(array.length);
    for (long w = 0; w < single.wordCount(); w++) {
      assertThat(batched.word(w)).isEqualTo(single.word(w));
    }
    BlockedBloomFilter copy = (BlockedBloomFilter) FilterFormat.fromBytes(FilterFormat.toBytes(single));
    for (byte[] item : array) {
      assertThat(copy.mightContain(item)).isTrue();
    }
    assertThat(copy.bitCount()).isEqualTo(single.bitCount()).isLessThanOrEqualTo((long) hashes * array.length);
  }

  /**
   * The one-thread batch insert (each batch's blocks read first, then the missing bits set) against
   * {@code add} one by one: the same returned count and serialized bytes (words and
   * {@code insertedCount}), after some keys were already added (so a batch finds some of its keys present); keys
   * cut to 2 bytes so that many repeat, k up to 16 (so several bits share a word).
   */
  @Property(tries = 300)
  void batchInsertCountsAndSetsLikeSingleAdds(
      @ForAll @Size(max = 40) List<byte[]> before, @ForAll @Size(max = 300) List<byte[]> items,
      @ForAll @IntRange(min = 1, max = 40) int blocks, @ForAll @IntRange(min = 1, max = 16) int hashes,
      @ForAll @Size(max = 4) byte[] seed, @ForAll boolean splitBlock) {
    io.bloomery.filter.MembershipFilter single = splitBlock ? SplitBlockBloomFilter.ofBytes(32L * blocks)
        : BlockedBloomFilter.create(seed, blocks, hashes);
    io.bloomery.filter.MembershipFilter batched = splitBlock ? SplitBlockBloomFilter.ofBytes(32L * blocks)
        : BlockedBloomFilter.create(seed, blocks, hashes);
    for (byte[] item : before) {
      single.add(item);
      batched.add(item);
    }
    byte[][] array = items.stream().map(item -> java.util.Arrays.copyOf(item, Math.min(2, item.length)))
        .toArray(byte[][]::new);
    int expected = 0;
    for (byte[] item : array) {
      expected += single.add(item) ? 1 : 0;
    }
    assertThat(batched.addAll(array)).isEqualTo(expected);
    assertThat(FilterFormat.toBytes(batched)).isEqualTo(FilterFormat.toBytes(single)); // words and insertedCount
  }

  @Property(tries = 200)
  void splitBlockNeverForgetsAndRoundTripsThroughParquet(
      @ForAll @Size(max = 300) List<byte[]> items, @ForAll @IntRange(min = 1, max = 40) int blocks)
      throws FilterFormatException {
    SplitBlockBloomFilter filter = SplitBlockBloomFilter.ofBytes(32L * blocks);
    byte[][] array = items.toArray(new byte[0][]);
    filter.addAll(array);
    SplitBlockBloomFilter parquet = ParquetBloomFormat.fromBytes(ParquetBloomFormat.toBytes(filter));
    SplitBlockBloomFilter nativeCopy = (SplitBlockBloomFilter) FilterFormat.fromBytes(FilterFormat.toBytes(filter));
    for (byte[] item : array) {
      assertThat(filter.mightContain(item)).isTrue();
      assertThat(parquet.mightContain(item)).isTrue();
      assertThat(nativeCopy.mightContain(item)).isTrue();
    }
    for (long w = 0; w < filter.wordCount(); w++) {
      assertThat(parquet.word(w)).isEqualTo(filter.word(w));
      assertThat(nativeCopy.word(w)).isEqualTo(filter.word(w));
    }
  }

  /**
   * Folding halves a power-of-two block count without losing a member: the result is, word for word, the filter
   * of half the blocks built from the same items (the multiply-high block index of B/2 blocks is the index of B
   * blocks shifted right by one). Rates after folding are checked in {@code io.bloomery.filter.FoldPropertiesTest}.
   */
  @Property(tries = 200)
  void blockedFoldsKeepEveryMemberAndEqualTheHalfSizeFilter(
      @ForAll @Size(max = 300) List<byte[]> items, @ForAll @IntRange(min = 0, max = 8) int log2Blocks,
      @ForAll @IntRange(min = 1, max = 16) int hashes, @ForAll @Size(max = 4) byte[] seed,
      @ForAll @IntRange(min = 1, max = 8) int folds) {
    BlockedBloomFilter filter = BlockedBloomFilter.create(seed, 1L << log2Blocks, hashes);
    items.forEach(filter::add);
    long inserted = filter.insertedCount();
    for (int f = 0; f < Math.min(folds, log2Blocks); f++) {
      filter = filter.fold();
      for (byte[] item : items) {
        assertThat(filter.mightContain(item)).as("member lost after %d folds", f + 1).isTrue();
      }
      BlockedBloomFilter direct = BlockedBloomFilter.create(seed, filter.blockCount(), hashes);
      items.forEach(direct::add);
      for (long w = 0; w < filter.wordCount(); w++) {
        assertThat(filter.word(w)).isEqualTo(direct.word(w));
      }
      assertThat(filter.insertedCount()).isEqualTo(inserted);
    }
  }
}
