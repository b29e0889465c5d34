package io.bloomery.filter;

import io.bloomery.internal.Items;
import java.util.Objects;
import java.util.function.IntPredicate;

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
 * IllegalArgumentException} or a subclass of it ({@link IncompatibleFilterException} for a merge, {@link
 * FilterTooLargeException} for a filter the heap cannot hold, {@link DumpRejectedException} for a dump piece); bytes that are not a filter raise {@code FilterFormatException}, an {@code
 * IOException}. A filter that cannot take another item throws {@link FilterFullException}. Kinds that combine implement {@link
 * Mergeable}, with one set of rules for {@code null}, self-merges and mismatches.
 *
 * <p><b>Batches.</b> {@code addAll} and {@code mightContainAll} take {@code byte[][]}, {@code CharSequence[]} and
 * {@code long[]} on every kind and answer exactly as the single calls in order would. The defaults loop over the
 * single calls; the classic, blocked and split-block kinds override them where hashing a batch first lets the
 * cache misses of different keys overlap. Those kinds also take keys packed in one array ({@code addAll(buffer,
 * offsets, lengths, count)}) and a {@code parallelism} argument for {@code addAll(byte[][])} (all three) and {@code
 * mightContainAll(byte[][], boolean[])} (classic and blocked), with the same answers and counts as one thread.
 *
 * <p><b>Objects.</b> {@link #typed(ItemEncoder)} views a filter as one of {@code T}s, with an {@link ItemEncoder}
 * saying how a {@code T} becomes the item's bytes.
 */
public interface MembershipFilter extends Summary {

  /** The layout of this filter. */
  @Override
  FilterKind kind();

  /**
   * The number of items this filter counts as added, as its kind defines it (its javadoc says whether re-adding an
   * item or merging counts); never negative. For a static kind, the number of items it was built from.
   */
  long insertedCount();

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

  /**
   * Adds every item, as {@link #add(byte[])} on each in order.
   *
   * @return the number of adds that returned {@code true}
   * @throws NullPointerException if {@code items} or one of them is null (the items before it are added)
   */
  default int addAll(byte[][] items) {
    Objects.requireNonNull(items, "items");
    return countTrue(items.length, null, i -> add(items[i]));
  }

  /** Adds the UTF-8 encoding of every item, as {@link #addAll(byte[][])}. */
  default int addAll(CharSequence[] items) {
    Objects.requireNonNull(items, "items");
    return countTrue(items.length, null, i -> add(items[i]));
  }

  /** Adds the 8 little-endian bytes of every item, as {@link #addAll(byte[][])}. */
  default int addAll(long[] items) {
    Objects.requireNonNull(items, "items");
    return countTrue(items.length, null, i -> add(items[i]));
  }

  /**
   * Queries every item: {@code out[i]} is set to {@code mightContain(items[i])}; {@code out} beyond
   * {@code items.length} is left as it was.
   *
   * @return the number of {@code true} answers
   * @throws IllegalArgumentException if {@code out} is shorter than {@code items}
   * @throws NullPointerException if {@code items}, {@code out} or one of the items is null
   */
  default int mightContainAll(byte[][] items, boolean[] out) {
    Objects.requireNonNull(items, "items");
    checkOut(out, items.length);
    return countTrue(items.length, out, i -> mightContain(items[i]));
  }

  /** Queries the UTF-8 encoding of every item, as {@link #mightContainAll(byte[][], boolean[])}. */
  default int mightContainAll(CharSequence[] items, boolean[] out) {
    Objects.requireNonNull(items, "items");
    checkOut(out, items.length);
    return countTrue(items.length, out, i -> mightContain(items[i]));
  }

  /** Queries the 8 little-endian bytes of every item, as {@link #mightContainAll(byte[][], boolean[])}. */
  default int mightContainAll(long[] items, boolean[] out) {
    Objects.requireNonNull(items, "items");
    checkOut(out, items.length);
    return countTrue(items.length, out, i -> mightContain(items[i]));
  }

  /**
   * This filter seen as a filter of {@code T}s: each {@code T} is added and queried as the bytes {@code encoder}
   * gives it. The view holds no state of its own; it is as thread-safe as this filter.
   */
  default <T> TypedFilter<T> typed(ItemEncoder<? super T> encoder) {
    return new TypedFilter<>(this, encoder);
  }

  /** Runs {@code call} for 0 .. count − 1 in order, storing each answer in {@code out} if given; counts the trues. */
  private static int countTrue(int count, boolean[] out, IntPredicate call) {
    int trues = 0;
    for (int i = 0; i < count; i++) {
      boolean answer = call.test(i);
      if (out != null) {
        out[i] = answer;
      }
      trues += answer ? 1 : 0;
    }
    return trues;
  }

  private static void checkOut(boolean[] out, int needed) {
    Objects.requireNonNull(out, "out");
    if (out.length < needed) {
      throw new IllegalArgumentException("out has " + out.length + " elements, needs " + needed);
    }
  }
}
