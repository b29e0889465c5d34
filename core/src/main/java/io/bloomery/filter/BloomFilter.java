package io.bloomery.filter;

import io.bloomery.hash.DoubleHashingPlacement;
import io.bloomery.hash.EnhancedDoubleHashing;
import io.bloomery.hash.HashProtocol;
import io.bloomery.hash.ProtocolId;
import io.bloomery.hash.Protocols;
import io.bloomery.internal.ClassicProbe;
import io.bloomery.internal.FilterCompatibility;
import io.bloomery.internal.KindAccess.WordSource;
import io.bloomery.internal.KindAccess;
import io.bloomery.internal.ParallelBatches;
import io.bloomery.internal.Utf8Scratch;
import io.bloomery.sizing.BloomMath;
import java.io.IOException;
import java.io.OutputStream;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Arrays;
import java.util.Objects;
import java.util.concurrent.atomic.LongAdder;

/*
 * The classic Bloom filter (Bloom, "Space/Time Trade-offs in Hash Coding with Allowable Errors",
 * CACM 1970): m bits, and each item sets the k bits its hash protocol places it on. An item is
 * reported "maybe present" iff all k of its bits are set, so an added item is never reported absent,
 * and a non-member is a false positive with probability ~ (1 - e^(-kn/m))^k after n insertions.
 *
 * Storage is segmented: word j (bits 64j .. 64j+63, LSB first) lives in segment j >>> segmentShift.
 * A single long[] stops at 2^31 - 1 words (~1.37e11 bits, the Guava and Spark ceiling); segments of
 * 2^27 words (1 GiB) lift that to MAX_BITS while keeping each array small enough to allocate. All
 * index arithmetic is on long; only the in-segment offset is narrowed to int, after masking.
 *
 * Concurrency follows Guava's LockFreeBitArray (Guava 23+): a volatile read first (most probes of a
 * filled filter hit set bits, and reading does not take the cache line exclusive), then one atomic
 * getAndBitwiseOr per bit that needs setting. Whichever thread flips a bit counts it, so the set-bit
 * counter is exact once writers are quiescent.
 *
 * Single-writer mode (createSingleWriter) replaces the atomic getAndBitwiseOr with a plain read and a
 * release store, and the LongAdders with opaque fields, for loaders with one adding thread (a CLI
 * build, a rebuild from a snapshot). It saves the atomic instruction per bit set, which counts most
 * when the bitmap is cache-resident and least when each probe is a cache miss.
 *
 * For the default protocol (xxh3-edh-v1) positions are walked in place from one 64-bit hash
 * (DoubleHashingPlacement), so add and mightContain allocate nothing; other protocols fill a long[k]
 * per call (they are SHA-256 or foreign-compatibility protocols, not hot paths).
 *
 * Statistics: estimatedCardinality is Swamidass and Baldi's estimator (J. Chem. Inf. Model. 2007),
 * n* = -(m/k) ln(1 - X/m) for X set bits; estimatedFpp is (X/m)^k, the probability that k independent
 * uniform probes all hit set bits. capacity is the most items for which the given k is still the optimal
 * hash count for m bits (BloomMath.capacityForHashes, about m ln2 / (k - 1/2)): the serialized form records
 * only m, k and the inserted count, so this is the one capacity every reader derives identically, and a
 * filter planned for n items (the planner rounds k from the same optimum) has a capacity of at least n.
 */
/**
 * A classic Bloom filter: m bits, k probes per item anywhere in the bit array.
 *
 * <p><b>What the answers mean.</b> {@link #mightContain} returning {@code false} is definite: the
 * item was never added to this filter (nor to any filter merged into it). {@code true} means only
 * "maybe": check the authoritative store. The false-positive rate is the probability that a known
 * non-member is reported maybe present; it rises as the filter fills ({@link #estimatedFpp()}).
 *
 * <p><b>Items are bytes</b>; {@code CharSequence} items are UTF-8 without normalisation, {@code long}
 * items 8 little-endian bytes. The empty item is valid; {@code null} throws {@link
 * NullPointerException}.
 *
 * <p><b>No deletion.</b> Clearing an item's bits would silently drop every other item sharing one of
 * them; use a counting filter or rebuild.
 *
 * <p><b>Saturation.</b> The filter never refuses an insert. Past {@link #capacity()} the FPR climbs
 * towards 1; {@link #isNearCapacity()} turns true at 80% of capacity (estimated from the set bits).
 *
 * <p><b>Thread-safety.</b> Lock-free: {@link #add} and {@link #mightContain} may be called from any
 * number of threads (except on a {@link #createSingleWriter single-writer} filter, which allows one
 * adding thread beside any number of querying threads). An add that returns before a query starts
 * is seen by that query. {@link #insertedCount()}, {@link #bitCount()} and the statistics are exact
 * when no add is in flight and may lag concurrent adds otherwise. A parallel {@link #addAll(byte[][],
 * int)} gives each of its threads its own range of words, hashes every item once (on one thread) and
 * hands each position to the thread owning its word; it keeps the filter's mode: atomic bit sets on a
 * concurrent filter (other threads may add meanwhile, and none of their bits is lost), plain stores on a
 * single-writer one (the call is its one writer, and every word has one owning thread); either way its
 * bits are set and visible to queries ordered after it when it returns. {@link #mergeFrom} and {@link #copy} see a rolling snapshot of a
 * concurrently modified source: every bit set in it before the call began is included.
 *
 * <p><b>Persistence.</b> Everything that places a bit (protocol, seed, m, k) is recorded by {@code
 * io.bloomery.format.FilterFormat}, which rebuilds a filter from those and its words.
 */
