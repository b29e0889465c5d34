package io.bloomery.blocked;

import com.dynatrace.hash4j.hashing.Hasher64;
import com.dynatrace.hash4j.hashing.Hashing;
import io.bloomery.filter.BloomFilter;
import io.bloomery.filter.BoundedFilter;
import io.bloomery.filter.FilterKind;
import io.bloomery.filter.IncompatibleFilterException;
import io.bloomery.filter.MembershipFilter;
import io.bloomery.filter.Mergeable;
import io.bloomery.hash.ProtocolId;
import io.bloomery.internal.KindAccess;
import io.bloomery.internal.ParallelBatches;
import io.bloomery.sizing.BloomMath;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Objects;
import java.util.concurrent.atomic.LongAdder;

/**
 * Apache Parquet's split-block Bloom filter (SBBF), bit for bit: a filter written here loads in
 * parquet-java's {@code BlockSplitBloomFilter} and answers identically, and vice versa.
 *
 * <p><b>Contract.</b> An added item is never reported absent; {@code true} means "maybe, go and
 * check". The false-positive rate on known non-members follows
 * {@link BlockedBloomMath#splitBlockFalsePositiveRate} (about 10.5 bits per key for 1%, against the
 * classic optimum 9.59). No delete; no seed (the Parquet protocol has none). Thread-safety as for
 * {@link BlockedBloomFilter}: lock-free adds, non-blocking reads. (parquet-java's own class is not
 * thread-safe even for reads.)
 *
 * <h2>Protocol {@code parquet-xxh64} (Parquet format spec, BloomFilter.md)</h2>
 *
 * <pre>
 * blocks z (1 ≤ z ≤ MAX_BLOCKS), each 8 little-endian 32-bit words = 256 bits = 32 bytes
 * h      = XXH64(plain-encoded value, seed 0)      BYTE_ARRAY: the raw bytes, no length prefix;
 *                                                  INT64/DOUBLE: 8 little-endian bytes ({@link #add(long)})
 * block  = ((h >>> 32) * z) >>> 32
 * x      = h mod 2^32
 * for i in 0..7: set bit ((x * SALT[i]) mod 2^32) >>> 27 of word i of the block
 * SALT   = 0x47b6137b 0x44974d91 0x8824ad5b 0xa2b7289d 0x705495c7 0x2df1424b 0x9efc4947 0x5c6bfb31
 * bitset = the words in order, each 4 bytes little-endian (word 8·block + i)
 * </pre>
 *
 * <h2>Why</h2>
 *
 * <p>J. Apple, "Split block Bloom filters" (arXiv 2101.01719), first written for Impala in 2016 and
 * adopted by Parquet, Kudu and Arrow: one cache line per key like Putze et al.'s blocked filter, and
 * exactly one bit per 32-bit word so the eight probes map onto SIMD lanes. The fixed k = 8 makes it
 * useful only for FPRs of roughly 0.4%–19%; it costs about 10% more memory than a classic filter at
 * 1%. Use it when the bits must be read by Parquet tooling; otherwise {@link BlockedBloomFilter} is
 * the smaller fast filter. A Parquet reader caps filters at 128 MiB ({@code ParquetBloomFormat}).
 */
public final class SplitBlockBloomFilter implements BoundedFilter, Mergeable<SplitBlockBloomFilter> {

  /** Index of block 0's first word: the int[] data starts 16 bytes into the object, +16 = 32-aligned. */
  static final int BASE_INDEX = 4;

  /** Bytes per block. */
  public static final int BLOCK_BYTES = 32;

  static {
    KindAccess.register(SplitBlockBloomFilter.class, new KindAccess.SplitBlock<SplitBlockBloomFilter>() {
      @Override
      public SplitBlockBloomFilter restore(long blocks, long insertedCount, KindAccess.WordSource words)
          throws IOException {
        return SplitBlockBloomFilter.restore(blocks, insertedCount, words);
      }

      @Override
      public SplitBlockBloomFilter restoreBitset(long numBytes, long insertedCount, InputStream bitset)
          throws IOException {
        return SplitBlockBloomFilter.restore(numBytes, insertedCount, bitset);
      }

      @Override
      public void writeBitset(SplitBlockBloomFilter filter, OutputStream out) throws IOException {
        filter.writeBitset(out);
      }

      @Override
      public long wordCount(SplitBlockBloomFilter filter) {
        return filter.wordCount();
      }

      @Override
      public long word(SplitBlockBloomFilter filter, long index) {
        return filter.word(index);
      }
    });
  }

