package io.bloomery.testkit;

import io.bloomery.aging.AgePartitionedFilter;
import io.bloomery.blocked.BlockedBloomFilter;
import io.bloomery.blocked.BlockedBloomMath;
import io.bloomery.blocked.ScalableBlockedBloomFilter;
import io.bloomery.blocked.SplitBlockBloomFilter;
import io.bloomery.counting.CountingBloomFilter;
import io.bloomery.cuckoo.CuckooFilter;
import io.bloomery.filter.BloomFilter;
import io.bloomery.filter.FilterKind;
import io.bloomery.filter.MembershipFilter;
import io.bloomery.filter.Summary;
import io.bloomery.format.FilterFormat;
import io.bloomery.format.RedisBloomDump;
import io.bloomery.fuse.BinaryFuseFilter;
import io.bloomery.hash.HashProtocol;
import io.bloomery.hash.ProtocolId;
import io.bloomery.hash.Protocols;
import io.bloomery.scalable.ScalableBloomFilter;
import io.bloomery.sizing.BloomMath;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.LongSupplier;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;

/**
 * One constant per filter kind (and, for classic filters, per protocol) that {@link FilterContract}
 * runs its suite over.
 *
 * <p><b>Adding a kind.</b> Add a constant with a body overriding {@link #create} and every hook whose
 * capability the kind has ({@code supportsMerge}/{@code merge}, {@code supportsRemove}/{@code
 * delete}, {@code state}, …). The defaults describe a kind with none of them; the classic constants
 * get theirs from the {@code kind == CLASSIC_BLOOM} branches below.
 *
 * <p><b>Serialization.</b> Every kind must survive {@code FilterFormat}'s round trip: {@link
 * #roundTrip} writes and reads back through both the byte-array and the stream path. A new kind
 * passes once its body is added to {@code FilterFormat} (see docs/FORMAT.md "How to add a kind").
 */
public enum FilterFactory {
  CLASSIC_XXH3_EDH_V1(FilterKind.CLASSIC_BLOOM, ProtocolId.XXH3_EDH_V1),
  CLASSIC_SHA256_DOC_V1(FilterKind.CLASSIC_BLOOM, ProtocolId.SHA256_DOC_V1),
  CLASSIC_SHA256_INDEX8(FilterKind.CLASSIC_BLOOM, ProtocolId.SHA256_INDEX8),
  CLASSIC_SHA256_INDEX16(FilterKind.CLASSIC_BLOOM, ProtocolId.SHA256_INDEX16),
  CLASSIC_GUAVA_MURMUR128_MITZ64(FilterKind.CLASSIC_BLOOM, ProtocolId.GUAVA_MURMUR128_MITZ64),
  BLOCKED_XXH3_BLOCKED_V1(FilterKind.BLOCKED_BLOOM, ProtocolId.XXH3_BLOCKED_V1) {
    @Override
    public List<ThrowingCallable> invalidCreations() {
      return List.of(
          () -> BlockedBloomFilter.create(-1, 0.01),
          () -> BlockedBloomFilter.create(1000, 0),
          () -> BlockedBloomFilter.create(1000, 1.0),
          () -> BlockedBloomFilter.create(new byte[0], 0, 4),
          () -> BlockedBloomFilter.create(new byte[0], 16, 0),
          () -> BlockedBloomFilter.create(new byte[0], -1, 4));
    }

    @Override
    public MembershipFilter create(long n, double p, byte[] seed) {
      long blocks = BlockedBloomMath.blockedBlocks(n, p);
      return BlockedBloomFilter.create(seed, blocks, BlockedBloomMath.optimalBlockedHashes(n, blocks));
    }

    @Override
    public boolean supportsSeed() {
      return true;
    }

    @Override
    public void merge(MembershipFilter into, MembershipFilter from) {
      ((BlockedBloomFilter) into).mergeFrom((BlockedBloomFilter) from);
    }

    @Override
    public Object state(MembershipFilter filter) {
      BlockedBloomFilter blocked = (BlockedBloomFilter) filter;
      List<Long> words = new ArrayList<>();
      for (long j = 0; j < Internals.wordCount(blocked); j++) {
        words.add(Internals.word(blocked, j));
      }
      return List.of(Hex.encode(blocked.seed()), blocked.blockCount(), blocked.hashCount(), words);
    }
  },
  SPLIT_BLOCK_PARQUET_XXH64(FilterKind.SPLIT_BLOCK_BLOOM, ProtocolId.PARQUET_XXH64) {
    @Override
    public List<ThrowingCallable> invalidCreations() {
      return List.of(
          () -> SplitBlockBloomFilter.create(-1, 0.01),
          () -> SplitBlockBloomFilter.create(1000, 0),
          () -> SplitBlockBloomFilter.create(1000, 1.0),
          () -> SplitBlockBloomFilter.ofBytes(0),
          () -> SplitBlockBloomFilter.ofBytes(33),
          () -> SplitBlockBloomFilter.createParquetSized(1000, 0.01, 0));
    }

    @Override
    public MembershipFilter create(long n, double p, byte[] seed) {
      return SplitBlockBloomFilter.create(n, p);
    }

    @Override
    public void merge(MembershipFilter into, MembershipFilter from) {
      ((SplitBlockBloomFilter) into).mergeFrom((SplitBlockBloomFilter) from);
    }

    @Override
    public Object state(MembershipFilter filter) {
      SplitBlockBloomFilter split = (SplitBlockBloomFilter) filter;
      List<Long> words = new ArrayList<>();
      for (long j = 0; j < Internals.wordCount(split); j++) {
        words.add(Internals.word(split, j));
      }
      return List.of(split.blockCount(), words);
    }
  },


