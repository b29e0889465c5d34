package io.bloomery.blocked;

import com.dynatrace.hash4j.hashing.Hasher64;
import com.dynatrace.hash4j.hashing.Hashing;
import io.bloomery.filter.BloomFilter;
import io.bloomery.filter.BoundedFilter;
import io.bloomery.filter.FilterKind;
import io.bloomery.filter.IncompatibleFilterException;
import io.bloomery.filter.MembershipFilter;
import io.bloomery.filter.Mergeable;
import io.bloomery.filter.UnfoldableFilterException;
import io.bloomery.hash.ProtocolId;
import io.bloomery.internal.KindAccess;
import io.bloomery.internal.ParallelBatches;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Arrays;
import java.util.Objects;
import java.util.concurrent.atomic.LongAdder;

/**
 * A cache-blocked Bloom filter: every key sets all of its bits inside one 512-bit block, so a lookup
 * costs one cache-line miss instead of up to k. The fast default for large filters.
 *
 * <p><b>Contract.</b> An added item is never reported absent; {@code true} means "maybe, go and
 * check". The false-positive rate on known non-members follows the blocked model
 * {@link BlockedBloomMath#blockedFalsePositiveRate}; at the same memory it is a little worse than a
 * classic Bloom filter's, so at 1% the blocked filter needs 9.90 bits per key against the classic
 * optimum of 9.59 (+3.2%; +7.7% at 0.1%, +14% at 0.01%). There is no delete. Past the planned
 * number of keys the FPR climbs smoothly; nothing refuses inserts.
 *
 * <p><b>Thread-safety.</b> All methods may be called from any number of threads. Adds are lock-free
 * (an atomic {@code getAndBitwiseOr} per bit not yet set); lookups never block and never write. A
 * lookup that starts after an add returned (in the happens-before sense) sees that add; a lookup
 * racing with an add may or may not see it, never part of a word. Counters ({@link #insertedCount()})
 * are exact once all adds have returned. A parallel {@code addAll(…, parallelism)} (of byte arrays,
 * packed slices or {@code CharSequence}s) gives each of its threads its own range of blocks, hashes every
 * key once and hands it to the thread owning its block; its bit sets stay atomic, so other threads'
 * adds may run meanwhile without losing a bit, and all of its bits are set and visible to lookups
 * ordered after it when it returns.
 *
 * <h2>Protocol {@code xxh3-blocked-v1} (frozen)</h2>
 *
 * <pre>
 * parameters: blocks B (1 ≤ B ≤ MAX_BLOCKS), hashes k (1..16), seed bytes S (0..255 bytes)
 * s      = S empty ? 0 : XXH3-64(S, seed 0)
 * h      = XXH3-64(item bytes, seed s)                         (hash4j Hashing.xxh3_64(s))
 * block  = ((h >>> 32) * B) >>> 32                             (multiply-high of the hash's high 32 bits)
 * x      = h mod 2^32                                          (the low 32 bits)
 * for i in 0..k-1:
 *   y_i  = (x * SALT[i]) mod 2^32
 *   p_i  = y_i >>> 23                                          (9 bits: 0..511, position in the block)
 *   set bit (p_i mod 64) of word (p_i >>> 6) of the block      (word = y_i >>> 29)
 * global bit of p_i = 512 * block + p_i; filter word j holds bits 64j..64j+63, least significant first
 * SALT = 0x47b6137b 0x44974d91 0x8824ad5b 0xa2b7289d 0x705495c7 0x2df1424b 0x9efc4947 0x5c6bfb31
 *        (Parquet SBBF's eight salts) then 0xa1b965f5 0x8009454f 0x724c81ed 0x51a8749b
 *        0x747ea2eb 0x1f4532e1 0xc916ab3d 0x41c98ac3
 * </pre>
 *
 * <p>The block index uses the high half of the hash and the in-block positions the low half, so the
 * two are independent; multiply-shift by odd salts (Dietzfelbinger et al.) maps the 32 low bits to
 * k uniform positions. Positions may repeat (the model counts with replacement).
 *
 * <h2>Why one block per key</h2>
 *
 * <p>Putze, Sanders, Singler, "Cache-, Hash- and Space-Efficient Bloom Filters" (WEA 2007): confining
 * a key to one cache line removes k−1 of the k misses of a classic filter for a small loss of
 * accuracy, because blocks receive a Poisson-distributed number of keys. RocksDB's FastLocalBloom and
 * Impala/Parquet's split-block filter make the same trade. A lookup costs one hash of the item and one
 * cache line, whatever k is; the figures against Guava's classic filter are in docs/BENCHMARKS.md.
 *
 * <p><b>Alignment.</b> A 512-bit block only costs one miss if it sits on one 64-byte line. The words
 * live in a {@code long[]} over-allocated by 7 longs, and block 0 starts at index {@link #BASE_INDEX}
 * = 6. Java offers no Unsafe-free way to read an array's address, so the offset comes from HotSpot's
 * layout: a {@code long[]}'s first element is 16 bytes past the object start (12-byte header + 4-byte
 * length, 8-byte element alignment; also with compact object headers), and G1 places any array larger
 * than half a heap region (≥ 512 KiB) at the start of a region, i.e. on a 64-byte boundary, so element
 * 6 is at offset 64. Small arrays are only 8-byte aligned, but they also fit in cache. If a JVM lays
 * arrays out differently, blocks straddle two lines: answers stay correct, only slower.
 * {@code io.bloomery.bench.AlignmentProbe} times random whole-block reads at each of the 8 offsets and
 * from a direct {@code ByteBuffer.alignedSlice(64)}; the aligned direct buffer reads no faster than the
 * aligned {@code long[]} (docs/BENCHMARKS.md, "Block alignment"), so the filter keeps the heap array:
 * no off-heap lifetime to manage, atomic {@code getAndBitwiseOr} on array elements, and up to 16 GiB
 * in one array.
 */
