package io.bloomery.counting;

import io.bloomery.filter.BloomFilter;
import io.bloomery.filter.BoundedFilter;
import io.bloomery.filter.FilterKind;
import io.bloomery.filter.IncompatibleFilterException;
import io.bloomery.filter.MembershipFilter;
import io.bloomery.filter.Mergeable;
import io.bloomery.hash.DoubleHashingPlacement;
import io.bloomery.hash.EnhancedDoubleHashing;
import io.bloomery.hash.HashProtocol;
import io.bloomery.hash.ProtocolId;
import io.bloomery.hash.Protocols;
import io.bloomery.internal.FilterCompatibility;
import io.bloomery.internal.Items;
import io.bloomery.internal.KindAccess;
import io.bloomery.sizing.BloomMath;
import java.io.IOException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Objects;
import java.util.concurrent.atomic.LongAdder;

/*
 * Counting Bloom filter (Fan, Cao, Almeida, Broder, "Summary Cache: A Scalable Wide-Area Web Cache
 * Sharing Protocol", IEEE/ACM ToN 8(3), 2000): the classic filter with each bit replaced by a small
 * counter, so an item can be removed by decrementing its k counters.
 *
 * Placement is exactly the classic filter's: the same HashProtocol, seed, m and k give the same k
 * positions, and "counter > 0" plays the role of "bit set". Hence mightContain answers exactly as a
 * classic filter over the same adds would, the FPR model (1 - e^(-kn/m))^k is the same for the same
 * m, k and n (n = items present), and toBloomFilter() is that classic filter.
 *
 * Counters are packed little-endian in 64-bit words: counter i occupies bits
 * (i mod c) * w .. (i mod c) * w + w - 1 of word i / c, where w is the counter width (4, 8 or 16
 * bits) and c = 64 / w counters per word. Fan et al. show 4 bits overflow with probability
 * ~1.37e-15 * m at optimal k; overflow is nevertheless handled safely: a counter that reaches
 * 2^w - 1 is saturated and is never incremented or decremented again. A saturated counter can only
 * cause false positives (it may stay > 0 after all its items are gone), never false negatives.
 *
 * Concurrency: every counter update is a compare-and-set on its word (VarHandle), retried on
 * contention, so adds and removes from any number of threads never lose an update. A multi-counter
 * operation is not atomic as a whole: a query concurrent with an add may see some of its counters
 * incremented and not others (it then answers "absent", which is correct for an add that has not
 * returned).
 */
/**
 * A counting Bloom filter: a classic Bloom filter whose bits are small saturating counters, so items
 * can be removed.
 *
 * <p><b>What the answers mean.</b> As for {@link BloomFilter}: {@code false} from {@link
 * #mightContain} is definite, {@code true} means "maybe". For the same protocol, seed, m and k, the
 * answers are exactly those of a classic filter holding the items currently present, so the
 * false-positive rate is the classic one, (1 − e^(−kn/m))^k for n items present.
 *
 * <p><b>Delete semantics.</b> {@link #remove} decrements the item's k counters. It is correct only
 * for an item that was added (and not yet removed as often as added). Removing an item that was
 * never added — for example a false positive, which {@code remove} cannot tell from a member —
 * decrements counters that belong to other items and can make those items <b>false negatives</b>
 * (the same hazard as a cuckoo filter's delete). If any of the item's counters is zero the item is
 * definitely absent and {@code remove} changes nothing. Check membership in the authoritative store
 * before removing.
 *
 * <p><b>Saturation.</b> Counters are {@link #counterBits()} wide (4 by default, or 8 or 16). A
 * counter that reaches its maximum 2^w − 1 stays there forever: it is neither incremented nor
 * decremented. That can only leave an item "maybe present" after its removal (a false positive),
 * never cause a false negative. {@link #saturatedCounters()} reports how many are stuck.
 *
 * <p><b>Memory.</b> The counters take w × m bits: 4× the classic filter's bitmap with 4-bit counters
 * (8× with 8-bit, 16× with 16-bit), for the same false-positive rate.
 *
 * <p><b>Thread-safety.</b> Lock-free: {@link #add}, {@link #remove} and {@link #mightContain} may be
 * called from any number of threads; each counter update is an atomic compare-and-set on its 64-bit
 * word, so no update is lost. An add or remove that returns before a query starts is seen by it.
 * Statistics and {@link #toBloomFilter()}, {@link #copy()} and {@link #mergeFrom} see a rolling
 * snapshot while other threads write.
 */