  /**
   * RedisBloom BF semantics: capacity n (capped at RedisBloom's 2^30), error rate p, expansion 2. Merges layer by
   * layer; {@link #state} is the options, growth, layer geometry and bits (item counters excluded: a merge sums
   * them, while building from the union does not count items that were already false positives).
   */
  SCALABLE_REDISBLOOM(FilterKind.SCALABLE_BLOOM, ProtocolId.REDISBLOOM_MURMUR64A) {
    @Override
    public List<ThrowingCallable> invalidCreations() {
      return List.of(
          () -> ScalableBloomFilter.create(0, 0.01),
          () -> ScalableBloomFilter.create(ScalableBloomFilter.MAX_CAPACITY + 1, 0.01),
          () -> ScalableBloomFilter.create(100, 0),
          () -> ScalableBloomFilter.create(100, 1.0),
          () -> ScalableBloomFilter.create(100, 0.01, -1),
          () -> ScalableBloomFilter.createNonScaling(0, 0.01));
    }

    @Override
    public MembershipFilter createBounded(long n) {
      return ScalableBloomFilter.createNonScaling(n, 0.01);
    }

    @Override
    public MembershipFilter create(long n, double p, byte[] seed) {
      return ScalableBloomFilter.create(Math.min(n, ScalableBloomFilter.MAX_CAPACITY), p);
    }

    @Override
    public boolean addReportsChange() {
      return true;
    }

    @Override
    public boolean supportsMerge() {
      return true;
    }

    @Override
    public void merge(MembershipFilter into, MembershipFilter from) {
      ((ScalableBloomFilter) into).mergeFrom((ScalableBloomFilter) from);
    }

    @Override
    public boolean threadSafe() {
      return true;
    }

    @Override
    public Object state(MembershipFilter filter) {
      ScalableBloomFilter bloom = (ScalableBloomFilter) filter;
      List<Object> state = new ArrayList<>(List.of(bloom.options(), bloom.growth()));
      for (ScalableBloomFilter.Layer layer : bloom.layers()) {
        state.add(List.of(layer.bytes(), layer.bits(), layer.hashes(), layer.capacity(), layer.errorRate(), layer.n2()));
      }
      for (RedisBloomDump.Chunk chunk : RedisBloomDump.scanDumpAll(bloom).subList(1, bloom.filterCount() + 1)) {
        state.add(Hex.encode(chunk.data()));
      }
      return state;
    }
  },

