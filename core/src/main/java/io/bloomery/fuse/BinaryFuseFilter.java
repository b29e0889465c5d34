package io.bloomery.fuse;

import com.dynatrace.hash4j.hashing.Hasher64;
import com.dynatrace.hash4j.hashing.Hashing;
import io.bloomery.filter.FilterKind;
import io.bloomery.filter.MembershipFilter;
import io.bloomery.hash.ProtocolId;
import io.bloomery.internal.KindAccess;
import java.util.Arrays;
import java.util.Objects;

/**
 * A static binary fuse filter: built once from a complete set of items, then only queried. For an
 * immutable snapshot it needs about 9.0 bits per key at a false-positive rate of 2<sup>-8</sup>
 * (0.39 %), where an optimal Bloom filter needs 11.5, and one memory access per probed slot (three
 * per lookup, within a window of three consecutive segments).
 *
 * <p><b>The contract.</b> Every item given to {@link #build} is reported present; any other item is
 * reported present with probability 2<sup>-f</sup> for f-bit fingerprints (8 or 16), independently of
 * how many items the filter holds — there is no "overfill", since the size is fixed by the items. The
 * filter cannot take new items: {@link #add} throws {@link UnsupportedOperationException}; rebuild it
 * from the new set. It is immutable and safe to query from any number of threads.
 *
 * <p><b>Items are bytes</b>, as everywhere in Bloomery; duplicates in the input are allowed and count
 * once. Protocol {@code xxh3-fuse-v1} (frozen, pinned by {@code BinaryFuseFilterTest}):
 *
 * <pre>
 *   h     = XXH3-64(item bytes, seed 0)
 *   x     = murmur64(h + constructionSeed)          (the fmix64 finaliser of MurmurHash3)
 *   s0    = unsignedMultiplyHigh(x, segmentCount * segmentLength)
 *   slot0 = s0
 *   slot1 = (s0 + segmentLength)     ^ ((x >>> 18) &amp; (segmentLength - 1))
 *   slot2 = (s0 + 2 * segmentLength) ^ (x &amp; (segmentLength - 1))
 *   fingerprint(x) = low f bits of (x ^ (x >>> 32))
 *   present  iff  fingerprint(x) == F[slot0] ^ F[slot1] ^ F[slot2]
 * </pre>
 */
/*
 * Why and how (Graf and Lemire, "Binary Fuse Filters: Fast and Smaller Than Xor Filters", ACM JEA
 * 2022): each key maps to three slots in three consecutive segments of a power-of-two length; the
 * slot array is sized so that the 3-hypergraph of keys over slots is peelable with high probability.
 * Construction peels it (repeatedly remove a slot that exactly one remaining key uses, pushing the
 * key on a stack) and then assigns fingerprints in reverse peel order so that the XOR of each key's
 * three slots equals its fingerprint. A failed peel (rare: a slot overflowing its 6-bit count, or a
 * 2-core left) retries with the next construction seed from a splitmix64 sequence, so building the
 * same set always yields the same filter. Keys are first reduced to distinct 64-bit XXH3 hashes
 * (sorting them), which removes duplicates exactly; two distinct items with the same 64-bit hash
 * share one entry, which only means both are reported present (probability n²/2⁶⁵).
 *
 * Sizing (the authors' reference parameters for arity 3): segment length = 2^floor(ln n / ln 3.33
 * + 2.25), at most 2^18; size factor = max(1.125, 0.875 + 0.25 ln(10^6) / ln n); slots = (segments
 * + 2) * segment length. The construction keeps slot indexes below 2^31 (one Java array); that is
 * about 1.9 billion keys, whose construction alone needs some 60 GB of scratch — beyond it, refuse
 * clearly rather than overflow.
 */
public final class BinaryFuseFilter implements MembershipFilter {

  /** Largest number of slots: one Java array of fingerprints. */
  public static final long MAX_SLOTS = Integer.MAX_VALUE - 16L;

  /** Largest segment length: 2^18 slots. */
  public static final int MAX_SEGMENT_LENGTH = 1 << 18;

