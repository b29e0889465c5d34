package io.bloomery.server.command.bloom;

import io.bloomery.blocked.BlockedBloomFilter;
import io.bloomery.blocked.BlockedBloomMath;
import io.bloomery.filter.BloomFilter;
import io.bloomery.filter.FilterFullException;
import io.bloomery.filter.FilterKind;
import io.bloomery.filter.MembershipFilter;
import io.bloomery.filter.UnfoldableFilterException;
import io.bloomery.plan.FilterPlan;
import io.bloomery.server.command.CommandException;
import io.bloomery.server.command.Invocation;
import io.bloomery.server.command.Memory;
import io.bloomery.server.command.RedisBloomErrors;
import io.bloomery.server.keyspace.ValueType;
import io.bloomery.sizing.BloomMath;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A fixed-size Bloom key for the {@code BF.*} commands: one of core's classic ({@link BloomFilter}) or blocked
 * ({@link BlockedBloomFilter}) filters, in the core file format, so a filter built by {@code bloomery build} or Spark
 * is served unchanged. It behaves as a RedisBloom {@code NONSCALING} filter: its capacity is the n its (m, k) are
 * sized for (the kind's {@code capacity()}, derived from m and k, all a file records), and once that many items are counted an add of a new
 * item answers {@code ERR non scaling filter is full}.
 */
final class FixedBloom {
  private FixedBloom() {}

  /** Bytes a fixed key holds beyond its bit array (object headers and fields). */
  private static final long OVERHEAD_BYTES = 48;
  /** The reason every fixed key's plan gives. */
  private static final String OPTIMAL = "BF.RESERVE ... NONSCALING LAYOUT: the layout's optimal (m, k) for the"
      + " requested capacity and error rate";
  /** The reason a FOLDABLE key's plan gives. */
  private static final String FOLDABLE = "BF.RESERVE ... NONSCALING LAYOUT ... FOLDABLE: the layout's optimal size for"
      + " the requested capacity and error rate rounded up to a power of two, and the optimal k for that size";

  /**
   * Plans a filter of {@code layout} ({@link FilterKind#CLASSIC_BLOOM} or {@link FilterKind#BLOCKED_BLOOM}) for
   * {@code capacity} items at {@code rate}: the optimal (m, k) of the layout. Its own capacity, derived from m and k
   * ({@link BloomMath#capacityForHashes} or {@link BlockedBloomMath#blockedCapacity}), is at least {@code capacity}
   * because k is the optimal hash count for {@code capacity} items in m bits, and above it only by the rounding of k;
   * adds are refused past that capacity. With {@code foldable} (BF.RESERVE's FOLDABLE), m (classic) or the block
   * count (blocked) is rounded up to a power of two and k planned for that size, so {@code BF.SHRINK} can fold the
   * filter later. Nothing is allocated; {@link FilterPlan#build()} makes the key's filter.
   */
  static FilterPlan plan(FilterKind layout, long capacity, double rate, boolean foldable) {
    String reason = foldable ? FOLDABLE : OPTIMAL;
    try {
      if (layout == FilterKind.CLASSIC_BLOOM) {
        long optimal = BloomMath.optimalBits(capacity, rate);
        long bits = foldable ? BloomMath.foldableBits(optimal) : optimal;
        int k = BloomMath.optimalHashes(capacity, bits);
        if (bits > BloomFilter.MAX_BITS) {
          throw new CommandException(RedisBloomErrors.BF_CAPACITY_RANGE);
        }
        return new FilterPlan(layout, bits, k, (bits + 63) / 64 * 8, bits / (double) capacity,
            BloomMath.falsePositiveRate(bits, k, capacity), reason);
      }
      long optimalBlocks = BlockedBloomMath.blockedBlocks(capacity, rate);
      long blocks = foldable ? BlockedBloomMath.foldableBlocks(optimalBlocks) : optimalBlocks;
      int k = BlockedBloomMath.optimalBlockedHashes(capacity, blocks);
      if (blocks > BlockedBloomFilter.MAX_BLOCKS) {
        throw new CommandException(RedisBloomErrors.BF_CAPACITY_RANGE);
      }
      long bits = blocks * BlockedBloomMath.BLOCKED_BLOCK_BITS;
      return new FilterPlan(layout, bits, k, bits / 8, bits / (double) capacity,
          BlockedBloomMath.blockedFalsePositiveRate(capacity, blocks, BlockedBloomMath.BLOCKED_BLOCK_BITS, k), reason);
    } catch (IllegalArgumentException e) {
      throw new CommandException(RedisBloomErrors.BF_CAPACITY_RANGE);
    }
  }

  /** What a key of {@code plan} holds on the heap, for admission against {@code maxmemory}. */
  static long bytes(FilterPlan plan) {
    return plan.bitmapBytes() + OVERHEAD_BYTES;
  }

  /** The largest single array the key allocates: classic storage comes in 1 GiB segments. */
  static long largestArray(FilterPlan plan) {
    return plan.kind() == FilterKind.CLASSIC_BLOOM ? Math.min(bytes(plan), 1L << 30) : bytes(plan);
  }

  /**
   * Folds a fixed filter in half ({@link BloomFilter#foldWhile}, {@link BlockedBloomFilter#foldWhile}) as long as
   * the folded filter's own estimated rate ({@code estimatedFpp()}, from its set bits) is at most {@code target}
   * (null: the filter's {@link #designRate}), at most {@code limit} times. Returns the filter after the folds,
   * {@code f} itself if none was made.
   *
   * @throws CommandException if {@code f} cannot be folded at all (its layout, protocol or size), with the reason
   */
  static MembershipFilter shrink(Invocation inv, MembershipFilter f, Double target, long limit) {
    if (!(f instanceof BloomFilter) && !(f instanceof BlockedBloomFilter)) {
      throw new CommandException("ERR filter cannot be folded: a " + ValueType.of(f).label() + " Bloom key cannot be"
          + " folded; only fixed CLASSIC and BLOCKED filters whose size is a power of two can"
          + " (BF.RESERVE ... NONSCALING LAYOUT CLASSIC|BLOCKED FOLDABLE)");
    }
    double bound = target != null ? target : designRate(f);
    if (limit > 0 && (f instanceof BloomFilter c ? c.isFoldable() : ((BlockedBloomFilter) f).isFoldable())) {
      // the first fold is the largest new filter; each later one replaces its half-size predecessor
      Memory.admit(inv, bitSize(f) / 16);
    }
    try {
      return f instanceof BloomFilter c ? c.foldWhile(bound, limit) : ((BlockedBloomFilter) f).foldWhile(bound, limit);
    } catch (UnfoldableFilterException e) {
      throw new CommandException("ERR filter cannot be folded: " + e.getMessage());
    }
  }

  /** The number of folds between a filter of {@code before} and one of {@code after} bits. */
  static long foldsBetween(MembershipFilter before, MembershipFilter after) {
    return Long.numberOfTrailingZeros(bitSize(before)) - Long.numberOfTrailingZeros(bitSize(after));
  }

  /** The filter's design rate: its model rate when holding its capacity. */
  private static double designRate(Object f) {
    if (f instanceof BloomFilter c) {
      return BloomMath.designRate(c.bitSize(), c.hashCount());
    }
    BlockedBloomFilter b = (BlockedBloomFilter) f;
    return BlockedBloomMath.blockedDesignRate(b.blockCount(), b.hashCount());
  }

  private static long bitSize(MembershipFilter f) {
    return f instanceof BloomFilter c ? c.bitSize() : ((BlockedBloomFilter) f).bitSize();
  }

  static long capacity(Object f) {
    return ValueType.CLASSIC_BLOOM.holds(f) ? ((BloomFilter) f).capacity() : ((BlockedBloomFilter) f).capacity();
  }

  static long inserted(Object f) {
    return ValueType.CLASSIC_BLOOM.holds(f) ? ((BloomFilter) f).insertedCount()
        : ((BlockedBloomFilter) f).insertedCount();
  }

  /** Adds like a RedisBloom NONSCALING filter: a present item answers false, a new one past capacity is refused. */
  static boolean add(MembershipFilter f, byte[] item) {
    if (f.mightContain(item)) {
      return false;
    }
    if (inserted(f) >= capacity(f)) {
      throw new FilterFullException(FilterFullException.Reason.AT_CAPACITY,
          "fixed-layout filter is full: it holds its capacity of " + capacity(f) + " items");
    }
    return f.add(item);
  }

  /** {@code BF.INFO}'s five fields for a fixed filter: one filter, and a null Expansion rate as RedisBloom shows for NONSCALING. */
  static Map<String, Long> info(Object f) {
    Map<String, Long> m = new LinkedHashMap<>();
    m.put("Capacity", capacity(f));
    m.put("Size", ValueType.of(f).memoryUsage(f));
    m.put("Number of filters", 1L);
    m.put("Number of items inserted", inserted(f));
    m.put("Expansion rate", null);
    return m;
  }

  /** {@code BF.DEBUG}'s lines for a fixed filter. */
  static String debug(Object f) {
    if (ValueType.CLASSIC_BLOOM.holds(f)) {
      BloomFilter c = (BloomFilter) f;
      return "layout:classic bits:" + c.bitSize() + " hashes:" + c.hashCount() + " size:" + c.insertedCount()
          + " capacity:" + c.capacity() + " protocol:" + c.protocolId().protocolName();
    }
    BlockedBloomFilter b = (BlockedBloomFilter) f;
    return "layout:blocked blocks:" + b.blockCount() + " hashes:" + b.hashCount() + " size:" + b.insertedCount()
        + " capacity:" + b.capacity();
  }
}
