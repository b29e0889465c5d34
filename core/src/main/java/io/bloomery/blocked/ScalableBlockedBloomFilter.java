package io.bloomery.blocked;

import com.dynatrace.hash4j.hashing.Hasher64;
import io.bloomery.filter.BoundedFilter;
import io.bloomery.filter.FilterFullException;
import io.bloomery.filter.FilterKind;
import io.bloomery.filter.IncompatibleFilterException;
import io.bloomery.filter.MembershipFilter;
import io.bloomery.filter.Mergeable;
import io.bloomery.hash.ProtocolId;
import io.bloomery.internal.KindAccess;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;

/*
 * Why this class looks the way it does.
 *
 * It is the scalable Bloom filter of Almeida, Baquero, Preguiça and Hutchison ("Scalable Bloom Filters", IPL 2007)
 * with RedisBloom's growth rules (the BF.* chain of io.bloomery.scalable.ScalableBloomFilter), but its layers are
 * cache-blocked filters (BlockedBloomFilter): a lookup costs one cache-line miss per layer instead of up to k.
 *  - layer 0 holds `capacity` items at error·0.5; layer i+1 holds `expansion` times layer i's items at half its
 *    error, so the compound false-positive rate is at most Σ e·0.5^(i+1) < e (the union bound; it needs no
 *    independence between layers);
 *  - each layer is sized by the blocked model (BlockedBloomMath.blockedBlocks at the layer's capacity and error,
 *    then the k that minimises it), so layer i alone meets e·0.5^(i+1) once it holds its capacity;
 *  - an add first checks every layer (newest first); a hit, true or false positive, changes nothing and is not
 *    counted (RedisBloom's BF.ADD); otherwise the item goes into the newest layer, which is full once its count
 *    reaches its capacity, and then a new layer is appended first.
 *
 * Every layer is an xxh3-blocked-v1 filter over the chain's seed, so one XXH3 hash per item serves every layer, and
 * layer i's bits are exactly those of a BlockedBloomFilter(seed, blocks_i, k_i) holding layer i's items.
 *
 * The chain logic (check all, add to newest, grow by expansion at half the error) is written out here rather than
 * shared with ScalableBloomFilter through a layer interface: that class's layers and counts are RedisBloom's byte
 * format (SCANDUMP/LOADCHUNK, ScalableDumpCodec), and a layer interface would put an interface call with two receiver types
 * on both kinds' probe loops (the same trade the mapped filters make, docs/ARCHITECTURE.md). What is shared is the
 * rule set: the expansion range and the tightening ratio are ScalableBloomFilter's constants.
 *
 * Concurrency. Layers are only ever appended (a new array, published through a volatile field) and bits only go
 * from 0 to 1, so lookups need no lock at all. Mutators are serialized: add and mergeFrom hold a monitor, and
 * addAsSoleWriter is for callers that serialize themselves (a server's per-key lock). Bits are then set with plain
 * stores; the item count is published with a release store after the item's bits.
 */

/**
 * A scaling Bloom filter whose layers are cache-blocked Bloom filters: RedisBloom's BF growth semantics (capacity,
 * {@code EXPANSION}, each new layer at half the error rate) at the speed of {@link BlockedBloomFilter}.
 *
 * <p><b>What the answers mean.</b> {@link #mightContain} is one-sided: an item whose {@code add} returned (with
 * {@code true} or {@code false}) is never reported absent. {@code true} means "maybe": layer i's false-positive rate
 * at its capacity is at most {@code errorRate × 0.5^(i+1)} by the blocked model, so the chain's stays below
 * {@code errorRate} however many layers it grows.
 *
 * <p><b>Adding.</b> {@link #add} returns {@code true} if the item set at least one new bit, and {@code false} if the
 * filter already reported it as maybe present, in which case nothing changes and the item is not counted (as
 * RedisBloom's BF.ADD): {@link #insertedCount()} can be below the number of distinct items added. When the newest
 * layer has counted its capacity, a layer of {@code expansion ×} its capacity at half its error rate is appended. A
 * layer that cannot be sized (more than {@link #MAX_LAYERS} layers, a capacity past 2^63, a layer past {@link
 * BlockedBloomFilter#MAX_BLOCKS} blocks) or allocated (not enough heap) is refused with a {@link
 * FilterFullException}, and the filter is unchanged. {@link #growthBytes()} says, before an add, what the next layer
 * would allocate. There is no remove.
 *
 * <p><b>Limits.</b> Capacity at least 1; error rate in (0, 1); expansion in [1, {@value #MAX_EXPANSION}]; a seed of
 * at most 255 bytes (filters merge only with the same seed). A first layer that the blocked model cannot size or the
 * heap cannot hold is an {@link IllegalArgumentException}.
 *
 * <p><b>Thread safety.</b> Safe for concurrent use. Lookups take no lock; adds and merges are serialized on this
 * filter's monitor. A lookup concurrent with an add of the same item may see it either way; once {@code add} has
 * returned, every lookup that happens after it sees the item. A caller that already serializes every mutation may
 * use {@link #addAsSoleWriter}, which skips the monitor.
 *
 * <p><b>Format.</b> Kind {@link FilterKind#SCALABLE_BLOCKED_BLOOM}, protocol {@code xxh3-blocked-v1}
 * (docs/FORMAT.md).
 */
