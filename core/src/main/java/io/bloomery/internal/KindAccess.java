package io.bloomery.internal;

import io.bloomery.hash.HashProtocol;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.Arrays;
import java.util.Objects;
import java.util.function.LongSupplier;

/**
 * The state of each kind that only core's own format code reads and writes: restoring a kind from its persisted
 * parts, and its words, counters, fingerprints and buckets. None of it is public API; {@code io.bloomery.internal}
 * is not exported.
 *
 * <p>The access interfaces are generic in the kinds they serve ({@code Classic<F>} is bound to {@code BloomFilter}
 * by the class that registers it), so this package, which every kind uses, depends on none of them. A kind
 * registers with its class token(s), and a caller asks with the same tokens: a mismatch fails at once with {@link
 * IllegalStateException} instead of a {@link ClassCastException} later.
 */
public final class KindAccess {
  /*
   * The "shared secrets" pattern (as the JDK's jdk.internal.access): every kind keeps these operations
   * package-private and, in its static initializer, registers one object implementing its interface below.
   * Format code asks for the object with the kind's class; the getter first initializes that class, so a restore
   * that runs before any filter of the kind exists still finds it. Each slot accepts one registration only.
   */

  private KindAccess() {}

  /** Supplies a bit array's or counter array's 64-bit words in order; word j holds bits 64j .. 64j+63. */
  @FunctionalInterface
  public interface WordSource {
    /** The next word. */
    long nextWord() throws IOException;
  }

  /** Classic Bloom filter ({@code BloomFilter}). */
  public interface Classic<F> {
    /**
     * Rebuilds a filter from its parameters and {@code ceil(bits / 64)} words; refuses bits at or beyond m in the
     * last word and {@code insertedCount < 0} with {@link IllegalArgumentException}.
     */
    F restore(HashProtocol protocol, byte[] seed, long bits, int hashes, long insertedCount, WordSource words)
        throws IOException;

    /** {@code ceil(m / 64)}. */
    long wordCount(F filter);

    /** Word {@code index}; bits at or beyond m are 0. */
    long word(F filter, long index);
  }

  /** Cache-blocked Bloom filter ({@code BlockedBloomFilter}). */
  public interface Blocked<F> {
    F restore(byte[] seed, long blocks, int hashes, long insertedCount, WordSource words) throws IOException;

    /** 8 × blocks. */
    long wordCount(F filter);

    long word(F filter, long index);
  }

  /** Scaling chain {@code F} of blocked layers {@code L} ({@code ScalableBlockedBloomFilter}). */
  public interface ScalableBlocked<F, L> {
    /**
     * Checks a chain's recorded parameters before its layers are allocated: expansion, error rate, 1..MAX_LAYERS
     * layers, each capacity the previous one's times the expansion; {@link IllegalArgumentException} otherwise.
     */
    void checkChain(int expansion, double errorRate, long[] capacities);

    /** Rebuilds a chain from its layers (restored with the chain's seed), their capacities and their item counts. */
    F restore(byte[] seed, int expansion, double errorRate, ChainState<L> layers);

    /** The live layers with their capacities and counts, as of one moment; the layers are not copied. */
    ChainState<L> layers(F filter);
  }

  /** A scaling chain's layers, oldest first, with each one's capacity and item count. */
  public record ChainState<L>(L[] layers, long[] capacities, long[] sizes) {}

  /** Parquet's split-block Bloom filter ({@code SplitBlockBloomFilter}). */
  public interface SplitBlock<F> {
    /** From 4 × blocks 64-bit words, each the little-endian reading of 8 bitset bytes. */
    F restore(long blocks, long insertedCount, WordSource words) throws IOException;

    /** From {@code numBytes} bytes of Parquet bitset. */
    F restoreBitset(long numBytes, long insertedCount, InputStream bitset) throws IOException;

    /** Writes the Parquet bitset, {@code byteSize()} bytes. */
    void writeBitset(F filter, OutputStream out) throws IOException;

    /** 4 × blocks. */
    long wordCount(F filter);

    long word(F filter, long index);
  }