  /** Largest block count that fits one {@code int[]} (8 GiB of bitset). */
  public static final long MAX_BLOCKS = (Integer.MAX_VALUE - 16L) / 8;

  static final int[] SALTS = {
    0x47b6137b, 0x44974d91, 0x8824ad5b, 0xa2b7289d, 0x705495c7, 0x2df1424b, 0x9efc4947, 0x5c6bfb31
  };

  private static final Hasher64 XXH64 = Hashing.xxh64();
  private static final VarHandle WORDS = MethodHandles.arrayElementVarHandle(int[].class);

  private final int[] words;
  private final int blocks;
  private final LongAdder inserted = new LongAdder();

  private SplitBlockBloomFilter(long blocks) {
    checkBlocks(blocks);
    this.blocks = (int) blocks;
    this.words = new int[this.blocks * 8 + 7];
  }

  static void checkBlocks(long blocks) {
    if (blocks < 1 || blocks > MAX_BLOCKS) {
      throw new IllegalArgumentException("blocks must be in [1, " + MAX_BLOCKS + "], was " + blocks);
    }
  }

  /**
   * The smallest filter whose model FPR after {@code expectedInsertions} keys is at most {@code fpp}
   * (whole blocks, not rounded to a power of two).
   */
  public static SplitBlockBloomFilter create(long expectedInsertions, double fpp) {
    return new SplitBlockBloomFilter(BlockedBloomMath.splitBlocks(expectedInsertions, fpp));
  }

  /**
   * Sized exactly like parquet-java's writer: {@code BlockSplitBloomFilter.optimalNumOfBits(n, p)}
   * = −8n / ln(1 − p^(1/8)) bits, clamped to [32 B, {@code maxBytes}], then rounded up to a power
   * of two bytes (what {@code new BlockSplitBloomFilter(numBytes)} allocates).
   */
  public static SplitBlockBloomFilter createParquetSized(long expectedInsertions, double fpp, int maxBytes) {
    if (expectedInsertions < 0 || !(fpp > 0 && fpp < 1) || maxBytes < BLOCK_BYTES) {
      throw new IllegalArgumentException("need expectedInsertions >= 0, fpp in (0, 1), maxBytes >= 32; was "
          + expectedInsertions + ", " + fpp + ", " + maxBytes);
    }
    double bits = -8.0 * expectedInsertions / Math.log(1 - Math.pow(fpp, 1.0 / 8));
    long bytes = Math.max(BLOCK_BYTES, Math.min(maxBytes, (long) Math.ceil(bits / 8)));
    long powerOfTwo = Long.highestOneBit(bytes) == bytes ? bytes : Long.highestOneBit(bytes) << 1;
    powerOfTwo = Math.min(powerOfTwo, Long.highestOneBit(maxBytes));
    return ofBytes(powerOfTwo);
  }

  /** An empty filter of {@code numBytes} bytes (a positive multiple of 32). */
  public static SplitBlockBloomFilter ofBytes(long numBytes) {
    if (numBytes <= 0 || numBytes % BLOCK_BYTES != 0) {
      throw new IllegalArgumentException("numBytes must be a positive multiple of 32, was " + numBytes);
    }
    return new SplitBlockBloomFilter(numBytes / BLOCK_BYTES);
  }

  /**
   * Rebuilds a filter from {@code numBytes} bytes of Parquet bitset (the layout {@link #writeBitset}
   * produces and parquet-java's {@code BlockSplitBloomFilter.writeTo} writes).
   *
   * @throws java.io.EOFException if the stream ends early
   */
  static SplitBlockBloomFilter restore(long numBytes, long insertedCount, InputStream bitset) throws IOException {
    if (insertedCount < 0) {
      throw new IllegalArgumentException("insertedCount must be >= 0, was " + insertedCount);
    }
    SplitBlockBloomFilter filter = ofBytes(numBytes);
    LittleEndianWords.read(bitset, filter.words, BASE_INDEX, filter.blocks * 8);
    filter.inserted.add(insertedCount);
    return filter;
  }

