package io.bloomery.sketch;

import io.bloomery.filter.FilterKind;
import io.bloomery.filter.FilterTooLargeException;
import io.bloomery.filter.Summary;
import io.bloomery.hash.ProtocolId;
import io.bloomery.internal.KindAccess;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Objects;

/*
 * HeavyKeeper top-k (Gong et al., "HeavyKeeper: An Accurate Algorithm for Finding Top-k Elephant
 * Flows", USENIX ATC 2018) with RedisBloom's TOPK.* semantics, ported line by line from RedisBloom
 * b28c2945 src/topk.c and src/rm_topk.c:
 *
 *  - depth rows of width buckets (fingerprint, unsigned 32-bit count); row i's bucket is
 *    MurmurHash2_32(item, seed = i) mod width and the fingerprint is MurmurHash2_32(item, 1919);
 *  - adding an item with increment n, per row: an empty bucket (count 0) takes the fingerprint and
 *    count n; a bucket with the same fingerprint adds n; any other bucket is decayed: n times, with
 *    chance decay^count (a 256-entry table decay^i, and for count >= 256
 *    pow(table[255], count / 255) * table[count % 255]) the count drops by one, and when it reaches
 *    0 the bucket is taken over with the remaining increment;
 *  - the item's new estimate is the largest count among the buckets it now owns; if that is at
 *    least the heap minimum read before the update, the item's heap entry is updated (it is set,
 *    not maxed, "as it might have been decayed") or, if absent, it replaces the heap's root, whose
 *    item is returned as expelled;
 *  - the heap is RedisBloom's array min-heap with its own heapifyDown (ported as is, including the
 *    choice of child on ties); LIST sorts a copy by count, descending, and stops at the first zero
 *    count.
 *
 * Exact reproduction of a RedisBloom server is impossible: decay draws from the C library's rand(),
 * which Redis seeds with time ^ pid and shares with the rest of the process. Bloomery injects the
 * source (DecayRandom); DecayRandom.glibc(seed) is glibc's rand() after srand(seed), which reproduces
 * RedisBloom's topk.c exactly in isolation (pinned by vectors generated from that C file). Two
 * further ulp-level differences are documented on the class: Math.pow against glibc's pow for counts
 * >= 256, and RedisBloom rebuilding the decay table by repeated multiplication after an RDB load.
 *
 * HeavyKeeper's guarantee: a bucket's count only grows by increments of items with its fingerprint,
 * and a takeover starts from the remaining increment, so every count the sketch reports is at most
 * the true frequency of the item, unless two items share a 32-bit fingerprint and a bucket.
 */
/**
 * Top-k heavy hitters with RedisBloom TOPK semantics (HeavyKeeper with a min-heap of k items).
 *
 * <p><b>The contract.</b> {@link #list()} holds up to k items with their estimated counts;
 * {@link #query} says whether an item is currently in that list. Counts are estimates that are
 * <em>never above</em> the true frequency, except when two items share both a 32-bit fingerprint
 * and a bucket; they can be well below it, because buckets decay under contention. An item that is
 * truly among the top k with a clear margin is listed with high probability; small or close counts
 * may be missed. Answers depend on the {@link DecayRandom} source: with the same source and seed
 * the same stream gives the same answers.
 *
 * <p><b>Items.</b> Items are byte strings, compared in full. RedisBloom stores full items too, but
 * replies with them as C strings and persists them up to the first NUL byte, so an item containing
 * a zero byte comes back truncated from RedisBloom's ADD/LIST replies and after an RDB reload; the
 * server can reproduce that by truncating replies; the library does not.
 *
 * <p><b>Thread-safety.</b> Not thread-safe: confine a sketch to one thread or guard it with one
 * lock (RedisBloom runs every command on Redis' main thread).
 *
 * <p><b>Differences from RedisBloom that cannot be removed.</b> The random source (see above);
 * {@link Math#pow} and glibc's {@code pow} may differ in the last bit for counts of 256 and more,
 * which changes a decay decision only if a chance falls within that ulp; RedisBloom rebuilds its
 * decay table by repeated multiplication after an RDB reload (Bloomery always uses {@code pow}, as
 * RedisBloom does at creation); LIST orders equal counts as glibc 2.36's stable merge-sort
 * {@code qsort} does (heap order), while newer C libraries may order ties differently.
 */