  /** Construction gives up after this many seeds (each succeeds with probability well above 1/2). */
  private static final int MAX_ATTEMPTS = 1000;

  private static final long SEED_SEQUENCE_START = 0x726b2b9d438b9d4dL;

  private static final Hasher64 XXH3 = Hashing.xxh3_64();

  private final int fingerprintBits;
  private final long constructionSeed;
  private final int segmentLength;
  private final int segmentLengthMask;
  private final int segmentCount;
  private final long segmentCountLength;
  private final long keyCount;
  private final byte[] fingerprints8;
  private final short[] fingerprints16;

  private BinaryFuseFilter(int fingerprintBits, long constructionSeed, int segmentLength, int segmentCount,
      long keyCount, byte[] fingerprints8, short[] fingerprints16) {
    this.fingerprintBits = fingerprintBits;
    this.constructionSeed = constructionSeed;
    this.segmentLength = segmentLength;
    this.segmentLengthMask = segmentLength - 1;
    this.segmentCount = segmentCount;
    this.segmentCountLength = (long) segmentCount * segmentLength;
    this.keyCount = keyCount;
    this.fingerprints8 = fingerprints8;
    this.fingerprints16 = fingerprints16;
  }

  /**
   * Builds a filter holding exactly {@code items} (duplicates count once).
   *
   * @param fingerprintBits 8 (false-positive rate 2<sup>-8</sup>, about 9 bits per key) or 16
   *     (2<sup>-16</sup>, about 18 bits per key)
   * @throws IllegalArgumentException if fingerprintBits is neither 8 nor 16, or the set is too large
   *     for {@link #MAX_SLOTS}
   * @throws NullPointerException if {@code items} or one of them is null
   */
  public static BinaryFuseFilter build(Iterable<byte[]> items, int fingerprintBits) {
    Objects.requireNonNull(items, "items");
    checkFingerprintBits(fingerprintBits);
    long[] hashes = new long[16];
    int count = 0;
    for (byte[] item : items) {
      Objects.requireNonNull(item, "item");
      if (count == hashes.length) {
        if (count >= Integer.MAX_VALUE - 16) {
          throw new IllegalArgumentException("too many items for one binary fuse filter (at most " + maxKeys() + ")");
        }
        hashes = Arrays.copyOf(hashes, (int) Math.min(Integer.MAX_VALUE - 16L, 2L * count));
      }
      hashes[count++] = XXH3.hashBytesToLong(item);
    }
    return fromItemHashes(Arrays.copyOf(hashes, count), fingerprintBits);
  }

  /** As {@link #build(Iterable, int)}, over an array of items. */
  public static BinaryFuseFilter build(byte[][] items, int fingerprintBits) {
    Objects.requireNonNull(items, "items");
    return build(Arrays.asList(items), fingerprintBits);
  }

  /**
   * Builds a filter from the {@code xxh3-fuse-v1} item hashes (XXH3-64 with seed 0 of each item's
   * bytes), for callers that hash items where they are read and keep only the 8-byte hashes. The array
   * is sorted in place; duplicates count once.
   */
  public static BinaryFuseFilter fromItemHashes(long[] itemHashes, int fingerprintBits) {
    Objects.requireNonNull(itemHashes, "itemHashes");
    checkFingerprintBits(fingerprintBits);
    Arrays.sort(itemHashes);
    int distinct = 0;
    for (int i = 0; i < itemHashes.length; i++) {
      if (i == 0 || itemHashes[i] != itemHashes[i - 1]) {
        itemHashes[distinct++] = itemHashes[i];
      }
    }
    return construct(itemHashes, distinct, fingerprintBits);
  }

  static {
    KindAccess.register(BinaryFuseFilter.class, new KindAccess.Fuse<BinaryFuseFilter>() {
      @Override
      public BinaryFuseFilter restore(int fingerprintBits, long constructionSeed, int segmentLength,
          int segmentCount, long keyCount, byte[] fingerprints8, short[] fingerprints16) {
        return BinaryFuseFilter.restore(fingerprintBits, constructionSeed, segmentLength, segmentCount, keyCount,
            fingerprints8, fingerprints16);
      }

      @Override
      public int fingerprint(BinaryFuseFilter filter, long index) {
        return filter.fingerprint(index);
      }
    });
  }