public final class CountingBloomFilter implements BoundedFilter, Mergeable<CountingBloomFilter> {

  /** The default counter width in bits. */
  public static final int DEFAULT_COUNTER_BITS = 4;

  private static final VarHandle WORDS = MethodHandles.arrayElementVarHandle(long[].class);
  private static final int MAX_WORDS = Integer.MAX_VALUE - 8;

  private final HashProtocol protocol;
  private final byte[] seed;
  private final long counters;
  private final int hashes;
  private final int counterBits;
  private final int countersPerWordShift; // log2(64 / counterBits)
  private final long counterMask;
  private final HashProtocol.Placement placement;
  /** Non-null when positions can be walked from one hash without an array (the default protocol). */
  private final DoubleHashingPlacement doubleHashing;
  private final long[] words;
  private final LongAdder insertedCount = new LongAdder();

  private CountingBloomFilter(HashProtocol protocol, byte[] seed, long counters, int hashes, int counterBits) {
    this.protocol = Objects.requireNonNull(protocol, "protocol");
    this.seed = Objects.requireNonNull(seed, "seed").clone();
    checkCounterBits(counterBits);
    if (counters < 1 || counters > maxCounters(counterBits)) {
      throw new IllegalArgumentException(
          "counters m must be in [1, " + maxCounters(counterBits) + "] for " + counterBits + "-bit counters, was " + counters);
    }
    this.placement = protocol.bind(counters, hashes, this.seed);
    this.doubleHashing =
        placement instanceof DoubleHashingPlacement ? (DoubleHashingPlacement) placement : null;
    this.counters = counters;
    this.hashes = hashes;
    this.counterBits = counterBits;
    this.countersPerWordShift = Integer.numberOfTrailingZeros(64 / counterBits);
    this.counterMask = (1L << counterBits) - 1;
    this.words = new long[(int) wordCount(counters, counterBits)];
  }

  /** The largest counter count m for a counter width: as many as fit in one Java long array. */
  public static long maxCounters(int counterBits) {
    checkCounterBits(counterBits);
    return Math.min(BloomFilter.MAX_BITS, (long) MAX_WORDS * (64 / counterBits));
  }

  private static void checkCounterBits(int counterBits) {
    if (counterBits != 4 && counterBits != 8 && counterBits != 16) {
      throw new IllegalArgumentException("counter width must be 4, 8 or 16 bits, was " + counterBits);
    }
  }

  private static long wordCount(long counters, int counterBits) {
    long perWord = 64 / counterBits;
    return (counters + perWord - 1) / perWord;
  }

  /**
   * A filter sized like {@link BloomFilter#create(long, double)} (same m and k from {@link
   * BloomMath}), default protocol, empty seed, {@value #DEFAULT_COUNTER_BITS}-bit counters.
   */
  public static CountingBloomFilter create(long expectedInsertions, double fpp) {
    long m = BloomMath.optimalBits(expectedInsertions, fpp);
    int k = BloomMath.optimalHashes(expectedInsertions, m);
    return create(Protocols.defaultProtocol(), new byte[0], m, k, DEFAULT_COUNTER_BITS);
  }

  static {
    KindAccess.register(CountingBloomFilter.class, new KindAccess.Counting<CountingBloomFilter>() {
      @Override
      public CountingBloomFilter restore(HashProtocol protocol, byte[] seed, long counters, int hashes,
          int counterBits, long insertedCount, KindAccess.WordSource words) throws IOException {
        return CountingBloomFilter.restore(protocol, seed, counters, hashes, counterBits, insertedCount, words);
      }

      @Override
      public long wordCount(CountingBloomFilter filter) {
        return filter.wordCount();
      }

      @Override
      public long word(CountingBloomFilter filter, long index) {
        return filter.word(index);
      }
    });
  }

  /**
   * An empty filter with explicit parameters.
   *
   * @param seed the protocol's seed (copied)
   * @param counters m, the number of counters (the classic filter's bit count)
   * @param hashes k
   * @param counterBits 4, 8 or 16
   * @throws IllegalArgumentException if the protocol cannot express (m, k, seed), the width is not
   *     4, 8 or 16, or m exceeds {@link #maxCounters(int)}
   */
  public static CountingBloomFilter create(
      HashProtocol protocol, byte[] seed, long counters, int hashes, int counterBits) {
    return new CountingBloomFilter(protocol, seed, counters, hashes, counterBits);
  }

