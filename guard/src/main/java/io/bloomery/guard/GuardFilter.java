package io.bloomery.guard;

import io.bloomery.blocked.BlockedBloomFilter;
import io.bloomery.blocked.SplitBlockBloomFilter;
import io.bloomery.filter.BloomFilter;
import io.bloomery.filter.FilterKind;
import io.bloomery.filter.MembershipFilter;
import io.bloomery.filter.Summary;
import io.bloomery.blocked.BlockedBloomMath;
import io.bloomery.plan.FilterPlan;
import io.bloomery.plan.FilterPlanner;
import java.util.EnumSet;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;
import java.util.function.Function;

/**
 * The guard's filter: one of the Bloom kinds that take adds (classic, blocked, split-block), with the
 * figures the guard reports. Adds and lookups go straight to the kind's {@link MembershipFilter}
 * methods; the rest dispatches on the kind.
 *
 * <p>{@link #isNearCapacity()} runs after every insert, so it must be cheap: the classic kind's own
 * check reads its maintained bit count, but the blocked kinds' scan every word (O(m)), so for them it
 * compares the inserted count (adds that changed the filter, about the distinct items) with 80% of the
 * capacity instead.
 */
final class GuardFilter {
  /** The kinds a guard can use. */
  static final Set<FilterKind> KINDS =
      EnumSet.of(FilterKind.CLASSIC_BLOOM, FilterKind.BLOCKED_BLOOM, FilterKind.SPLIT_BLOCK_BLOOM);

  private final MembershipFilter filter;

  private GuardFilter(MembershipFilter filter) {
    this.filter = filter;
  }

  /**
   * An empty filter for {@code n} items at rate {@code fpp}: of {@code kind}, or, when {@code kind} is
   * null, of the kind and size {@link FilterPlanner#plan(long, double)} picks (blocked unless the rate
   * is so low that blocked needs more than 15% more memory than classic).
   */
  static GuardFilter create(FilterKind kind, long n, double fpp) {
    if (kind == null) {
      return new GuardFilter(FilterPlanner.plan(n, fpp).build());
    }
    return new GuardFilter(switch (kind) {
      case CLASSIC_BLOOM -> BloomFilter.create(n, fpp);
      case BLOCKED_BLOOM -> BlockedBloomFilter.create(n, fpp);
      case SPLIT_BLOCK_BLOOM -> SplitBlockBloomFilter.create(n, fpp);
      default -> throw unsupported(kind);
    });
  }

  /**
   * An empty filter from {@code plan} as a template for {@code n} items: {@code plan.build()} itself when {@code n}
   * is the plan's n ({@link #plannedItems}); otherwise a filter of the plan's kind with its k and its bits per key,
   * m = ⌈n · bitsPerKey⌉ rounded up to a whole word (classic) or block (blocked), built by the scaled plan. Equal
   * bits per key and k give the plan's model rate at n, so the guard keeps the plan's rate as the store grows.
   *
   * @throws IllegalArgumentException if the scaled filter would exceed its kind's largest size
   */
  static GuardFilter fromPlan(FilterPlan plan, long n) {
    if (n == plannedItems(plan)) {
      return new GuardFilter(plan.build());
    }
    long unit = plan.kind() == FilterKind.BLOCKED_BLOOM ? BlockedBloomMath.BLOCKED_BLOCK_BITS : Long.SIZE;
    double wanted = Math.ceil(n * plan.bitsPerKey() / unit) * unit;
    if (!(wanted <= BloomFilter.MAX_BITS)) {
      throw new IllegalArgumentException(String.format(Locale.ROOT,
          "the %s plan at %.2f bits per key needs %.0f bits for n=%d, over the largest filter of %d bits",
          plan.kind().kindName(), plan.bitsPerKey(), wanted, n, BloomFilter.MAX_BITS));
    }
    long bits = (long) wanted;
    return new GuardFilter(new FilterPlan(plan.kind(), bits, plan.hashes(), bits / 8, (double) bits / n,
        plan.modelFpp(), "scaled to n=" + n + " from: " + plan.reason()).build());
  }

  /** The n a plan was made for: its bits over its bits per key. */
  static long plannedItems(FilterPlan plan) {
    return Math.max(1, Math.round(plan.bits() / plan.bitsPerKey()));
  }

