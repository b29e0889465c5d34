package io.bloomery.filter;

/**
 * A membership filter sized for a number of items: every kind except the static binary fuse filter, which is built
 * once from its whole set.
 *
 * <p>What "full" means differs by kind, and {@link #capacity()} says it in the kind's own terms: a bit-array filter
 * (classic, blocked, split-block, counting, age-partitioned) keeps accepting items past its capacity while its
 * false-positive rate rises; a scaling filter (scalable, scaling blocked) grows a layer; a cuckoo filter grows a
 * sub-filter or refuses with {@link FilterFullException}. {@link #isNearCapacity()} is the one early warning for all
 * of them.
 */
public interface BoundedFilter extends MembershipFilter {

  /**
   * The number of items this filter is sized for at its false-positive rate, as its kind defines it (for a
   * scaling filter, the sum over its current layers). Never negative.
   */
  long capacity();

  /**
   * Whether the filter has reached 80% of {@link #capacity()} by the kind's own estimate of what it holds: time to
   * plan a bigger filter (or, for a scaling kind, a new layer is near).
   */
  boolean isNearCapacity();
}