  /**
   * Rebuilds a filter from its recorded parameters, item count and counter words (word j holds
   * counters j·c … j·c + c − 1, c = 64 / width, counter i in bits (i mod c)·w upwards).
   *
   * @throws IllegalArgumentException if the parameters are invalid, {@code insertedCount < 0}, or the
   *     last word has bits set beyond counter m − 1
   */
  static CountingBloomFilter restore(
      HashProtocol protocol, byte[] seed, long counters, int hashes, int counterBits, long insertedCount,
      KindAccess.WordSource words)
      throws IOException {
    if (insertedCount < 0) {
      throw new IllegalArgumentException("inserted count must be >= 0, was " + insertedCount);
    }
    CountingBloomFilter filter = new CountingBloomFilter(protocol, seed, counters, hashes, counterBits);
    long[] target = filter.words;
    long tailMask = filter.unusedTailMask();
    for (int j = 0; j < target.length; j++) {
      long word = words.nextWord();
      if (j == target.length - 1 && (word & tailMask) != 0) {
        throw new IllegalArgumentException("word " + j + " has bits set beyond counter m - 1 = " + (counters - 1));
      }
      target[j] = word;
    }
    filter.insertedCount.add(insertedCount);
    VarHandle.releaseFence();
    return filter;
  }

  /** Bits of the last word beyond the last counter. */
  private long unusedTailMask() {
    long perWord = 64 / counterBits;
    long used = counters - (long) (words.length - 1) * perWord;
    return used == perWord ? 0L : -1L << (used * counterBits);
  }

  @Override
  public FilterKind kind() {
    return FilterKind.COUNTING_BLOOM;
  }

  /**
   * Adds an item: increments its k counters (saturated counters stay saturated).
   *
   * @return {@code true} if at least one of its counters was zero (the item was not already reported
   *     maybe present), as {@link BloomFilter#add} returns {@code true} when it sets a bit
   */
  @Override
  public boolean add(byte[] item) {
    Objects.requireNonNull(item, "item");
    boolean changed = false;
    if (doubleHashing != null) {
      long x = doubleHashing.hash(item, 0, item.length);
      long y = EnhancedDoubleHashing.stride(x);
      long d = EnhancedDoubleHashing.CUBIC_SCALE;
      for (int i = 0; i < hashes; i++) {
        changed |= increment(EnhancedDoubleHashing.reduce(x, counters)) == 0;
        x += y;
        y += d;
        d += EnhancedDoubleHashing.CUBIC_SCALE;
      }
    } else {
      for (long position : positions(item)) {
        changed |= increment(position) == 0;
      }
    }
    insertedCount.increment();
    return changed;
  }

  /**
   * Removes one occurrence of an item that was added: decrements its k counters, except saturated
   * ones. <b>Only remove items that were added</b>; see the class javadoc for what removing anything
   * else does to other items.
   *
   * @return {@code false} if the item is definitely absent (a counter was zero; nothing changed),
   *     {@code true} if its counters were decremented
   */
  public boolean remove(byte[] item) {
    Objects.requireNonNull(item, "item");
    if (doubleHashing != null) {
      long hash = doubleHashing.hash(item, 0, item.length);
      if (!allNonZero(hash)) {
        return false;
      }
      long x = hash;
      long y = EnhancedDoubleHashing.stride(x);
      long d = EnhancedDoubleHashing.CUBIC_SCALE;
      for (int i = 0; i < hashes; i++) {
        decrement(EnhancedDoubleHashing.reduce(x, counters));
        x += y;
        y += d;
        d += EnhancedDoubleHashing.CUBIC_SCALE;
      }
    } else {
      long[] positions = positions(item);
      for (long position : positions) {
        if (counter(position) == 0) {
          return false;
        }
      }
      for (long position : positions) {
        decrement(position);
      }
    }
    insertedCount.decrement();
    return true;
  }

  /** {@link #remove(byte[])} of the UTF-8 bytes of {@code item}. */
  public boolean remove(CharSequence item) {
    return remove(Items.utf8(item, "item"));
  }

  /** {@link #remove(byte[])} of the 8 little-endian bytes of {@code item}. */
  public boolean remove(long item) {
    return remove(Items.littleEndian(item));
  }