  /** Counting Bloom filter ({@code CountingBloomFilter}). */
  public interface Counting<F> {
    F restore(HashProtocol protocol, byte[] seed, long counters, int hashes, int counterBits, long insertedCount,
        WordSource words) throws IOException;

    long wordCount(F filter);

    long word(F filter, long index);
  }

  /** Supplies an age-partitioned filter's generations while restoring it, oldest first. */
  public interface GenerationSource {
    /** Inserted count of the next generation. */
    long nextInsertedCount() throws IOException;

    /** The next word of the current generation's bitmap. */
    long nextWord() throws IOException;
  }

  /** Age-partitioned filter {@code F} with its generations snapshot {@code S} ({@code AgePartitionedFilter}). */
  public interface Aging<F, S> {
    F restore(HashProtocol protocol, byte[] seed, long bitsPerGeneration, int hashes, int generations,
        long spanMillis, long newestGeneration, LongSupplier clockMillis, GenerationSource source)
        throws IOException;

    /**
     * The live generations after rotating to the current time, not copied (adds to them show through; a later
     * rotation does not change the returned set). For streaming them out; never to be changed.
     */
    S liveGenerations(F filter);
  }

  /** A piece of output that may fail. */
  @FunctionalInterface
  public interface IoAction {
    void run() throws IOException;
  }

  /** Binary fuse filter ({@code BinaryFuseFilter}). */
  public interface Fuse<F> {
    F restore(int fingerprintBits, long constructionSeed, int segmentLength, int segmentCount, long keyCount,
        byte[] fingerprints8, short[] fingerprints16);

    /** The fingerprint in slot {@code index}, unsigned. */
    int fingerprint(F filter, long index);
  }

  /** Supplies a count-min sketch's counters in row-major order while restoring it. */
  @FunctionalInterface
  public interface CounterSource {
    /** The next counter, an unsigned 32-bit value. */
    long nextCounter() throws IOException;
  }

  /** Count-min sketch ({@code CountMinSketch}). */
  public interface CountMin<S> {
    S restore(long width, long depth, long count, CounterSource counters) throws IOException;

    /** The counter at row-major {@code index}, unsigned. */
    long counterAt(S sketch, long index);
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

  /** Top-k sketch {@code T} with its decay's random source {@code R} ({@code TopK}, {@code DecayRandom}). */
  public interface TopKs<T, R> {
    T restore(long k, long width, long depth, double decay, R random, TopKStateSource state) throws IOException;

    /** Row-major bucket {@code index}'s fingerprint. */
    int bucketFingerprint(T topK, long index);

    /** Row-major bucket {@code index}'s count, unsigned. */
    long bucketCount(T topK, long index);

    /** Heap slot {@code slot}'s item (a copy), or {@code null}. */
    byte[] heapItem(T topK, int slot);

    /** Heap slot {@code slot}'s count, unsigned. */
    long heapCount(T topK, int slot);
  }

  /**
   * A t-digest's whole state as of one moment: raw min and max ({@link Double#MAX_VALUE} and its negation when
   * empty), how many of the centroids are merged (the rest are buffered, in arrival order), and copies of the
   * centroids' means and weights.
   */
  public record TDigestState(double min, double max, int mergedNodes, double[] means, long[] weights) {}

  /** T-digest {@code D} ({@code TDigest}). */
  public interface TDigests<D> {
    /** Rebuilds a digest from {@link #state}'s fields; {@link IllegalArgumentException} for an impossible state. */
    D restore(long compression, double min, double max, long totalCompressions, int mergedNodes,
        double[] means, long[] weights);

    TDigestState state(D digest);

    /** Compresses the digest's buffered centroids, as RedisBloom does before saving it. */
    void compress(D digest);
  }

  /** RedisBloom's {@code MAX_SCANDUMP_SIZE}: the most data bytes one SCANDUMP reply carries, for every kind. */
  public static final int MAX_DUMP_CHUNK_BYTES = 16 * 1024 * 1024;

  /** One SCANDUMP reply as the codec produces it: the next iterator and the data. */
  public record DumpChunk(long iterator, byte[] data) {}

