package io.bloomery.filter;

import io.bloomery.internal.Items;

/**
 * An approximate-membership filter over byte-string items.
 *
 * <p><b>The contract.</b> Answers are one-sided: for an intact filter, an item that was added is
 * never reported absent ({@code mightContain} returns {@code true}). A {@code true} answer means
 * only "maybe": go and check the authoritative store. The false-positive rate is the probability that
 * a <em>known non-member</em> is reported as maybe present; it is not the share of wrong answers
 * among all positives.
 *
 * <p><b>Items are bytes.</b> {@link CharSequence} overloads encode UTF-8 without normalisation (two
 * Unicode forms of "é" are two items); {@code long} overloads encode the value as 8 little-endian
 * bytes. The empty item is valid. {@code null} is rejected with a {@link NullPointerException} naming
 * the argument.
 *
 * <p><b>Errors.</b> Every kind reports a bad parameter (a size, rate or count out of range) with an {@link
 * IllegalArgumentException} or a subclass of it ({@link IncompatibleFilterException} for a merge, the RedisBloom
 * kinds' {@code RedisBloomException}); bytes that are not a filter raise {@code FilterFormatException}, an {@code
 * IOException}. A filter that cannot take another item throws {@link FilterFullException}. Kinds that combine implement {@link
 * Mergeable}, with one set of rules for {@code null}, self-merges and mismatches.
 */
public interface MembershipFilter extends Summary {

  /** The layout of this filter. */
  @Override
  FilterKind kind();

  /**
   * Adds an item.
   *
   * @return for the bit-array kinds (classic, blocked, split-block, scalable): {@code true} if at
   *     least one bit was newly set, {@code false} if the item was already reported as maybe present
   *     (a member, or a false positive). Kinds with multiplicities or generations say what they
   *     return: a counting filter increments its counters either way, a cuckoo filter always stores
   *     another copy and returns {@code true}, an age-partitioned filter reports whether its newest
   *     generation changed even if an older one already held the item.
   * @throws FilterFullException if the filter cannot take another item: a NONSCALING scalable filter at its
   *     capacity, a cuckoo filter with no free slot and no room to grow, or a filter whose next layer the heap
   *     cannot hold. Nothing changed, and the filter keeps answering. The bit-array kinds (classic, blocked,
   *     split-block, counting, age-partitioned) never throw this: past their capacity they keep accepting items
   *     and their false-positive rate rises (see their {@code isNearCapacity()})
   * @throws UnsupportedOperationException on an immutable kind (binary fuse, built once from its whole set) and on
   *     a read-only view of a serialized filter ({@code io.bloomery.format.MappedFilter}: a classic or blocked filter
   *     mapped from a file or wrapped around a buffer); nothing changed
   * @throws NullPointerException if {@code item} is null
   */
  boolean add(byte[] item);

  /**
   * Returns {@code false} if the item is definitely absent, {@code true} if it may be present.
   */
  boolean mightContain(byte[] item);

  /** Adds the UTF-8 encoding of {@code item}. */
  default boolean add(CharSequence item) {
    return add(Items.utf8(item, "item"));
  }

  /** Adds the 8 little-endian bytes of {@code item}. */
  default boolean add(long item) {
    return add(Items.littleEndian(item));
  }

  /** Queries the UTF-8 encoding of {@code item}. */
  default boolean mightContain(CharSequence item) {
    return mightContain(Items.utf8(item, "item"));
  }

  /** Queries the 8 little-endian bytes of {@code item}. */
  default boolean mightContain(long item) {
    return mightContain(Items.littleEndian(item));
  }
}