  /**
   * {@code plan}, if a guard can build its filters from it: a classic or blocked plan (binary fuse is static; it
   * takes no adds) with positive bits, bits per key and k, whole blocks for blocked, and a model rate in (0, 1).
   */
  static FilterPlan checkPlan(FilterPlan plan) {
    Objects.requireNonNull(plan, "plan");
    if (plan.kind() != FilterKind.CLASSIC_BLOOM && plan.kind() != FilterKind.BLOCKED_BLOOM) {
      throw new IllegalArgumentException("a guard builds from a classic or blocked plan (it adds to its filter), not a '"
          + plan.kind().kindName() + "' plan");
    }
    if (plan.bits() < 1 || !(plan.bitsPerKey() > 0 && Double.isFinite(plan.bitsPerKey())) || plan.hashes() < 1
        || !(plan.modelFpp() > 0 && plan.modelFpp() < 1)
        || (plan.kind() == FilterKind.BLOCKED_BLOOM && plan.bits() % BlockedBloomMath.BLOCKED_BLOCK_BITS != 0)) {
      throw new IllegalArgumentException("not a buildable " + plan.kind().kindName() + " plan: bits=" + plan.bits()
          + " bitsPerKey=" + plan.bitsPerKey() + " hashes=" + plan.hashes() + " modelFpp=" + plan.modelFpp());
    }
    return plan;
  }

  /** Wraps a filter read from a snapshot; null if it is not of a kind a guard can use. */
  static GuardFilter of(Summary filter) {
    return filter instanceof MembershipFilter m && KINDS.contains(filter.kind()) ? new GuardFilter(m) : null;
  }

  static IllegalArgumentException unsupported(FilterKind kind) {
    return new IllegalArgumentException("a guard's filter must be one of " + kindNames() + " (a Bloom kind that takes"
        + " adds), not '" + Objects.requireNonNull(kind, "kind").kindName() + "'");
  }

  static String kindNames() {
    return KINDS.stream().map(FilterKind::kindName).toList().toString();
  }

  MembershipFilter filter() {
    return filter;
  }

  FilterKind kind() {
    return filter.kind();
  }

  boolean add(byte[] item) {
    return filter.add(item);
  }

  boolean mightContain(byte[] item) {
    return filter.mightContain(item);
  }

  /** An independent copy (a rolling snapshot if adds run concurrently). */
  GuardFilter copy() {
    return new GuardFilter(pick(BloomFilter::copy, BlockedBloomFilter::copy, SplitBlockBloomFilter::copy));
  }

  long insertedCount() {
    return pick(BloomFilter::insertedCount, BlockedBloomFilter::insertedCount, SplitBlockBloomFilter::insertedCount);
  }

  long bitSize() {
    return pick(BloomFilter::bitSize, BlockedBloomFilter::bitSize, SplitBlockBloomFilter::bitSize);
  }

  int hashCount() {
    return pick(BloomFilter::hashCount, BlockedBloomFilter::hashCount, SplitBlockBloomFilter::hashCount);
  }

  long capacity() {
    return pick(BloomFilter::capacity, BlockedBloomFilter::capacity, SplitBlockBloomFilter::capacity);
  }

  /** The kind's estimate of its current FPR. <b>Cost:</b> O(m) for the blocked kinds (a scan of every block). */
  double estimatedFpp() {
    return pick(BloomFilter::estimatedFpp, BlockedBloomFilter::estimatedFpp, SplitBlockBloomFilter::estimatedFpp);
  }

  /** The share of set bits. <b>Cost:</b> O(m) for the blocked kinds. */
  double fillRatio() {
    return pick(BloomFilter::fillRatio, BlockedBloomFilter::fillRatio, SplitBlockBloomFilter::fillRatio);
  }

  /** The figure of this filter's kind (the kinds share no interface for them). */
  private <T> T pick(Function<BloomFilter, T> classic, Function<BlockedBloomFilter, T> blocked,
      Function<SplitBlockBloomFilter, T> splitBlock) {
    return switch (filter) {
      case BloomFilter f -> classic.apply(f);
      case BlockedBloomFilter f -> blocked.apply(f);
      case SplitBlockBloomFilter f -> splitBlock.apply(f);
      default -> throw unsupported(filter.kind());
    };
  }

  /** Whether the filter holds 80% of its capacity; cheap for every kind (see the class comment). */
  boolean isNearCapacity() {
    return filter instanceof BloomFilter f ? f.isNearCapacity() : insertedCount() >= 0.8 * capacity();
  }
}