public final class BloomFilter implements BoundedFilter, Mergeable<BloomFilter> {

  /** The largest supported bit count m (2^40 bits, a 128 GiB bitmap). */
  public static final long MAX_BITS = 1L << 40;

  /** Default words per segment: 2^27 words = 1 GiB. */
  static final int DEFAULT_SEGMENT_SHIFT = 27;

  private static final VarHandle WORDS = MethodHandles.arrayElementVarHandle(long[].class);
  private static final VarHandle WRITER_SET_BITS;
  private static final VarHandle WRITER_INSERTED;

  static {
    try {
      MethodHandles.Lookup lookup = MethodHandles.lookup();
      WRITER_SET_BITS = lookup.findVarHandle(BloomFilter.class, "writerSetBits", long.class);
      WRITER_INSERTED = lookup.findVarHandle(BloomFilter.class, "writerInserted", long.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  static {
    KindAccess.register(BloomFilter.class, new KindAccess.Classic<BloomFilter>() {
      @Override
      public BloomFilter restore(HashProtocol protocol, byte[] seed, long bits, int hashes, long insertedCount,
          WordSource words) throws IOException {
        return BloomFilter.restore(protocol, seed, bits, hashes, insertedCount, words);
      }

      @Override
      public long wordCount(BloomFilter filter) {
        return filter.wordCount();
      }

      @Override
      public long word(BloomFilter filter, long index) {
        return filter.word(index);
      }
    });
  }

  private final HashProtocol protocol;
  private final byte[] seed;
  private final long bits;
  private final int hashes;
  private final HashProtocol.Placement placement;
  /** Non-null when placement allows walking positions without an array (the default protocol). */
  private final DoubleHashingPlacement doubleHashing;
  /** The batched probe, or null when batch calls go key by key (see {@link ClassicProbe#of}). */
  private final ClassicProbe probe;
  /** This filter's round of loads for {@link #probe}, made once (a method reference per call would allocate). */
  private final ClassicProbe.Gather gather = this::gatherRound;

  private final long wordCount;
  private final int segmentShift;
  private final long segmentMask;
  private final long[][] segments;

  /** Whether only one thread adds (plain stores instead of atomic read-modify-writes). */
  private final boolean singleWriter;
  /** Counts from adds in concurrent mode, and from restore, merge and copy in either mode. */
  private final LongAdder setBits = new LongAdder();
  private final LongAdder inserted = new LongAdder();
  /** Counts from adds in single-writer mode: written only by the writer, read opaquely by anyone. */
  private long writerSetBits;
  private long writerInserted;

  BloomFilter(HashProtocol protocol, byte[] seed, long bits, int hashes, int segmentShift) {
    this(protocol, seed, bits, hashes, segmentShift, false);
  }

  BloomFilter(HashProtocol protocol, byte[] seed, long bits, int hashes, int segmentShift, boolean singleWriter) {
    Objects.requireNonNull(protocol, "protocol");
    Objects.requireNonNull(seed, "seed");
    if (bits < 1 || bits > MAX_BITS) {
      throw new IllegalArgumentException("bit count m must be in [1, 2^40], was " + bits);
    }
    if (segmentShift < 0 || segmentShift > 30) {
      throw new IllegalArgumentException("segment shift must be in [0, 30], was " + segmentShift);
    }
    this.protocol = protocol;
    this.singleWriter = singleWriter;
    this.seed = seed.clone();
    this.bits = bits;
    this.hashes = hashes;
    this.placement = protocol.bind(bits, hashes, this.seed);
    this.doubleHashing =
        placement instanceof DoubleHashingPlacement ? (DoubleHashingPlacement) placement : null;
    this.probe = ClassicProbe.of(placement, bits, hashes);
    this.wordCount = (bits + 63) >>> 6;
    this.segmentShift = segmentShift;
    this.segmentMask = (1L << segmentShift) - 1;
    long segmentCount = ((wordCount - 1) >>> segmentShift) + 1;
    if (segmentCount > Integer.MAX_VALUE) {
      throw new IllegalArgumentException(
          "segment shift " + segmentShift + " is too small for " + bits + " bits");
    }
    this.segments = new long[(int) segmentCount][];
    for (int s = 0; s < segmentCount; s++) {
      long first = (long) s << segmentShift;
      segments[s] = new long[(int) Math.min(1L << segmentShift, wordCount - first)];
    }
  }

  /**
   * A filter sized for {@code expectedInsertions} items at false-positive rate {@code fpp}, with the
   * default protocol ({@code xxh3-edh-v1}) and an empty seed. m and k are {@link
   * BloomMath#optimalBits} and {@link BloomMath#optimalHashes}.
   *
   * @throws IllegalArgumentException if {@code expectedInsertions <= 0}, {@code fpp} is not in (0, 1)
   *     or the filter would exceed {@link #MAX_BITS}
   */
  public static BloomFilter create(long expectedInsertions, double fpp) {
    long bits = BloomMath.optimalBits(expectedInsertions, fpp);
    int hashes = BloomMath.optimalHashes(expectedInsertions, bits);
    return create(Protocols.defaultProtocol(), new byte[0], bits, hashes);
  }

  /**
   * An empty filter with explicit parameters.
   *
   * @param seed the protocol's seed or domain prefix (copied); empty for none
   * @throws IllegalArgumentException if the protocol cannot express (bits, hashes, seed) or bits is
   *     not in [1, {@link #MAX_BITS}]
   */
  public static BloomFilter create(HashProtocol protocol, byte[] seed, long bits, int hashes) {
    return new BloomFilter(protocol, seed, bits, hashes, DEFAULT_SEGMENT_SHIFT);
  }

  /**
   * An empty filter like {@link #create(HashProtocol, byte[], long, int)} for exactly one adding
   * thread: {@link #add} sets bits with plain stores instead of atomic read-modify-writes. Any number
   * of threads may still call {@link #mightContain} concurrently and never see a torn word; an add
   * is visible to another thread once a happens-before edge (a lock, a volatile write, a thread
   * start or join) orders it before the query. Adds from two threads at once can lose bits and
   * break the no-false-negative contract. The writer may call {@link #addAll(byte[][], int)} with
   * parallelism above 1: its threads write disjoint word ranges and are joined before it returns.
   * {@link #mergeFrom} stays atomic; {@link #copy} and {@code
   * FilterFormat}'s reads return concurrent filters.
   *
   * @throws IllegalArgumentException as {@link #create(HashProtocol, byte[], long, int)} does
   */
  public static BloomFilter createSingleWriter(HashProtocol protocol, byte[] seed, long bits, int hashes) {
    return new BloomFilter(protocol, seed, bits, hashes, DEFAULT_SEGMENT_SHIFT, true);
  }

  /**
   * Rebuilds a filter from its recorded parameters and words. Allocates the full bitmap before
   * reading, so callers reading untrusted input must first check that the input holds
   * {@code ceil(bits / 64)} words.
   *
   * @param insertedCount the recorded number of changing adds, at least 0
   * @param words supplies exactly {@code ceil(bits / 64)} words, word j holding bits 64j .. 64j+63
   * @throws IllegalArgumentException if the parameters are invalid for the protocol, {@code
   *     insertedCount < 0}, or the last word has bits set at or beyond position m
   * @throws IOException if {@code words} does
   */
  static BloomFilter restore(
      HashProtocol protocol, byte[] seed, long bits, int hashes, long insertedCount, WordSource words)
      throws IOException {
    Objects.requireNonNull(words, "words");
    if (insertedCount < 0) {
      throw new IllegalArgumentException("inserted count must be >= 0, was " + insertedCount);
    }
    BloomFilter filter = new BloomFilter(protocol, seed, bits, hashes, DEFAULT_SEGMENT_SHIFT);
    filter.fill(words);
    filter.inserted.add(insertedCount);
    return filter;
  }

  /** Reads all words in order, counting set bits and checking the bits past m in the last word. */
  void fill(WordSource words) throws IOException {
    long count = 0;
    for (long j = 0; j < wordCount; j++) {
      long word = words.nextWord();
      if (j == wordCount - 1) {
        long stray = word & tailMaskOutside();
        if (stray != 0) {
          throw new IllegalArgumentException(
              "word " + j + " has bits set at or beyond m = " + bits + " (positions "
                  + (64 * j + Long.numberOfTrailingZeros(stray)) + "...); the words do not belong to an m-bit filter");
        }
      }
      segments[(int) (j >>> segmentShift)][(int) (j & segmentMask)] = word;
      count += Long.bitCount(word);
    }
    setBits.add(count);
    VarHandle.releaseFence();
  }

  /** Bits of the last word that lie at or beyond m (zero when m is a multiple of 64). */
  private long tailMaskOutside() {
    int used = (int) (bits & 63);
    return used == 0 ? 0L : -1L << used;
  }

  @Override
  public FilterKind kind() {
    return FilterKind.CLASSIC_BLOOM;
  }

  @Override
  public boolean add(byte[] item) {
    Objects.requireNonNull(item, "item");
    return add(item, 0, item.length);
  }

  @Override
  public boolean mightContain(byte[] item) {
    Objects.requireNonNull(item, "item");
    return mightContain(item, 0, item.length);
  }

  /**
   * Adds the UTF-8 bytes of {@code item}, encoded into a per-thread scratch: no allocation once the
   * scratch has grown to the item's length.
   */
  @Override
  public boolean add(CharSequence item) {
    Objects.requireNonNull(item, "item");
    Utf8Scratch scratch = Utf8Scratch.get();
    int length = scratch.encode(item); // first: encoding may grow the scratch's array
    return add(scratch.bytes(), 0, length);
  }

  /** Whether the UTF-8 bytes of {@code item} may be present; encoded as {@link #add(CharSequence)} does. */
  @Override
  public boolean mightContain(CharSequence item) {
    Objects.requireNonNull(item, "item");
    Utf8Scratch scratch = Utf8Scratch.get();
    int length = scratch.encode(item);
    return mightContain(scratch.bytes(), 0, length);
  }

  /**
   * Adds {@code item[offset .. offset+length)}.
   *
   * @return {@code true} if at least one bit was newly set (the item was definitely not present
   *     before), {@code false} if {@link #mightContain} would have answered {@code true}
   */
  public boolean add(byte[] item, int offset, int length) {
    Objects.requireNonNull(item, "item");
    Objects.checkFromIndexSize(offset, length, item.length);
    int newlySet = 0;
    if (doubleHashing != null) {
      long x = doubleHashing.hash(item, offset, length);
      long y = EnhancedDoubleHashing.stride(x);
      long d = EnhancedDoubleHashing.CUBIC_SCALE;
      for (int i = 0; i < hashes; i++) {
        if (setBit(EnhancedDoubleHashing.reduce(x, bits))) {
          newlySet++;
        }
        x += y;
        y += d;
        d += EnhancedDoubleHashing.CUBIC_SCALE;
      }
    } else {
      long[] positions = new long[hashes];
      placement.positions(item, offset, length, positions);
      for (long position : positions) {
        if (setBit(position)) {
          newlySet++;
        }
      }
    }
    return recordAdd(newlySet);
  }

  /** Counts an add that set {@code newlySet} bits; true if it changed the filter. */
  private boolean recordAdd(int newlySet) {
    if (newlySet == 0) {
      return false;
    }
    if (singleWriter) {
      WRITER_SET_BITS.setOpaque(this, writerSetBits + newlySet);
      WRITER_INSERTED.setOpaque(this, writerInserted + 1);
    } else {
      setBits.add(newlySet);
      inserted.increment();
    }
    return true;
  }

  /** Counts {@code changedItems} adds that together set {@code newlySet} bits (a partitioned batch). */
  private void recordAdds(int changedItems, long newlySet) {
    if (singleWriter) {
      WRITER_SET_BITS.setOpaque(this, writerSetBits + newlySet);
      WRITER_INSERTED.setOpaque(this, writerInserted + changedItems);
    } else {
      setBits.add(newlySet);
      inserted.add(changedItems);
    }
  }

  /**
   * Whether {@code item[offset .. offset+length)} may be present: {@code false} is definite,
   * {@code true} means "go and check".
   */
  public boolean mightContain(byte[] item, int offset, int length) {
    Objects.requireNonNull(item, "item");
    Objects.checkFromIndexSize(offset, length, item.length);
    if (doubleHashing != null) {
      long x = doubleHashing.hash(item, offset, length);
      long y = EnhancedDoubleHashing.stride(x);
      long d = EnhancedDoubleHashing.CUBIC_SCALE;
      for (int i = 0; i < hashes; i++) {
        if (!isSet(EnhancedDoubleHashing.reduce(x, bits))) {
          return false;
        }
        x += y;
        y += d;
        d += EnhancedDoubleHashing.CUBIC_SCALE;
      }
      return true;
    }
    long[] positions = new long[hashes];
    placement.positions(item, offset, length, positions);
    for (long position : positions) {
      if (!isSet(position)) {
        return false;
      }
    }
    return true;
  }

  private boolean isSet(long position) {
    long wordIndex = position >>> 6;
    long[] segment = segments[(int) (wordIndex >>> segmentShift)];
    long word = (long) WORDS.getVolatile(segment, (int) (wordIndex & segmentMask));
    return (word & (1L << position)) != 0;
  }

  /** Sets one bit; true if this call flipped it from 0 to 1. */
  private boolean setBit(long position) {
    long wordIndex = position >>> 6;
    long[] segment = segments[(int) (wordIndex >>> segmentShift)];
    int offset = (int) (wordIndex & segmentMask);
    long mask = 1L << position;
    if (singleWriter) {
      long word = (long) WORDS.get(segment, offset);
      if ((word & mask) != 0) {
        return false;
      }
      WORDS.setRelease(segment, offset, word | mask);
      return true;
    }
    if (((long) WORDS.getVolatile(segment, offset) & mask) != 0) {
      return false;
    }
    long previous = (long) WORDS.getAndBitwiseOr(segment, offset, mask);
    return (previous & mask) == 0;
  }

  /**
   * Queries every item: {@code out[i]} is set to {@code mightContain(items[i])}. With the default
   * {@code xxh3-edh-v1} protocol (and k up to {@value ClassicProbe#MAX_HASHES}) the keys go in groups of
   * {@value ClassicProbe#BATCH}: every position of the group is computed first, then the words are read
   * round by round (the i-th bit of every key of the group, then the (i+1)-th), so the cache misses of
   * many keys are in flight together. Other protocols query one by one. Allocates nothing per key.
   *
   * @return the number of {@code true} answers
   * @throws IllegalArgumentException if {@code out} is shorter than {@code items}
   */
  public int mightContainAll(byte[][] items, boolean[] out) {
    Objects.requireNonNull(items, "items");
    Objects.requireNonNull(out, "out");
    if (out.length < items.length) {
      throw new IllegalArgumentException("out has " + out.length + " elements, needs " + items.length);
    }
    return mightContainRange(items, 0, items.length, out);
  }

  /* The batched probe and insert: see ClassicProbe's block comment for their shape and its measurement. */

  /** Keys per group of the batched probe and insert. */
  static final int PROBE_BATCH = ClassicProbe.BATCH;

  private boolean batchable() {
    return probe != null;
  }

  private int mightContainRange(byte[][] items, int from, int to, boolean[] out) {
    if (!batchable()) {
      int maybe = 0;
      for (int i = from; i < to; i++) {
        out[i] = mightContain(Objects.requireNonNull(items[i], "items[]"));
        maybe += out[i] ? 1 : 0;
      }
      return maybe;
    }
    return probe.probe(items, from, to, out, gather);
  }

  /**
   * One round of loads: {@code hit[a] &= word >>> position} for the position at {@code base + alive[a]}
   * (or {@code base + a} when {@code alive} is null), a < live. Bit 0 of {@code hit[a]} is then whether
   * every bit read so far for that key was set.
   */
  private void gatherRound(long[] positions, int base, int[] alive, int live, long[] hit) {
    if (segments.length == 1) {
      long[] words = segments[0];
      if (alive == null) {
        for (int a = 0; a < live; a++) {
          long position = positions[base + a];
          hit[a] &= (long) WORDS.getOpaque(words, (int) (position >>> 6)) >>> position;
        }
      } else {
        for (int a = 0; a < live; a++) {
          long position = positions[base + alive[a]];
          hit[a] &= (long) WORDS.getOpaque(words, (int) (position >>> 6)) >>> position;
        }
      }
      return;
    }
    for (int a = 0; a < live; a++) {
      long position = positions[base + (alive == null ? a : alive[a])];
      long wordIndex = position >>> 6;
      long word = (long) WORDS.getOpaque(segments[(int) (wordIndex >>> segmentShift)], (int) (wordIndex & segmentMask));
      hit[a] &= word >>> position;
    }
  }

  /** Adds items {@code [from, to)}; returns how many changed the filter. */
  private int addRange(byte[][] items, int from, int to) {
    int changed = 0;
    if (!batchable()) {
      for (int i = from; i < to; i++) {
        changed += add(Objects.requireNonNull(items[i], "items[]")) ? 1 : 0;
      }
      return changed;
    }
    long[] positions = new long[PROBE_BATCH * hashes];
    long[] hit = new long[PROBE_BATCH];
    for (int start = from; start < to; start += PROBE_BATCH) {
      int size = Math.min(PROBE_BATCH, to - start);
      probe.place(items, start, size, positions);
      // Read every word of the group first (the misses overlap), then set bits on lines now in cache.
      // A key whose bits were all set already is present (bits are never cleared) and is skipped.
      Arrays.fill(hit, 0, size, 1L);
      for (int i = 0; i < hashes; i++) {
        gatherRound(positions, i * PROBE_BATCH, null, size, hit);
      }
      for (int j = 0; j < size; j++) {
        if ((hit[j] & 1) == 0) {
          int newlySet = 0;
          for (int slot = j, end = hashes * PROBE_BATCH; slot < end; slot += PROBE_BATCH) {
            newlySet += setBit(positions[slot]) ? 1 : 0;
          }
          changed += recordAdd(newlySet) ? 1 : 0;
        }
      }
    }
    return changed;
  }

  /**
   * {@link #mightContainAll(byte[][], boolean[])} split over {@code parallelism} threads: the calling
   * thread and workers of the common {@link java.util.concurrent.ForkJoinPool} (reads never block each
   * other). Answers are the same as the one-thread call.
   *
   * @throws IllegalArgumentException if {@code out} is shorter than {@code items} or parallelism &lt; 1
   */
  public int mightContainAll(byte[][] items, boolean[] out, int parallelism) {
    Objects.requireNonNull(items, "items");
    Objects.requireNonNull(out, "out");
    if (out.length < items.length) {
      throw new IllegalArgumentException("out has " + out.length + " elements, needs " + items.length);
    }
    return ParallelBatches.sum(items.length, parallelism, (from, to) -> mightContainRange(items, from, to, out));
  }

  /**
   * {@link #addAll(byte[][])} split over {@code parallelism} threads: the calling thread and workers
   * of the common {@link java.util.concurrent.ForkJoinPool}. Each thread owns a contiguous range of the
   * filter's words, cut at multiples of 8 words (so threads share at most the cache line at each cut).
   * The keys go in rounds: in each, every thread hashes its own share of a chunk of keys, once, and
   * hands each of their k positions to the thread that owns its word; then every thread sets the bits
   * handed to it, in key order. The filter, {@link #insertedCount()} and the returned count are exactly
   * those of the one-thread call: an item counts as changed if any range had a bit of it still unset,
   * with equal items credited to the first one in order. If a worker of the pool is busy, the calling
   * thread does its share too, so the call never waits for a thread that has not started.
   *
   * <p>Concurrency is the filter's own: on a concurrent filter each bit still unset is set by an atomic
   * OR, so {@link #add} and other batches may run at the same time from other threads and none of
   * their bits is lost; on a {@link #createSingleWriter single-writer} filter the call is that one
   * writer, and since every word has one owning thread its threads use plain stores. Either way every
   * bit is set, and visible to a query ordered after the call, when it returns (every round's writes
   * are ordered before the next round and before the return). A query racing with the call sees some
   * of its items, never a torn word.
   *
   * @return the number of items that changed the filter
   * @throws NullPointerException if {@code items} or one of them is null (nothing is added then)
   * @throws IllegalArgumentException if parallelism &lt; 1
   */
  public int addAll(byte[][] items, int parallelism) {
    Objects.requireNonNull(items, "items");
    int parts = ParallelBatches.parts(items.length, parallelism);
    return parts == 1 ? addRange(items, 0, items.length) : addAllOwned(items, null, parts);
  }

  /** Bits of a partitioned insert's record that hold the key's index within its round's chunk. */
  private static final int KEY_BITS = 24;

  /** Records a partitioned insert's owner reads ahead before setting any bit (the misses overlap). */
  private static final int APPLY_GROUP = 64;

  /**
   * The partitioned insert over exactly {@code parts} word ranges, whatever the batch size (tests
   * reach small batches and more ranges than lines through this); {@code changed}, if not null,
   * receives what {@code add(items[i])} in order would have returned.
   */
  int addAllOwned(byte[][] items, boolean[] changed, int parts) {
    Objects.requireNonNull(items, "items");
    for (byte[] item : items) {
      Objects.requireNonNull(item, "items[]");
    }
    long[] newlySet = new long[1];
    int changedItems = ParallelBatches.scatterInsert(items.length, parts, (wordCount + 7) >>> 3, hashes,
        (from, to, chunkStart, out) -> scatterOwned(items, from, to, chunkStart, out),
        (owner, records, length, chunkStart, marks) -> applyOwned(records, length, chunkStart, marks),
        changed, newlySet);
    recordAdds(changedItems, newlySet[0]);
    return changedItems;
  }

  /**
   * Hashes {@code items[from, to)} once and hands each of their positions, as {@code position << }
   * {@value #KEY_BITS} {@code | (i - chunkStart)}, to the part that owns its word's line.
   */
  private void scatterOwned(byte[][] items, int from, int to, int chunkStart, ParallelBatches.Records out) {
    long[][] buffers = out.buffers;
    int[] lengths = out.lengths;
    if (doubleHashing != null) {
      for (int i = from; i < to; i++) {
        byte[] item = items[i];
        long x = doubleHashing.hash(item, 0, item.length);
        long y = EnhancedDoubleHashing.stride(x);
        long d = EnhancedDoubleHashing.CUBIC_SCALE;
        long key = i - chunkStart;
        for (int h = 0; h < hashes; h++) {
          long position = EnhancedDoubleHashing.reduce(x, bits);
          int owner = out.owner(position >>> 9);
          buffers[owner][lengths[owner]++] = position << KEY_BITS | key;
          x += y;
          y += d;
          d += EnhancedDoubleHashing.CUBIC_SCALE;
        }
      }
      return;
    }
    long[] positions = new long[hashes];
    for (int i = from; i < to; i++) {
      byte[] item = items[i];
      placement.positions(item, 0, item.length, positions);
      long key = i - chunkStart;
      for (long position : positions) {
        int owner = out.owner(position >>> 9);
        buffers[owner][lengths[owner]++] = position << KEY_BITS | key;
      }
    }
  }

  /**
   * An owner's share of a round: sets the bits of {@code records[0, length)} (all in its own words), in
   * groups of {@value #APPLY_GROUP} whose words are read first (the misses overlap), and marks each
   * key that set a bit. Returns the number of bits set.
   */
  private long applyOwned(long[] records, int length, int chunkStart, long[] marks) {
    long[] unset = new long[APPLY_GROUP];
    long newlySet = 0;
    for (int start = 0; start < length; start += APPLY_GROUP) {
      int size = Math.min(APPLY_GROUP, length - start);
      gatherUnset(records, start, size, unset);
      for (int a = 0; a < size; a++) {
        long record = records[start + a];
        if (unset[a] != 0 && setBit(record >>> KEY_BITS)) {
          newlySet++;
          int key = chunkStart + (int) (record & ((1L << KEY_BITS) - 1));
          marks[key >>> 6] |= 1L << key;
        }
      }
    }
    return newlySet;
  }

  /**
   * {@code unset[a] = 1} if the bit of record {@code records[start + a]} is clear, else 0, for a &lt;
   * count (independent loads).
   */
  private void gatherUnset(long[] records, int start, int count, long[] unset) {
    if (segments.length == 1) {
      long[] words = segments[0];
      for (int a = 0; a < count; a++) {
        long position = records[start + a] >>> KEY_BITS;
        unset[a] = ~(long) WORDS.getOpaque(words, (int) (position >>> 6)) >>> position & 1;
      }
      return;
    }
    for (int a = 0; a < count; a++) {
      long position = records[start + a] >>> KEY_BITS;
      long wordIndex = position >>> 6;
      long word = (long) WORDS.getOpaque(segments[(int) (wordIndex >>> segmentShift)], (int) (wordIndex & segmentMask));
      unset[a] = ~word >>> position & 1;
    }
  }

  /**
   * Adds every item, in groups like {@link #mightContainAll(byte[][], boolean[])}: the words of a
   * group are read first so that their misses overlap, then the missing bits are set.
   *
   * @return the number of items that changed the filter, as the same {@link #add} calls in order
   *     would return
   */
  public int addAll(byte[][] items) {
    Objects.requireNonNull(items, "items");
    return addRange(items, 0, items.length);
  }

  /** Whether this filter was made by {@link #createSingleWriter} (one adding thread only). */
  public boolean isSingleWriter() {
    return singleWriter;
  }

  /** The identifier of the hash protocol that places this filter's positions, as recorded in its format. */
  @Override
  public ProtocolId protocolId() {
    return protocol.id();
  }

  /** The implementation of {@link #protocolId()}: the position function, for callers that place items themselves. */
  public HashProtocol hashProtocol() {
    return protocol;
  }

  /** The protocol seed or domain prefix (a copy); empty for none. */
  public byte[] seed() {
    return seed.clone();
  }

  /** The number of bits m. */
  public long bitSize() {
    return bits;
  }

  /** The number of positions k set per item. */
  public int hashCount() {
    return hashes;
  }

  /** The number of 64-bit words, {@code ceil(m / 64)}. */
  long wordCount() {
    return wordCount;
  }

  /**
   * Word {@code index}: bit i of the filter is {@code (word(i >>> 6) >>> (i & 63)) & 1}. Bits of the
   * last word at or beyond m are always 0.
   *
   * @throws IndexOutOfBoundsException unless {@code 0 <= index < wordCount()}
   */
  long word(long index) {
    Objects.checkIndex(index, wordCount);
    return (long) WORDS.getVolatile(segments[(int) (index >>> segmentShift)], (int) (index & segmentMask));
  }

  /**
   * The number of adds that changed the filter (returned {@code true}), plus the counts of filters
   * merged in. Re-inserting an item does not count; an item present in two merged filters counts
   * twice, so after merges this is an upper bound on distinct items added.
   */
  @Override
  public long insertedCount() {
    return inserted.sum() + (long) WRITER_INSERTED.getOpaque(this);
  }

  /** The number of set bits X. */
  public long bitCount() {
    return setBits.sum() + (long) WRITER_SET_BITS.getOpaque(this);
  }

  /** X / m, the share of set bits. */
  public double fillRatio() {
    return (double) bitCount() / bits;
  }

  /**
   * The current false-positive probability for a non-member, {@code (X/m)^k}: the chance that k
   * uniform probes all hit set bits.
   */
  public double estimatedFpp() {
    return Math.pow(fillRatio(), hashes);
  }

  /**
   * The Swamidass–Baldi estimate of distinct items added, {@code round(-(m/k) ln(1 - X/m))}, or
   * {@link Long#MAX_VALUE} when every bit is set (saturated: the count is unbounded).
   */
  public long estimatedCardinality() {
    long set = bitCount();
    if (set >= bits) {
      return Long.MAX_VALUE;
    }
    return Math.round(-((double) bits / hashes) * Math.log1p(-(double) set / bits));
  }

  /**
   * The number of items this filter is sized for: the most for which its k is still the optimal hash
   * count for its m bits ({@link BloomMath#capacityForHashes}). Derived from (m, k) alone, which is all
   * the serialized form records. For a filter made by {@link #create(long, double)} it is at least the
   * requested number, and above it only by the rounding of k: 1,000,000 at 1% gives m = 9,585,059,
   * k = 7 (optimum 6.64) and a capacity of 1,022,131, where the model rate is 1.11%.
   */
  @Override
  public long capacity() {
    return BloomMath.capacityForHashes(bits, hashes);
  }

  /** Whether the estimated cardinality has reached 80% of {@link #capacity()}. */
  @Override
  public boolean isNearCapacity() {
    long estimated = estimatedCardinality();
    return estimated >= 0.8 * capacity();
  }

  /**
   * Whether {@link #mergeFrom} would accept {@code other}: same protocol, seed, m and k, and not this
   * filter itself.
   */
  public boolean isCompatible(BloomFilter other) {
    Objects.requireNonNull(other, "other");
    return other != this && incompatibility(other) == null;
  }

  private IncompatibleFilterException incompatibility(BloomFilter other) {
    return FilterCompatibility.mismatch(IncompatibleFilterException::new,
        "bit count m", protocol, seed, bits, hashes, other.protocol, other.seed, other.bits, other.hashes);
  }

  /**
   * Adds every item of {@code other} to this filter (bitwise OR). Afterwards this filter answers
   * {@code true} for everything either filter did. {@code other} is unchanged.
   *
   * @throws IncompatibleFilterException if protocol, seed, m or k differ; nothing is changed
   * @throws IllegalArgumentException if {@code other} is this filter
   */
  public void mergeFrom(BloomFilter other) {
    Objects.requireNonNull(other, "other");
    if (other == this) {
      throw new IllegalArgumentException("cannot merge a filter into itself");
    }
    IncompatibleFilterException incompatible = incompatibility(other);
    if (incompatible != null) {
      throw incompatible;
    }
    long newlySet = 0;
    for (long j = 0; j < wordCount; j++) {
      long incoming = other.word(j);
      if (incoming == 0) {
        continue;
      }
      long[] segment = segments[(int) (j >>> segmentShift)];
      int offset = (int) (j & segmentMask);
      long previous = (long) WORDS.getAndBitwiseOr(segment, offset, incoming);
      newlySet += Long.bitCount(incoming & ~previous);
    }
    setBits.add(newlySet);
    inserted.add(other.insertedCount());
  }

  /**
   * Whether {@link #fold()} can halve this filter: its protocol is {@code xxh3-edh-v1}, whose positions are the
   * high bits of a hash that does not depend on m ({@link EnhancedDoubleHashing#reduce}), and m is a power of two
   * of at least 2. {@link BloomMath#foldableBits} rounds a planned m up to such a size.
   */
  public boolean isFoldable() {
    return foldRefusal() == null;
  }

  private void requireFoldable() {
    String refusal = foldRefusal();
    if (refusal != null) {
      throw new UnfoldableFilterException(refusal);
    }
  }

  private String foldRefusal() {
    if (protocol.id() != ProtocolId.XXH3_EDH_V1) {
      return "a classic filter with protocol " + protocol.name() + " cannot be folded: only xxh3-edh-v1 places"
          + " bits by the high bits of a hash independent of m";
    }
    if (bits < 2 || Long.bitCount(bits) != 1) {
      return "a classic filter of " + bits + " bits cannot be folded: m must be a power of two of at least 2";
    }
    return null;
  }

  /**
   * A new filter of m/2 bits holding every item of this one: bit j of the result is bit 2j OR bit 2j+1 of this
   * filter. With m = 2<sup>p</sup> an item's position is the top p bits of its probe value x ({@link
   * EnhancedDoubleHashing#reduce}: {@code x * m >>> 64}), and with m/2 the top p-1 bits, which is the old position
   * shifted right by one; so every item's k positions in the result are set, and no member is lost. The result
   * has the same protocol, seed, k and inserted count; its false-positive rate is that of an m/2-bit filter with
   * the same items, {@link #estimatedFpp()} of the result. This filter is unchanged; concurrent adds may or may
   * not be included.
   *
   * @throws UnfoldableFilterException unless {@link #isFoldable()}
   */
  public BloomFilter fold() {
    requireFoldable();
    BloomFilter folded = new BloomFilter(protocol, seed, bits >>> 1, hashes, segmentShift);
    try {
      long[] next = {0};
      folded.fill(() -> {
        long pair = next[0]++ << 1;
        long low = pairOr(word(pair));
        return pair + 1 < wordCount ? low | pairOr(word(pair + 1)) << 32 : low;
      });
    } catch (IOException e) {
      throw new AssertionError("reading our own words cannot fail", e);
    }
    folded.inserted.add(insertedCount());
    return folded;
  }

  /** The 32-bit value whose bit i is bit 2i OR bit 2i+1 of {@code word}. */
  static long pairOr(long word) {
    long x = (word | word >>> 1) & 0x5555555555555555L;
    x = (x | x >>> 1) & 0x3333333333333333L;
    x = (x | x >>> 2) & 0x0F0F0F0F0F0F0F0FL;
    x = (x | x >>> 4) & 0x00FF00FF00FF00FFL;
    x = (x | x >>> 8) & 0x0000FFFF0000FFFFL;
    return (x | x >>> 16) & 0x00000000FFFFFFFFL;
  }

  /**
   * Folds this filter ({@link #fold()}) again and again while the folded filter's {@link #estimatedFpp()} is at most
   * {@code maxFpp}, at most {@code maxFolds} times, and while the size still allows a fold. Returns the last folded
   * filter, or this filter if no fold stayed within {@code maxFpp} (or {@code maxFolds} is 0).
   *
   * @throws UnfoldableFilterException if this filter cannot fold at all ({@link #isFoldable()}), whatever the limits
   * @throws IllegalArgumentException if {@code maxFolds < 0}
   */
  public BloomFilter foldWhile(double maxFpp, long maxFolds) {
    if (maxFolds < 0) {
      throw new IllegalArgumentException("maxFolds must be >= 0, was " + maxFolds);
    }
    requireFoldable();
    BloomFilter current = this;
    for (long n = 0; n < maxFolds && current.isFoldable(); n++) {
      BloomFilter folded = current.fold();
      if (folded.estimatedFpp() > maxFpp) {
        break;
      }
      current = folded;
    }
    return current;
  }

  /** An independent copy with the same parameters, bits and counts. */
  public BloomFilter copy() {
    BloomFilter copy = new BloomFilter(protocol, seed, bits, hashes, segmentShift);
    try {
      long[] next = {0};
      copy.fill(() -> word(next[0]++));
    } catch (IOException e) {
      throw new AssertionError("reading our own words cannot fail", e);
    }
    copy.inserted.add(insertedCount());
    return copy;
  }

  /**
   * Writes the bits packed little-endian, the {@code ceil(m / 8)} bytes {@link #toPackedBytes()} returns, at any
   * size. Concurrent adds may or may not be included. The stream is not flushed or closed.
   *
   * @throws IOException if {@code out} does
   */
  public void writePackedBytes(OutputStream out) throws IOException {
    Objects.requireNonNull(out, "out");
    long byteCount = (bits + 7) >>> 3;
    byte[] chunk = new byte[(int) Math.min(1 << 16, byteCount + 7 & ~7L)];
    for (long start = 0; start < byteCount; start += chunk.length) {
      int length = (int) Math.min(chunk.length, byteCount - start);
      for (int i = 0; i < length; i += Long.BYTES) {
        long word = word((start + i) >>> 3);
        for (int b = i, end = Math.min(length, i + Long.BYTES); b < end; b++, word >>>= 8) {
          chunk[b] = (byte) word;
        }
      }
      out.write(chunk, 0, length);
    }
  }

  /**
   * The bits packed little-endian, {@code ceil(m / 8)} bytes: bit i is bit {@code i & 7} of byte
   * {@code i >>> 3}. Bits past m in the last byte are 0.
   *
   * @throws IllegalStateException if the filter has more than {@code 2^31 - 9} bytes of bits
   */
  public byte[] toPackedBytes() {
    long byteCount = (bits + 7) >>> 3;
    if (byteCount > Integer.MAX_VALUE - 8) {
      throw new IllegalStateException(
          "filter has " + byteCount + " bytes of bits; toPackedBytes is limited to " + (Integer.MAX_VALUE - 8));
    }
    byte[] packed = new byte[(int) byteCount];
    for (long j = 0; j < wordCount; j++) {
      long word = word(j);
      int first = (int) (j << 3);
      int end = Math.min(packed.length, first + Long.BYTES);
      for (int i = first; i < end; i++, word >>>= 8) {
        packed[i] = (byte) word;
      }
    }
    return packed;
  }

  @Override
  public String toString() {
    return "BloomFilter{protocol=" + protocol.name() + ", m=" + bits + ", k=" + hashes
        + ", inserted=" + insertedCount() + ", setBits=" + bitCount() + "}";
  }
}