  @Override
  public boolean mightContain(byte[] item) {
    Objects.requireNonNull(item, "item");
    if (doubleHashing != null) {
      return allNonZero(doubleHashing.hash(item, 0, item.length));
    }
    for (long position : positions(item)) {
      if (counter(position) == 0) {
        return false;
      }
    }
    return true;
  }

  /** Whether every counter of the item whose default-protocol hash is {@code hash} is non-zero. */
  private boolean allNonZero(long hash) {
    long x = hash;
    long y = EnhancedDoubleHashing.stride(x);
    long d = EnhancedDoubleHashing.CUBIC_SCALE;
    for (int i = 0; i < hashes; i++) {
      if (counter(EnhancedDoubleHashing.reduce(x, counters)) == 0) {
        return false;
      }
      x += y;
      y += d;
      d += EnhancedDoubleHashing.CUBIC_SCALE;
    }
    return true;
  }

  /** The item's k positions in an array: for protocols without {@link DoubleHashingPlacement}. */
  private long[] positions(byte[] item) {
    long[] positions = new long[hashes];
    placement.positions(item, 0, item.length, positions);
    return positions;
  }

  private int wordIndex(long counter) {
    return (int) (counter >>> countersPerWordShift);
  }

  private int shift(long counter) {
    return (int) (counter & ((1L << countersPerWordShift) - 1)) * counterBits;
  }

  /** Increments a counter unless saturated; returns its previous value. */
  private long increment(long position) {
    int index = wordIndex(position);
    int shift = shift(position);
    while (true) {
      long word = (long) WORDS.getVolatile(words, index);
      long value = (word >>> shift) & counterMask;
      if (value == counterMask) {
        return value;
      }
      if (WORDS.compareAndSet(words, index, word, word + (1L << shift))) {
        return value;
      }
    }
  }

  /** Decrements a counter unless zero or saturated. */
  private void decrement(long position) {
    int index = wordIndex(position);
    int shift = shift(position);
    while (true) {
      long word = (long) WORDS.getVolatile(words, index);
      long value = (word >>> shift) & counterMask;
      if (value == 0 || value == counterMask) {
        return;
      }
      if (WORDS.compareAndSet(words, index, word, word - (1L << shift))) {
        return;
      }
    }
  }

  private long counter(long position) {
    long word = (long) WORDS.getVolatile(words, wordIndex(position));
    return (word >>> shift(position)) & counterMask;
  }

