package io.bloomery.sketch;

import io.bloomery.filter.FilterKind;
import io.bloomery.filter.FilterTooLargeException;
import io.bloomery.filter.IncompatibleFilterException;
import io.bloomery.filter.Mergeable;
import io.bloomery.filter.Summary;
import io.bloomery.hash.ProtocolId;
import io.bloomery.internal.KindAccess;
import java.io.IOException;
import java.math.BigInteger;
import java.util.List;
import java.util.Objects;

/*
 * Count-min sketch (Cormode & Muthukrishnan, "An improved data stream summary: the count-min sketch
 * and its applications", J. Algorithms 55(1), 2005) with RedisBloom's CMS.* semantics, read from
 * RedisBloom b28c2945 src/cms.c and src/rm_cms.c:
 *
 *  - depth rows of width unsigned 32-bit counters, row-major (cell = row * width + column);
 *  - row i's column is MurmurHash2_32(item, seed = i) mod width (32-bit MurmurHash2, little-endian);
 *  - INCRBY adds the increment to one counter per row; a counter whose sum wraps past 2^32 - 1 (or
 *    any increment >= 2^32) saturates at 2^32 - 1 and stays there; the reply is the new minimum
 *    over the rows, and a minimum equal to 2^32 - 1 is reported by the server as
 *    an overflow error (the increment is applied all the same);
 *  - the total count is a 64-bit unsigned counter that wraps (RedisBloom's size_t);
 *  - MERGE overwrites the destination with sum(w_i * source_i), cell by cell and for the count,
 *    after checking that no cell leaves [0, 2^32 - 1] and that the count stays in [0, 2^63 - 1],
 *    with every intermediate product and sum checked for 64-bit signed overflow; a failing check
 *    changes nothing;
 *  - INITBYPROB sizes width = ceil(2 / error) in double and depth = ceil(log10f(prob) / log10f(0.5))
 *    in single precision, as RedisBloom's CMS_DimFromProb does.
 *
 * Bound: with width w = ceil(e / eps) and depth d = ceil(ln(1 / delta)), a query overestimates by
 * more than eps * N with probability at most delta (N = total count). RedisBloom's INITBYPROB uses
 * the looser w = ceil(2 / eps) (so each row overestimates by more than eps * N with probability at
 * most 1/2, by Markov) and d = ceil(log2(1 / delta)) (so all d rows do so with probability at most
 * 2^-d <= delta); the Bloomery tests check that guarantee, which is the one RedisBloom's formulas
 * give.
 */
/**
 * A count-min sketch with RedisBloom CMS semantics: approximate frequencies of byte-string items.
 *
 * <p><b>The contract.</b> {@link #count(byte[])} never returns less than the true total of the increments
 * applied to an item (as long as no counter saturated and no merge with negative weights removed
 * more than was added); it may return more, because other items share counters. With the
 * dimensions from {@link #initByProbability(double, double) initByProbability(eps, delta)}, the
 * overestimate exceeds {@code eps · N} (N = {@link #insertedCount()}) with probability at most
 * {@code delta}. Counters are unsigned 32-bit and saturate at {@link #MAX_COUNTER}; they never wrap.
 *
 * <p>Hashing, sizing, saturation and merging are RedisBloom's bit for bit, so the same commands give
 * the same replies as {@code CMS.*} in RedisBloom. Refusals are exceptions in the library's own words; the server
 * maps them to RedisBloom's replies.
 *
 * <p><b>Thread-safety.</b> Not thread-safe: confine a sketch to one thread or guard it with one lock
 * (RedisBloom runs every command on Redis' main thread; the Bloomery server serialises commands per
 * key).
 */
public final class CountMinSketch implements Summary, Mergeable<CountMinSketch> {

  /** The largest counter value, 2^32 − 1; counters that would pass it stay here. */
  public static final long MAX_COUNTER = 0xFFFF_FFFFL;

  /** The largest number of cells (width × depth) one sketch can hold in a Java array. */
  public static final long MAX_CELLS = Integer.MAX_VALUE - 8;


  private static final String MERGE_OVERFLOW = "the weighted sum leaves the counter or count range";

  private final int width;
  private final int depth;
  private final int[] counters; // unsigned 32-bit, row-major
  private long count; // unsigned 64-bit, wraps like RedisBloom's size_t

  private CountMinSketch(int width, int depth, int[] counters, long count) {
    this.width = width;
    this.depth = depth;
    this.counters = counters;
    this.count = count;
  }