public final class BlockedBloomFilter implements BoundedFilter, Mergeable<BlockedBloomFilter> {

  /** Index in the backing array of block 0's first word; see the class comment on alignment. */
  static final int BASE_INDEX = 6;

  /** Largest block count: 8 longs per block plus padding in one {@code long[]} (16 GiB). */
  public static final long MAX_BLOCKS = (Integer.MAX_VALUE - 16L) / 8;

  /** Largest seed in bytes. */
  public static final int MAX_SEED_BYTES = 255;

  static final int[] SALTS = {
    0x47b6137b, 0x44974d91, 0x8824ad5b, 0xa2b7289d, 0x705495c7, 0x2df1424b, 0x9efc4947, 0x5c6bfb31,
    0xa1b965f5, 0x8009454f, 0x724c81ed, 0x51a8749b, 0x747ea2eb, 0x1f4532e1, 0xc916ab3d, 0x41c98ac3
  };

  private static final VarHandle WORDS = MethodHandles.arrayElementVarHandle(long[].class);

  private final long[] words;
  private final int blocks;
  private final int hashes;
  private final byte[] seed;
  private final Hasher64 hasher;
  private final LongAdder inserted = new LongAdder();
  /** {@link #capacity()}, worked out on first use (it bisects the blocked model); 0 until then. */
  private volatile long capacity;

  private BlockedBloomFilter(byte[] seed, long blocks, int hashes) {
    checkParameters(seed, blocks, hashes);
    this.seed = seed.clone();
    this.blocks = (int) blocks;
    this.hashes = hashes;
    this.hasher = hasher(this.seed);
    this.words = new long[this.blocks * 8 + 7];
  }

  static {
    KindAccess.register(BlockedBloomFilter.class, new KindAccess.Blocked<BlockedBloomFilter>() {
      @Override
      public BlockedBloomFilter restore(byte[] seed, long blocks, int hashes, long insertedCount,
          KindAccess.WordSource words) throws IOException {
        return BlockedBloomFilter.restore(seed, blocks, hashes, insertedCount, words);
      }

      @Override
      public long wordCount(BlockedBloomFilter filter) {
        return filter.wordCount();
      }

      @Override
      public long word(BlockedBloomFilter filter, long index) {
        return filter.word(index);
      }
    });
  }