  /**
   * A scaling chain of blocked layers: capacity n, error p, expansion 2, the suite's seed. Merges layer by layer;
   * {@link #state} is the seed, expansion, error rate, layer geometry and bits (item counters excluded, as for the
   * RedisBloom chain: a merge sums them).
   */
  SCALABLE_BLOCKED_XXH3_BLOCKED_V1(FilterKind.SCALABLE_BLOCKED_BLOOM, ProtocolId.XXH3_BLOCKED_V1) {
    @Override
    public List<ThrowingCallable> invalidCreations() {
      return List.of(
          () -> ScalableBlockedBloomFilter.create(0, 0.01),
          () -> ScalableBlockedBloomFilter.create(-5, 0.01),
          () -> ScalableBlockedBloomFilter.create(100, 0),
          () -> ScalableBlockedBloomFilter.create(100, 1.0),
          () -> ScalableBlockedBloomFilter.create(100, Double.NaN),
          () -> ScalableBlockedBloomFilter.create(100, 0.01, 0),
          () -> ScalableBlockedBloomFilter.create(100, 0.01, ScalableBlockedBloomFilter.MAX_EXPANSION + 1),
          () -> ScalableBlockedBloomFilter.create(new byte[256], 100, 0.01, 2),
          () -> ScalableBlockedBloomFilter.create(Long.MAX_VALUE, 0.01));
    }

    @Override
    public MembershipFilter create(long n, double p, byte[] seed) {
      return ScalableBlockedBloomFilter.create(seed, n, p, 2);
    }

    @Override
    public boolean supportsSeed() {
      return true;
    }

    @Override
    public boolean addReportsChange() {
      return true;
    }

    @Override
    public boolean supportsMerge() {
      return true;
    }

    @Override
    public void merge(MembershipFilter into, MembershipFilter from) {
      ((ScalableBlockedBloomFilter) into).mergeFrom((ScalableBlockedBloomFilter) from);
    }

    @Override
    public boolean threadSafe() {
      return true;
    }

    @Override
    public Object state(MembershipFilter filter) {
      ScalableBlockedBloomFilter chain = (ScalableBlockedBloomFilter) filter;
      List<Object> state = new ArrayList<>(List.of(Hex.encode(chain.seed()), chain.expansion(), chain.errorRate()));
      for (ScalableBlockedBloomFilter.Layer layer : chain.layers()) {
        state.add(List.of(layer.blocks(), layer.hashes(), layer.capacity(), layer.errorRate()));
      }
      state.add(Internals.layerWords(chain));
      return state;
    }
  },

  /**
   * RedisBloom CF semantics with room for 2n fingerprints in its first sub-filter (bucket size 4), so the suite's
   * re-inserts (which store duplicate copies, as CF.ADD does) never grow it. p is ignored: a cuckoo filter has no
   * error-rate parameter. {@code add} always changes the filter, so {@link #addReportsChange} is false, and there
   * is no {@link #state}: a re-insert stores a duplicate fingerprint, which changes the tables (answers stay the
   * same, because an item's two buckets are a function of one bucket and the fingerprint).
   */
  CUCKOO_REDISBLOOM(FilterKind.CUCKOO, null) {
    @Override
    public List<ThrowingCallable> invalidCreations() {
      return List.of(
          () -> CuckooFilter.create(0),
          () -> CuckooFilter.create(CuckooFilter.MAX_CAPACITY + 1),
          () -> CuckooFilter.create(100, 0, 500, 1),
          () -> CuckooFilter.create(100, 256, 500, 1),
          () -> CuckooFilter.create(100, 4, 0, 1),
          () -> CuckooFilter.create(100, 4, 500, -1));
    }

    @Override
    public MembershipFilter createBounded(long n) {
      return CuckooFilter.create(Math.max(8, n), 4, 500, 0);
    }

    @Override
    public MembershipFilter create(long n, double p, byte[] seed) {
      return CuckooFilter.create(Math.min(Math.max(8, 4 * n), CuckooFilter.MAX_CAPACITY), 4, 500, 1);
    }

    @Override
    public boolean supportsRemove() {
      return true;
    }

    @Override
    public boolean remove(MembershipFilter filter, byte[] item) {
      return ((CuckooFilter) filter).remove(item);
    }

    @Override
    public boolean threadSafe() {
      return true;
    }
  },