  /**
   * Rebuilds a filter of {@code blocks} blocks from 4 × blocks 64-bit words, each the little-endian
   * reading of 8 bitset bytes (so 32-bit word 2j is the low half of word j), as the binary format
   * streams them.
   */
  static SplitBlockBloomFilter restore(long blocks, long insertedCount, KindAccess.WordSource words)
      throws IOException {
    if (insertedCount < 0) {
      throw new IllegalArgumentException("insertedCount must be >= 0, was " + insertedCount);
    }
    SplitBlockBloomFilter filter = new SplitBlockBloomFilter(blocks);
    for (int i = BASE_INDEX, end = BASE_INDEX + filter.blocks * 8; i < end; i += 2) {
      long word = words.nextWord();
      filter.words[i] = (int) word;
      filter.words[i + 1] = (int) (word >>> 32);
    }
    filter.inserted.add(insertedCount);
    return filter;
  }

  /**
   * 64-bit word {@code index} of the bitset, as in every other bit-array kind: the bitset's 32-bit words
   * 2·index (low half) and 2·index + 1 (high half).
   *
   * @throws IndexOutOfBoundsException unless {@code 0 <= index < wordCount()}
   */
  long word(long index) {
    Objects.checkIndex(index, wordCount());
    int low = (int) WORDS.getOpaque(words, BASE_INDEX + (int) (2 * index));
    int high = (int) WORDS.getOpaque(words, BASE_INDEX + (int) (2 * index) + 1);
    return (low & 0xFFFFFFFFL) | (long) high << 32;
  }

  @Override
  public FilterKind kind() {
    return FilterKind.SPLIT_BLOCK_BLOOM;
  }

  /** Always {@link ProtocolId#PARQUET_XXH64}. */
  @Override
  public ProtocolId protocolId() {
    return ProtocolId.PARQUET_XXH64;
  }

  /** Number of 256-bit blocks. */
  public long blockCount() {
    return blocks;
  }

  /** Bitset size in bytes, 32 × blocks (Parquet's {@code numBytes}). */
  public long byteSize() {
    return (long) blocks * BLOCK_BYTES;
  }

  /** Number of bits, 256 × blocks. */
  public long bitSize() {
    return (long) blocks * BlockedBloomMath.SPLIT_BLOCK_BITS;
  }

  /** Always 8: one bit per 32-bit word of the block. */
  public int hashCount() {
    return 8;
  }

  /** Number of 64-bit words, 4 × blocks (the bitset holds 8 × blocks 32-bit words, two per 64-bit word). */
  long wordCount() {
    return (long) blocks * 4;
  }

  /** Writes the Parquet bitset: {@link #byteSize()} bytes, words little-endian. No header. */
  void writeBitset(OutputStream out) throws IOException {
    LittleEndianWords.write(out, words, BASE_INDEX, blocks * 8);
  }

  /** Adds that changed the filter (plus the counts of filters merged in). */
  @Override
  public long insertedCount() {
    return inserted.sum();
  }

  /** Number of set bits. <b>Cost:</b> O(m): it scans every word (the count is not maintained on add). */
  public long bitCount() {
    long count = 0;
    for (int i = BASE_INDEX, end = BASE_INDEX + blocks * 8; i < end; i++) {
      count += Integer.bitCount(words[i]);
    }
    return count;
  }

  /** Share of set bits, in [0, 1]. <b>Cost:</b> O(m), as {@link #bitCount()}. */
  public double fillRatio() {
    return (double) bitCount() / bitSize();
  }

  /**
   * FPR of the filter as it is: mean over blocks of the product over words of (word fill). <b>Cost:</b> O(m): it
   * scans every word.
   */
  public double estimatedFpp() {
    double sum = 0;
    for (int b = 0; b < blocks; b++) {
      double product = 1;
      for (int w = 0; w < 8; w++) {
        product *= Integer.bitCount(words[BASE_INDEX + b * 8 + w]) / 32.0;
      }
      sum += product;
    }
    return sum / blocks;
  }