  /**
   * A filter sized for {@code expectedInsertions} distinct keys at false-positive rate {@code fpp}
   * by the blocked model (fewest blocks, then the k that minimises the model), empty seed.
   *
   * @throws IllegalArgumentException if expectedInsertions &lt; 0, fpp is outside (0, 1), or the
   *     filter would exceed {@link #MAX_BLOCKS}
   */
  public static BlockedBloomFilter create(long expectedInsertions, double fpp) {
    long blocks = BlockedBloomMath.blockedBlocks(expectedInsertions, fpp);
    int hashes = BlockedBloomMath.optimalBlockedHashes(expectedInsertions, blocks);
    return new BlockedBloomFilter(new byte[0], blocks, hashes);
  }

  /**
   * A filter with explicit parameters.
   *
   * @param seed 0..255 bytes mixed into the hash (filters merge only with the same seed)
   * @param blocks number of 512-bit blocks, 1..{@link #MAX_BLOCKS}
   * @param hashes bits per key, 1..16
   */
  public static BlockedBloomFilter create(byte[] seed, long blocks, int hashes) {
    return new BlockedBloomFilter(Objects.requireNonNull(seed, "seed"), blocks, hashes);
  }

  /**
   * Rebuilds a filter from its parameters and its {@link #wordCount()} words as 8-byte little-endian
   * values (the layout {@link #writeWords} produces).
   *
   * @throws EOFException if the stream ends early
   * @throws IllegalArgumentException if the parameters are invalid
   */
  static BlockedBloomFilter restore(byte[] seed, long blocks, int hashes, long insertedCount, InputStream words)
      throws IOException {
    if (insertedCount < 0) {
      throw new IllegalArgumentException("insertedCount must be >= 0, was " + insertedCount);
    }
    BlockedBloomFilter filter = create(seed, blocks, hashes);
    LittleEndianWords.read(words, filter.words, BASE_INDEX, filter.blocks * 8);
    filter.inserted.add(insertedCount);
    return filter;
  }

  /**
   * Rebuilds a filter from its parameters and its {@link #wordCount()} words in order (word j holds
   * bits 64j..64j+63), as the binary format streams them.
   *
   * @throws IllegalArgumentException if the parameters are invalid
   */
  static BlockedBloomFilter restore(byte[] seed, long blocks, int hashes, long insertedCount,
      KindAccess.WordSource words) throws IOException {
    if (insertedCount < 0) {
      throw new IllegalArgumentException("insertedCount must be >= 0, was " + insertedCount);
    }
    BlockedBloomFilter filter = create(seed, blocks, hashes);
    for (int i = BASE_INDEX, end = BASE_INDEX + filter.blocks * 8; i < end; i++) {
      filter.words[i] = words.nextWord();
    }
    filter.inserted.add(insertedCount);
    return filter;
  }

  static void checkParameters(byte[] seed, long blocks, int hashes) {
    if (blocks < 1 || blocks > MAX_BLOCKS) {
      throw new IllegalArgumentException("blocks must be in [1, " + MAX_BLOCKS + "], was " + blocks);
    }
    if (hashes < 1 || hashes > BlockedBloomMath.MAX_BLOCKED_HASHES) {
      throw new IllegalArgumentException("hashes must be in [1, 16], was " + hashes);
    }
    if (seed.length > MAX_SEED_BYTES) {
      throw new IllegalArgumentException("seed must be at most 255 bytes, was " + seed.length);
    }
  }

  static Hasher64 hasher(byte[] seed) {
    return seed.length == 0 ? Hashing.xxh3_64() : Hashing.xxh3_64(Hashing.xxh3_64().hashBytesToLong(seed));
  }

  @Override
  public FilterKind kind() {
    return FilterKind.BLOCKED_BLOOM;
  }

  /** Always {@link ProtocolId#XXH3_BLOCKED_V1}. */
  @Override
  public ProtocolId protocolId() {
    return ProtocolId.XXH3_BLOCKED_V1;
  }