  static {
    KindAccess.register(CountMinSketch.class, new KindAccess.CountMin<CountMinSketch>() {
      @Override
      public CountMinSketch restore(long width, long depth, long count, KindAccess.CounterSource counters)
          throws IOException {
        return CountMinSketch.restore(width, depth, count, counters);
      }

      @Override
      public long counterAt(CountMinSketch sketch, long index) {
        return sketch.counterAt(index);
      }
    });
  }

  /**
   * {@code CMS.INITBYDIM width depth}: an empty sketch of {@code depth} rows of {@code width} counters.
   *
   * @throws IllegalArgumentException if width or depth is below 1 or width × depth overflows 64 bits
   * @throws FilterTooLargeException if there are more than {@link #MAX_CELLS} cells, or no heap for them
   */
  public static CountMinSketch initByDimensions(long width, long depth) {
    if (width < 1) {
      throw new IllegalArgumentException("width " + width + " is below 1");
    }
    if (depth < 1) {
      throw new IllegalArgumentException("depth " + depth + " is below 1");
    }
    return allocate(width, depth);
  }

  /**
   * {@code CMS.INITBYPROB error probability}: dimensions from {@link #dimensionsForProbability}.
   *
   * @throws IllegalArgumentException as {@link #dimensionsForProbability}
   * @throws FilterTooLargeException if there are more than {@link #MAX_CELLS} cells, or no heap for them
   */
  public static CountMinSketch initByProbability(double error, double probability) {
    long[] dimensions = dimensionsForProbability(error, probability);
    return allocate(dimensions[0], dimensions[1]);
  }

  /**
   * RedisBloom's {@code CMS_DimFromProb}: {@code {width, depth}} with width = ⌈2 / error⌉ (double)
   * and depth = ⌈log10f(probability) / log10f(0.5)⌉ (single precision, so probabilities within a
   * float ulp of 1 give depth 0, which RedisBloom refuses). For example (0.001, 0.01) → {2000, 7}.
   *
   * @throws IllegalArgumentException unless error ∈ (0, 1) and probability ∈ (0, 1), or if a dimension is below 1
   *     or width × depth overflows 64 bits
   */
  public static long[] dimensionsForProbability(double error, double probability) {
    if (!(error > 0 && error < 1)) {
      throw new IllegalArgumentException("error " + error + " is outside (0, 1)");
    }
    if (!(probability > 0 && probability < 1)) {
      throw new IllegalArgumentException("probability " + probability + " is outside (0, 1)");
    }
    double widthExact = Math.ceil(2 / error);
    // C converts to size_t and then reads it as long long: anything >= 2^63 is negative there.
    long width = widthExact >= 0x1p63 ? -1 : (long) widthExact;
    float numerator = (float) Math.log10((float) probability);
    float denominator = (float) Math.log10(0.5f);
    long depth = (long) Math.ceil(numerator / denominator);
    checkInitArguments(width, depth);
    return new long[] {width, depth};
  }

  private static void checkInitArguments(long width, long depth) {
    if (width < 1 || depth < 1 || width > Long.MAX_VALUE / depth) {
      throw new IllegalArgumentException(
          "dimensions " + width + " × " + depth + " need both at least 1 and a product below 2^63");
    }
  }

  private static CountMinSketch allocate(long width, long depth) {
    checkInitArguments(width, depth);
    return new CountMinSketch((int) width, (int) depth, allocateCells(width, depth), 0);
  }

  private static int[] allocateCells(long width, long depth) {
    if (width * depth > MAX_CELLS) {
      throw tooLarge(width, depth);
    }
    try {
      return new int[(int) (width * depth)];
    } catch (OutOfMemoryError e) {
      throw tooLarge(width, depth);
    }
  }

  private static FilterTooLargeException tooLarge(long width, long depth) {
    return new FilterTooLargeException("a count-min sketch of " + width + " × " + depth + " counters does not fit in "
        + "this heap (at most " + MAX_CELLS + " counters)");
  }

  /**
   * Rebuilds a sketch from its persisted state (used by the binary format).
   *
   * @param count the total count, an unsigned 64-bit value
   * @param counters {@code width × depth} counters in row-major order
   * @throws IllegalArgumentException if the dimensions are invalid or a counter is out of range
   */
  static CountMinSketch restore(long width, long depth, long count, KindAccess.CounterSource counters)
      throws IOException {
    if (width < 1) {
      throw new IllegalArgumentException("width " + width + " is below 1");
    }
    if (depth < 1) {
      throw new IllegalArgumentException("depth " + depth + " is below 1");
    }
    checkInitArguments(width, depth);
    int[] cells = allocateCells(width, depth);
    for (int i = 0; i < cells.length; i++) {
      long value = counters.nextCounter();
      if (value < 0 || value > MAX_COUNTER) {
        throw new IllegalArgumentException("counter " + i + " is " + value + ", expected [0, " + MAX_COUNTER + "]");
      }
      cells[i] = (int) value;
    }
    return new CountMinSketch((int) width, (int) depth, cells, count);
  }

