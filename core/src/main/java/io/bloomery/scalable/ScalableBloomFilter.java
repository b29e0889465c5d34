package io.bloomery.scalable;

import io.bloomery.filter.BoundedFilter;
import io.bloomery.filter.FilterFullException;
import io.bloomery.filter.FilterKind;
import io.bloomery.filter.FilterTooLargeException;
import io.bloomery.filter.IncompatibleFilterException;
import io.bloomery.filter.MembershipFilter;
import io.bloomery.filter.Mergeable;
import io.bloomery.hash.MurmurHash2;
import io.bloomery.hash.ProtocolId;
import io.bloomery.internal.CFormat;
import io.bloomery.internal.KindAccess;
import io.bloomery.internal.ReadMostlyLock;
import io.bloomery.internal.Unsigned;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/*
 * Why this class looks the way it does.
 *
 * A scalable Bloom filter (Almeida, Baquero, Preguiça, Hutchison: "Scalable Bloom Filters", IPL 2007) is a chain of
 * classic Bloom layers: when the newest layer has taken as many items as it was sized for, a new layer is appended
 * with `expansion` times the capacity and half the error rate, so the compound false-positive rate stays bounded by
 * e·Σ 0.5^(i+1) < e while capacity grows without a rebuild.
 *
 * This implementation is RedisBloom's BF.* chain (src/sb.c, deps/bloom/bloom.c at master b28c29451ad4) bit for bit,
 * so that a filter can travel between a real RedisBloom and Bloomery through BF.SCANDUMP / BF.LOADCHUNK
 * (io.bloomery.format.RedisBloomDump):
 *  - the first layer is built at error·0.5 (ERROR_TIGHTENING_RATIO) unless NONSCALING, where it takes the error as is;
 *  - layers are sized by bloom_init (BloomLayer), new filters with options FORCE64|NOROUND (+NO_SCALING);
 *  - a = MurmurHash64A(item, 0xc6a4a7935bd1e995), b = MurmurHash64A(item, a); bit i at (a + i·b) mod m, LSB-first;
 *    chains loaded without FORCE64 use the 32-bit MurmurHash2 with seed 0x9747b28c instead;
 *  - an add first checks every layer (newest first); a hit, true or false positive, changes nothing and is not
 *    counted, so the item count can be below the number of distinct items added (RedisBloom's test_debug: 100
 *    distinct adds, size 99);
 *  - a layer is full when its item count reaches its capacity; only the newest layer takes items.
 *
 * Where RedisBloom relies on C undefined behaviour for values only a crafted header can contain (shifts by 64,
 * NaN-to-int conversions), we refuse instead; every filter RedisBloom can build is accepted.
 */

/**
 * RedisBloom's scalable Bloom filter ({@code BF.*}), bit-for-bit compatible with RedisBloom's layout, hashing and
 * growth, with {@link io.bloomery.format.RedisBloomDump} for BF.SCANDUMP / BF.LOADCHUNK byte compatibility.
 *
 * <p><b>What the answers mean.</b> {@link #mightContain} is one-sided: an item whose {@code add} returned (with
 * {@code true} or {@code false}) is never reported absent. {@code true} means "maybe": the compound
 * false-positive rate of a scaling filter stays below its error rate (layer i has rate e·0.5^(i+1)); a NONSCALING
 * filter's single layer has rate e at its capacity.
 *
 * <p><b>Adding.</b> {@link #add} returns {@code true} if the item set at least one new bit, and {@code false} if the
 * filter already reported it as maybe present, in which case nothing changes and the item is <em>not</em> counted
 * (as RedisBloom's BF.ADD). When the newest layer is full, a scaling filter appends a layer of
 * {@code capacity × expansion} items at half the error rate; a NONSCALING filter refuses the insert with
 * {@link FilterFullException} ({@code AT_CAPACITY}). A layer that cannot be sized (error-rate underflow after ~1000
 * layers: {@code GROWTH_LIMIT}) or allocated (not enough heap: {@code OUT_OF_HEAP}) is refused with a {@link
 * FilterFullException}; the filter is unchanged in both cases.
 * There is no remove.
 *
 * <p><b>Limits</b> (validated in RedisBloom's order: error rate, capacity, expansion): error rate in (0, 1), silently
 * capped at {@value #ERROR_RATE_CAP}; capacity in [1, 2^30]; expansion in [0, 32768], 0 meaning NONSCALING.
 *
 * <p><b>Thread safety.</b> Safe for concurrent use. Lookups take no lock in the common case (an optimistic
 * {@link java.util.concurrent.locks.StampedLock} stamp, retried under the read lock if a writer intervened); adds
 * are serialized, and a new layer is allocated before the short exclusive section that publishes it. A lookup
 * concurrent with an add of the same item may see it either way; once {@code add} has returned, every lookup that
 * happens after it sees the item. A caller that already serializes its mutations (a server's per-key lock) may use
 * {@link #addAsSoleWriter}, which skips the writer monitor and the exclusive section.
 */
