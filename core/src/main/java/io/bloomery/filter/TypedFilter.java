package io.bloomery.filter;

import java.util.Collection;
import java.util.List;
import java.util.Objects;

/**
 * A {@link MembershipFilter} seen as a filter of {@code T}s ({@link MembershipFilter#typed(ItemEncoder)}): every
 * call encodes its objects with the {@link ItemEncoder} and passes the bytes to the filter, so the answers, the
 * errors and the thread-safety are the filter's own, and the filter itself can still be saved, merged and read
 * with {@code FilterFormat}. Batches go through the filter's batch calls ({@link MembershipFilter#addAll(byte[][])}),
 * which the fast kinds override.
 *
 * @param <T> the type of object added and queried
 */
public final class TypedFilter<T> {
  private final MembershipFilter filter;
  private final ItemEncoder<? super T> encoder;

  TypedFilter(MembershipFilter filter, ItemEncoder<? super T> encoder) {
    this.filter = Objects.requireNonNull(filter, "filter");
    this.encoder = Objects.requireNonNull(encoder, "encoder");
  }

  /** The filter behind this view. */
  public MembershipFilter filter() {
    return filter;
  }

  /** Adds {@code item}'s bytes; returns what {@link MembershipFilter#add(byte[])} returns. */
  public boolean add(T item) {
    return filter.add(encode(item));
  }

  /** Whether {@code item}'s bytes might be present. */
  public boolean mightContain(T item) {
    return filter.mightContain(encode(item));
  }

  /**
   * Adds every item, encoded first and then added as one batch.
   *
   * @return the number of adds that returned {@code true}
   * @throws NullPointerException if {@code items} or one of them is null (nothing is added then)
   */
  public int addAll(Collection<? extends T> items) {
    return filter.addAll(encodeAll(items));
  }

  /**
   * Queries every item: {@code out[i]} is the answer for {@code items.get(i)}.
   *
   * @return the number of {@code true} answers
   * @throws IllegalArgumentException if {@code out} is shorter than {@code items}
   */
  public int mightContainAll(List<? extends T> items, boolean[] out) {
    return filter.mightContainAll(encodeAll(items), out);
  }

  private byte[] encode(T item) {
    return encoder.encode(Objects.requireNonNull(item, "item"));
  }

  private byte[][] encodeAll(Collection<? extends T> items) {
    Objects.requireNonNull(items, "items");
    byte[][] encoded = new byte[items.size()][];
    int i = 0;
    for (T item : items) {
      encoded[i++] = encode(item);
    }
    return encoded;
  }

  @Override
  public String toString() {
    return "TypedFilter{" + filter + "}";
  }
}