  /**
   * RedisBloom's BF.SCANDUMP/BF.LOADCHUNK codec for the scalable Bloom filter {@code F} and its frozen view {@code
   * V} ({@code ScalableBloomFilter}, {@code ScalableBloomFilter.Frozen}); the rules are {@code
   * io.bloomery.format.RedisBloomDump}'s, which delegates here.
   */
  public interface ScalableDumps<F, V> {
    DumpChunk scanDump(F filter, long iterator);

    byte[] bloomHeader(F filter);

    /** {@code length} bytes at {@code offset} of the concatenated layers' bits, inside one layer, into {@code into}. */
    void copyBloomBits(F filter, long offset, byte[] into, int length);

    /** The filter's header and layers as they are now, later adds showing through (no copy on write). */
    V rollingView(F filter);

    /** The BF header of a view. */
    byte[] viewHeader(V view);

    /**
     * Copies a view's payload words from word {@code word} of its concatenated layers into {@code into}, up to its
     * length or the end of a page or layer; returns how many.
     */
    int payloadWords(V view, long word, long[] into);

    F loadHeader(byte[] header);

    long bloomPayloadBytes(byte[] header);

    void loadChunk(F filter, long iterator, byte[] data);
  }

  /**
   * RedisBloom's CF.SCANDUMP/CF.LOADCHUNK codec for the cuckoo filter {@code F} ({@code CuckooFilter}); the rules are
   * {@code io.bloomery.format.RedisBloomDump}'s, which delegates here.
   */
  public interface CuckooDumps<F> {
    DumpChunk scanDump(F filter, long position);

    /** {@code length} raw slot bytes at {@code offset} of the concatenated sub-filters, inside one sub-filter. */
    byte[] cuckooSlots(F filter, long offset, int length);

    /** {@link #cuckooSlots} copied into the start of {@code into}. */
    void copyCuckooSlots(F filter, long offset, byte[] into, int length);

    byte[] cuckooHeader(F filter);

    /** Runs {@code action} while the filter's adds, deletes and compaction wait (lookups go on). */
    void holdingWriters(F filter, IoAction action) throws IOException;

    F loadCuckooHeader(byte[] header);

    long cuckooPayloadBytes(byte[] header);

    void loadChunk(F filter, long position, byte[] data);
  }

  private static final Slot CLASSIC = new Slot("classic");
  private static final Slot BLOCKED = new Slot("blocked");
  private static final Slot SCALABLE_BLOCKED = new Slot("scalable blocked");
  private static final Slot SPLIT_BLOCK = new Slot("split-block");
  private static final Slot COUNTING = new Slot("counting");
  private static final Slot AGING = new Slot("aging");
  private static final Slot FUSE = new Slot("fuse");
  private static final Slot COUNT_MIN = new Slot("count-min");
  private static final Slot TOP_K = new Slot("top-k");
  private static final Slot SCALABLE_DUMPS = new Slot("scalable dumps");
  private static final Slot CUCKOO_DUMPS = new Slot("cuckoo dumps");
  private static final Slot T_DIGEST = new Slot("t-digest");

  public static <F> void register(Class<F> kind, Classic<F> access) {
    CLASSIC.set(access, kind);
  }

  @SuppressWarnings("unchecked")
  public static <F> Classic<F> classic(Class<F> kind) {
    return (Classic<F>) CLASSIC.get(kind);
  }

  public static <F> void register(Class<F> kind, Blocked<F> access) {
    BLOCKED.set(access, kind);
  }

  @SuppressWarnings("unchecked")
  public static <F> Blocked<F> blocked(Class<F> kind) {
    return (Blocked<F>) BLOCKED.get(kind);
  }

  public static <F, L> void register(Class<F> kind, Class<L> layer, ScalableBlocked<F, L> access) {
    SCALABLE_BLOCKED.set(access, kind, layer);
  }

  @SuppressWarnings("unchecked")
  public static <F, L> ScalableBlocked<F, L> scalableBlocked(Class<F> kind, Class<L> layer) {
    return (ScalableBlocked<F, L>) SCALABLE_BLOCKED.get(kind, layer);
  }

  public static <F> void register(Class<F> kind, SplitBlock<F> access) {
    SPLIT_BLOCK.set(access, kind);
  }