  /**
   * Estimated distinct keys: per word, −32·ln(1 − x/32) keys set x bits (each key sets one bit per
   * word); averaged over the 8 words of a block and summed over blocks. A full word counts as
   * 32·ln 32. <b>Cost:</b> O(m): it scans every word.
   */
  public long estimatedCardinality() {
    double sum = 0;
    for (int b = 0; b < blocks; b++) {
      double block = 0;
      for (int w = 0; w < 8; w++) {
        int set = Integer.bitCount(words[BASE_INDEX + b * 8 + w]);
        double empty = set == 32 ? 1.0 / 32 : 1 - set / 32.0;
        block += -32.0 * Math.log(empty);
      }
      sum += block / 8;
    }
    return Math.round(sum);
  }

  /**
   * The number of items this filter is sized for, by the classic kind's definition ({@link
   * BloomMath#capacityForHashes} of its m bits and 8 bits per key, the most items for which 8 would be the optimal
   * k): its k is fixed, so its parameters say nothing more about the rate it was planned for.
   */
  @Override
  public long capacity() {
    return BloomMath.capacityForHashes(bitSize(), hashCount());
  }

  /**
   * Whether {@link #estimatedCardinality()} has reached 80% of {@link #capacity()}. <b>Cost:</b> O(m), a scan of
   * every word (as {@link #bitCount()}).
   */
  @Override
  public boolean isNearCapacity() {
    return estimatedCardinality() >= 0.8 * capacity();
  }

  /** Model FPR after {@code n} distinct keys at this size. */
  public double modelFpp(long n) {
    return BlockedBloomMath.splitBlockFalsePositiveRate(n, blocks, 8, 32);
  }

  /** The Parquet hash of a byte-array value: XXH64 seed 0 over the raw bytes. */
  public static long hash(byte[] value, int offset, int length) {
    return XXH64.hashBytesToLong(value, offset, length);
  }

  // ---- single-key API ------------------------------------------------------------------------

  @Override
  public boolean add(byte[] item) {
    return insertHash(XXH64.hashBytesToLong(Objects.requireNonNull(item, "item")));
  }

  /** Adds {@code item[offset, offset + length)}. */
  public boolean add(byte[] item, int offset, int length) {
    Objects.checkFromIndexSize(offset, length, Objects.requireNonNull(item, "item").length);
    return insertHash(XXH64.hashBytesToLong(item, offset, length));
  }

  @Override
  public boolean add(CharSequence item) {
    return insertHash(hashUtf8(item));
  }

  /** Adds the 8 little-endian bytes of {@code item}: Parquet's plain encoding of an INT64 value. */
  @Override
  public boolean add(long item) {
    return insertHash(XXH64.hashLongToLong(item));
  }

  @Override
  public boolean mightContain(byte[] item) {
    return findHash(XXH64.hashBytesToLong(Objects.requireNonNull(item, "item")));
  }

  /** Queries {@code item[offset, offset + length)}. */
  public boolean mightContain(byte[] item, int offset, int length) {
    Objects.checkFromIndexSize(offset, length, Objects.requireNonNull(item, "item").length);
    return findHash(XXH64.hashBytesToLong(item, offset, length));
  }

  @Override
  public boolean mightContain(CharSequence item) {
    return findHash(hashUtf8(item));
  }

  @Override
  public boolean mightContain(long item) {
    return findHash(XXH64.hashLongToLong(item));
  }

  private static long hashUtf8(CharSequence item) {
    return KeyBatches.hashUtf8(XXH64, item);
  }

  private int blockStart(long hash) {
    return (int) (((hash >>> 32) * blocks) >>> 32) * 8 + BASE_INDEX;
  }