public final class TopK implements Summary {

  /** RedisBloom's default width (TOPK.RESERVE key k). */
  public static final int DEFAULT_WIDTH = 8;
  /** RedisBloom's default depth. */
  public static final int DEFAULT_DEPTH = 7;
  /** RedisBloom's default decay. */
  public static final double DEFAULT_DECAY = 0.9;
  /** Entries of the decay lookup table (decay^0 … decay^255). */
  public static final int DECAY_LOOKUP_TABLE_SIZE = 256;
  /** The MurmurHash2 seed of fingerprints ({@code GA} in topk.c). */
  public static final int FINGERPRINT_SEED = 1919;
  /** The largest increment TOPK.INCRBY accepts. */
  public static final long MAX_INCREMENT = 100_000;
  /** The largest k, width or depth (unsigned 32-bit in RedisBloom). */
  public static final long MAX_PARAMETER = 0xFFFF_FFFFL;
  /** The largest width × depth, and the largest k, that fit in Java arrays. */
  public static final long MAX_CELLS = Integer.MAX_VALUE - 8;


  private final int k;
  private final int width;
  private final int depth;
  private final double decay;
  private final double[] decayTable = new double[DECAY_LOOKUP_TABLE_SIZE];
  private final DecayRandom random;

  // Row-major, depth × width: a bucket's fingerprint in the low 32 bits, its unsigned count in the high 32, so that
  // an update reads and writes one word (one cache line) per row instead of two.
  private final long[] buckets;
  private final int[] rowBuckets; // the bucket of each row for the update in progress (updates are serialized)

  private final int[] heapFingerprints;
  private final int[] heapCounts; // unsigned 32-bit
  private final byte[][] heapItems; // null for an empty slot

  private TopK(int k, int width, int depth, double decay, DecayRandom random) {
    this.k = k;
    this.width = width;
    this.depth = depth;
    this.decay = decay;
    this.random = Objects.requireNonNull(random, "random");
    for (int i = 0; i < DECAY_LOOKUP_TABLE_SIZE; i++) {
      decayTable[i] = Math.pow(decay, i);
    }
    try {
      buckets = new long[width * depth];
      rowBuckets = new int[depth];
      heapFingerprints = new int[k];
      heapCounts = new int[k];
      heapItems = new byte[k][];
    } catch (OutOfMemoryError e) {
      throw tooLarge(k, width, depth);
    }
  }

  static {
    KindAccess.register(TopK.class, DecayRandom.class, new KindAccess.TopKs<TopK, DecayRandom>() {
      @Override
      public TopK restore(long k, long width, long depth, double decay, DecayRandom random,
          KindAccess.TopKStateSource state) throws IOException {
        return TopK.restore(k, width, depth, decay, random, state);
      }

      @Override
      public int bucketFingerprint(TopK topK, long index) {
        return topK.bucketFingerprint(index);
      }

      @Override
      public long bucketCount(TopK topK, long index) {
        return topK.bucketCount(index);
      }

      @Override
      public byte[] heapItem(TopK topK, int slot) {
        return topK.heapItem(slot);
      }

      @Override
      public long heapCount(TopK topK, int slot) {
        return topK.heapCount(slot);
      }
    });
  }

  /**
   * {@code TOPK.RESERVE key k}: width {@value #DEFAULT_WIDTH}, depth {@value #DEFAULT_DEPTH}, decay
   * {@value #DEFAULT_DECAY}.
   */
  public static TopK reserve(long k, DecayRandom random) {
    return reserve(k, DEFAULT_WIDTH, DEFAULT_DEPTH, DEFAULT_DECAY, random);
  }