  /** Counting Bloom, 4-bit counters: deletes; its state is the classic projection (counter > 0). */
  COUNTING_XXH3_EDH_V1(FilterKind.COUNTING_BLOOM, ProtocolId.XXH3_EDH_V1) {
    @Override
    public List<ThrowingCallable> invalidCreations() {
      HashProtocol xxh3 = Protocols.of(ProtocolId.XXH3_EDH_V1);
      return List.of(
          () -> CountingBloomFilter.create(-1, 0.01),
          () -> CountingBloomFilter.create(1000, 0),
          () -> CountingBloomFilter.create(1000, 1.0),
          () -> CountingBloomFilter.create(xxh3, new byte[0], 0, 3, 4),
          () -> CountingBloomFilter.create(xxh3, new byte[0], 1024, 0, 4),
          () -> CountingBloomFilter.create(xxh3, new byte[0], 1024, 3, 0),
          () -> CountingBloomFilter.create(xxh3, new byte[0], 1024, 3, 65));
    }

    @Override
    public MembershipFilter create(long n, double p, byte[] seed) {
      long counters = BloomMath.optimalBits(n, p);
      return CountingBloomFilter.create(
          Protocols.of(ProtocolId.XXH3_EDH_V1), seed, counters, BloomMath.optimalHashes(n, counters), CountingBloomFilter.DEFAULT_COUNTER_BITS);
    }

    @Override
    public boolean supportsSeed() {
      return true;
    }

    @Override
    public boolean addReportsChange() {
      return true;
    }

    @Override
    public boolean supportsMerge() {
      return true;
    }

    @Override
    public void merge(MembershipFilter into, MembershipFilter from) {
      ((CountingBloomFilter) into).mergeFrom((CountingBloomFilter) from);
    }

    @Override
    public boolean supportsRemove() {
      return true;
    }

    @Override
    public boolean remove(MembershipFilter filter, byte[] item) {
      return ((CountingBloomFilter) filter).remove(item);
    }

    @Override
    public boolean threadSafe() {
      return true;
    }

    @Override
    public Object state(MembershipFilter filter) {
      // Counters are a multiset (re-adds and merges add up); what the contract compares is the set
      // of answers, which is the classic projection.
      return CLASSIC_XXH3_EDH_V1.state(((CountingBloomFilter) filter).toBloomFilter());
    }
  },