  /** The value of counter {@code index} (0 ≤ index &lt; m). */
  long counterAt(long index) {
    Objects.checkIndex(index, counters);
    return counter(index);
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

  /** A copy of the protocol seed. */
  public byte[] seed() {
    return seed.clone();
  }

  /** m, the number of counters (the classic filter's bit count). */
  public long counterCount() {
    return counters;
  }

  /** k, counters per item. */
  public int hashCount() {
    return hashes;
  }

  /** The counter width w in bits: 4, 8 or 16. */
  public int counterBits() {
    return counterBits;
  }

  /** The largest counter value, 2^w − 1, at which a counter is saturated. */
  public long maxCounterValue() {
    return counterMask;
  }

  /** The number of 64-bit words holding the counters. */
  long wordCount() {
    return words.length;
  }

  /** Counter word {@code index}. */
  long word(long index) {
    return (long) WORDS.getVolatile(words, (int) Objects.checkIndex(index, (long) words.length));
  }

  /** Bytes of counter storage: w·m bits rounded up to whole words (4× a classic bitmap for w = 4). */
  public long counterBytes() {
    return (long) words.length * Long.BYTES;
  }

  /** Adds minus successful removes (items believed present, with multiplicity). */
  @Override
  public long insertedCount() {
    return Math.max(0, insertedCount.sum());
  }

  /** Counters that are not zero (the classic filter's set bits). */
  public long nonZeroCounters() {
    long total = 0;
    for (long i = 0; i < counters; i++) {
      if (counter(i) != 0) {
        total++;
      }
    }
    return total;
  }

  /** Counters stuck at {@link #maxCounterValue()}. */
  public long saturatedCounters() {
    long total = 0;
    for (long i = 0; i < counters; i++) {
      if (counter(i) == counterMask) {
        total++;
      }
    }
    return total;
  }

  /**
   * The number of items this filter is sized for, by the classic kind's definition ({@link
   * BloomMath#capacityForHashes} of its m counters and k): at least the n that {@link #create(long, double)} was
   * given.
   */
  @Override
  public long capacity() {
    return BloomMath.capacityForHashes(counters, hashes);
  }

  /**
   * Whether {@link #insertedCount()} (adds minus removes, which this kind tracks exactly) has reached 80% of
   * {@link #capacity()}. O(1).
   */
  @Override
  public boolean isNearCapacity() {
    return insertedCount() >= 0.8 * capacity();
  }

  /** The model false-positive rate for the current {@link #insertedCount()}: (1 − e^(−kn/m))^k. */
  public double estimatedFpp() {
    return BloomMath.falsePositiveRate(counters, hashes, insertedCount());
  }

  /**
   * The classic Bloom filter with a bit set wherever a counter is non-zero: same protocol, seed, m
   * and k, and exactly the same {@code mightContain} answers as this filter at the time of the call.
   * Its inserted count is this filter's {@link #insertedCount()}.
   */
  public BloomFilter toBloomFilter() {
    long[] next = {0};
    try {
      return KindAccess.classic(BloomFilter.class).restore(
          protocol,
          seed,
          counters,
          hashes,
          insertedCount(),
          () -> {
            long bitWord = 0;
            long first = next[0] * 64;
            for (int b = 0; b < 64 && first + b < counters; b++) {
              if (counter(first + b) != 0) {
                bitWord |= 1L << b;
              }
            }
            next[0]++;
            return bitWord;
          });
    } catch (IOException e) {
      throw new IllegalStateException("unreachable: in-memory word source failed", e);
    }
  }

  /** Whether {@link #mergeFrom} would accept {@code other}: same protocol, seed, m, k and width. */
  public boolean isCompatible(CountingBloomFilter other) {
    Objects.requireNonNull(other, "other");
    return other != this && incompatibility(other) == null;
  }

  private IncompatibleFilterException incompatibility(CountingBloomFilter other) {
    IncompatibleFilterException mismatch = FilterCompatibility.mismatch(IncompatibleFilterException::new,
        "counter count m", protocol, seed, counters, hashes, other.protocol, other.seed, other.counters, other.hashes);
    if (mismatch == null && other.counterBits != counterBits) {
      return new IncompatibleFilterException("counter width", counterBits, other.counterBits);
    }
    return mismatch;
  }

  /**
   * Adds every item of {@code other} to this filter: counter-wise sum, saturating at
   * {@link #maxCounterValue()} (a saturated counter in either stays saturated). Afterwards each item
   * present in either filter is present here with the summed multiplicity.
   *
   * @throws IncompatibleFilterException if protocol, seed, m, k or counter width differ; nothing
   *     changes
   * @throws IllegalArgumentException if {@code other} is this filter
   */
  public void mergeFrom(CountingBloomFilter other) {
    Objects.requireNonNull(other, "other");
    if (other == this) {
      throw new IllegalArgumentException("cannot merge a filter into itself");
    }
    IncompatibleFilterException incompatible = incompatibility(other);
    if (incompatible != null) {
      throw incompatible;
    }
    int perWord = 64 / counterBits;
    for (int j = 0; j < words.length; j++) {
      long incoming = other.word(j);
      if (incoming == 0) {
        continue;
      }
      while (true) {
        long current = (long) WORDS.getVolatile(words, j);
        long merged = 0;
        for (int c = 0; c < perWord; c++) {
          int shift = c * counterBits;
          long sum = ((current >>> shift) & counterMask) + ((incoming >>> shift) & counterMask);
          merged |= Math.min(sum, counterMask) << shift;
        }
        if (WORDS.compareAndSet(words, j, current, merged)) {
          break;
        }
      }
    }
    insertedCount.add(other.insertedCount());
  }

  /** An independent copy. */
  public CountingBloomFilter copy() {
    CountingBloomFilter copy = new CountingBloomFilter(protocol, seed, counters, hashes, counterBits);
    for (int j = 0; j < words.length; j++) {
      copy.words[j] = (long) WORDS.getVolatile(words, j);
    }
    copy.insertedCount.add(insertedCount());
    VarHandle.releaseFence();
    return copy;
  }

  @Override
  public String toString() {
    return "CountingBloomFilter[protocol=" + protocol.name() + ", m=" + counters + ", k=" + hashes
        + ", counterBits=" + counterBits + ", items=" + insertedCount() + "]";
  }
}