  /**
   * {@code TOPK.RESERVE key k width depth decay}.
   *
   * @param random the decay source; see {@link DecayRandom#glibc(int)} to reproduce RedisBloom
   * @throws IllegalArgumentException if k, width or depth is outside [1, {@link #MAX_PARAMETER}] or decay is
   *     outside (0, 1]
   * @throws FilterTooLargeException if k or width × depth is beyond {@link #MAX_CELLS}, or the heap cannot hold them
   */
  public static TopK reserve(long k, long width, long depth, double decay, DecayRandom random) {
    checkParameters(k, width, depth, decay);
    Objects.requireNonNull(random, "random");
    return new TopK((int) k, (int) width, (int) depth, decay, random);
  }

  private static void checkParameters(long k, long width, long depth, double decay) {
    checkParameter("k", k);
    checkParameter("width", width);
    checkParameter("depth", depth);
    if (!(decay > 0 && decay <= 1)) {
      throw new IllegalArgumentException("decay " + decay + " is outside (0, 1]");
    }
    if (k > MAX_CELLS || width > MAX_CELLS / depth) { // width * depth can pass 2^63 (each is below 2^32)
      throw tooLarge(k, width, depth);
    }
  }

  private static void checkParameter(String name, long value) {
    if (value < 1 || value > MAX_PARAMETER) {
      throw new IllegalArgumentException(name + " " + value + " is outside [1, " + MAX_PARAMETER + "]");
    }
  }

  private static FilterTooLargeException tooLarge(long k, long width, long depth) {
    return new FilterTooLargeException("a top-k of k " + k + " over " + width + " × " + depth
        + " buckets does not fit in this heap (at most " + MAX_CELLS + " of either)");
  }

  /** The number of heavy hitters kept. */
  public long k() {
    return k;
  }

  /** Buckets per row. */
  public long width() {
    return width;
  }

  /** Rows. */
  public long depth() {
    return depth;
  }

  /** The decay base. */
  public double decay() {
    return decay;
  }

  /** Always {@link ProtocolId#REDISBLOOM_MURMUR2}: RedisBloom's MurmurHash2 (rows seeded with their index, fingerprints with 1919). */
  @Override
  public ProtocolId protocolId() {
    return ProtocolId.REDISBLOOM_MURMUR2;
  }

  /** The kind recorded in the binary format, always {@link FilterKind#TOP_K}. */
  public FilterKind kind() {
    return FilterKind.TOP_K;
  }

  /**
   * {@code TOPK.ADD key item}: counts one occurrence.
   *
   * @return the item expelled from the top-k list by this add, or {@code null} if none was (also
   *     when the item filled an empty slot or was already listed)
   */
  public byte[] add(byte[] item) {
    return incrementBy(item, 1);
  }

  /** {@link #add(byte[])} of the UTF-8 bytes of {@code item}. */
  public byte[] add(CharSequence item) {
    return add(Strings.utf8(item));
  }