  /**
   * Age-partitioned, 4 generations of one minute, on a fixed clock (so nothing expires during the
   * contract; expiry is tested in AgePartitionedFilterTest).
   */
  /**
   * Static binary fuse filters, through {@link StaticSetFilter}: the real filter built from the items
   * added so far (the {@code kind == BINARY_FUSE} branches below).
   */
  BINARY_FUSE_8(FilterKind.BINARY_FUSE, ProtocolId.XXH3_FUSE_V1),
  BINARY_FUSE_16(FilterKind.BINARY_FUSE, ProtocolId.XXH3_FUSE_V1),
  AGE_PARTITIONED_XXH3_EDH_V1(FilterKind.AGE_PARTITIONED_BLOOM, ProtocolId.XXH3_EDH_V1) {
    @Override
    public List<ThrowingCallable> invalidCreations() {
      HashProtocol xxh3 = Protocols.of(ProtocolId.XXH3_EDH_V1);
      java.time.Duration hour = java.time.Duration.ofHours(1);
      return List.of(
          () -> AgePartitionedFilter.create(hour, 4, 0, 0.01, FIXED_CLOCK),
          () -> AgePartitionedFilter.create(hour, 4, 1000, 0, FIXED_CLOCK),
          () -> AgePartitionedFilter.create(hour, 4, 1000, 1.0, FIXED_CLOCK),
          () -> AgePartitionedFilter.create(hour, 1, 1000, 0.01, FIXED_CLOCK),
          () -> AgePartitionedFilter.create(java.time.Duration.ZERO, 4, 1000, 0.01, FIXED_CLOCK),
          () -> AgePartitionedFilter.create(xxh3, new byte[0], 0, 3, 4, 60_000, FIXED_CLOCK),
          () -> AgePartitionedFilter.create(xxh3, new byte[0], 1024, 0, 4, 60_000, FIXED_CLOCK),
          () -> AgePartitionedFilter.create(xxh3, new byte[0], 1024, 3, 4, 0, FIXED_CLOCK));
    }

    @Override
    public MembershipFilter create(long n, double p, byte[] seed) {
      double generationFpp = AgePartitionedFilter.generationFpp(p, AGE_GENERATIONS);
      long bits = BloomMath.optimalBits(n, generationFpp);
      return AgePartitionedFilter.create(
          Protocols.of(ProtocolId.XXH3_EDH_V1), seed, bits, BloomMath.optimalHashes(n, bits), AGE_GENERATIONS, 60_000, FIXED_CLOCK);
    }

    @Override
    public boolean supportsSeed() {
      return true;
    }

    @Override
    public boolean addReportsChange() {
      return true;
    }

    @Override
    public boolean supportsMerge() {
      return true;
    }

    @Override
    public void merge(MembershipFilter into, MembershipFilter from) {
      ((AgePartitionedFilter) into).mergeFrom((AgePartitionedFilter) from);
    }

    @Override
    public boolean threadSafe() {
      return true;
    }

    @Override
    public Object state(MembershipFilter filter) {
      AgePartitionedFilter.Snapshot snapshot = ((AgePartitionedFilter) filter).snapshot();
      List<Object> state = new ArrayList<>();
      state.add(snapshot.newestGeneration());
      for (int i = 0; i < snapshot.size(); i++) {
        state.add(CLASSIC_XXH3_EDH_V1.state(snapshot.generation(i)));
      }
      return state;
    }

    /** The format does not persist the time source: read-back copies adopt the fixed test clock. */
    @Override
    Summary afterRead(Summary filter) {
      return ((AgePartitionedFilter) filter).copy(FIXED_CLOCK);
    }
  };

  private static final int AGE_GENERATIONS = 4;
  private static final LongSupplier FIXED_CLOCK = () -> 1_764_460_800_000L;

  private final FilterKind kind;
  private final ProtocolId protocol;

  FilterFactory(FilterKind kind, ProtocolId protocol) {
    this.kind = kind;
    this.protocol = protocol;
  }

  /** The kind this constant makes. */
  public FilterKind kind() {
    return kind;
  }

  /** The hash protocol this constant uses, or {@code null} if the kind has a fixed one. */
  public ProtocolId protocol() {
    return protocol;
  }

