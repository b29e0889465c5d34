package io.bloomery.server.command.bloom;

import io.bloomery.scalable.ScalableBloomFilter;
import io.bloomery.server.command.Args;
import io.bloomery.server.command.CommandException;
import java.util.Set;

/**
 * The valkey-bloom dialect of {@code BF.INSERT} and {@code BF.INFO}: its options {@code TIGHTENING}, {@code SEED} and
 * {@code VALIDATESCALETO} (matched by their whole names, so RedisBloom's first-letter matching of its own options
 * is untouched), with valkey-bloom's ranges and error texts. TIGHTENING is accepted at 0.5, the ratio every
 * Bloomery (and RedisBloom) scalable filter tightens by, and refused otherwise; SEED is refused, since valkey-bloom
 * seeds its own hash (SipHash-1-3), which Bloomery's filters do not use.
 *
 * <p>valkey-bloom's scale-out arithmetic, for its {@code BF.INSERT ... VALIDATESCALETO n} and
 * {@code BF.INFO key MAXSCALEDCAPACITY}: layer i of a scalable filter holds {@code capacity·expansion^i} items at
 * rate {@code error·tightening^i}, and the chain may grow while that rate stays above the smallest normal double and
 * the whole object stays within valkey-bloom's default per-object memory limit (128 MiB, its
 * {@code bf.bloom-memory-usage-limit}), counted as valkey-bloom counts it: the object and filter structures plus a
 * bitmap of {@code ceil(capacity·ln(rate) / (-8·ln²2))} bytes per layer. The figures are valkey-bloom's, so a
 * Valkey user's checks answer the same here; Bloomery's own layers are sized and limited by its own rules.
 */
final class ValkeyDialect {
  /** valkey-bloom's default {@code bf.bloom-memory-usage-limit}: the most bytes one Bloom object may take. */
  static final long MEMORY_LIMIT_PER_OBJECT = 128L * 1024 * 1024;
  /** {@code size_of::<BloomObject>()} in valkey-bloom: the object without its filter vector's slots. */
  private static final long OBJECT_BYTES = 48;
  /** {@code size_of::<Box<BloomFilter>>()}: one slot of the filter vector. */
  private static final long SLOT_BYTES = 8;
  /** {@code size_of::<BloomFilter>() + size_of::<bloomfilter::Bloom<[u8]>>()}: one layer without its bitmap. */
  private static final long FILTER_BYTES = 208;

  static final String EXCEEDS_MEMORY = "ERR provided VALIDATESCALETO causes bloom object to exceed memory limit";
  static final String FALSE_POSITIVE_ZERO = "ERR provided VALIDATESCALETO causes false positive to degrade to 0";
  static final String BAD_CAPACITY = "ERR bad capacity";

  static final String NONSCALING_AND_VALIDATESCALETO =
      "ERR cannot use NONSCALING and VALIDATESCALETO options together";
  static final String BAD_TIGHTENING = "ERR bad tightening ratio";
  static final String TIGHTENING_RANGE = "ERR (0 < tightening ratio range < 1)";
  static final String TIGHTENING_UNSUPPORTED =
      "ERR TIGHTENING other than 0.5 is not supported: Bloomery's scalable filters tighten each layer's rate by 0.5";
  static final String INVALID_SEED = "ERR invalid seed";
  static final String SEED_UNSUPPORTED =
      "ERR SEED is not supported: Bloomery's filters hash as RedisBloom's do, not with valkey-bloom's seeded SipHash";
  static final String CAPACITY_ZERO = "ERR (capacity should be larger than 0)";
  /** valkey-bloom's seeds are 32 bytes. */
  private static final int SEED_BYTES = 32;

  /** The dialect's BF.INSERT options, lower case, each followed by one value. */
  static final Set<String> NAMES = Set.of("tightening", "seed", "validatescaleto");

  private ValkeyDialect() {}

  /** Checks a TIGHTENING or SEED value ({@code option} lower case), with valkey-bloom's errors first. */
  static void check(String option, byte[] value) {
    if (option.equals("seed")) {
      throw new CommandException(value.length == SEED_BYTES ? SEED_UNSUPPORTED : INVALID_SEED);
    }
    Double ratio = Args.parseDouble(value);
    if (ratio == null) {
      throw new CommandException(BAD_TIGHTENING);
    }
    if (!(ratio > 0 && ratio < 1)) {
      throw new CommandException(TIGHTENING_RANGE);
    }
    if (ratio != ScalableBloomFilter.ERROR_TIGHTENING_RATIO) {
      throw new CommandException(TIGHTENING_UNSUPPORTED);
    }
  }

  /** A VALIDATESCALETO value: a positive 64-bit integer, with valkey-bloom's errors. */
  static long scaleTo(byte[] value) {
    Long n = Args.parseLong(value);
    if (n != null && n == 0) {
      throw new CommandException(CAPACITY_ZERO);
    }
    if (n == null || n < 0) {
      throw new CommandException(BAD_CAPACITY);
    }
    return n;
  }

  /**
   * The most items a scalable filter with these parameters reaches before its next layer would underflow its rate
   * or pass the memory limit (valkey-bloom's {@code MAXSCALEDCAPACITY}).
   */
  static long maxScaledCapacity(long capacity, double errorRate, double tightening, long expansion) {
    return scale(capacity, errorRate, -1, tightening, expansion);
  }

  /**
   * Checks that a scalable filter with these parameters can reach {@code scaleTo} items (valkey-bloom's
   * {@code VALIDATESCALETO}), with valkey-bloom's error when it cannot.
   */
  static void validateScaleTo(long capacity, double errorRate, long scaleTo, double tightening, long expansion) {
    scale(capacity, errorRate, scaleTo, tightening, expansion);
  }

  /** valkey-bloom's {@code calculate_max_scaled_capacity}: {@code scaleTo} -1 finds the maximum. */
  private static long scale(long capacity, double errorRate, long scaleTo, double tightening, long expansion) {
    long layerCapacity = capacity;
    long total = 0;
    long layers = 0;
    long filtersBytes = 0;
    while (total < scaleTo || scaleTo == -1) {
      double rate = errorRate * Math.pow(tightening, (int) layers);
      if (!(rate > Double.MIN_NORMAL)) {
        if (scaleTo == -1) {
          return total;
        }
        throw new CommandException(FALSE_POSITIVE_ZERO);
      }
      long layerBytes = FILTER_BYTES + bitmapBytes(layerCapacity, rate);
      long slots = layers == 0 ? 1 : Long.highestOneBit(Math.max(4, layers + 1) * 2 - 1);
      if (OBJECT_BYTES + slots * SLOT_BYTES + filtersBytes + layerBytes > MEMORY_LIMIT_PER_OBJECT) {
        if (scaleTo == -1) {
          return total;
        }
        throw new CommandException(EXCEEDS_MEMORY);
      }
      filtersBytes += layerBytes;
      total += layerCapacity;
      try {
        layerCapacity = Math.multiplyExact(layerCapacity, expansion);
      } catch (ArithmeticException e) {
        throw new CommandException(BAD_CAPACITY);
      }
      layers++;
    }
    return total;
  }

  /** The {@code bloomfilter} crate's bitmap size in bytes for {@code items} at {@code rate}. */
  private static long bitmapBytes(long items, double rate) {
    double ln2 = Math.log(2);
    return (long) Math.ceil(items * Math.log(rate) / (-8 * ln2 * ln2));
  }
}