  /**
   * {@code TOPK.INCRBY key item increment}: counts {@code increment} occurrences.
   *
   * @return the expelled item, or {@code null}; as {@link #add(byte[])}
   * @throws IllegalArgumentException unless increment ∈ [0, {@value #MAX_INCREMENT}]
   */
  public byte[] incrementBy(byte[] item, long increment) {
    Objects.requireNonNull(item, "item");
    if (increment < 0 || increment > MAX_INCREMENT) {
      throw new IllegalArgumentException("increment " + increment + " is outside [0, " + MAX_INCREMENT + "]");
    }
    int fingerprint = MurmurHash2.hash32(item, 0, item.length, FINGERPRINT_SEED);
    long heapMin = heapCounts[0] & 0xFFFF_FFFFL;
    int[] rows = bucketsOf(item, rowBuckets);
    boolean draws = false;
    for (int row = 0; row < depth; row++) {
      long bucket = buckets[rows[row]];
      draws |= countOf(bucket) != 0 && fingerprintOf(bucket) != fingerprint;
    }
    DecayRandom draw = random;
    if (draws && increment > 0) {
      draw = random.beforeDraws(item, countIn(rows, item, fingerprint, heapMin));
    }
    long maxCount = 0;
    for (int row = 0; row < depth; row++) {
      int index = rows[row];
      long bucket = buckets[index];
      long bucketCount = countOf(bucket);
      if (bucketCount == 0) {
        buckets[index] = bucket(fingerprint, increment);
        maxCount = Math.max(maxCount, increment);
      } else if (fingerprintOf(bucket) == fingerprint) {
        long updated = (bucketCount + increment) & 0xFFFF_FFFFL; // uint32 arithmetic, as in C
        buckets[index] = bucket(fingerprint, updated);
        maxCount = Math.max(maxCount, updated);
      } else {
        int owner = fingerprintOf(bucket);
        for (long remaining = increment; remaining > 0; --remaining) {
          double chance = draw.nextChance();
          if (chance < decayChance(bucketCount)) {
            --bucketCount;
            if (bucketCount == 0) {
              owner = fingerprint;
              bucketCount = remaining;
              maxCount = Math.max(maxCount, bucketCount);
              break;
            }
          }
        }
        buckets[index] = bucket(owner, bucketCount);
      }
    }
    if (maxCount >= heapMin) {
      int slot = heapSlotOf(item, fingerprint);
      if (slot >= 0) {
        heapCounts[slot] = (int) maxCount;
        heapifyDown(slot);
      } else {
        byte[] expelled = heapItems[0];
        heapCounts[0] = (int) maxCount;
        heapFingerprints[0] = fingerprint;
        heapItems[0] = item.clone();
        heapifyDown(0);
        return expelled;
      }
    }
    return null;
  }

  /** {@link #incrementBy(byte[], long)} of the UTF-8 bytes of {@code item}. */
  public byte[] incrementBy(CharSequence item, long increment) {
    return incrementBy(Strings.utf8(item), increment);
  }

  private double decayChance(long count) {
    if (count < DECAY_LOOKUP_TABLE_SIZE) {
      return decayTable[(int) count];
    }
    return Math.pow(decayTable[DECAY_LOOKUP_TABLE_SIZE - 1], count / (DECAY_LOOKUP_TABLE_SIZE - 1))
        * decayTable[(int) (count % (DECAY_LOOKUP_TABLE_SIZE - 1))];
  }

  /** checkExistInHeap: scans from the last slot to the first, matching fingerprint, length and bytes. */
  private int heapSlotOf(byte[] item, int fingerprint) {
    for (int i = k - 1; i >= 0; --i) {
      if (heapFingerprints[i] == fingerprint && heapItems[i] != null && Arrays.equals(heapItems[i], item)) {
        return i;
      }
    }
    return -1;
  }

  /** RedisBloom's heapifyDown, ported as is (min-heap on unsigned counts). */
  private void heapifyDown(int start) {
    long len = k;
    long child = start;
    if (len < 2 || (len - 2) / 2 < child) {
      return;
    }
    child = 2 * child + 1;
    if (child + 1 < len && count(child) > count(child + 1)) {
      ++child;
    }
    if (count(child) > count(start)) {
      return;
    }
    int topFingerprint = heapFingerprints[start];
    int topCount = heapCounts[start];
    byte[] topItem = heapItems[start];
    long topCountValue = topCount & 0xFFFF_FFFFL;
    long current = start;
    do {
      moveHeapEntry((int) child, (int) current);
      current = child;
      if ((len - 2) / 2 < child) {
        break;
      }
      child = 2 * child + 1;
      if (child + 1 < len && count(child) > count(child + 1)) {
        ++child;
      }
    } while (count(child) < topCountValue);
    heapFingerprints[(int) current] = topFingerprint;
    heapCounts[(int) current] = topCount;
    heapItems[(int) current] = topItem;
  }

  private long count(long slot) {
    return heapCounts[(int) slot] & 0xFFFF_FFFFL;
  }

  private void moveHeapEntry(int from, int to) {
    heapFingerprints[to] = heapFingerprints[from];
    heapCounts[to] = heapCounts[from];
    heapItems[to] = heapItems[from];
  }