  @SuppressWarnings("unchecked")
  public static <F> SplitBlock<F> splitBlock(Class<F> kind) {
    return (SplitBlock<F>) SPLIT_BLOCK.get(kind);
  }

  public static <F> void register(Class<F> kind, Counting<F> access) {
    COUNTING.set(access, kind);
  }

  @SuppressWarnings("unchecked")
  public static <F> Counting<F> counting(Class<F> kind) {
    return (Counting<F>) COUNTING.get(kind);
  }

  public static <D> void register(Class<D> kind, TDigests<D> access) {
    T_DIGEST.set(access, kind);
  }

  @SuppressWarnings("unchecked")
  public static <D> TDigests<D> tDigest(Class<D> kind) {
    return (TDigests<D>) T_DIGEST.get(kind);
  }

  public static <F, S> void register(Class<F> kind, Class<S> snapshot, Aging<F, S> access) {
    AGING.set(access, kind, snapshot);
  }

  @SuppressWarnings("unchecked")
  public static <F, S> Aging<F, S> aging(Class<F> kind, Class<S> snapshot) {
    return (Aging<F, S>) AGING.get(kind, snapshot);
  }

  public static <F> void register(Class<F> kind, Fuse<F> access) {
    FUSE.set(access, kind);
  }

  @SuppressWarnings("unchecked")
  public static <F> Fuse<F> fuse(Class<F> kind) {
    return (Fuse<F>) FUSE.get(kind);
  }

  public static <S> void register(Class<S> kind, CountMin<S> access) {
    COUNT_MIN.set(access, kind);
  }

  @SuppressWarnings("unchecked")
  public static <S> CountMin<S> countMin(Class<S> kind) {
    return (CountMin<S>) COUNT_MIN.get(kind);
  }

  public static <T, R> void register(Class<T> kind, Class<R> random, TopKs<T, R> access) {
    TOP_K.set(access, kind, random);
  }

  @SuppressWarnings("unchecked")
  public static <T, R> TopKs<T, R> topK(Class<T> kind, Class<R> random) {
    return (TopKs<T, R>) TOP_K.get(kind, random);
  }

  public static <F, V> void register(Class<F> kind, Class<V> view, ScalableDumps<F, V> access) {
    SCALABLE_DUMPS.set(access, kind, view);
  }

  @SuppressWarnings("unchecked")
  public static <F, V> ScalableDumps<F, V> scalableDumps(Class<F> kind, Class<V> view) {
    return (ScalableDumps<F, V>) SCALABLE_DUMPS.get(kind, view);
  }

  public static <F> void register(Class<F> kind, CuckooDumps<F> access) {
    CUCKOO_DUMPS.set(access, kind);
  }

  @SuppressWarnings("unchecked")
  public static <F> CuckooDumps<F> cuckooDumps(Class<F> kind) {
    return (CuckooDumps<F>) CUCKOO_DUMPS.get(kind);
  }

  /** One access interface's registered object, with the class tokens it was registered for (the kind first). */
  private static final class Slot {
    private final String name;
    private volatile Object access;
    private volatile Class<?>[] types;

    Slot(String name) {
      this.name = name;
    }

    synchronized void set(Object value, Class<?>... registeredTypes) {
      if (access != null) {
        throw new IllegalStateException("the " + name + " access is already registered");
      }
      types = registeredTypes.clone();
      access = Objects.requireNonNull(value, "access");
    }

    Object get(Class<?>... askedTypes) {
      Class<?> kind = askedTypes[0];
      Object value = access;
      if (value == null) {
        try {
          Class.forName(kind.getName(), true, kind.getClassLoader());
        } catch (ClassNotFoundException e) {
          throw new AssertionError(kind.getName() + " is on the class path of its own module", e);
        }
        value = access;
        if (value == null) {
          throw new IllegalStateException(kind.getSimpleName() + " did not register the " + name + " access");
        }
      }
      if (!Arrays.equals(types, askedTypes)) {
        throw new IllegalStateException("the " + name + " access is registered for " + Arrays.toString(types)
            + ", not " + Arrays.toString(askedTypes));
      }
      return value;
    }
  }
}