  /** The {@code xxh3-fuse-v1} hash of an item: XXH3-64 of its bytes with seed 0. */
  public static long itemHash(byte[] item) {
    return XXH3.hashBytesToLong(Objects.requireNonNull(item, "item"));
  }

  /** Rebuilds a filter from its stored parts; used by the format. Validates every parameter. */
  static BinaryFuseFilter restore(int fingerprintBits, long constructionSeed, int segmentLength, int segmentCount,
      long keyCount, byte[] fingerprints8, short[] fingerprints16) {
    checkFingerprintBits(fingerprintBits);
    Shape shape = checkShape(segmentLength, segmentCount);
    long slots = shape.slots();
    if (keyCount < 0 || keyCount > slots) {
      throw new IllegalArgumentException("key count must be in [0, " + slots + "], was " + keyCount);
    }
    if (fingerprintBits == 8) {
      if (fingerprints8 == null || fingerprints8.length != slots || fingerprints16 != null) {
        throw new IllegalArgumentException("8-bit fingerprints: expected " + slots + " bytes");
      }
    } else if (fingerprints16 == null || fingerprints16.length != slots || fingerprints8 != null) {
      throw new IllegalArgumentException("16-bit fingerprints: expected " + slots + " values");
    }
    return new BinaryFuseFilter(fingerprintBits, constructionSeed, segmentLength, segmentCount, keyCount,
        fingerprints8 == null ? null : fingerprints8.clone(), fingerprints16 == null ? null : fingerprints16.clone());
  }

  /**
   * The segment length and count the reference sizing gives for {@code keys} distinct keys; exposed
   * so that the planner and the format agree with the builder.
   */
  public static Shape shapeFor(long keys) {
    if (keys < 0) {
      throw new IllegalArgumentException("keys must be >= 0, was " + keys);
    }
    int segmentLength = keys == 0 ? 4 : (int) Math.min(MAX_SEGMENT_LENGTH,
        1L << Math.max(2, (int) Math.floor(Math.log(keys) / Math.log(3.33) + 2.25)));
    double sizeFactor = keys <= 1 ? 0 : Math.max(1.125, 0.875 + 0.25 * Math.log(1_000_000) / Math.log(keys));
    long capacity = keys <= 1 ? 0 : Math.round(keys * sizeFactor);
    long initSegments = Math.max(0, (capacity + segmentLength - 1) / segmentLength - 2);
    long slots = (initSegments + 2) * segmentLength;
    long segments = (slots + segmentLength - 1) / segmentLength;
    segments = segments <= 2 ? 1 : segments - 2;
    long total = (segments + 2) * segmentLength;
    if (total > MAX_SLOTS) {
      throw new IllegalArgumentException(keys + " keys need " + total + " slots, over the limit of " + MAX_SLOTS
          + " (at most about " + maxKeys() + " keys per binary fuse filter)");
    }
    return new Shape(segmentLength, (int) segments);
  }

  /** A slot layout: {@code segmentCount + 2} segments of {@code segmentLength} slots. */
  public record Shape(int segmentLength, int segmentCount) {
    /** Number of fingerprint slots. */
    public long slots() {
      return ((long) segmentCount + 2) * segmentLength;
    }
  }

  private static long maxKeys() {
    return (long) (MAX_SLOTS / 1.125);
  }

  private static void checkFingerprintBits(int fingerprintBits) {
    if (fingerprintBits != 8 && fingerprintBits != 16) {
      throw new IllegalArgumentException("fingerprint bits must be 8 or 16, was " + fingerprintBits);
    }
  }