  /** {@code TOPK.QUERY key item}: whether the item is in the top-k heap now. */
  public boolean query(byte[] item) {
    Objects.requireNonNull(item, "item");
    return heapSlotOf(item, MurmurHash2.hash32(item, 0, item.length, FINGERPRINT_SEED)) >= 0;
  }

  /** {@link #query(byte[])} of the UTF-8 bytes of {@code item}. */
  public boolean query(CharSequence item) {
    return query(Strings.utf8(item));
  }

  /**
   * {@code TOPK.COUNT key item} (deprecated in RedisBloom's documentation, still served): the largest
   * count among the item's buckets that carry its fingerprint (for a listed item, only buckets at
   * least the heap minimum count). Never above the true count (see the class contract); often below.
   */
  public long count(byte[] item) {
    Objects.requireNonNull(item, "item");
    int fingerprint = MurmurHash2.hash32(item, 0, item.length, FINGERPRINT_SEED);
    // an array of its own: counts may run side by side (readers under a shared lock), updates may not
    return countIn(bucketsOf(item, new int[depth]), item, fingerprint, heapCounts[0] & 0xFFFF_FFFFL);
  }

  /** The item's bucket in each row (row-major indexes into {@link #buckets}), written into {@code rows}. */
  private int[] bucketsOf(byte[] item, int[] rows) {
    for (int row = 0; row < depth; row++) {
      rows[row] = row * width + MurmurHash2.reduce(MurmurHash2.hash32(item, 0, item.length, row), width);
    }
    return rows;
  }

  private static int fingerprintOf(long bucket) {
    return (int) bucket;
  }

  private static long countOf(long bucket) {
    return bucket >>> 32;
  }

  private static long bucket(int fingerprint, long count) {
    return count << 32 | (fingerprint & 0xFFFF_FFFFL);
  }

  /** {@link #count(byte[])} over the item's buckets (one per row), its fingerprint and the heap's minimum count. */
  private long countIn(int[] rows, byte[] item, int fingerprint, long heapMin) {
    int listed = -1; // whether the item is in the heap, asked only when a bucket carries its fingerprint: 0 no, 1 yes
    long result = 0;
    for (int row = 0; row < depth; row++) {
      long bucket = buckets[rows[row]];
      if (fingerprintOf(bucket) == fingerprint) {
        long bucketCount = countOf(bucket);
        if (listed < 0) {
          listed = heapSlotOf(item, fingerprint) >= 0 ? 1 : 0;
        }
        if (listed == 0 || bucketCount >= heapMin) {
          result = Math.max(result, bucketCount);
        }
      }
    }
    return result;
  }

  /** {@link #count(byte[])} of the UTF-8 bytes of {@code item}. */
  public long count(CharSequence item) {
    return count(Strings.utf8(item));
  }

  /** One entry of {@link #list()}: an item and its estimated count. */
  public static final class HeavyHitter {
    private final byte[] item;
    private final long count;

    HeavyHitter(byte[] item, long count) {
      this.item = item.clone();
      this.count = count;
    }

    /** A copy of the item's bytes. */
    public byte[] item() {
      return item.clone();
    }

    /** The estimated count (never above the truth, see {@link TopK}). */
    public long count() {
      return count;
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof HeavyHitter && ((HeavyHitter) o).count == count && Arrays.equals(((HeavyHitter) o).item, item);
    }

    @Override
    public int hashCode() {
      return Arrays.hashCode(item) * 31 + Long.hashCode(count);
    }

    @Override
    public String toString() {
      return new String(item, java.nio.charset.StandardCharsets.UTF_8) + ":" + count;
    }
  }