public final class ScalableBloomFilter implements BoundedFilter, Mergeable<ScalableBloomFilter> {
  /** RedisBloom's {@code bf-initial-size} default. */
  public static final long DEFAULT_CAPACITY = 100;
  /** RedisBloom's {@code bf-error-rate} default. */
  public static final double DEFAULT_ERROR_RATE = 0.01;
  /** RedisBloom's {@code bf-expansion-factor} default. */
  public static final int DEFAULT_EXPANSION = 2;
  /** Largest capacity accepted at creation (2^30). */
  public static final long MAX_CAPACITY = 1L << 30;
  /** Largest expansion accepted at creation. */
  public static final int MAX_EXPANSION = 32768;
  /** Error rates above this are silently capped to it at creation, as RedisBloom does. */
  public static final double ERROR_RATE_CAP = 0.25;
  /** Each new layer's error rate is the previous one's times this ({@code ERROR_TIGHTENING_RATIO}). */
  public static final double ERROR_TIGHTENING_RATIO = 0.5;

  static final long BLOOM_SEED_64 = MurmurHash2.REDISBLOOM_BF_SEED;
  static final int BLOOM_SEED_32 = MurmurHash2.REDISBLOOM_BF_SEED_32;

  /** C {@code sizeof(SBChain)} and {@code sizeof(SBLink)}, which BF.INFO's "Size" counts. */
  private static final long CHAIN_STRUCT_BYTES = 32;
  private static final long LINK_STRUCT_BYTES = 64;

  private final ReadMostlyLock lock = new ReadMostlyLock();
  private final int options;
  /** Unsigned 32-bit growth factor, as stored (also kept for NONSCALING filters, where it is unused). */
  private final long growth;
  /** Written with release stores by adds (see {@link #addAsSoleWriter}); plain writes elsewhere under the lock. */
  private long size;
  /**
   * Replaced, never mutated in place, when a layer is appended; volatile so that a lock-free reader that sees a new
   * array also sees its elements.
   */
  private volatile BloomLayer[] layers;
  /**
   * The open {@link #freeze() frozen views}, which every mutation tells about the words it is about to change;
   * replaced, never changed in place, under the writers monitor.
   */
  private volatile Frozen[] frozen = NO_VIEWS;

  private static final Frozen[] NO_VIEWS = new Frozen[0];
  /** Items per group of {@link #addAllAsSoleWriter} and {@link #mightContainAll}: misses in flight, within L1. */
  static final int BATCH = 32;
  private static final VarHandle SIZE;

