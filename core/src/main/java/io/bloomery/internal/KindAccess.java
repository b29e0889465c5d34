package io.bloomery.internal;

import io.bloomery.aging.AgePartitionedFilter;
import io.bloomery.blocked.BlockedBloomFilter;
import io.bloomery.blocked.ScalableBlockedBloomFilter;
import io.bloomery.blocked.SplitBlockBloomFilter;
import io.bloomery.counting.CountingBloomFilter;
import io.bloomery.filter.BloomFilter;
import io.bloomery.fuse.BinaryFuseFilter;
import io.bloomery.hash.HashProtocol;
import io.bloomery.redisbloom.CuckooFilter;
import io.bloomery.redisbloom.ScalableBloomFilter;
import io.bloomery.sketch.CountMinSketch;
import io.bloomery.sketch.DecayRandom;
import io.bloomery.sketch.TDigest;
import io.bloomery.sketch.TopK;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.function.LongSupplier;

/**
 * The state of each kind that only core's own format code reads and writes: restoring a kind from its persisted
 * parts, and its words, counters, fingerprints and buckets. None of it is public API; {@code io.bloomery.internal}
 * is not exported.
 */
public final class KindAccess {
  /*
   * The "shared secrets" pattern (as the JDK's jdk.internal.access): every kind keeps these operations
   * package-private and, in its static initializer, registers one object implementing its interface below.
   * Format code asks for the object; the getter first initializes the kind's class, so a restore that runs
   * before any filter of the kind exists still finds it. Each slot accepts one registration only.
   */

  private KindAccess() {}

  /** Supplies a bit array's or counter array's 64-bit words in order; word j holds bits 64j .. 64j+63. */
  @FunctionalInterface
  public interface WordSource {
    /** The next word. */
    long nextWord() throws IOException;
  }

  /** Classic {@link BloomFilter}. */
  public interface Classic {
    /**
     * Rebuilds a filter from its parameters and {@code ceil(bits / 64)} words; refuses bits at or beyond m in the
     * last word and {@code insertedCount < 0} with {@link IllegalArgumentException}.
     */
    BloomFilter restore(HashProtocol protocol, byte[] seed, long bits, int hashes, long insertedCount,
        WordSource words) throws IOException;

    /** {@code ceil(m / 64)}. */
    long wordCount(BloomFilter filter);

    /** Word {@code index}; bits at or beyond m are 0. */
    long word(BloomFilter filter, long index);
  }

  /** {@link BlockedBloomFilter}. */
  public interface Blocked {
    BlockedBloomFilter restore(byte[] seed, long blocks, int hashes, long insertedCount, WordSource words)
        throws IOException;

    /** 8 × blocks. */
    long wordCount(BlockedBloomFilter filter);

    long word(BlockedBloomFilter filter, long index);
  }

  /** {@link ScalableBlockedBloomFilter}. */
  public interface ScalableBlocked {
    /**
     * Checks a chain's recorded parameters before its layers are allocated: expansion, error rate, 1..MAX_LAYERS
     * layers, each capacity the previous one's times the expansion; {@link IllegalArgumentException} otherwise.
     */
    void checkChain(int expansion, double errorRate, long[] capacities);

    /** Rebuilds a chain from its layers (restored with the chain's seed), their capacities and their item counts. */
    ScalableBlockedBloomFilter restore(byte[] seed, int expansion, double errorRate, ChainState layers);

    /** The live layers with their capacities and counts, as of one moment; the layers are not copied. */
    ChainState layers(ScalableBlockedBloomFilter filter);
  }

  /** A scaling blocked chain's layers, oldest first, with each one's capacity and item count. */
  public record ChainState(BlockedBloomFilter[] layers, long[] capacities, long[] sizes) {}

  /** {@link SplitBlockBloomFilter}. */
  public interface SplitBlock {
    /** From 4 × blocks 64-bit words, each the little-endian reading of 8 bitset bytes. */
    SplitBlockBloomFilter restore(long blocks, long insertedCount, WordSource words) throws IOException;

    /** From {@code numBytes} bytes of Parquet bitset. */
    SplitBlockBloomFilter restoreBitset(long numBytes, long insertedCount, InputStream bitset) throws IOException;

    /** Writes the Parquet bitset, {@code byteSize()} bytes. */
    void writeBitset(SplitBlockBloomFilter filter, OutputStream out) throws IOException;

    /** 4 × blocks. */
    long wordCount(SplitBlockBloomFilter filter);

    long word(SplitBlockBloomFilter filter, long index);
  }

  /** {@link CountingBloomFilter}. */
  public interface Counting {
    CountingBloomFilter restore(HashProtocol protocol, byte[] seed, long counters, int hashes, int counterBits,
        long insertedCount, WordSource words) throws IOException;

    long wordCount(CountingBloomFilter filter);

    long word(CountingBloomFilter filter, long index);
  }