  /**
   * An empty filter sized for {@code n} items at false-positive rate {@code p}. A kind whose
   * protocol has no seed ({@link #supportsSeed()} false) ignores {@code seed}.
   */
  public MembershipFilter create(long n, double p, byte[] seed) {
    if (kind == FilterKind.CLASSIC_BLOOM) {
      HashProtocol hashProtocol = Protocols.of(protocol);
      long bits = BloomMath.optimalBits(n, p);
      if (protocol == ProtocolId.GUAVA_MURMUR128_MITZ64) {
        bits = (bits + 63) / 64 * 64; // Guava's bit array is whole 64-bit words
      }
      int hashes = BloomMath.optimalHashes(n, bits);
      return BloomFilter.create(hashProtocol, supportsSeed() ? seed : new byte[0], bits, hashes);
    }
    if (kind == FilterKind.BINARY_FUSE) {
      return new StaticSetFilter(this == BINARY_FUSE_16 ? 16 : 8);
    }
    throw new UnsupportedOperationException(this + " must override create");
  }

  /** Whether {@code create} uses its seed (filters with different seeds are then incompatible). */
  public boolean supportsSeed() {
    if (kind == FilterKind.CLASSIC_BLOOM) {
      return protocol == ProtocolId.XXH3_EDH_V1 || protocol == ProtocolId.SHA256_DOC_V1;
    }
    return false;
  }

  /**
   * Whether {@code add} returns {@code true} exactly when a {@code mightContain} just before it would
   * have returned {@code false} (single-threaded).
   */
  public boolean addReportsChange() {
    return kind == FilterKind.CLASSIC_BLOOM || kind == FilterKind.BLOCKED_BLOOM || kind == FilterKind.SPLIT_BLOCK_BLOOM;
  }

  /**
   * Whether the kind can be read in place ({@code FilterFormat.map} / {@code wrap}: a read-only view over its
   * serialized bytes).
   */
  public boolean supportsMapping() {
    return kind == FilterKind.CLASSIC_BLOOM || kind == FilterKind.BLOCKED_BLOOM;
  }

  /** Whether two filters made with the same arguments can be merged. */
  public boolean supportsMerge() {
    return kind == FilterKind.CLASSIC_BLOOM || kind == FilterKind.BLOCKED_BLOOM || kind == FilterKind.SPLIT_BLOCK_BLOOM;
  }

  /**
   * Merges {@code from} into {@code into}.
   *
   * @throws IllegalArgumentException if they are incompatible; {@code into} must then be unchanged
   */
  public void merge(MembershipFilter into, MembershipFilter from) {
    if (kind == FilterKind.CLASSIC_BLOOM) {
      ((BloomFilter) into).mergeFrom((BloomFilter) from);
      return;
    }
    throw new UnsupportedOperationException(this + " does not support merge");
  }

  /** Whether the kind deletes items (counting Bloom, cuckoo). */
  public boolean supportsRemove() {
    return false;
  }

  /** Deletes one occurrence of an item that was added; returns whether something was removed. */
  public boolean remove(MembershipFilter filter, byte[] item) {
    throw new UnsupportedOperationException(this + " does not support remove");
  }

  /**
   * Creations with one parameter out of range (a size, rate or count); each must throw {@link
   * IllegalArgumentException} or a subclass. The classic constants get theirs from the {@code kind ==
   * CLASSIC_BLOOM} branch.
   */
  public List<ThrowingCallable> invalidCreations() {
    if (kind == FilterKind.CLASSIC_BLOOM) {
      HashProtocol hashProtocol = Protocols.of(protocol);
      byte[] seed = supportsSeed() ? new byte[] {1} : new byte[0];
      return List.of(
          () -> BloomFilter.create(hashProtocol, seed, 0, 3),
          () -> BloomFilter.create(hashProtocol, seed, 1024, 0),
          () -> BloomFilter.create(hashProtocol, seed, -64, 3),
          () -> BloomFilter.create(-1, 0.01),
          () -> BloomFilter.create(1000, 0),
          () -> BloomFilter.create(1000, 1.0),
          () -> BloomFilter.create(1000, Double.NaN));
    }
    if (kind == FilterKind.BINARY_FUSE) {
      List<byte[]> items = List.of(new byte[] {1}, new byte[] {2});
      return List.of(
          () -> BinaryFuseFilter.build(items, 7),
          () -> BinaryFuseFilter.build(items, 32),
          () -> BinaryFuseFilter.build(items, 0));
    }
    throw new UnsupportedOperationException(this + " must override invalidCreations");
  }