  private static Shape checkShape(int segmentLength, int segmentCount) {
    if (segmentLength < 4 || segmentLength > MAX_SEGMENT_LENGTH || Integer.bitCount(segmentLength) != 1) {
      throw new IllegalArgumentException("segment length must be a power of two in [4, " + MAX_SEGMENT_LENGTH
          + "], was " + segmentLength);
    }
    if (segmentCount < 1) {
      throw new IllegalArgumentException("segment count must be >= 1, was " + segmentCount);
    }
    Shape shape = new Shape(segmentLength, segmentCount);
    if (shape.slots() > MAX_SLOTS) {
      throw new IllegalArgumentException("segments of " + segmentLength + " x (" + segmentCount + " + 2) exceed "
          + MAX_SLOTS + " slots");
    }
    return shape;
  }

  // ---------------------------------------------------------------------------------------- build

  private static BinaryFuseFilter construct(long[] keys, int size, int fingerprintBits) {
    Shape shape = shapeFor(size);
    int segmentLength = shape.segmentLength();
    int segmentCount = shape.segmentCount();
    int slots = (int) shape.slots();
    long segmentCountLength = (long) segmentCount * segmentLength;
    int mask = segmentLength - 1;
    byte[] fp8 = fingerprintBits == 8 ? new byte[slots] : null;
    short[] fp16 = fingerprintBits == 16 ? new short[slots] : null;
    if (size == 0) {
      return new BinaryFuseFilter(fingerprintBits, 0, segmentLength, segmentCount, 0, fp8, fp16);
    }

    long[] order = new long[size + 1];
    byte[] orderSlot = new byte[size];
    int[] alone = new int[slots];
    byte[] counts = new byte[slots];
    long[] xors = new long[slots];
    int blockBits = 1;
    while ((1 << blockBits) < segmentCount) {
      blockBits++;
    }
    int blocks = 1 << blockBits;
    int[] start = new int[blocks];
    int[] triple = new int[5];
    long seedState = SEED_SEQUENCE_START;

    for (int attempt = 0; ; attempt++) {
      if (attempt == MAX_ATTEMPTS) {
        throw new IllegalStateException("binary fuse construction failed after " + MAX_ATTEMPTS
            + " seeds for " + size + " distinct keys (is the input adversarial?)");
      }
      seedState += 0x9E3779B97F4A7C15L;
      long seed = splitmix64(seedState);
      Arrays.fill(order, 0);
      order[size] = 1;
      Arrays.fill(counts, (byte) 0);
      Arrays.fill(xors, 0);
      // Bucket the mixed hashes by their segment range (a counting sort on the top bits), so that the
      // slot updates below walk memory nearly in order.
      for (int i = 0; i < blocks; i++) {
        start[i] = (int) (((long) i * size) >>> blockBits);
      }
      boolean zero = false;
      for (int i = 0; i < size; i++) {
        long x = mix(keys[i] + seed);
        zero |= x == 0; // 0 marks an empty cell below; that seed is skipped (probability n / 2^64)
        int bucket = (int) (x >>> (64 - blockBits));
        while (order[start[bucket]] != 0) {
          bucket = (bucket + 1) & (blocks - 1);
        }
        order[start[bucket]] = x;
        start[bucket]++;
      }
      if (zero) {
        continue;
      }
      boolean overflow = false;
      for (int i = 0; i < size; i++) {
        long x = order[i];
        int s0 = (int) multiplyHighUnsigned(x, segmentCountLength);
        int s1 = (s0 + segmentLength) ^ (int) ((x >>> 18) & mask);
        int s2 = (s0 + 2 * segmentLength) ^ (int) (x & mask);
        // counts: bits 2..7 = keys using the slot; bits 0..1 = XOR of which of the key's three slots it is
        counts[s0] += 4;
        xors[s0] ^= x;
        counts[s1] += 4;
        counts[s1] ^= 1;
        xors[s1] ^= x;
        counts[s2] += 4;
        counts[s2] ^= 2;
        xors[s2] ^= x;
        overflow |= (counts[s0] & 0xFF) < 4 | (counts[s1] & 0xFF) < 4 | (counts[s2] & 0xFF) < 4;
      }
      if (overflow) {
        continue;
      }
      int queued = 0;
      for (int i = 0; i < slots; i++) {
        alone[queued] = i;
        queued += ((counts[i] & 0xFF) >>> 2) == 1 ? 1 : 0;
      }
      int peeled = 0;
      while (queued > 0) {
        int index = alone[--queued];
        if (((counts[index] & 0xFF) >>> 2) != 1) {
          continue;
        }
        long x = xors[index];
        int found = counts[index] & 3;
        orderSlot[peeled] = (byte) found;
        order[peeled] = x;
        peeled++;
        slotsOf(x, segmentCountLength, segmentLength, mask, triple);
        int other1 = triple[found + 1];
        alone[queued] = other1;
        queued += ((counts[other1] & 0xFF) >>> 2) == 2 ? 1 : 0;
        counts[other1] -= 4;
        counts[other1] ^= (byte) mod3(found + 1);
        xors[other1] ^= x;
        int other2 = triple[found + 2];
        alone[queued] = other2;
        queued += ((counts[other2] & 0xFF) >>> 2) == 2 ? 1 : 0;
        counts[other2] -= 4;
        counts[other2] ^= (byte) mod3(found + 2);
        xors[other2] ^= x;
      }
      if (peeled != size) {
        continue;
      }
      for (int i = size - 1; i >= 0; i--) {
        long x = order[i];
        int found = orderSlot[i];
        slotsOf(x, segmentCountLength, segmentLength, mask, triple);
        int target = triple[found];
        int a = triple[found + 1];
        int b = triple[found + 2];
        long fingerprint = fingerprintOf(x);
        if (fp8 != null) {
          fp8[target] = (byte) (fingerprint ^ fp8[a] ^ fp8[b]);
        } else {
          fp16[target] = (short) (fingerprint ^ fp16[a] ^ fp16[b]);
        }
      }
      return new BinaryFuseFilter(fingerprintBits, seed, segmentLength, segmentCount, size, fp8, fp16);
    }
  }