  /**
   * {@code TOPK.LIST key [WITHCOUNT]}: the listed items by count, largest first, stopping at the
   * first zero count (an item can sit in the heap with count 0 after {@code INCRBY item 0}; it is
   * then reported by {@link #query} but not listed, as in RedisBloom).
   */
  public List<HeavyHitter> list() {
    Integer[] order = new Integer[k];
    for (int i = 0; i < k; i++) {
      order[i] = i;
    }
    // Stable sort, descending: ties stay in heap order, as glibc's merge-sort qsort leaves them.
    Arrays.sort(order, (a, b) -> Long.compare(count(b), count(a)));
    List<HeavyHitter> result = new ArrayList<>();
    for (int slot : order) {
      long c = count(slot);
      if (c == 0) {
        break;
      }
      result.add(new HeavyHitter(heapItems[slot], c));
    }
    return Collections.unmodifiableList(result);
  }

  // ---- persisted state, for the binary format ----

  /** The fingerprint of bucket {@code index} (row-major: row × width + column). */
  int bucketFingerprint(long index) {
    return fingerprintOf(buckets[Math.toIntExact(Objects.checkIndex(index, (long) buckets.length))]);
  }

  /** The unsigned count of bucket {@code index}. */
  long bucketCount(long index) {
    return countOf(buckets[Math.toIntExact(Objects.checkIndex(index, (long) buckets.length))]);
  }

  /** The item in heap slot {@code slot} (a copy), or {@code null} if the slot is empty. */
  byte[] heapItem(int slot) {
    byte[] item = heapItems[Objects.checkIndex(slot, k)];
    return item == null ? null : item.clone();
  }

  /** The unsigned count of heap slot {@code slot}. */
  long heapCount(int slot) {
    return heapCounts[Objects.checkIndex(slot, k)] & 0xFFFF_FFFFL;
  }

  /**
   * Rebuilds a sketch from persisted state: width × depth buckets (fingerprint, count) in row-major
   * order, then k heap slots (item or {@code null}, count). The heap fingerprints are recomputed from
   * the items; empty slots must have count 0. The heap order is not checked: RedisBloom lowers a
   * listed item's count in place and sifts it down only, so a live heap need not be ordered.
   *
   * @throws IllegalArgumentException if parameters or state are invalid
   */
  static TopK restore(long k, long width, long depth, double decay, DecayRandom random,
      KindAccess.TopKStateSource state)
      throws IOException {
    checkParameters(k, width, depth, decay);
    TopK topK = new TopK((int) k, (int) width, (int) depth, decay, random);
    for (int i = 0; i < topK.buckets.length; i++) {
      int fingerprint = state.nextBucketFingerprint();
      topK.buckets[i] = bucket(fingerprint, checkCount(state.nextBucketCount(), "bucket " + i));
    }
    for (int slot = 0; slot < k; slot++) {
      byte[] item = state.nextHeapItem();
      long count = checkCount(state.nextHeapCount(), "heap slot " + slot);
      if (item == null && count != 0) {
        throw new IllegalArgumentException("empty heap slot " + slot + " has count " + count);
      }
      topK.heapItems[slot] = item;
      topK.heapCounts[slot] = (int) count;
      topK.heapFingerprints[slot] = item == null ? 0 : MurmurHash2.hash32(item, 0, item.length, FINGERPRINT_SEED);
    }
    return topK;
  }

  private static long checkCount(long count, String what) {
    if (count < 0 || count > 0xFFFF_FFFFL) {
      throw new IllegalArgumentException(what + " count " + count + " is outside [0, 2^32 - 1]");
    }
    return count;
  }

  /** An independent copy of the sketch's state that draws decays from {@code random}. */
  public TopK copy(DecayRandom random) {
    TopK copy = new TopK(k, width, depth, decay, random);
    System.arraycopy(buckets, 0, copy.buckets, 0, buckets.length);
    System.arraycopy(heapFingerprints, 0, copy.heapFingerprints, 0, k);
    System.arraycopy(heapCounts, 0, copy.heapCounts, 0, k);
    for (int i = 0; i < k; i++) {
      copy.heapItems[i] = heapItems[i] == null ? null : heapItems[i].clone();
    }
    return copy;
  }

  @Override
  public String toString() {
    return "TopK[k=" + k + ", width=" + width + ", depth=" + depth + ", decay=" + decay + "]";
  }
}