  static {
    try {
      SIZE = MethodHandles.lookup().findVarHandle(ScalableBloomFilter.class, "size", long.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  ScalableBloomFilter(int options, long growth, long size, BloomLayer[] layers) {
    this.options = options;
    this.growth = growth;
    this.size = size;
    this.layers = layers;
  }

  static {
    KindAccess.register(ScalableBloomFilter.class, Frozen.class, ScalableDumpCodec.ACCESS);
  }

  /** A scaling filter with RedisBloom's default expansion 2 ({@code BF.RESERVE key errorRate capacity}). */
  public static ScalableBloomFilter create(long capacity, double errorRate) {
    return create(capacity, errorRate, DEFAULT_EXPANSION);
  }

  /**
   * {@code BF.RESERVE key errorRate capacity EXPANSION expansion}; expansion 0 makes the filter NONSCALING.
   *
   * @throws IllegalArgumentException if a parameter is out of range (capacity [1, {@value #MAX_CAPACITY}], error rate
   *     (0, 1), expansion [0, {@value #MAX_EXPANSION}]) or no layer can be sized for them, or a {@link
   *     FilterTooLargeException} if the first layer does not fit in the heap
   */
  public static ScalableBloomFilter create(long capacity, double errorRate, int expansion) {
    double rate = validatedErrorRate(errorRate);
    validateCapacity(capacity);
    if (expansion < 0 || expansion > MAX_EXPANSION) {
      throw new IllegalArgumentException("expansion must be in [0, " + MAX_EXPANSION + "], was " + expansion);
    }
    int nonScaling = expansion == 0 ? BloomLayer.OPT_NO_SCALING : 0;
    return newChain(capacity, rate, nonScaling, expansion);
  }

  /**
   * {@code BF.RESERVE key errorRate capacity NONSCALING}: one layer at the full error rate that refuses inserts
   * once it holds {@code capacity} items. Stores RedisBloom's default growth 2 in its dump, as RedisBloom does.
   */
  public static ScalableBloomFilter createNonScaling(long capacity, double errorRate) {
    double rate = validatedErrorRate(errorRate);
    validateCapacity(capacity);
    return newChain(capacity, rate, BloomLayer.OPT_NO_SCALING, DEFAULT_EXPANSION);
  }

  private static double validatedErrorRate(double errorRate) {
    if (!(errorRate > 0 && errorRate < 1)) {
      throw new IllegalArgumentException("error rate must be in (0, 1), was " + errorRate);
    }
    return Math.min(errorRate, ERROR_RATE_CAP);
  }

  private static void validateCapacity(long capacity) {
    if (capacity < 1 || capacity > MAX_CAPACITY) {
      throw new IllegalArgumentException("capacity must be in [1, " + MAX_CAPACITY + "], was " + capacity);
    }
  }

  private static ScalableBloomFilter newChain(long capacity, double errorRate, int nonScaling, long growth) {
    int options = BloomLayer.OPT_FORCE64 | BloomLayer.OPT_NOROUND | nonScaling;
    double tightening = nonScaling != 0 ? 1 : ERROR_TIGHTENING_RATIO;
    BloomLayer plan = BloomLayer.plan(capacity, errorRate * tightening, options);
    if (plan == null) {
      throw cannotSize(capacity, errorRate);
    }
    BloomLayer first = plan.allocate();
    if (first == null) {
      throw new FilterTooLargeException("the first layer of " + Long.toUnsignedString(plan.bytes)
          + " bytes does not fit in the heap");
    }
    return new ScalableBloomFilter(options, growth, 0, new BloomLayer[] {first});
  }

  /**
   * The first layer RedisBloom would build for {@code BF.RESERVE key errorRate capacity} (scaling, so at half the
   * error rate), computed without allocating it. For sizing and for pinning RedisBloom's arithmetic.
   *
   * @throws IllegalArgumentException if a parameter is out of range, or if no layer can be sized for them (as
   *     {@link #create} does): an error rate so small that the scaling filter's halved rate underflows to 0 (e.g.
   *     4.9e-324), or more bits than 64 bits can count
   */
  public static Layer plannedFirstLayer(long capacity, double errorRate, boolean nonScaling) {
    double rate = validatedErrorRate(errorRate);
    validateCapacity(capacity);
    BloomLayer plan = BloomLayer.plan(capacity, rate * (nonScaling ? 1 : ERROR_TIGHTENING_RATIO),
        BloomLayer.OPT_FORCE64 | BloomLayer.OPT_NOROUND);
    if (plan == null) {
      throw cannotSize(capacity, errorRate);
    }
    return Layer.of(plan, true);
  }

  private static IllegalArgumentException cannotSize(long capacity, double errorRate) {
    return new IllegalArgumentException("no layer can be sized for " + capacity + " items at error rate "
        + errorRate + " (the rate underflows, or the bits overflow 64 bits)");
  }

  @Override
  public FilterKind kind() {
    return FilterKind.SCALABLE_BLOOM;
  }

  /**
   * {@code BF.ADD}; see the class javadoc.
   *
   * @throws FilterFullException if a NONSCALING filter is full or the next layer cannot be allocated; nothing
   *     changed
   */
  @Override
  public boolean add(byte[] item) {
    Objects.requireNonNull(item, "item");
    return add(item, 0, item.length);
  }

  /** Adds {@code item[offset, offset + length)}; see {@link #add(byte[])}. */
  public boolean add(byte[] item, int offset, int length) {
    long a = hashA(item, offset, length);
    long b = hashB(item, offset, length, a);
    synchronized (lock.writers()) {
      return addHashed(a, b, true);
    }
  }

  /**
   * {@link #add(byte[], int, int)} for a caller that already serializes every mutation of this filter itself (for
   * instance under its own per-key lock): it takes neither this filter's writer monitor nor its exclusive section,
   * so a run of adds under the caller's lock executes no atomic instruction and no fence of its own. Same answers,
   * same growth, same exceptions as {@code add}.
   *
   * <p><b>The caller guarantees</b> that while this method runs no other thread calls a mutator of this filter
   * ({@code add}, this method, {@link #mergeFrom}, a chunk load) nor {@link #copy()} or a serialization that must be
   * consistent with it. Lookups ({@link #mightContain}, {@link #insertedCount}, {@link #info}) may run concurrently
   * on any thread: bits only ever go from 0 to 1, and the item count is published with a release store after the
   * bits, so a lookup that observes the new count (or that happens after the caller's lock release) sees the item;
   * one concurrent with the add may see it either way, as with {@code add}. A {@link #layers()} or
   * {@link #debug()} listing taken concurrently may show one layer's item count a step ahead of the total.
   */
  public boolean addAsSoleWriter(byte[] item, int offset, int length) {
    long a = hashA(item, offset, length);
    long b = hashB(item, offset, length, a);
    return addHashed(a, b, false);
  }

  /**
   * {@link #addAsSoleWriter} for {@code items[from, to)} in order, under the same caller guarantee: {@code
   * added[i]} becomes what {@code addAsSoleWriter(items[i])} would return at that point of the sequence (an item
   * equal to an earlier one of the run answers {@code false}). Stops before the first item that no layer holds while
   * the newest layer is full (it needs a new layer, or a full NONSCALING filter refuses it) and
   * returns its index, or {@code to} when every item was added; the caller adds that item with {@code
   * addAsSoleWriter}, which grows the chain or throws as documented there, and goes on from the next one.
   *
   * <p>The items go in groups of {@value #BATCH}: every item of a group is hashed first and every word its bits
   * fall in is read in the newest layer, so the cache misses of the group overlap; then each item is added as
   * {@code addAsSoleWriter} adds it, on lines now in cache, and an item found with every bit set in that read is
   * answered {@code false} at once (bits are never cleared).
   *
   * @return the index of the first item not added, {@code to} if none
   * @throws IndexOutOfBoundsException if {@code [from, to)} is not within {@code items} or {@code added}
   * @throws NullPointerException if one of the items is null (the items before it are added)
   */
  public int addAllAsSoleWriter(byte[][] items, int from, int to, boolean[] added) {
    Group group = new Group(items, from, to, added);
    long[] a = group.a;
    long[] b = group.b;
    long[] hit = group.hit;
    for (int start = from; start < to; start += group.size) {
      group.hash(items, start, to);
      BloomLayer[] chain = layers;
      BloomLayer newest = chain[chain.length - 1];
      Arrays.fill(hit, 0, group.size, 1L);
      newest.gather(a, b, group.size, hit);
      for (int j = 0; j < group.size; j++) {
        if ((hit[j] & 1) != 0) {
          added[start + j] = false;
        } else if (Long.compareUnsigned(newest.size, newest.entries) >= 0) {
          if (!containsIn(chain, a[j], b[j])) {
            return start + j;
          }
          added[start + j] = false;
        } else {
          added[start + j] = addHashed(a[j], b[j], false);
        }
      }
    }
    return to;
  }

  /**
   * {@link #mightContain} for {@code items[from, to)}: {@code out[i]} becomes {@code mightContain(items[i])}. The
   * items go in groups of {@value #BATCH}, each hashed first and then read layer by layer (newest first), round by
   * round, so that the cache misses of a group overlap; a group is read under one optimistic stamp, as one lookup
   * is. Safe to call concurrently with adds, with the same one-sided guarantee as {@code mightContain}.
   *
   * @return the number of {@code true} answers
   * @throws IndexOutOfBoundsException if {@code [from, to)} is not within {@code items} or {@code out}
   * @throws NullPointerException if one of the items is null
   */
  public int mightContainAll(byte[][] items, int from, int to, boolean[] out) {
    Group group = new Group(items, from, to, out);
    long[] found = new long[group.a.length];
    int maybe = 0;
    for (int start = from; start < to; start += group.size) {
      group.hash(items, start, to);
      lock.readBoolean(() -> probeGroup(group, found));
      for (int j = 0; j < group.size; j++) {
        boolean answer = found[j] != 0;
        out[start + j] = answer;
        maybe += answer ? 1 : 0;
      }
    }
    return maybe;
  }

  /** {@code found[j]} = 1 if key j of the group is in some layer, else 0; stops when every key is found. */
  private boolean probeGroup(Group group, long[] found) {
    long published = (long) SIZE.getAcquire(this); // read for its ordering only, as containsPublished
    BloomLayer[] chain = layers;
    int size = group.size;
    long[] hit = group.hit;
    Arrays.fill(found, 0, size, 0L);
    int missing = size;
    for (int layer = chain.length - 1; layer >= 0 && missing > 0; layer--) {
      Arrays.fill(hit, 0, size, 1L);
      chain[layer].gather(group.a, group.b, size, hit);
      missing = 0;
      for (int j = 0; j < size; j++) {
        found[j] |= hit[j] & 1;
        missing += (int) (found[j] ^ 1);
      }
    }
    return true;
  }

  /** A batched call's current group of up to {@value #BATCH} items: their hashes, and room for one read. */
  private final class Group {
    final long[] a;
    final long[] b;
    final long[] hit;
    /** How many items the group holds now. */
    int size;

    /** A group for a call over {@code [from, to)}, which must lie within {@code items} and {@code answers}. */
    Group(byte[][] items, int from, int to, boolean[] answers) {
      Objects.checkFromToIndex(from, to, items.length);
      Objects.checkFromToIndex(from, to, answers.length);
      int capacity = Math.min(BATCH, to - from);
      a = new long[capacity];
      b = new long[capacity];
      hit = new long[capacity];
    }

    /** Takes {@code items[start, ...)} up to {@code to} or the group's capacity and hashes each into a, b. */
    void hash(byte[][] items, int start, int to) {
      size = Math.min(a.length, to - start);
      for (int j = 0; j < size; j++) {
        byte[] item = Objects.requireNonNull(items[start + j], "items[]");
        long x = hashA(item, 0, item.length);
        a[j] = x;
        b[j] = hashB(item, 0, item.length, x);
      }
    }
  }

  /*
   * Why a sole-writer path: the release of the exclusive section is a fence that waits until the item's bit stores
   * (cache misses in a large layer) have drained, once per add. A caller that already serializes every mutation (the
   * server holds the key's lock for a whole pipelined run) needs no fence between its adds, so their stores overlap.
   */
  private boolean addHashed(long a, long b, boolean excludeReaders) {
    BloomLayer[] current = layers;
    if (containsIn(current, a, b)) {
      return false;
    }
    BloomLayer newest = current[current.length - 1];
    if (Long.compareUnsigned(newest.size, newest.entries) >= 0) {
      if (!isScaling()) {
        throw new FilterFullException(FilterFullException.Reason.AT_CAPACITY,
            "non-scaling filter is full: it holds its capacity of " + Long.toUnsignedString(newest.entries) + " items");
      }
      BloomLayer plan = BloomLayer.plan(newest.entries * growth, newest.error * ERROR_TIGHTENING_RATIO, options);
      BloomLayer grown = plan == null ? null : plan.allocate();
      if (grown == null) {
        throw plan == null
            ? new FilterFullException(FilterFullException.Reason.GROWTH_LIMIT,
                "cannot grow: no layer can be sized after " + current.length + " layers")
            : new FilterFullException(FilterFullException.Reason.OUT_OF_HEAP,
                "cannot grow: the next layer of " + Long.toUnsignedString(plan.bytes) + " bytes does not fit in the heap");
      }
      BloomLayer[] appended = Arrays.copyOf(current, current.length + 1);
      appended[current.length] = grown;
      lock.exclusive(() -> layers = appended);
      newest = grown;
    }
    BloomLayer target = newest;
    for (Frozen view : frozen) {
      view.beforeSet(target, a, b);
    }
    return excludeReaders ? lock.exclusive(() -> setIn(target, a, b)) : setIn(target, a, b);
  }

  private boolean setIn(BloomLayer target, long a, long b) {
    if (!target.set(a, b)) {
      return false;
    }
    target.size++;
    SIZE.setRelease(this, size + 1);
    return true;
  }

  @Override
  public boolean mightContain(byte[] item) {
    Objects.requireNonNull(item, "item");
    return mightContain(item, 0, item.length);
  }

  /** Queries {@code item[offset, offset + length)}; see {@link #mightContain(byte[])}. */
  public boolean mightContain(byte[] item, int offset, int length) {
    long a = hashA(item, offset, length);
    long b = hashB(item, offset, length, a);
    return lock.readBoolean(() -> containsPublished(a, b));
  }

  /** The acquire pairs with {@link #setIn}'s release: an add whose count this lookup observes has its bits seen. */
  private boolean containsPublished(long a, long b) {
    long published = (long) SIZE.getAcquire(this); // read for its ordering only
    return containsIn(layers, a, b);
  }

  private static boolean containsIn(BloomLayer[] chain, long a, long b) {
    for (int i = chain.length - 1; i >= 0; i--) {
      if (chain[i].contains(a, b)) {
        return true;
      }
    }
    return false;
  }

  private long hashA(byte[] item, int offset, int length) {
    Objects.requireNonNull(item, "item");
    if (is64BitHash()) {
      return MurmurHash2.hash64A(item, offset, length, BLOOM_SEED_64);
    }
    return MurmurHash2.hash32(item, offset, length, BLOOM_SEED_32) & 0xFFFF_FFFFL;
  }

  private long hashB(byte[] item, int offset, int length, long a) {
    if (is64BitHash()) {
      return MurmurHash2.hash64A(item, offset, length, a);
    }
    return MurmurHash2.hash32(item, offset, length, (int) a) & 0xFFFF_FFFFL;
  }

  /** {@code true} unless the filter was created NONSCALING (or with expansion 0). */
  public boolean isScaling() {
    return (options & BloomLayer.OPT_NO_SCALING) == 0;
  }

  /** Whether items are hashed with MurmurHash64A (every filter since RedisBloom 1.1.1) rather than legacy 32-bit. */
  public boolean is64BitHash() {
    return (options & BloomLayer.OPT_FORCE64) != 0;
  }

  /** RedisBloom's chain options bits: 1 NOROUND, 2 ENTS_IS_BITS, 4 FORCE64, 8 NO_SCALING. */
  public int options() {
    return options;
  }

  /** The stored growth factor (unsigned 32-bit), also for NONSCALING filters where it is unused. */
  public long growth() {
    return growth;
  }

  /** {@code BF.CARD}: items counted by adds that returned {@code true}. */
  @Override
  public long insertedCount() {
    return lock.readLong(() -> (long) SIZE.getAcquire(this));
  }

  /** The number of layers ("Number of filters"). */
  public int filterCount() {
    return lock.readLocked(() -> layers.length);
  }

  /** Σ layer capacities (unsigned), BF.INFO's "Capacity". */
  @Override
  public long capacity() {
    return info().capacity();
  }

  /**
   * Whether {@link #insertedCount()} has reached 80% of {@link #capacity()}: a NONSCALING filter is then close to
   * refusing adds, a scaling one to appending a layer (at half the error rate). O(layers).
   */
  @Override
  public boolean isNearCapacity() {
    return Unsigned.toDouble(insertedCount()) >= 0.8 * Unsigned.toDouble(capacity());
  }

  /** Always {@link ProtocolId#REDISBLOOM_MURMUR64A}. */
  @Override
  public ProtocolId protocolId() {
    return ProtocolId.REDISBLOOM_MURMUR64A;
  }

  /**
   * BF.INFO's "Size": RedisBloom's C memory formula {@code 32 + 64·layers + Σ bytes}. Takes no lock (the layer array
   * is replaced, never changed in place, and a layer's size in bytes is final), so a server can recount it after
   * every write.
   */
  public long memoryUsage() {
    BloomLayer[] current = layers;
    long memory = CHAIN_STRUCT_BYTES + LINK_STRUCT_BYTES * current.length;
    for (BloomLayer layer : current) {
      memory += layer.bytes;
    }
    return memory;
  }

  /** Set bits over every layer. <b>Cost:</b> O(m): it scans every word of every layer. */
  public long bitCount() {
    return lock.readLocked(() -> {
      long count = 0;
      for (BloomLayer layer : layers) {
        count += layer.bitCount();
      }
      return count;
    });
  }

  /** A consistent BF.INFO snapshot. */
  public Info info() {
    return lock.readLocked(() -> {
      long capacity = 0;
      long memory = CHAIN_STRUCT_BYTES + LINK_STRUCT_BYTES * layers.length;
      for (BloomLayer layer : layers) {
        capacity += layer.entries;
        memory += layer.bytes;
      }
      return new Info(capacity, memory, layers.length, size, isScaling() ? Long.valueOf(growth) : null);
    });
  }

  /** The layers, oldest first, as BF.DEBUG describes them. */
  public List<Layer> layers() {
    return lock.readLocked(() -> {
      List<Layer> out = new ArrayList<>(layers.length);
      for (BloomLayer layer : layers) {
        out.add(Layer.of(layer, is64BitHash()));
      }
      return Collections.unmodifiableList(out);
    });
  }

  /** BF.DEBUG's reply: {@code "size:<items>"} then one line per layer (see {@link Layer#debugLine()}). */
  public List<String> debug() {
    return lock.readLocked(() -> {
      List<String> lines = new ArrayList<>(layers.length + 1);
      lines.add("size:" + Long.toUnsignedString(size));
      for (BloomLayer layer : layers) {
        lines.add(Layer.of(layer, is64BitHash()).debugLine());
      }
      return Collections.unmodifiableList(lines);
    });
  }

  /** Whether {@link #mergeFrom} would accept {@code other}: same options, growth and identical layer geometry. */
  public boolean isCompatible(ScalableBloomFilter other) {
    Objects.requireNonNull(other, "other");
    return other != this && incompatibility(other) == null;
  }

  /**
   * Unions {@code other} into this filter, layer by layer: afterwards this filter reports maybe-present every item
   * either filter did. Both must have the same options and growth and the same layers (count, bytes, bits, hashes,
   * capacity, error rate, n2); otherwise an {@link IncompatibleFilterException} names the first difference and nothing
   * changes. Each layer's item count becomes the sum of both (capped at 2^64−1): an overestimate when the inputs
   * share items, which only makes the chain grow sooner — the safe direction for the false-positive bound.
   *
   * @throws IllegalArgumentException if {@code other} is this filter (as for every other kind: a self-merge would
   *     double the item counts)
   */
  public void mergeFrom(ScalableBloomFilter other) {
    Objects.requireNonNull(other, "other");
    if (other == this) {
      throw new IllegalArgumentException("cannot merge a filter into itself");
    }
    BloomLayer[] theirs = other.lock.readLocked(() -> {
      BloomLayer[] copies = new BloomLayer[other.layers.length];
      for (int i = 0; i < copies.length; i++) {
        copies[i] = other.layers[i].copy();
      }
      return copies;
    });
    synchronized (lock.writers()) {
      IncompatibleFilterException problem =
          incompatibility(options, growth, layers, other.options, other.growth, theirs);
      if (problem != null) {
        throw problem;
      }
      for (Frozen view : frozen) {
        for (BloomLayer mine : layers) {
          view.beforeWrite(mine, 0, mine.words.length);
        }
      }
      lock.exclusive(() -> {
        long total = 0;
        for (int i = 0; i < layers.length; i++) {
          BloomLayer mine = layers[i];
          long[] words = theirs[i].words;
          for (int w = 0; w < words.length; w++) {
            mine.words[w] |= words[w];
          }
          mine.size = saturatingAdd(mine.size, theirs[i].size);
          total = saturatingAdd(total, mine.size);
        }
        size = total;
        return null;
      });
    }
  }

  private IncompatibleFilterException incompatibility(ScalableBloomFilter other) {
    BloomLayer[] theirs = other.lock.readLocked(() -> other.layers);
    return lock.readLocked(() -> incompatibility(options, growth, layers, other.options, other.growth, theirs));
  }

  private static IncompatibleFilterException incompatibility(int options, long growth, BloomLayer[] mine,
      int otherOptions, long otherGrowth, BloomLayer[] theirs) {
    if (options != otherOptions) {
      return new IncompatibleFilterException("RedisBloom options", options, otherOptions);
    }
    if (growth != otherGrowth) {
      return new IncompatibleFilterException("expansion", growth, otherGrowth);
    }
    if (mine.length != theirs.length) {
      return new IncompatibleFilterException("number of layers", mine.length, theirs.length);
    }
    for (int i = 0; i < mine.length; i++) {
      BloomLayer a = mine[i];
      BloomLayer b = theirs[i];
      if (a.bytes != b.bytes || a.bits != b.bits || a.hashes != b.hashes || a.entries != b.entries
          || Double.compare(a.error, b.error) != 0 || Double.compare(a.bitsPerEntry, b.bitsPerEntry) != 0
          || a.n2 != b.n2) {
        return new IncompatibleFilterException("layer " + i, Layer.of(a, true).debugLine(),
            Layer.of(b, true).debugLine());
      }
    }
    return null;
  }

  private static long saturatingAdd(long x, long y) {
    long sum = x + y;
    return Long.compareUnsigned(sum, x) < 0 ? -1L : sum;
  }

  /** An independent copy. */
  public ScalableBloomFilter copy() {
    return lock.readLocked(() -> {
      BloomLayer[] copies = new BloomLayer[layers.length];
      for (int i = 0; i < copies.length; i++) {
        copies[i] = layers[i].copy();
      }
      return new ScalableBloomFilter(options, growth, size, copies);
    });
  }

  /**
   * A view of this filter as it is now, which stays exactly so while the filter keeps changing: copy on write, one
   * page of {@value Frozen#PAGE_BYTES} bytes of one layer at a time. Taking it copies nothing but the layer headers;
   * afterwards, the first change to a page of a layer the view holds copies that page into the view before changing
   * it (an add changes at most one page per hash of one layer, the newest; a layer appended later is not in the view
   * and costs it nothing). {@link io.bloomery.format.FilterFormat#write(io.bloomery.filter.Summary,
   * java.io.OutputStream)} writes the view as the filter was when it was taken. Close it when done: until then every
   * change to this filter checks it.
   *
   * <p>Thread safety as {@link #copy()}: a caller that adds through {@link #addAsSoleWriter} must not take or read
   * the view while such an add runs (a server calls both under the key's lock); {@link #add}, merges and chunk loads
   * synchronize with it by themselves.
   */
  public Frozen freeze() {
    synchronized (lock.writers()) {
      Frozen view =
          lock.readLocked(() -> new Frozen(this, layers, ScalableDumpCodec.bloomHeader(this, layers), true));
      Frozen[] open = Arrays.copyOf(frozen, frozen.length + 1);
      open[open.length - 1] = view;
      frozen = open;
      return view;
    }
  }

  /** The layers and header as they are now, without copy on write: later adds show through (a rolling view). */
  Frozen rollingView() {
    return lock.readLocked(() -> new Frozen(this, layers, ScalableDumpCodec.bloomHeader(this, layers), false));
  }

  private void unfreeze(Frozen view) {
    synchronized (lock.writers()) {
      Frozen[] open = frozen;
      for (int i = 0; i < open.length; i++) {
        if (open[i] == view) {
          Frozen[] rest = new Frozen[open.length - 1];
          System.arraycopy(open, 0, rest, 0, i);
          System.arraycopy(open, i + 1, rest, i, rest.length - i);
          frozen = rest;
          return;
        }
      }
    }
  }

  /**
   * A scalable Bloom filter as it was when {@link #freeze()} took it; {@link io.bloomery.format.FilterFormat} writes
   * it as a {@link FilterKind#SCALABLE_BLOOM} filter, and it is nothing else (no lookups, no adds). Thread-safe.
   */
  public static final class Frozen implements io.bloomery.filter.Summary, AutoCloseable {
    /** The copy-on-write unit: 64 KiB of one layer's bit array. */
    public static final int PAGE_BYTES = 1 << 16;
    private static final int PAGE_SHIFT = 13; // words per page = 2^13
    private static final int PAGE_WORDS = 1 << PAGE_SHIFT;

    private final ScalableBloomFilter filter;
    private final BloomLayer[] layers;
    private final byte[] header;
    private final boolean copyOnWrite;
    /** Pages copied before a change, by (layer index << 32 | page index). */
    private final java.util.concurrent.ConcurrentHashMap<Long, long[]> saved =
        new java.util.concurrent.ConcurrentHashMap<>();
    private final java.util.concurrent.atomic.AtomicLong savedBytes = new java.util.concurrent.atomic.AtomicLong();
    private volatile boolean closed;

    private Frozen(ScalableBloomFilter filter, BloomLayer[] layers, byte[] header, boolean copyOnWrite) {
      this.filter = filter;
      this.layers = layers;
      this.header = header;
      this.copyOnWrite = copyOnWrite;
    }

    @Override
    public FilterKind kind() {
      return FilterKind.SCALABLE_BLOOM;
    }

    /** {@code redisbloom-murmur64a}, as the filter's. */
    @Override
    public ProtocolId protocolId() {
      return filter.protocolId();
    }

    /** The bytes of the pages copied so far because the filter changed them after the view was taken. */
    public long copiedBytes() {
      return savedBytes.get();
    }

    /** Stops the copying and drops what was copied; the view must not be written afterwards. Idempotent. */
    @Override
    public void close() {
      if (copyOnWrite && !closed) {
        closed = true;
        filter.unfreeze(this);
        saved.clear();
      }
    }

    /** Before an add sets (a, b)'s bits in {@code target}: saves each page whose word it changes. */
    void beforeSet(BloomLayer target, long a, long b) {
      int index = indexOf(target);
      if (index < 0) {
        return;
      }
      for (int i = 0; i < target.hashes; i++) {
        int word = target.changedWord(a, b, i);
        if (word >= 0) {
          save(index, target, word >>> PAGE_SHIFT);
        }
      }
    }

    /** Before words {@code [from, to)} of {@code layer} change. */
    void beforeWrite(BloomLayer layer, int from, int to) {
      int index = indexOf(layer);
      if (index < 0) {
        return;
      }
      int end = Math.min(to, layer.words.length);
      for (int page = from >>> PAGE_SHIFT; from < end && page <= (end - 1) >>> PAGE_SHIFT; page++) {
        save(index, layer, page);
      }
    }

    private int indexOf(BloomLayer layer) {
      for (int i = layers.length - 1; i >= 0; i--) {
        if (layers[i] == layer) {
          return i;
        }
      }
      return -1;
    }

    private void save(int index, BloomLayer layer, int page) {
      saved.computeIfAbsent((long) index << 32 | page, key -> {
        int from = page << PAGE_SHIFT;
        long[] copy = Arrays.copyOfRange(layer.words, from, Math.min(from + PAGE_WORDS, layer.words.length));
        savedBytes.addAndGet(8L * copy.length);
        return copy;
      });
    }

    /** The BF.SCANDUMP header as of the view. */
    byte[] header() {
      return header.clone();
    }

    /**
     * Copies payload words from word {@code word} of the concatenated layers (oldest first) into {@code into}, up to
     * its length, the end of a page or the end of a layer, as of the view; returns how many.
     */
    int words(long word, long[] into) {
      if (closed) {
        throw new IllegalStateException("the frozen view is closed");
      }
      int index = 0;
      long start = word;
      while (index < layers.length && start >= layers[index].words.length) {
        start -= layers[index].words.length;
        index++;
      }
      if (index == layers.length) {
        throw new IllegalArgumentException("word " + word + " is past the view's payload");
      }
      BloomLayer layer = layers[index];
      int at = (int) start;
      int page = at >>> PAGE_SHIFT;
      int count = Math.min(into.length, Math.min(layer.words.length, (page + 1) << PAGE_SHIFT) - at);
      synchronized (filter.lock.writers()) { // no add(), merge or chunk load runs while the page is read
        long[] copy = saved.get((long) index << 32 | page);
        if (copy != null) {
          System.arraycopy(copy, at - (page << PAGE_SHIFT), into, 0, count);
        } else {
          System.arraycopy(layer.words, at, into, 0, count);
        }
      }
      return count;
    }
  }

  // ---- package-private access for the dump codec (ScalableDumpCodec)

  <T> T withLayersLocked(java.util.function.Function<BloomLayer[], T> reader) {
    return lock.readLocked(() -> reader.apply(layers));
  }

  long sizeUnlocked() {
    return size;
  }

  /** Copies {@code data} into the layer bytes at absolute (concatenated) offset; the caller has checked bounds. */
  void writeBytes(BloomLayer layer, long offset, byte[] data, int from, int length) {
    synchronized (lock.writers()) {
      for (Frozen view : frozen) {
        view.beforeWrite(layer, (int) (offset >>> 3), (int) ((offset + length + 7) >>> 3));
      }
      lock.exclusive(() -> {
        for (int i = 0; i < length; i++) {
          layer.setByte(offset + i, data[from + i]);
        }
        return null;
      });
    }
  }

  BloomLayer[] layersUnsafe() {
    return layers;
  }

  /** BF.INFO's fields, in RedisBloom's reply order. */
  public record Info(long capacity, long size, long numberOfFilters, long itemsInserted, Long expansionRate) {
    /**
     * The reply as RedisBloom's field names in order: {@code Capacity, Size, Number of filters, Number of items
     * inserted, Expansion rate} (a {@code null} expansion rate for NONSCALING filters).
     */
    public Map<String, Long> asMap() {
      Map<String, Long> map = new LinkedHashMap<>();
      map.put("Capacity", capacity);
      map.put("Size", size);
      map.put("Number of filters", numberOfFilters);
      map.put("Number of items inserted", itemsInserted);
      map.put("Expansion rate", expansionRate);
      return Collections.unmodifiableMap(map);
    }
  }

  /**
   * One layer as BF.DEBUG reports it. {@code capacity}, {@code size}, {@code bytes} and {@code bits} are unsigned
   * 64-bit values.
   */
  public record Layer(long bytes, long bits, int hashes, int hashWidth, long capacity, long size, double errorRate,
      double bitsPerEntry, int n2) {

    static Layer of(BloomLayer layer, boolean hash64) {
      long bits = layer.bits != 0 ? layer.bits : 1L << layer.n2;
      return new Layer(layer.bytes, bits, layer.hashes, hash64 ? 64 : 32, layer.entries, layer.size, layer.error,
          layer.bitsPerEntry, layer.n2);
    }

    /** {@code bytes:%lu bits:%lu hashes:%u hashwidth:64|32 capacity:%lu size:%zu ratio:%g}, as RedisBloom prints. */
    public String debugLine() {
      return "bytes:" + Long.toUnsignedString(bytes)
          + " bits:" + Long.toUnsignedString(bits)
          + " hashes:" + Integer.toUnsignedString(hashes)
          + " hashwidth:" + hashWidth
          + " capacity:" + Long.toUnsignedString(capacity)
          + " size:" + Long.toUnsignedString(size)
          + " ratio:" + CFormat.g(errorRate);
    }
  }
}