  /**
   * A filter for {@code n} items that refuses adds once full (so the suite can fill it), or {@code null} for a
   * kind that never fills (the bit-array kinds saturate instead; binary fuse is immutable).
   */
  public MembershipFilter createBounded(long n) {
    return null;
  }

  /** Whether concurrent {@code add}/{@code mightContain} from several threads is supported. */
  public boolean threadSafe() {
    return kind == FilterKind.CLASSIC_BLOOM || kind == FilterKind.BLOCKED_BLOOM || kind == FilterKind.SPLIT_BLOCK_BLOOM;
  }

  /**
   * A value that is {@code equals} for two filters exactly when they hold the same state (parameters
   * and contents), or {@code null} if the kind offers no such view (state comparisons are then
   * skipped).
   */
  public Object state(MembershipFilter filter) {
    if (kind == FilterKind.CLASSIC_BLOOM) {
      BloomFilter bloom = (BloomFilter) filter;
      List<Long> words = new ArrayList<>();
      for (long j = 0; j < Internals.wordCount(bloom); j++) {
        words.add(Internals.word(bloom, j));
      }
      return List.of(bloom.protocolId(), Hex.encode(bloom.seed()), bloom.bitSize(), bloom.hashCount(), words);
    }
    if (kind == FilterKind.BINARY_FUSE) {
      return fuseState(filter);
    }
    return null;
  }

  /** Parameters and every fingerprint of the real binary fuse filter behind a {@link StaticSetFilter}. */
  static Object fuseState(MembershipFilter filter) {
    BinaryFuseFilter fuse = ((StaticSetFilter) filter).filter();
    List<Integer> fingerprints = new ArrayList<>();
    for (long i = 0; i < fuse.slotCount(); i++) {
      fingerprints.add(Internals.fingerprint(fuse, i));
    }
    return List.of(fuse.fingerprintBits(), fuse.constructionSeed(), fuse.segmentLength(), fuse.segmentCount(),
        fuse.insertedCount(), fingerprints);
  }

  /**
   * The object {@code FilterFormat} writes for a filter this factory made: the filter itself, or for
   * the static kinds the real filter built from the items added so far.
   */
  public Summary formatObject(MembershipFilter filter) {
    return filter instanceof StaticSetFilter ? ((StaticSetFilter) filter).filter() : filter;
  }

  /** Adapts a filter just read back (for example, gives it the test's time source). */
  Summary afterRead(Summary filter) {
    return filter;
  }

  /**
   * Writes the filter with {@code FilterFormat} and reads it back, through the byte-array path and the
   * stream path; both copies must re-serialize to the same bytes. Returns the byte-array copy.
   */
  public MembershipFilter roundTrip(MembershipFilter filter) {
    if (filter instanceof StaticSetFilter) {
      return new StaticSetFilter((BinaryFuseFilter) roundTripObject(((StaticSetFilter) filter).filter()));
    }
    return (MembershipFilter) roundTripObject(filter);
  }

  /** {@link #roundTrip} for any object {@code FilterFormat} writes. */
  Summary roundTripObject(Summary filter) {
    byte[] bytes = FilterFormat.toBytes(filter);
    try {
      Summary fromBytes = afterRead(FilterFormat.fromBytes(bytes));
      Summary fromStream = afterRead(FilterFormat.read(new ByteArrayInputStream(bytes)));
      if (!Arrays.equals(FilterFormat.toBytes(fromStream), bytes)
          || !Arrays.equals(FilterFormat.toBytes(fromBytes), bytes)) {
        throw new AssertionError(this + ": a read-back copy does not re-serialize to the same bytes");
      }
      return fromBytes;
    } catch (IOException e) {
      throw new AssertionError(this + ": FilterFormat could not read back what it wrote", e);
    }
  }
}