public final class ScalableBlockedBloomFilter implements BoundedFilter, Mergeable<ScalableBlockedBloomFilter> {
  /** The default growth factor (RedisBloom's {@code bf-expansion-factor}). */
  public static final int DEFAULT_EXPANSION = 2;
  /** Largest expansion (RedisBloom's limit). */
  public static final int MAX_EXPANSION = 32768;
  /** Each new layer's error rate is the previous one's times this (RedisBloom's {@code ERROR_TIGHTENING_RATIO}). */
  public static final double ERROR_TIGHTENING_RATIO = 0.5;
  /**
   * Most layers a chain may have. Far more than any chain reaches: with expansion 2 the 64th layer alone would hold
   * 2^63 times the first capacity, and with expansion 1 each layer needs about 1.44 more bits per item than the last
   * (its error rate is halved), so the 1024th would need some 1,500 bits per item.
   */
  public static final int MAX_LAYERS = 1024;
  /** Item counts saturate here (the format's bound on a count). */
  static final long MAX_COUNT = 1L << 62;

  private static final VarHandle SIZE;

  static {
    try {
      SIZE = MethodHandles.lookup().findVarHandle(ScalableBlockedBloomFilter.class, "size", long.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
    KindAccess.register(ScalableBlockedBloomFilter.class, BlockedBloomFilter.class, new KindAccess.ScalableBlocked<ScalableBlockedBloomFilter, BlockedBloomFilter>() {
      @Override
      public void checkChain(int expansion, double errorRate, long[] capacities) {
        ScalableBlockedBloomFilter.checkChain(expansion, errorRate, capacities);
      }

      @Override
      public ScalableBlockedBloomFilter restore(byte[] seed, int expansion, double errorRate,
          KindAccess.ChainState<BlockedBloomFilter> layers) {
        return ScalableBlockedBloomFilter.restore(seed, expansion, errorRate, layers);
      }

      @Override
      public KindAccess.ChainState<BlockedBloomFilter> layers(ScalableBlockedBloomFilter filter) {
        return filter.chainState();
      }
    });
  }

  /** One layer: its bits, its capacity and error rate, and the items counted into it. */
  private static final class Link {
    final BlockedBloomFilter bits;
    final long capacity;
    final double errorRate;
    /** Written only by the serialized writers. */
    long size;

    Link(BlockedBloomFilter bits, long capacity, double errorRate, long size) {
      this.bits = bits;
      this.capacity = capacity;
      this.errorRate = errorRate;
      this.size = size;
    }

    Link copy() {
      return new Link(bits.copy(), capacity, errorRate, size);
    }
  }

  private final byte[] seed;
  private final Hasher64 hasher;
  private final int expansion;
  private final double errorRate;
  private final Object writers = new Object();
  /** Replaced, never changed in place, when a layer is appended. */
  private volatile Link[] links;
  /** Σ layer sizes (saturating); release stores by writers, acquire loads by {@link #insertedCount()}. */
  private long size;

  private ScalableBlockedBloomFilter(byte[] seed, int expansion, double errorRate, Link[] links, long size) {
    this.seed = seed;
    this.hasher = BlockedBloomFilter.hasher(seed);
    this.expansion = expansion;
    this.errorRate = errorRate;
    this.links = links;
    this.size = size;
  }

  /** A chain with the default expansion 2 and an empty seed. */
  public static ScalableBlockedBloomFilter create(long capacity, double errorRate) {
    return create(new byte[0], capacity, errorRate, DEFAULT_EXPANSION);
  }

  /** A chain with an empty seed; see {@link #create(byte[], long, double, int)}. */
  public static ScalableBlockedBloomFilter create(long capacity, double errorRate, int expansion) {
    return create(new byte[0], capacity, errorRate, expansion);
  }

  /**
   * A chain whose first layer holds {@code capacity} items at {@code errorRate / 2}, growing by {@code expansion}.
   *
   * @param seed 0..255 bytes mixed into the hash (chains merge only with the same seed)
   * @throws IllegalArgumentException if capacity &lt; 1, errorRate is outside (0, 1), expansion is outside [1,
   *     {@value #MAX_EXPANSION}], the seed is longer than 255 bytes, or the first layer cannot be sized (more than
   *     {@link BlockedBloomFilter#MAX_BLOCKS} blocks) or does not fit in the heap
   */
  public static ScalableBlockedBloomFilter create(byte[] seed, long capacity, double errorRate, int expansion) {
    Objects.requireNonNull(seed, "seed");
    if (seed.length > BlockedBloomFilter.MAX_SEED_BYTES) {
      throw new IllegalArgumentException("seed must be at most 255 bytes, was " + seed.length);
    }
    checkExpansion(expansion);
    Layer first = plannedFirstLayer(capacity, errorRate);
    BlockedBloomFilter bits = allocate(seed, first);
    if (bits == null) {
      throw new IllegalArgumentException("the first layer of " + first.bytes() + " bytes does not fit in the heap");
    }
    Link link = new Link(bits, first.capacity(), first.errorRate(), 0);
    return new ScalableBlockedBloomFilter(seed.clone(), expansion, errorRate, new Link[] {link}, 0);
  }

  /**
   * The first layer {@link #create} builds for ({@code capacity}, {@code errorRate}), computed without allocating it:
   * for admitting its memory before creating it.
   *
   * @throws IllegalArgumentException as {@link #create} does for these two parameters
   */
  public static Layer plannedFirstLayer(long capacity, double errorRate) {
    if (capacity < 1) {
      throw new IllegalArgumentException("capacity must be >= 1, was " + capacity);
    }
    if (!(errorRate > 0 && errorRate < 1)) {
      throw new IllegalArgumentException("errorRate must be in (0, 1), was " + errorRate);
    }
    return plan(capacity, errorRate * ERROR_TIGHTENING_RATIO);
  }

  /** A layer for {@code capacity} items at {@code error}; IllegalArgumentException if the blocked model cannot. */
  private static Layer plan(long capacity, double error) {
    long blocks = BlockedBloomMath.blockedBlocks(capacity, error);
    return new Layer(blocks, BlockedBloomMath.optimalBlockedHashes(capacity, blocks), capacity, 0, error);
  }

  /** The layer that follows {@code newest}, or {@code null} if none can be sized. */
  private Layer nextPlan(Link[] chain) {
    Link newest = chain[chain.length - 1];
    double error = newest.errorRate * ERROR_TIGHTENING_RATIO;
    if (chain.length >= MAX_LAYERS || !(error > 0)) {
      return null;
    }
    try {
      return plan(Math.multiplyExact(newest.capacity, (long) expansion), error);
    } catch (ArithmeticException | IllegalArgumentException cannotSize) {
      return null;
    }
  }

  /** A zeroed layer, or {@code null} if the heap cannot hold it. */
  private static BlockedBloomFilter allocate(byte[] seed, Layer plan) {
    try {
      return BlockedBloomFilter.create(seed, plan.blocks(), plan.hashes());
    } catch (OutOfMemoryError cannotFit) {
      return null; // thrown only after a full collection: the heap really cannot hold it
    }
  }

  private static void checkExpansion(long expansion) {
    if (expansion < 1 || expansion > MAX_EXPANSION) {
      throw new IllegalArgumentException("expansion must be in [1, " + MAX_EXPANSION + "], was " + expansion);
    }
  }

  /** The rules a restored chain's parameters follow; IllegalArgumentException naming the first broken one. */
  static void checkChain(int expansion, double errorRate, long[] capacities) {
    checkExpansion(expansion);
    if (!(errorRate > 0 && errorRate < 1)) {
      throw new IllegalArgumentException("errorRate must be in (0, 1), was " + errorRate);
    }
    if (capacities.length < 1 || capacities.length > MAX_LAYERS) {
      throw new IllegalArgumentException("a chain has 1.." + MAX_LAYERS + " layers, found " + capacities.length);
    }
    if (capacities[0] < 1) {
      throw new IllegalArgumentException("layer 0's capacity must be >= 1, was " + Long.toUnsignedString(capacities[0]));
    }
    double error = errorRate * ERROR_TIGHTENING_RATIO;
    for (int i = 1; i < capacities.length; i++) {
      long expected;
      try {
        expected = Math.multiplyExact(capacities[i - 1], (long) expansion);
      } catch (ArithmeticException e) {
        throw new IllegalArgumentException("layer " + i + "'s capacity overflows: layer " + (i - 1) + " holds "
            + capacities[i - 1] + " at expansion " + expansion);
      }
      if (capacities[i] != expected) {
        throw new IllegalArgumentException("layer " + i + "'s capacity must be " + expected + " (layer " + (i - 1)
            + "'s times the expansion " + expansion + "), was " + Long.toUnsignedString(capacities[i]));
      }
      error *= ERROR_TIGHTENING_RATIO;
    }
    if (!(error > 0)) {
      throw new IllegalArgumentException("layer " + (capacities.length - 1) + "'s error rate underflows to 0");
    }
  }

  private static ScalableBlockedBloomFilter restore(byte[] seed, int expansion, double errorRate,
      KindAccess.ChainState<BlockedBloomFilter> state) {
    BlockedBloomFilter[] layers = state.layers();
    long[] capacities = state.capacities();
    long[] sizes = state.sizes();
    if (layers.length != capacities.length || sizes.length != capacities.length) {
      throw new IllegalArgumentException("layers, capacities and sizes differ in length");
    }
    checkChain(expansion, errorRate, capacities);
    Link[] links = new Link[layers.length];
    double error = errorRate;
    long total = 0;
    for (int i = 0; i < links.length; i++) {
      if (!Arrays.equals(layers[i].seed(), seed)) {
        throw new IllegalArgumentException("layer " + i + " has another seed than the chain");
      }
      if (sizes[i] < 0 || sizes[i] > MAX_COUNT) {
        throw new IllegalArgumentException("layer " + i + "'s item count must be in [0, 2^62], was "
            + Long.toUnsignedString(sizes[i]));
      }
      error *= ERROR_TIGHTENING_RATIO;
      links[i] = new Link(layers[i], capacities[i], error, sizes[i]);
      total = saturatingAdd(total, sizes[i]);
    }
    return new ScalableBlockedBloomFilter(seed.clone(), expansion, errorRate, links, total);
  }

  /** The layers and their counts as one consistent snapshot (for the format). */
  private KindAccess.ChainState<BlockedBloomFilter> chainState() {
    Link[] chain = snapshotLinks();
    BlockedBloomFilter[] layers = new BlockedBloomFilter[chain.length];
    long[] capacities = new long[chain.length];
    long[] sizes = new long[chain.length];
    for (int i = 0; i < chain.length; i++) {
      layers[i] = chain[i].bits;
      capacities[i] = chain[i].capacity;
      sizes[i] = chain[i].size;
    }
    return new KindAccess.ChainState<>(layers, capacities, sizes);
  }

  @Override
  public FilterKind kind() {
    return FilterKind.SCALABLE_BLOCKED_BLOOM;
  }

  /** Always {@link ProtocolId#XXH3_BLOCKED_V1}: every layer places bits by it, over the chain's seed. */
  @Override
  public ProtocolId protocolId() {
    return ProtocolId.XXH3_BLOCKED_V1;
  }

  /** A copy of the seed. */
  public byte[] seed() {
    return seed.clone();
  }

  /** The growth factor: each new layer holds this many times the previous one's items. */
  public int expansion() {
    return expansion;
  }

  /** The requested error rate, which bounds the whole chain's (the first layer is built at half of it). */
  public double errorRate() {
    return errorRate;
  }

  // ---- adds ----------------------------------------------------------------------------------

  /**
   * Adds the item; see the class javadoc.
   *
   * @return {@code true} if it was new (set at least one bit), {@code false} if the filter already reported it
   * @throws FilterFullException if the next layer cannot be sized or allocated; nothing changed
   */
  @Override
  public boolean add(byte[] item) {
    return addLocked(hasher.hashBytesToLong(Objects.requireNonNull(item, "item")));
  }

  /** Adds {@code item[offset, offset + length)}; see {@link #add(byte[])}. */
  public boolean add(byte[] item, int offset, int length) {
    Objects.checkFromIndexSize(offset, length, Objects.requireNonNull(item, "item").length);
    return addLocked(hasher.hashBytesToLong(item, offset, length));
  }

  @Override
  public boolean add(CharSequence item) {
    return addLocked(KeyBatches.hashUtf8(hasher, item));
  }

  @Override
  public boolean add(long item) {
    return addLocked(hasher.hashLongToLong(item));
  }

  /**
   * {@link #add(byte[], int, int)} for a caller that already serializes every mutation of this filter (for instance
   * under its own per-key lock): it does not take this filter's monitor. Same answers, same growth, same exceptions.
   *
   * <p><b>The caller guarantees</b> that while this method runs no other thread calls a mutator of this filter
   * ({@code add}, this method, {@link #mergeFrom}) nor {@link #copy()} or a serialization. Lookups ({@link
   * #mightContain}, {@link #insertedCount}, {@link #layers}) may run concurrently on any thread: bits only go from 0
   * to 1 and the count is published with a release store after the bits, so a lookup that observes the new count
   * (or that happens after the caller's lock release) sees the item. A {@link #layers()} listing taken concurrently
   * may show one layer's count a step ahead of {@link #insertedCount()}.
   */
  public boolean addAsSoleWriter(byte[] item, int offset, int length) {
    Objects.checkFromIndexSize(offset, length, Objects.requireNonNull(item, "item").length);
    return addHashed(hasher.hashBytesToLong(item, offset, length));
  }

  private boolean addLocked(long hash) {
    synchronized (writers) {
      return addHashed(hash);
    }
  }

  private boolean addHashed(long hash) {
    Link[] chain = links;
    if (containsIn(chain, hash)) {
      return false;
    }
    Link newest = chain[chain.length - 1];
    if (newest.size >= newest.capacity) {
      newest = grow(chain);
    }
    if (!newest.bits.setHash(hash)) {
      return false; // unreachable: the newest layer did not contain the item
    }
    newest.size++;
    SIZE.setRelease(this, saturatingAdd(size, 1));
    return true;
  }

  /** Appends the next layer and returns it; the chain is unchanged if it cannot. */
  private Link grow(Link[] chain) {
    Layer plan = nextPlan(chain);
    if (plan == null) {
      throw new FilterFullException(FilterFullException.Reason.GROWTH_LIMIT, "cannot grow the chain past " + chain.length + " layers: the next layer ("
          + Long.toUnsignedString(chain[chain.length - 1].capacity) + " x " + expansion
          + " items) cannot be sized");
    }
    BlockedBloomFilter bits = allocate(seed, plan);
    if (bits == null) {
      throw new FilterFullException(FilterFullException.Reason.OUT_OF_HEAP, "cannot grow the chain: the next layer of " + plan.bytes()
          + " bytes does not fit in the heap");
    }
    Link grown = new Link(bits, plan.capacity(), plan.errorRate(), 0);
    Link[] appended = Arrays.copyOf(chain, chain.length + 1);
    appended[chain.length] = grown;
    links = appended;
    return grown;
  }

  /**
   * The bytes of bit array the next add of a new item would allocate: 0 while the newest layer has room, the next
   * layer's {@link Layer#bytes()} once it is full, or -1 if no next layer can be sized (that add will be refused).
   * For admitting memory before an add; racy if called while another thread adds.
   */
  public long growthBytes() {
    Link[] chain = links;
    Link newest = chain[chain.length - 1];
    if (newest.size < newest.capacity) {
      return 0;
    }
    Layer plan = nextPlan(chain);
    return plan == null ? -1 : plan.bytes();
  }

  // ---- lookups -------------------------------------------------------------------------------

  @Override
  public boolean mightContain(byte[] item) {
    return containsIn(links, hasher.hashBytesToLong(Objects.requireNonNull(item, "item")));
  }

  /** Queries {@code item[offset, offset + length)}. */
  public boolean mightContain(byte[] item, int offset, int length) {
    Objects.checkFromIndexSize(offset, length, Objects.requireNonNull(item, "item").length);
    return containsIn(links, hasher.hashBytesToLong(item, offset, length));
  }

  @Override
  public boolean mightContain(CharSequence item) {
    return containsIn(links, KeyBatches.hashUtf8(hasher, item));
  }

  @Override
  public boolean mightContain(long item) {
    return containsIn(links, hasher.hashLongToLong(item));
  }

  /** Newest first: the newest layer holds the most items, so a member is most likely found there. */
  private static boolean containsIn(Link[] chain, long hash) {
    for (int i = chain.length - 1; i >= 0; i--) {
      if (chain[i].bits.containsHash(hash)) {
        return true;
      }
    }
    return false;
  }

  // ---- state ---------------------------------------------------------------------------------

  /** Items counted by adds that returned {@code true} (plus the counts of chains merged in), saturating at 2^62. */
  @Override
  public long insertedCount() {
    return (long) SIZE.getAcquire(this);
  }

  /** The number of layers. */
  public int filterCount() {
    return links.length;
  }

  /** Σ layer capacities (saturating at {@link Long#MAX_VALUE}). */
  @Override
  public long capacity() {
    long total = 0;
    for (Link link : links) {
      total = link.capacity > Long.MAX_VALUE - total ? Long.MAX_VALUE : total + link.capacity;
    }
    return total;
  }

  /**
   * Whether {@link #insertedCount()} has reached 80% of {@link #capacity()}: the chain is then close to appending a
   * layer. O(layers).
   */
  @Override
  public boolean isNearCapacity() {
    return insertedCount() >= 0.8 * capacity();
  }

  /**
   * The false-positive rate as the filter is now: {@code 1 − Π (1 − f_i)} over the layers, where f_i is layer i's
   * {@link BlockedBloomFilter#estimatedFpp()} (a non-member is reported if any layer reports it). <b>Cost:</b> O(m):
   * it scans every block of every layer.
   */
  public double estimatedFpp() {
    double none = 1;
    for (Link link : links) {
      none *= 1 - link.bits.estimatedFpp();
    }
    return 1 - none;
  }

  /** Set bits over every layer. <b>Cost:</b> O(m): it scans every word of every layer. */
  public long bitCount() {
    long count = 0;
    for (Link link : links) {
      count += link.bits.bitCount();
    }
    return count;
  }

  /** The bytes of bit array over every layer, {@code 64 × Σ blocks}. */
  public long byteSize() {
    long bytes = 0;
    for (Link link : links) {
      bytes += link.bits.bitSize() / 8;
    }
    return bytes;
  }

  /** The layers, oldest first. */
  public List<Layer> layers() {
    Link[] chain = links;
    List<Layer> out = new ArrayList<>(chain.length);
    for (Link link : chain) {
      out.add(new Layer(link.bits.blockCount(), link.bits.hashCount(), link.capacity, link.size, link.errorRate));
    }
    return Collections.unmodifiableList(out);
  }

  // ---- merge and copy ------------------------------------------------------------------------

  /** Whether {@link #mergeFrom} would accept {@code other}: same seed, expansion, error rate and layers. */
  public boolean isCompatible(ScalableBlockedBloomFilter other) {
    Objects.requireNonNull(other, "other");
    return other != this && incompatibility(links, other, other.links) == null;
  }

  /**
   * Unions {@code other} into this chain, layer by layer: afterwards this chain reports maybe-present every item
   * either did. Both must have the same seed, expansion and error rate and the same layers (count, blocks, k,
   * capacity); otherwise an {@link IncompatibleFilterException} names the first difference and nothing changes. Each
   * layer's item count becomes the sum of both (saturating at 2^62): an overestimate when the inputs share items,
   * which only makes the chain grow sooner, the safe direction for the false-positive bound.
   *
   * @throws IllegalArgumentException if {@code other} is this filter (a self-merge would double the counts)
   */
  public void mergeFrom(ScalableBlockedBloomFilter other) {
    Objects.requireNonNull(other, "other");
    if (other == this) {
      throw new IllegalArgumentException("cannot merge a filter into itself");
    }
    Link[] theirs = other.snapshotLinks();
    synchronized (writers) {
      Link[] mine = links;
      IncompatibleFilterException problem = incompatibility(mine, other, theirs);
      if (problem != null) {
        throw problem;
      }
      long total = 0;
      for (int i = 0; i < mine.length; i++) {
        mine[i].bits.mergeFrom(theirs[i].bits);
        mine[i].size = saturatingAdd(mine[i].size, theirs[i].size);
        total = saturatingAdd(total, mine[i].size);
      }
      SIZE.setRelease(this, total);
    }
  }

  /** The layers with their counts as of one moment (the bits are shared, not copied). */
  private Link[] snapshotLinks() {
    synchronized (writers) {
      Link[] chain = links;
      Link[] out = new Link[chain.length];
      for (int i = 0; i < chain.length; i++) {
        out[i] = new Link(chain[i].bits, chain[i].capacity, chain[i].errorRate, chain[i].size);
      }
      return out;
    }
  }

  private IncompatibleFilterException incompatibility(Link[] mine, ScalableBlockedBloomFilter other, Link[] theirs) {
    if (!Arrays.equals(seed, other.seed)) {
      return new IncompatibleFilterException("seed", HexFormat.of().formatHex(seed), HexFormat.of().formatHex(other.seed));
    }
    if (expansion != other.expansion) {
      return new IncompatibleFilterException("expansion", expansion, other.expansion);
    }
    if (Double.compare(errorRate, other.errorRate) != 0) {
      return new IncompatibleFilterException("error rate", errorRate, other.errorRate);
    }
    if (mine.length != theirs.length) {
      return new IncompatibleFilterException("number of layers", mine.length, theirs.length);
    }
    for (int i = 0; i < mine.length; i++) {
      BlockedBloomFilter a = mine[i].bits;
      BlockedBloomFilter b = theirs[i].bits;
      if (a.blockCount() != b.blockCount() || a.hashCount() != b.hashCount() || mine[i].capacity != theirs[i].capacity) {
        return new IncompatibleFilterException("layer " + i,
            "blocks " + a.blockCount() + ", k " + a.hashCount() + ", capacity " + mine[i].capacity,
            "blocks " + b.blockCount() + ", k " + b.hashCount() + ", capacity " + theirs[i].capacity);
      }
    }
    return null;
  }

  private static long saturatingAdd(long a, long b) {
    return a > MAX_COUNT - b ? MAX_COUNT : a + b;
  }

  /** An independent copy, consistent with the adds made through {@link #add}. */
  public ScalableBlockedBloomFilter copy() {
    synchronized (writers) {
      Link[] chain = links;
      Link[] copies = new Link[chain.length];
      for (int i = 0; i < chain.length; i++) {
        copies[i] = chain[i].copy();
      }
      return new ScalableBlockedBloomFilter(seed, expansion, errorRate, copies, size);
    }
  }

  @Override
  public String toString() {
    return "ScalableBlockedBloomFilter{layers=" + filterCount() + ", capacity=" + capacity() + ", inserted="
        + insertedCount() + ", expansion=" + expansion + ", errorRate=" + errorRate + "}";
  }

  /**
   * One layer: {@code blocks} of 512 bits, {@code hashes} bits per item, sized for {@code capacity} items at {@code
   * errorRate}, holding {@code size} counted items.
   */
  public record Layer(long blocks, int hashes, long capacity, long size, double errorRate) {
    /** The layer's bit array in bytes, {@code 64 × blocks}. */
    public long bytes() {
      return blocks * (BlockedBloomMath.BLOCKED_BLOCK_BITS / 8);
    }
  }
}
