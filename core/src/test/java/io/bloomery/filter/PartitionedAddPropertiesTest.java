package io.bloomery.filter;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomery.format.FilterFormat;
import io.bloomery.hash.HashProtocol;
import io.bloomery.hash.ProtocolId;
import io.bloomery.hash.Protocols;
import io.bloomery.testkit.PartitionedAddCheck;
import java.util.List;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.TimeUnit;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;

/**
 * The classic kind's word-range-partitioned {@code addAll} against the same keys added one by one in
 * order: the same serialized bytes (words, m, k, seed and insertedCount, through {@link FilterFormat}), the
 * same per-key "changed" answers and the same count. Random filters (m, k up to 40 so that the
 * key-by-key placement is reached too, a SHA-256 protocol, segments down to one word, single-writer
 * mode), batches from empty to a few hundred keys with many equal ones (keys cut to 2 bytes), and 2 to
 * 8 ranges: more ranges than the filter has lines happen often. jqwik prints the seed of a failing try.
 */
class PartitionedAddPropertiesTest {

  @Property(tries = 400)
  void partitionedEqualsSequential(
      @ForAll @Size(max = 40) List<byte[]> before,
      @ForAll @Size(max = 300) List<byte[]> batch,
      @ForAll @IntRange(min = 2, max = 8) int parts,
      @ForAll @IntRange(min = 1, max = 6000) int bits, @ForAll @IntRange(min = 1, max = 40) int hashes,
      @ForAll @IntRange(min = 0, max = 8) int segmentShift, @ForAll @Size(max = 3) byte[] seed,
      @ForAll boolean sha256, @ForAll boolean singleWriter) {
    HashProtocol protocol = sha256 ? Protocols.of(ProtocolId.SHA256_INDEX8) : Protocols.defaultProtocol();
    byte[] protocolSeed = sha256 ? new byte[0] : seed; // sha256-index8 takes no seed
    BloomFilter sequential = new BloomFilter(protocol, protocolSeed, bits, hashes, segmentShift, singleWriter);
    BloomFilter partitioned = new BloomFilter(protocol, protocolSeed, bits, hashes, segmentShift, singleWriter);
    PartitionedAddCheck.check(sequential, partitioned,
        (items, changed) -> partitioned.addAllOwned(items, changed, parts), before, batch);
    assertThat(partitioned.insertedCount()).isEqualTo(sequential.insertedCount());
    assertThat(partitioned.bitCount()).isEqualTo(sequential.bitCount());
  }

  /** The public call partitions a batch of several {@code MIN_PART}s; single-writer filters take it too. */
  @Test
  void publicParallelAddAllIsExact() {
    byte[][] items = PartitionedAddCheck.urlsWithRepeats();
    for (boolean singleWriter : new boolean[] {false, true}) {
      for (int parallelism = 1; parallelism <= 8; parallelism++) {
        BloomFilter sequential = new BloomFilter(Protocols.defaultProtocol(), new byte[0], 400_000, 7,
            BloomFilter.DEFAULT_SEGMENT_SHIFT, singleWriter);
        BloomFilter parallel = new BloomFilter(Protocols.defaultProtocol(), new byte[0], 400_000, 7,
            BloomFilter.DEFAULT_SEGMENT_SHIFT, singleWriter);
        int expected = 0;
        for (byte[] item : items) {
          expected += sequential.add(item) ? 1 : 0;
        }
        assertThat(parallel.addAll(items, parallelism)).as("parallelism %d", parallelism).isEqualTo(expected);
        assertThat(FilterFormat.toBytes(parallel)).isEqualTo(FilterFormat.toBytes(sequential));
      }
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
    ForkJoinPool pool = new ForkJoinPool(1);
    try {
      for (boolean singleWriter : new boolean[] {false, true}) {
        BloomFilter sequential = new BloomFilter(Protocols.defaultProtocol(), new byte[0], 1_000_000, 7,
            BloomFilter.DEFAULT_SEGMENT_SHIFT, singleWriter);
        int expected = 0;
        for (byte[] item : items) {
          expected += sequential.add(item) ? 1 : 0;
        }
        assertThat(expected).isLessThan(200_000); // overfilled: some new keys found their bits set
        for (int parallelism : new int[] {2, 3, 8, 0}) {
          BloomFilter parallel = new BloomFilter(Protocols.defaultProtocol(), new byte[0], 1_000_000, 7,
              BloomFilter.DEFAULT_SEGMENT_SHIFT, singleWriter);
          int count = parallelism > 0 ? parallel.addAll(items, parallelism)
              : pool.submit(() -> parallel.addAll(items, 2)).get(60, TimeUnit.SECONDS);
          assertThat(count).as("parallelism %d (0: alone in a busy pool)", parallelism).isEqualTo(expected);
          assertThat(FilterFormat.toBytes(parallel)).isEqualTo(FilterFormat.toBytes(sequential));
        }
      }
    } finally {
      pool.shutdownNow();
    }
  }

  /**
   * A concurrent filter's partitioned batch sets its bits atomically: adds from another thread at the
   * same time are never lost (no false negatives for either).
   */
  @Test
  void concurrentAddsDuringAParallelBatchAreKept() {
    PartitionedAddCheck.concurrentAddsAreKept(() -> BloomFilter.create(200_000, 0.01), (filter, batch) -> filter.addAll(batch, 2));
  }

  /** A null key anywhere in a parallel batch is refused before any thread adds anything. */
  @Test
  void aParallelBatchWithANullKeyAddsNothing() {
    byte[][] items = PartitionedAddCheck.urlsWithRepeats();
    items[items.length - 1] = null;
    for (boolean singleWriter : new boolean[] {false, true}) {
      BloomFilter filter = new BloomFilter(Protocols.defaultProtocol(), new byte[0], 400_000, 7,
          BloomFilter.DEFAULT_SEGMENT_SHIFT, singleWriter);
      byte[] empty = FilterFormat.toBytes(filter);
      assertThatThrownBy(() -> filter.addAll(items, 2)).isInstanceOf(NullPointerException.class);
      assertThat(FilterFormat.toBytes(filter)).isEqualTo(empty);
    }
  }

  /**
   * Run from the only worker of a one-thread pool with parallelism 8, the call cannot count on any
   * other thread: it runs every part itself and is still exact, on both modes.
   */
  @Test
  void aParallelBatchInsideABusyPoolFinishesAlone() throws Exception {
    byte[][] items = PartitionedAddCheck.urlsWithRepeats();
    ForkJoinPool pool = new ForkJoinPool(1);
    try {
      for (boolean singleWriter : new boolean[] {false, true}) {
        BloomFilter sequential = new BloomFilter(Protocols.defaultProtocol(), new byte[0], 400_000, 7,
            BloomFilter.DEFAULT_SEGMENT_SHIFT, singleWriter);
        BloomFilter parallel = new BloomFilter(Protocols.defaultProtocol(), new byte[0], 400_000, 7,
            BloomFilter.DEFAULT_SEGMENT_SHIFT, singleWriter);
        int expected = sequential.addAll(items);
        int count = pool.submit(() -> parallel.addAll(items, 8)).get(60, TimeUnit.SECONDS);
        assertThat(count).isEqualTo(expected);
        assertThat(FilterFormat.toBytes(parallel)).isEqualTo(FilterFormat.toBytes(sequential));
      }
    } finally {
      pool.shutdownNow();
    }
  }
}