  private static void slotsOf(long x, long segmentCountLength, int segmentLength, int mask, int[] out) {
    int s0 = (int) multiplyHighUnsigned(x, segmentCountLength);
    out[0] = s0;
    out[1] = (s0 + segmentLength) ^ (int) ((x >>> 18) & mask);
    out[2] = (s0 + 2 * segmentLength) ^ (int) (x & mask);
    out[3] = out[0];
    out[4] = out[1];
  }

  private static int mod3(int x) {
    return x > 2 ? x - 3 : x;
  }

  private static long fingerprintOf(long x) {
    return x ^ (x >>> 32);
  }

  /** High 64 bits of the unsigned 128-bit product (Math.unsignedMultiplyHigh is Java 18; core targets 17). */
  private static long multiplyHighUnsigned(long x, long y) {
    return Math.multiplyHigh(x, y) + ((x >> 63) & y) + ((y >> 63) & x);
  }

  /** MurmurHash3's fmix64 finaliser: a bijection on 64-bit values. */
  static long mix(long h) {
    h ^= h >>> 33;
    h *= 0xff51afd7ed558ccdL;
    h ^= h >>> 33;
    h *= 0xc4ceb9fe1a85ec53L;
    h ^= h >>> 33;
    return h;
  }

  private static long splitmix64(long z) {
    z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
    z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
    return z ^ (z >>> 31);
  }

  // ---------------------------------------------------------------------------------------- query

  @Override
  public FilterKind kind() {
    return FilterKind.BINARY_FUSE;
  }

  /** Always {@link ProtocolId#XXH3_FUSE_V1}. */
  @Override
  public ProtocolId protocolId() {
    return ProtocolId.XXH3_FUSE_V1;
  }

  /**
   * Not supported: a binary fuse filter holds exactly the set it was built from.
   *
   * @throws UnsupportedOperationException always
   */
  @Override
  public boolean add(byte[] item) {
    throw new UnsupportedOperationException("a binary fuse filter is immutable: build a new one from the whole set");
  }

  @Override
  public boolean mightContain(byte[] item) {
    return mightContainHash(XXH3.hashBytesToLong(Objects.requireNonNull(item, "item")));
  }