  /** The kind recorded in the binary format. */
  public FilterKind kind() {
    return FilterKind.COUNT_MIN_SKETCH;
  }

  /** The number of counters per row. */
  public long width() {
    return width;
  }

  /** The number of rows (hash functions). */
  public long depth() {
    return depth;
  }

  /**
   * The total of all increments (CMS.INFO {@code count}), an unsigned 64-bit value that wraps like
   * RedisBloom's {@code size_t}; read it with {@link Long#toUnsignedString(long)} if it may exceed
   * 2^63 − 1 (RedisBloom replies it as a signed 64-bit integer).
   */
  public long insertedCount() {
    return count;
  }

  /** The counter at row-major {@code index} (row × width + column), unsigned. */
  long counterAt(long index) {
    Objects.checkIndex(index, (long) counters.length);
    return counters[(int) index] & MAX_COUNTER;
  }

  /**
   * {@code CMS.INCRBY key item increment}: adds {@code increment} to the item's counter in every row
   * (saturating at {@link #MAX_COUNTER}) and to {@link #insertedCount()}.
   *
   * @return the item's new estimate (the minimum over the rows); when it equals
   *     {@link #MAX_COUNTER} the server replies RedisBloom's overflow error for this item
   * @throws IllegalArgumentException if {@code increment < 0}
   */
  public long incrementBy(byte[] item, long increment) {
    Objects.requireNonNull(item, "item");
    if (increment < 0) {
      throw new IllegalArgumentException("increment " + increment + " is negative");
    }
    long minimum = -1; // as unsigned: SIZE_MAX
    for (int row = 0; row < depth; row++) {
      int cell = cell(item, row);
      long sum = ((counters[cell] & MAX_COUNTER) + increment) & MAX_COUNTER;
      if (sum < increment) {
        sum = MAX_COUNTER;
      }
      counters[cell] = (int) sum;
      minimum = Long.compareUnsigned(sum, minimum) < 0 ? sum : minimum;
    }
    count += increment;
    return minimum;
  }

  /** {@link #incrementBy(byte[], long)} of the UTF-8 bytes of {@code item}. */
  public long incrementBy(CharSequence item, long increment) {
    return incrementBy(Strings.utf8(item), increment);
  }

  /**
   * {@code CMS.QUERY key item}: the item's estimated count, the minimum of its counters; never below
   * the true count (see the class contract), possibly above it.
   */
  public long count(byte[] item) {
    Objects.requireNonNull(item, "item");
    long minimum = MAX_COUNTER;
    for (int row = 0; row < depth; row++) {
      minimum = Math.min(minimum, counters[cell(item, row)] & MAX_COUNTER);
    }
    return minimum;
  }

  /** {@link #count(byte[])} of the UTF-8 bytes of {@code item}. */
  public long count(CharSequence item) {
    return count(Strings.utf8(item));
  }

  private int cell(byte[] item, int row) {
    int hash = MurmurHash2.hash32(item, 0, item.length, row);
    return MurmurHash2.reduce(hash, width) + row * width;
  }

  /** Always {@link ProtocolId#REDISBLOOM_MURMUR2}: RedisBloom's MurmurHash2, row i seeded with i. */
  @Override
  public ProtocolId protocolId() {
    return ProtocolId.REDISBLOOM_MURMUR2;
  }

  /**
   * Whether {@link #mergeFrom} would accept {@code other}: the same width and depth, and not this sketch.
   */
  public boolean isCompatible(CountMinSketch other) {
    Objects.requireNonNull(other, "other");
    return other != this && other.width == width && other.depth == depth;
  }