  /** Supplies an age-partitioned filter's generations while restoring it, oldest first. */
  public interface GenerationSource {
    /** Inserted count of the next generation. */
    long nextInsertedCount() throws IOException;

    /** The next word of the current generation's bitmap. */
    long nextWord() throws IOException;
  }

  /** {@link AgePartitionedFilter}. */
  public interface Aging {
    AgePartitionedFilter restore(HashProtocol protocol, byte[] seed, long bitsPerGeneration, int hashes,
        int generations, long spanMillis, long newestGeneration, LongSupplier clockMillis, GenerationSource source)
        throws IOException;

    /**
     * The live generations after rotating to the current time, not copied (adds to them show through; a later
     * rotation does not change the returned set). For streaming them out; never to be changed.
     */
    AgePartitionedFilter.Snapshot liveGenerations(AgePartitionedFilter filter);
  }

  /** A piece of output that may fail. */
  @FunctionalInterface
  public interface IoAction {
    void run() throws IOException;
  }

  /** {@link BinaryFuseFilter}. */
  public interface Fuse {
    BinaryFuseFilter restore(int fingerprintBits, long constructionSeed, int segmentLength, int segmentCount,
        long keyCount, byte[] fingerprints8, short[] fingerprints16);

    /** The fingerprint in slot {@code index}, unsigned. */
    int fingerprint(BinaryFuseFilter filter, long index);
  }

  /** Supplies a count-min sketch's counters in row-major order while restoring it. */
  @FunctionalInterface
  public interface CounterSource {
    /** The next counter, an unsigned 32-bit value. */
    long nextCounter() throws IOException;
  }

  /** {@link CountMinSketch}. */
  public interface CountMin {
    CountMinSketch restore(long width, long depth, long count, CounterSource counters) throws IOException;

    /** The counter at row-major {@code index}, unsigned. */
    long counterAt(CountMinSketch sketch, long index);
  }

  /** Supplies a top-k sketch's state while restoring it. */
  public interface TopKStateSource {
    /** Bucket {@code index}'s fingerprint, then {@link #nextBucketCount()}; called in index order. */
    int nextBucketFingerprint() throws IOException;

    /** Bucket count, unsigned 32-bit. */
    long nextBucketCount() throws IOException;

    /** Heap slot item, or {@code null} for an empty slot; called in slot order. */
    byte[] nextHeapItem() throws IOException;

    /** Heap slot count, unsigned 32-bit. */
    long nextHeapCount() throws IOException;
  }

  /** {@link TopK}. */
  public interface TopKs {
    TopK restore(long k, long width, long depth, double decay, DecayRandom random, TopKStateSource state)
        throws IOException;

    /** Row-major bucket {@code index}'s fingerprint. */
    int bucketFingerprint(TopK topK, long index);

    /** Row-major bucket {@code index}'s count, unsigned. */
    long bucketCount(TopK topK, long index);

    /** Heap slot {@code slot}'s item (a copy), or {@code null}. */
    byte[] heapItem(TopK topK, int slot);

    /** Heap slot {@code slot}'s count, unsigned. */
    long heapCount(TopK topK, int slot);
  }

  /**
   * A t-digest's whole state as of one moment: raw min and max ({@link Double#MAX_VALUE} and its negation when
   * empty), how many of the centroids are merged (the rest are buffered, in arrival order), and copies of the
   * centroids' means and weights.
   */
  public record TDigestState(double min, double max, int mergedNodes, double[] means, long[] weights) {}

  /** {@link TDigest}. */
  public interface TDigests {
    /** Rebuilds a digest from {@link #state}'s fields; {@link IllegalArgumentException} for an impossible state. */
    TDigest restore(long compression, double min, double max, long totalCompressions, int mergedNodes,
        double[] means, long[] weights);

    TDigestState state(TDigest digest);

    /** Compresses the digest's buffered centroids, as RedisBloom does before saving it. */
    void compress(TDigest digest);
  }

  /** One SCANDUMP reply as the codec produces it: the next iterator and the data. */
  public record DumpChunk(long iterator, byte[] data) {}

  /**
   * RedisBloom's SCANDUMP/LOADCHUNK codec for {@link ScalableBloomFilter} and {@link CuckooFilter}; the rules are
   * {@code io.bloomery.format.RedisBloomDump}'s, which delegates here.
   */
  public interface RedisBloomDumps {
    DumpChunk scanDump(ScalableBloomFilter filter, long iterator);

    byte[] bloomHeader(ScalableBloomFilter filter);

    /** The filter's header and layers as they are now, later adds showing through (no copy on write). */
    ScalableBloomFilter.Frozen rollingView(ScalableBloomFilter filter);

    /** The BF header of a view. */
    byte[] bloomHeader(ScalableBloomFilter.Frozen view);

    /**
     * Copies a view's payload words from word {@code word} of its concatenated layers into {@code into}, up to its
     * length or the end of a page or layer; returns how many.
     */
    int payloadWords(ScalableBloomFilter.Frozen view, long word, long[] into);