  /** Queries {@code length} bytes of {@code item} from {@code offset}. */
  public boolean mightContain(byte[] item, int offset, int length) {
    Objects.checkFromIndexSize(offset, length, Objects.requireNonNull(item, "item").length);
    return mightContainHash(XXH3.hashBytesToLong(item, offset, length));
  }

  /**
   * Queries an item by its {@link #itemHash} (for callers that already hold the hash).
   */
  public boolean mightContainHash(long itemHash) {
    if (keyCount == 0) {
      return false;
    }
    long x = mix(itemHash + constructionSeed);
    int s0 = (int) multiplyHighUnsigned(x, segmentCountLength);
    int s1 = (s0 + segmentLength) ^ (int) ((x >>> 18) & segmentLengthMask);
    int s2 = (s0 + 2 * segmentLength) ^ (int) (x & segmentLengthMask);
    long f = fingerprintOf(x);
    if (fingerprints8 != null) {
      return (byte) f == (byte) (fingerprints8[s0] ^ fingerprints8[s1] ^ fingerprints8[s2]);
    }
    return (short) f == (short) (fingerprints16[s0] ^ fingerprints16[s1] ^ fingerprints16[s2]);
  }

  /**
   * Queries every item; {@code out[i]} is the answer for {@code items[i]}. Hashes a batch of keys first
   * and then probes them, so the probes' cache misses overlap.
   *
   * @return the number of items reported maybe present
   */
  public int mightContainAll(byte[][] items, boolean[] out) {
    Objects.requireNonNull(items, "items");
    Objects.requireNonNull(out, "out");
    if (out.length < items.length) {
      throw new IllegalArgumentException("out has " + out.length + " slots for " + items.length + " items");
    }
    int present = 0;
    for (int i = 0; i < items.length; i++) {
      boolean maybe = mightContain(items[i]);
      out[i] = maybe;
      present += maybe ? 1 : 0;
    }
    return present;
  }

  // ----------------------------------------------------------------------------------- accessors

  /** Bits per fingerprint: 8 or 16. */
  public int fingerprintBits() {
    return fingerprintBits;
  }

  /** The seed the construction settled on (part of the protocol: it places every key). */
  public long constructionSeed() {
    return constructionSeed;
  }

  /** Slots per segment, a power of two. */
  public int segmentLength() {
    return segmentLength;
  }

  /** Segments a key's first slot can fall in; the array has two more. */
  public int segmentCount() {
    return segmentCount;
  }

  /** Number of fingerprint slots. */
  public long slotCount() {
    return ((long) segmentCount + 2) * segmentLength;
  }

  /** Distinct keys (distinct 64-bit item hashes) the filter was built from. */
  @Override
  public long insertedCount() {
    return keyCount;
  }

  /** Fingerprint storage in bits (slots times fingerprint bits), excluding the object header. */
  public long bitSize() {
    return slotCount() * fingerprintBits;
  }

  /** Storage bits per key; infinite for an empty filter. */
  public double bitsPerKey() {
    return keyCount == 0 ? Double.POSITIVE_INFINITY : (double) bitSize() / keyCount;
  }

  /** The model false-positive rate, 2<sup>-fingerprintBits</sup>, for any non-member. */
  public double estimatedFpp() {
    return keyCount == 0 ? 0 : Math.scalb(1.0, -fingerprintBits);
  }

  /** The fingerprint in slot {@code index} as an unsigned value (for the format). */
  int fingerprint(long index) {
    Objects.checkIndex(index, slotCount());
    return fingerprints8 != null ? fingerprints8[(int) index] & 0xFF : fingerprints16[(int) index] & 0xFFFF;
  }

  @Override
  public String toString() {
    return "BinaryFuseFilter{fingerprintBits=" + fingerprintBits + ", keys=" + keyCount + ", slots=" + slotCount()
        + ", bitsPerKey=" + String.format(java.util.Locale.ROOT, "%.3f", bitsPerKey()) + "}";
  }
}