  /**
   * Inserts a precomputed Parquet hash (what parquet-java's {@code insertHash} takes).
   *
   * @return true if a bit changed
   */
  public boolean insertHash(long hash) {
    int start = blockStart(hash);
    int x = (int) hash;
    boolean changed = false;
    for (int i = 0; i < 8; i++) {
      int mask = 1 << ((x * SALTS[i]) >>> 27);
      int index = start + i;
      if ((words[index] & mask) == 0) {
        int before = (int) WORDS.getAndBitwiseOr(words, index, mask);
        changed |= (before & mask) == 0;
      }
    }
    if (changed) {
      inserted.increment();
    }
    return changed;
  }

  /** Queries a precomputed Parquet hash (parquet-java's {@code findHash}). */
  public boolean findHash(long hash) {
    int start = blockStart(hash);
    int x = (int) hash;
    for (int i = 0; i < 8; i++) {
      if ((words[start + i] & (1 << ((x * SALTS[i]) >>> 27))) == 0) {
        return false;
      }
    }
    return true;
  }

  private boolean findHashBranchFree(long hash) {
    int start = blockStart(hash);
    int x = (int) hash;
    int all = 1;
    for (int i = 0; i < 8; i++) {
      all &= words[start + i] >>> ((x * SALTS[i]) >>> 27);
    }
    return all != 0;
  }

  /** This filter's probe and insert, for the batch loops it shares with the other blocked kind. */
  private final KeyBatches.Blocks blockOps = new KeyBatches.Blocks() {
    @Override
    public boolean containsBranchFree(long hash) {
      return findHashBranchFree(hash);
    }

    @Override
    public boolean insert(long hash) {
      return insertHash(hash);
    }

    @Override
    public int block(long hash) {
      return (int) (((hash >>> 32) * blocks) >>> 32);
    }

    @Override
    public long line(int block) {
      // Blocks are half lines and block 0 starts at byte 32 of its line (BASE_INDEX), so lines start at odd blocks.
      return (block + 1) >>> 1;
    }

    @Override
    public long lines() {
      return (blocks >>> 1) + 1;
    }
  };

  // ---- batch API -----------------------------------------------------------------------------

  /** Adds every item, hashing a batch of 32 first (see {@link BlockedBloomFilter#addAll(byte[][])}). */
  public int addAll(byte[][] items) {
    return KeyBatches.insertAll(XXH64, KeyBatches.of(items), 0, items.length, blockOps);
  }

  /**
   * {@link #addAll(byte[][])} split over {@code parallelism} threads, each owning a contiguous range of
   * the filter's lines: the same algorithm, filter, counts and concurrency as {@link
   * BlockedBloomFilter#addAll(byte[][], int)}.
   *
   * @return the number of items that changed the filter
   * @throws NullPointerException if {@code items} or one of them is null (nothing is added then)
   * @throws IllegalArgumentException if parallelism &lt; 1
   */
  public int addAll(byte[][] items, int parallelism) {
    return KeyBatches.insertParallel(XXH64, KeyBatches.of(items), parallelism, blockOps);
  }

  /**
   * {@link #addAll(byte[], int[], int[], int)} split over {@code parallelism} threads as {@link
   * BlockedBloomFilter#addAll(byte[][], int)} splits its keys: the same filter and count as the one-thread call.
   *
   * @return the number of items that changed the filter
   * @throws IndexOutOfBoundsException if a slice lies outside {@code buffer} (nothing is added then)
   * @throws IllegalArgumentException if count is outside the arrays or parallelism &lt; 1
   */
  public int addAll(byte[] buffer, int[] offsets, int[] lengths, int count, int parallelism) {
    return KeyBatches.insertParallel(XXH64, KeyBatches.of(buffer, offsets, lengths, count), parallelism, blockOps);
  }

  /**
   * {@link #addAll(CharSequence[])} split over {@code parallelism} threads as {@link
   * BlockedBloomFilter#addAll(byte[][], int)} splits its keys (each thread encodes its own keys' UTF-8 into its own scratch): the same
   * filter and count as the one-thread call.
   *
   * @return the number of items that changed the filter
   * @throws NullPointerException if {@code items} or one of them is null (nothing is added then)
   * @throws IllegalArgumentException if parallelism &lt; 1
   */
  public int addAll(CharSequence[] items, int parallelism) {
    return KeyBatches.insertParallel(XXH64, KeyBatches.of(items), parallelism, blockOps);
  }