    ScalableBloomFilter loadHeader(byte[] header);

    long bloomPayloadBytes(byte[] header);

    void loadChunk(ScalableBloomFilter filter, long iterator, byte[] data);

    DumpChunk scanDump(CuckooFilter filter, long position);

    /** {@code length} raw slot bytes at {@code offset} of the concatenated sub-filters, inside one sub-filter. */
    byte[] cuckooSlots(CuckooFilter filter, long offset, int length);

    /** {@link #cuckooSlots(CuckooFilter, long, int)} copied into the start of {@code into}. */
    void copyCuckooSlots(CuckooFilter filter, long offset, byte[] into, int length);

    byte[] cuckooHeader(CuckooFilter filter);

    /** Runs {@code action} while the filter's adds, deletes and compaction wait (lookups go on). */
    void holdingWriters(CuckooFilter filter, IoAction action) throws IOException;

    CuckooFilter loadCuckooHeader(byte[] header);

    long cuckooPayloadBytes(byte[] header);

    void loadChunk(CuckooFilter filter, long position, byte[] data);
  }

  private static final Slot<Classic> CLASSIC = new Slot<>(BloomFilter.class);
  private static final Slot<Blocked> BLOCKED = new Slot<>(BlockedBloomFilter.class);
  private static final Slot<ScalableBlocked> SCALABLE_BLOCKED = new Slot<>(ScalableBlockedBloomFilter.class);
  private static final Slot<SplitBlock> SPLIT_BLOCK = new Slot<>(SplitBlockBloomFilter.class);
  private static final Slot<Counting> COUNTING = new Slot<>(CountingBloomFilter.class);
  private static final Slot<Aging> AGING = new Slot<>(AgePartitionedFilter.class);
  private static final Slot<Fuse> FUSE = new Slot<>(BinaryFuseFilter.class);
  private static final Slot<CountMin> COUNT_MIN = new Slot<>(CountMinSketch.class);
  private static final Slot<TopKs> TOP_K = new Slot<>(TopK.class);
  private static final Slot<TDigests> T_DIGEST = new Slot<>(TDigest.class);
  private static final Slot<RedisBloomDumps> REDIS_BLOOM_DUMPS = new Slot<>(ScalableBloomFilter.class);

  public static void register(Classic access) {
    CLASSIC.set(access);
  }

  public static void register(Blocked access) {
    BLOCKED.set(access);
  }

  public static void register(ScalableBlocked access) {
    SCALABLE_BLOCKED.set(access);
  }

  public static ScalableBlocked scalableBlocked() {
    return SCALABLE_BLOCKED.get();
  }

  public static void register(SplitBlock access) {
    SPLIT_BLOCK.set(access);
  }

  public static void register(Counting access) {
    COUNTING.set(access);
  }

  public static void register(Aging access) {
    AGING.set(access);
  }

  public static void register(Fuse access) {
    FUSE.set(access);
  }

  public static void register(CountMin access) {
    COUNT_MIN.set(access);
  }

  public static void register(TopKs access) {
    TOP_K.set(access);
  }

  public static void register(TDigests access) {
    T_DIGEST.set(access);
  }

  public static TDigests tDigest() {
    return T_DIGEST.get();
  }

  public static void register(RedisBloomDumps access) {
    REDIS_BLOOM_DUMPS.set(access);
  }

  public static Classic classic() {
    return CLASSIC.get();
  }

  public static Blocked blocked() {
    return BLOCKED.get();
  }

  public static SplitBlock splitBlock() {
    return SPLIT_BLOCK.get();
  }

  public static Counting counting() {
    return COUNTING.get();
  }

  public static Aging aging() {
    return AGING.get();
  }

  public static Fuse fuse() {
    return FUSE.get();
  }

  public static CountMin countMin() {
    return COUNT_MIN.get();
  }

  public static TopKs topK() {
    return TOP_K.get();
  }

  public static RedisBloomDumps redisBloomDumps() {
    return REDIS_BLOOM_DUMPS.get();
  }

  /** One kind's registered access object. */
  private static final class Slot<T> {
    private final Class<?> owner;
    private volatile T access;

    Slot(Class<?> owner) {
      this.owner = owner;
    }

    synchronized void set(T value) {
      if (access != null) {
        throw new IllegalStateException(owner.getSimpleName() + " access is already registered");
      }
      access = java.util.Objects.requireNonNull(value, "access");
    }

    T get() {
      T value = access;
      if (value == null) {
        try {
          Class.forName(owner.getName(), true, owner.getClassLoader());
        } catch (ClassNotFoundException e) {
          throw new AssertionError(owner.getName() + " is on the class path of its own module", e);
        }
        value = access;
        if (value == null) {
          throw new IllegalStateException(owner.getSimpleName() + " did not register its access");
        }
      }
      return value;
    }
  }
}