  /**
   * Adds {@code other}'s counters and inserted count to this sketch's, as {@code mergeFrom} does on every
   * mergeable kind (use {@link #replaceWithWeightedSum} for {@code CMS.MERGE}'s overwrite). {@code other}
   * is unchanged.
   *
   * @throws IncompatibleFilterException if width or depth differ; nothing is changed
   * @throws IllegalArgumentException if {@code other} is this sketch
   * @throws ArithmeticException if a counter would pass 2^32 − 1 or the
   *     inserted count 2^63 − 1; nothing is changed
   */
  public void mergeFrom(CountMinSketch other) {
    Objects.requireNonNull(other, "other");
    if (other == this) {
      throw new IllegalArgumentException("cannot merge a sketch into itself");
    }
    if (other.width != width) {
      throw new IncompatibleFilterException("width", width, other.width);
    }
    if (other.depth != depth) {
      throw new IncompatibleFilterException("depth", depth, other.depth);
    }
    CountMinSketch[] both = {this, other};
    long[] ones = {1, 1};
    checkMergeOverflow(both, ones);
    for (int cell = 0; cell < counters.length; cell++) {
      counters[cell] = (int) ((counters[cell] & MAX_COUNTER) + (other.counters[cell] & MAX_COUNTER));
    }
    count += other.count;
  }

  /**
   * {@code CMS.MERGE dest numkeys src… [WEIGHTS w…]}: <b>replaces</b> this sketch's counters and
   * count with Σ wᵢ·sourceᵢ (RedisBloom overwrites the destination; it does not add to it). This
   * sketch may itself be one of the sources. Weights may be negative (to subtract a sketch that was
   * merged in before); the result must stay within the counter range, or nothing changes.
   *
   * @param weights one weight per source, or {@code null} for all 1
   * @throws IllegalArgumentException if there are no sources, weights and sources differ in number, or a source's
   *     width or depth differs from this sketch's
   * @throws ArithmeticException if a cell of the sum leaves
   *     [0, 2^32 − 1], the count leaves [0, 2^63 − 1] or an intermediate overflows 64 bits; this
   *     sketch is then unchanged
   */
  public void replaceWithWeightedSum(List<CountMinSketch> sources, long[] weights) {
    Objects.requireNonNull(sources, "sources");
    if (sources.isEmpty()) {
      throw new IllegalArgumentException("no sources to merge");
    }
    long[] w = weights;
    if (w == null) {
      w = new long[sources.size()];
      java.util.Arrays.fill(w, 1);
    } else if (w.length != sources.size()) {
      throw new IllegalArgumentException(w.length + " weights for " + sources.size() + " sources");
    }
    CountMinSketch[] src = sources.toArray(new CountMinSketch[0]);
    for (CountMinSketch s : src) {
      Objects.requireNonNull(s, "source");
      if (s.width != width || s.depth != depth) {
        throw new IllegalArgumentException(
            "a source is " + s.width + " × " + s.depth + ", this sketch " + width + " × " + depth);
      }
    }
    checkMergeOverflow(src, w);
    for (int cell = 0; cell < counters.length; cell++) {
      long sum = 0;
      for (int k = 0; k < src.length; k++) {
        sum += (src[k].counters[cell] & MAX_COUNTER) * w[k];
      }
      counters[cell] = (int) sum;
    }
    long total = 0;
    for (int k = 0; k < src.length; k++) {
      total += src[k].count * w[k];
    }
    count = total;
  }

  private void checkMergeOverflow(CountMinSketch[] src, long[] w) {
    try {
      for (int cell = 0; cell < counters.length; cell++) {
        long sum = 0;
        for (int k = 0; k < src.length; k++) {
          sum = Math.addExact(sum, Math.multiplyExact(src[k].counters[cell] & MAX_COUNTER, w[k]));
        }
        if (sum < 0 || sum > MAX_COUNTER) {
          throw new ArithmeticException(MERGE_OVERFLOW);
        }
      }
      long total = 0;
      for (int k = 0; k < src.length; k++) {
        total = Math.addExact(total, unsignedTimesSignedExact(src[k].count, w[k]));
      }
      if (total < 0) {
        throw new ArithmeticException(MERGE_OVERFLOW);
      }
    } catch (ArithmeticException e) {
      throw new ArithmeticException(MERGE_OVERFLOW);
    }
  }

  /** unsigned64 × signed64 if the exact product fits in a signed 64-bit value (GCC's __builtin_mul_overflow). */
  private static long unsignedTimesSignedExact(long unsigned, long signed) {
    if (unsigned >= 0) {
      return Math.multiplyExact(unsigned, signed);
    }
    BigInteger product = new BigInteger(Long.toUnsignedString(unsigned)).multiply(BigInteger.valueOf(signed));
    return product.longValueExact();
  }

  /** An independent copy. */
  public CountMinSketch copy() {
    return new CountMinSketch(width, depth, counters.clone(), count);
  }

  @Override
  public String toString() {
    return "CountMinSketch[width=" + width + ", depth=" + depth + ", count=" + Long.toUnsignedString(count) + "]";
  }
}