  /**
   * The partitioned insert of {@code source} over exactly {@code parts} line ranges, whatever the
   * batch size (tests reach small batches and more ranges than lines through this); {@code changed}
   * receives what {@code add} of each key in order would have returned.
   */
  int addAllOwned(KeyBatches.Source source, boolean[] changed, int parts) {
    return KeyBatches.insertOwned(XXH64, source, parts, blockOps, changed);
  }

  /** {@link #addAllOwned(KeyBatches.Source, boolean[], int)} of an array of keys. */
  int addAllOwned(byte[][] items, boolean[] changed, int parts) {
    return addAllOwned(KeyBatches.of(items), changed, parts);
  }

  /** Adds the {@code count} slices {@code buffer[offsets[i], offsets[i] + lengths[i])}. */
  public int addAll(byte[] buffer, int[] offsets, int[] lengths, int count) {
    return KeyBatches.insertAll(XXH64, KeyBatches.of(buffer, offsets, lengths, count), 0, count, blockOps);
  }

  /** Adds the UTF-8 encoding of every item, batched. */
  public int addAll(CharSequence[] items) {
    return KeyBatches.insertAll(XXH64, KeyBatches.of(items), 0, items.length, blockOps);
  }

  /** Queries every item into {@code out}; returns the number of {@code true} answers. */
  public int mightContainAll(byte[][] items, boolean[] out) {
    return KeyBatches.probeAll(XXH64, KeyBatches.of(items), 0, items.length, out, blockOps);
  }

  /** Queries the {@code count} slices {@code buffer[offsets[i], offsets[i] + lengths[i])} into {@code out}. */
  public int mightContainAll(byte[] buffer, int[] offsets, int[] lengths, int count, boolean[] out) {
    return KeyBatches.probeAll(XXH64, KeyBatches.of(buffer, offsets, lengths, count), 0, count, out, blockOps);
  }

  /** Queries the UTF-8 encoding of every item into {@code out}. */
  public int mightContainAll(CharSequence[] items, boolean[] out) {
    return KeyBatches.probeAll(XXH64, KeyBatches.of(items), 0, items.length, out, blockOps);
  }

  // ---- merge and copy ------------------------------------------------------------------------

  /** True if {@code other} is another filter with the same number of blocks (the only placement parameter). */
  public boolean isCompatible(SplitBlockBloomFilter other) {
    Objects.requireNonNull(other, "other");
    return other != this && other.blocks == blocks;
  }

  /**
   * ORs {@code other} into this filter.
   *
   * @throws IncompatibleFilterException if the block counts differ
   * @throws IllegalArgumentException if {@code other} is this filter (it would only double {@link
   *     #insertedCount()})
   */
  public void mergeFrom(SplitBlockBloomFilter other) {
    Objects.requireNonNull(other, "other");
    if (other == this) {
      throw new IllegalArgumentException("cannot merge a filter into itself");
    }
    if (other.blocks != blocks) {
      throw new IncompatibleFilterException("block count", blocks, other.blocks);
    }
    for (int i = BASE_INDEX, end = BASE_INDEX + blocks * 8; i < end; i++) {
      int bits = (int) WORDS.getOpaque(other.words, i);
      if ((words[i] | bits) != words[i]) {
        WORDS.getAndBitwiseOr(words, i, bits);
      }
    }
    inserted.add(other.insertedCount());
  }

  /** An independent copy. */
  public SplitBlockBloomFilter copy() {
    SplitBlockBloomFilter copy = new SplitBlockBloomFilter(blocks);
    for (int i = BASE_INDEX, end = BASE_INDEX + blocks * 8; i < end; i++) {
      copy.words[i] = (int) WORDS.getOpaque(words, i);
    }
    copy.inserted.add(insertedCount());
    return copy;
  }

  @Override
  public String toString() {
    return "SplitBlockBloomFilter{blocks=" + blocks + ", bytes=" + byteSize() + ", inserted=" + insertedCount() + "}";
  }
}