  /** A copy of the seed. */
  public byte[] seed() {
    return seed.clone();
  }

  /** Number of 512-bit blocks. */
  public long blockCount() {
    return blocks;
  }

  /** Number of bits m = 512 × blocks. */
  public long bitSize() {
    return (long) blocks * BlockedBloomMath.BLOCKED_BLOCK_BITS;
  }

  /** Bits set per key, k. */
  public int hashCount() {
    return hashes;
  }

  /** Number of 64-bit words, 8 × blocks. */
  long wordCount() {
    return (long) blocks * 8;
  }

  /** Word {@code index} (bits 64·index .. 64·index+63, least significant first). */
  long word(long index) {
    Objects.checkIndex(index, wordCount());
    return (long) WORDS.getOpaque(words, BASE_INDEX + (int) index);
  }

  /** Writes the {@link #wordCount()} words as 8-byte little-endian values. */
  void writeWords(OutputStream out) throws IOException {
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
      count += Long.bitCount(words[i]);
    }
    return count;
  }

  /** Share of set bits, in [0, 1]. <b>Cost:</b> O(m), as {@link #bitCount()}. */
  public double fillRatio() {
    return (double) bitCount() / bitSize();
  }

  /**
   * The FPR of the filter as it is now: the mean over blocks of (block fill)^k, which is what a
   * random non-member sees (it lands in a uniform block and needs k set bits there). <b>Cost:</b> O(m): it
   * scans every block.
   */
  public double estimatedFpp() {
    double sum = 0;
    for (int b = 0; b < blocks; b++) {
      sum += Math.pow(blockBits(b) / 512.0, hashes);
    }
    return sum / blocks;
  }

  /**
   * Estimated number of distinct keys added: the Swamidass–Baldi estimate −(512/k)·ln(1 − x/512)
   * summed per block (x = the block's set bits), which uses the block structure and stays accurate
   * after merges. A saturated block counts as 512·ln(512)/k keys. <b>Cost:</b> O(m): it scans every block.
   */
  public long estimatedCardinality() {
    double sum = 0;
    for (int b = 0; b < blocks; b++) {
      int set = blockBits(b);
      double empty = set == 512 ? 1.0 / 512 : 1 - set / 512.0;
      sum += -512.0 / hashes * Math.log(empty);
    }
    return Math.round(sum);
  }

  /**
   * The number of items this filter is sized for: the most for which its k is still the optimal blocked k for its
   * blocks ({@link BlockedBloomMath#blockedCapacity}), derived from the recorded parameters alone. A filter made by
   * {@link #create(long, double)} for n items has a capacity of at least n.
   */
  @Override
  public long capacity() {
    long known = capacity;
    if (known == 0) {
      known = BlockedBloomMath.blockedCapacity(blocks, hashes) + 1;
      capacity = known;
    }
    return known - 1;
  }

  /**
   * Whether {@link #estimatedCardinality()} has reached 80% of {@link #capacity()}. <b>Cost:</b> O(m), a scan of
   * every word (as {@link #bitCount()}).
   */
  @Override
  public boolean isNearCapacity() {
    return estimatedCardinality() >= 0.8 * capacity();
  }

  /** Model FPR after {@code n} distinct keys with this filter's parameters. */
  public double modelFpp(long n) {
    return BlockedBloomMath.blockedFalsePositiveRate(n, blocks, BlockedBloomMath.BLOCKED_BLOCK_BITS, hashes);
  }

  private int blockBits(int block) {
    int count = 0;
    for (int i = BASE_INDEX + block * 8, end = i + 8; i < end; i++) {
      count += Long.bitCount(words[i]);
    }
    return count;
  }

  // ---- single-key API ------------------------------------------------------------------------

  @Override
  public boolean add(byte[] item) {
    return addHash(hasher.hashBytesToLong(Objects.requireNonNull(item, "item")));
  }

  /** Adds {@code item[offset, offset + length)}. */
  public boolean add(byte[] item, int offset, int length) {
    Objects.checkFromIndexSize(offset, length, Objects.requireNonNull(item, "item").length);
    return addHash(hasher.hashBytesToLong(item, offset, length));
  }

  @Override
  public boolean add(CharSequence item) {
    return addHash(hashUtf8(item));
  }

  @Override
  public boolean add(long item) {
    return addHash(hasher.hashLongToLong(item));
  }

  @Override
  public boolean mightContain(byte[] item) {
    return containsHash(hasher.hashBytesToLong(Objects.requireNonNull(item, "item")));
  }

  /** Queries {@code item[offset, offset + length)}. */
  public boolean mightContain(byte[] item, int offset, int length) {
    Objects.checkFromIndexSize(offset, length, Objects.requireNonNull(item, "item").length);
    return containsHash(hasher.hashBytesToLong(item, offset, length));
  }

  @Override
  public boolean mightContain(CharSequence item) {
    return containsHash(hashUtf8(item));
  }

  @Override
  public boolean mightContain(long item) {
    return containsHash(hasher.hashLongToLong(item));
  }

  private long hashUtf8(CharSequence item) {
    return KeyBatches.hashUtf8(hasher, item);
  }

  private int blockStart(long hash) {
    return (int) (((hash >>> 32) * blocks) >>> 32) * 8 + BASE_INDEX;
  }

  boolean addHash(long hash) {
    int start = blockStart(hash);
    int x = (int) hash;
    boolean changed = false;
    for (int i = 0; i < hashes; i++) {
      int y = x * SALTS[i];
      int index = start + (y >>> 29);
      long mask = 1L << (y >>> 23);
      if ((words[index] & mask) == 0) {
        long before = (long) WORDS.getAndBitwiseOr(words, index, mask);
        changed |= (before & mask) == 0;
      }
    }
    if (changed) {
      inserted.increment();
    }
    return changed;
  }

  /**
   * Sets the key's bits with plain stores and does not count it: the layer operation of {@link
   * ScalableBlockedBloomFilter}, whose writers are serialized and which keeps its own per-layer counts.
   *
   * @return whether at least one bit was unset
   */
  boolean setHash(long hash) {
    int start = blockStart(hash);
    int x = (int) hash;
    boolean changed = false;
    for (int i = 0; i < hashes; i++) {
      int y = x * SALTS[i];
      int index = start + (y >>> 29);
      long mask = 1L << (y >>> 23);
      long word = words[index];
      if ((word & mask) == 0) {
        words[index] = word | mask;
        changed = true;
      }
    }
    return changed;
  }

  /** Early exit: the best single-key path, where the branch predictor rarely sees two misses in a row. */
  boolean containsHash(long hash) {
    int start = blockStart(hash);
    int x = (int) hash;
    for (int i = 0; i < hashes; i++) {
      int y = x * SALTS[i];
      if ((words[start + (y >>> 29)] & (1L << (y >>> 23))) == 0) {
        return false;
      }
    }
    return true;
  }

  /** Branch-free: lets the CPU run ahead to the next key's block while this one's line is missing. */
  private boolean containsHashBranchFree(long hash) {
    int start = blockStart(hash);
    int x = (int) hash;
    long all = 1;
    for (int i = 0; i < hashes; i++) {
      int y = x * SALTS[i];
      all &= words[start + (y >>> 29)] >>> (y >>> 23);
    }
    return all != 0;
  }

  /** This filter's probe and insert, for the batch loops it shares with the other blocked kind. */
  private final KeyBatches.Blocks blockOps = new KeyBatches.Blocks() {
    @Override
    public boolean containsBranchFree(long hash) {
      return containsHashBranchFree(hash);
    }

    @Override
    public boolean insert(long hash) {
      return addHash(hash);
    }

    @Override
    public int block(long hash) {
      return (int) (((hash >>> 32) * blocks) >>> 32);
    }

    @Override
    public long line(int block) {
      return block; // block b is words 8b..8b+7 past BASE_INDEX: one line
    }

    @Override
    public long lines() {
      return blocks;
    }
  };

  // ---- batch API -----------------------------------------------------------------------------

  /**
   * Adds every item. Hashes a batch of 32 keys, then reads their blocks (the misses overlap), then
   * sets the missing bits atomically while the lines are in cache. Allocates nothing per key.
   *
   * @return the number of items that changed the filter
   */
  public int addAll(byte[][] items) {
    return KeyBatches.insertAll(hasher, KeyBatches.of(items), 0, items.length, blockOps);
  }

  /**
   * Adds the {@code count} items {@code buffer[offsets[i], offsets[i] + lengths[i])}, for callers
   * that hold many keys in one array. Same batching as {@link #addAll(byte[][])}.
   *
   * @return the number of items that changed the filter
   */
  public int addAll(byte[] buffer, int[] offsets, int[] lengths, int count) {
    return KeyBatches.insertAll(hasher, KeyBatches.of(buffer, offsets, lengths, count), 0, count, blockOps);
  }

  /** Adds the UTF-8 encoding of every item, batched like {@link #addAll(byte[][])}. */
  public int addAll(CharSequence[] items) {
    return KeyBatches.insertAll(hasher, KeyBatches.of(items), 0, items.length, blockOps);
  }

  /**
   * Queries every item: {@code out[i]} is set to {@code mightContain(items[i])}. Hashes a batch of
   * 32 keys first, then probes them branch-free so their cache misses overlap. Allocates nothing per
   * key.
   *
   * @return the number of {@code true} answers
   * @throws IllegalArgumentException if {@code out} is shorter than {@code items}
   */
  public int mightContainAll(byte[][] items, boolean[] out) {
    return KeyBatches.probeAll(hasher, KeyBatches.of(items), 0, items.length, out, blockOps);
  }

  /**
   * Queries the {@code count} items {@code buffer[offsets[i], offsets[i] + lengths[i])} into
   * {@code out[0, count)}.
   *
   * @return the number of {@code true} answers
   */
  public int mightContainAll(byte[] buffer, int[] offsets, int[] lengths, int count, boolean[] out) {
    return KeyBatches.probeAll(hasher, KeyBatches.of(buffer, offsets, lengths, count), 0, count, out, blockOps);
  }

  /** Queries the UTF-8 encoding of every item, batched like {@link #mightContainAll(byte[][], boolean[])}. */
  public int mightContainAll(CharSequence[] items, boolean[] out) {
    return KeyBatches.probeAll(hasher, KeyBatches.of(items), 0, items.length, out, blockOps);
  }

  /**
   * {@link #addAll(byte[][])} split over {@code parallelism} threads: the calling thread and workers
   * of the common {@link java.util.concurrent.ForkJoinPool}. Each thread owns a contiguous range of
   * blocks (whole cache lines). The keys go in rounds: in each, every thread hashes its own share of a
   * chunk of keys, once, and hands each (hash, index) to the thread that owns the key's block; then
   * every thread inserts the keys handed to it, in key order, so no two threads write one cache line
   * and no key is hashed twice. The filter, {@link #insertedCount()} and the returned count are exactly
   * those of the one-thread call (equal keys credit the first). If a worker of the pool is busy, the
   * calling thread does its share too, so the call never waits for a thread that has not started.
   *
   * <p>Concurrency: this kind allows any number of concurrent writers, so each bit still unset is set
   * by an atomic OR (a plain read-modify-write could erase a bit that another thread's {@link #add}
   * set in the same word between the read and the store): adds and batches from other threads may run
   * at the same time and none of their bits is lost. A lookup racing with the call sees some of its
   * keys, never a torn word; every bit is set, and visible to a lookup ordered after the call, when it
   * returns (every round's writes are ordered before the next round and before the return).
   *
   * @return the number of items that changed the filter
   * @throws NullPointerException if {@code items} or one of them is null (nothing is added then)
   * @throws IllegalArgumentException if parallelism &lt; 1
   */
  public int addAll(byte[][] items, int parallelism) {
    return KeyBatches.insertParallel(hasher, KeyBatches.of(items), parallelism, blockOps);
  }

  /**
   * {@link #addAll(byte[], int[], int[], int)} split over {@code parallelism} threads as {@link
   * #addAll(byte[][], int)} splits its keys: the same filter and count as the one-thread call.
   *
   * @return the number of items that changed the filter
   * @throws IndexOutOfBoundsException if a slice lies outside {@code buffer} (nothing is added then)
   * @throws IllegalArgumentException if count is outside the arrays or parallelism &lt; 1
   */
  public int addAll(byte[] buffer, int[] offsets, int[] lengths, int count, int parallelism) {
    return KeyBatches.insertParallel(hasher, KeyBatches.of(buffer, offsets, lengths, count), parallelism, blockOps);
  }

  /**
   * {@link #addAll(CharSequence[])} split over {@code parallelism} threads as {@link
   * #addAll(byte[][], int)} splits its keys (each thread encodes its own keys' UTF-8 into its own scratch): the same
   * filter and count as the one-thread call.
   *
   * @return the number of items that changed the filter
   * @throws NullPointerException if {@code items} or one of them is null (nothing is added then)
   * @throws IllegalArgumentException if parallelism &lt; 1
   */
  public int addAll(CharSequence[] items, int parallelism) {
    return KeyBatches.insertParallel(hasher, KeyBatches.of(items), parallelism, blockOps);
  }

  /**
   * The partitioned insert of {@code source} over exactly {@code parts} line ranges, whatever the
   * batch size (tests reach small batches and more ranges than lines through this); {@code changed}
   * receives what {@code add} of each key in order would have returned.
   */
  int addAllOwned(KeyBatches.Source source, boolean[] changed, int parts) {
    return KeyBatches.insertOwned(hasher, source, parts, blockOps, changed);
  }

  /** {@link #addAllOwned(KeyBatches.Source, boolean[], int)} of an array of keys. */
  int addAllOwned(byte[][] items, boolean[] changed, int parts) {
    return addAllOwned(KeyBatches.of(items), changed, parts);
  }

  /**
   * {@link #mightContainAll(byte[][], boolean[])} split over {@code parallelism} threads of the common
   * {@link java.util.concurrent.ForkJoinPool}; the same answers as the one-thread call.
   *
   * @throws IllegalArgumentException if {@code out} is shorter than {@code items} or parallelism &lt; 1
   */
  public int mightContainAll(byte[][] items, boolean[] out, int parallelism) {
    KeyBatches.Source source = KeyBatches.of(items);
    KeyBatches.checkOut(out, items.length);
    return ParallelBatches.sum(items.length, parallelism, (from, to) -> KeyBatches.probeAll(hasher, source, from, to, out, blockOps));
  }

  // ---- merge and copy ------------------------------------------------------------------------

  /**
   * True if {@link #mergeFrom} would accept {@code other}: same seed, block count and k, and not this
   * filter itself.
   */
  public boolean isCompatible(BlockedBloomFilter other) {
    Objects.requireNonNull(other, "other");
    return other != this && blocks == other.blocks && hashes == other.hashes && Arrays.equals(seed, other.seed);
  }

  /**
   * ORs {@code other} into this filter (the union: every item of either is then maybe present).
   * Safe under concurrent adds to either filter; bits set in {@code other} before the call are set
   * here after it.
   *
   * @throws IncompatibleFilterException naming the first placement parameter that differs
   * @throws IllegalArgumentException if {@code other} is this filter (it would only double {@link
   *     #insertedCount()})
   */
  public void mergeFrom(BlockedBloomFilter other) {
    Objects.requireNonNull(other, "other");
    if (other == this) {
      throw new IllegalArgumentException("cannot merge a filter into itself");
    }
    if (blocks != other.blocks) {
      throw new IncompatibleFilterException("block count", blocks, other.blocks);
    }
    if (hashes != other.hashes) {
      throw new IncompatibleFilterException("hash count k", hashes, other.hashes);
    }
    if (!Arrays.equals(seed, other.seed)) {
      throw new IncompatibleFilterException("seed", java.util.HexFormat.of().formatHex(seed), java.util.HexFormat.of().formatHex(other.seed));
    }
    for (int i = BASE_INDEX, end = BASE_INDEX + blocks * 8; i < end; i++) {
      long bits = (long) WORDS.getOpaque(other.words, i);
      if ((words[i] | bits) != words[i]) {
        WORDS.getAndBitwiseOr(words, i, bits);
      }
    }
    inserted.add(other.insertedCount());
  }

  /**
   * Whether {@link #fold()} can halve this filter: its block count B is a power of two of at least 2. {@link
   * BlockedBloomMath#foldableBlocks} rounds a planned B up to such a count.
   */
  public boolean isFoldable() {
    return blocks >= 2 && Integer.bitCount(blocks) == 1;
  }

  /**
   * A new filter of B/2 blocks holding every item of this one: block j of the result is block 2j OR block 2j+1 of
   * this filter, word by word. With B = 2<sup>p</sup> an item's block is the top p bits of its hash's high 32 bits
   * ({@code ((h >>> 32) * B) >>> 32}), with B/2 the top p-1 bits, the old block shifted right by one; the bits
   * inside a block do not depend on B. So every item's bits are set in the result and no member is lost. Same seed,
   * k and inserted count; the rate is that of a B/2-block filter with the same items ({@link #estimatedFpp()} of
   * the result). This filter is unchanged; concurrent adds may or may not be included.
   *
   * @throws UnfoldableFilterException unless {@link #isFoldable()}
   */
  public BlockedBloomFilter fold() {
    requireFoldable();
    BlockedBloomFilter folded = new BlockedBloomFilter(seed, blocks >>> 1, hashes);
    for (int b = 0; b < folded.blocks; b++) {
      int to = BASE_INDEX + b * 8;
      int from = BASE_INDEX + b * 16;
      for (int w = 0; w < 8; w++) {
        folded.words[to + w] = (long) WORDS.getOpaque(words, from + w) | (long) WORDS.getOpaque(words, from + 8 + w);
      }
    }
    folded.inserted.add(insertedCount());
    return folded;
  }

  /**
   * Folds this filter ({@link #fold()}) again and again while the folded filter's {@link #estimatedFpp()} is at most
   * {@code maxFpp}, at most {@code maxFolds} times, and while the size still allows a fold. Returns the last folded
   * filter, or this filter if no fold stayed within {@code maxFpp} (or {@code maxFolds} is 0).
   *
   * @throws UnfoldableFilterException if this filter cannot fold at all ({@link #isFoldable()}), whatever the limits
   * @throws IllegalArgumentException if {@code maxFolds < 0}
   */
  public BlockedBloomFilter foldWhile(double maxFpp, long maxFolds) {
    if (maxFolds < 0) {
      throw new IllegalArgumentException("maxFolds must be >= 0, was " + maxFolds);
    }
    requireFoldable();
    BlockedBloomFilter current = this;
    for (long n = 0; n < maxFolds && current.isFoldable(); n++) {
      BlockedBloomFilter folded = current.fold();
      if (folded.estimatedFpp() > maxFpp) {
        break;
      }
      current = folded;
    }
    return current;
  }

  private void requireFoldable() {
    if (!isFoldable()) {
      throw new UnfoldableFilterException("a blocked filter of " + blocks
          + " blocks cannot be folded: the block count must be a power of two of at least 2");
    }
  }

  /** An independent copy (a rolling snapshot if adds run concurrently). */
  public BlockedBloomFilter copy() {
    BlockedBloomFilter copy = new BlockedBloomFilter(seed, blocks, hashes);
    for (int i = BASE_INDEX, end = BASE_INDEX + blocks * 8; i < end; i++) {
      copy.words[i] = (long) WORDS.getOpaque(words, i);
    }
    copy.inserted.add(insertedCount());
    return copy;
  }

  @Override
  public String toString() {
    return "BlockedBloomFilter{blocks=" + blocks + ", hashes=" + hashes + ", bits=" + bitSize()
        + ", inserted=" + insertedCount() + "}";
  }
}
