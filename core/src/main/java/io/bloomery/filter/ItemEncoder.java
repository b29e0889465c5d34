package io.bloomery.filter;

import io.bloomery.internal.Items;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;

/**
 * How a {@code T} becomes the bytes of a filter item, in the spirit of Guava's {@code Funnel}: a filter of
 * {@code T}s ({@link MembershipFilter#typed(ItemEncoder)}) adds and queries {@code encode(t)}.
 *
 * <p>The bytes are what the filter hashes, so they are part of what a persisted filter means: an encoder must
 * give equal objects equal bytes on every run and every machine, and a filter must be read back with the
 * encoder it was built with. The built-in encoders are frozen:
 * <ul>
 *   <li>{@link #utf8()}: the UTF-8 bytes, without normalisation, as every {@code CharSequence} overload;</li>
 *   <li>{@link #bytes()}: the array itself;</li>
 *   <li>{@link #longs()}: 8 little-endian bytes, as every {@code long} overload;</li>
 *   <li>{@link #composite(List)}: each part's bytes preceded by their length as 4 little-endian bytes, so that
 *       ("ab", "c") and ("a", "bc") are different items.</li>
 * </ul>
 *
 * @param <T> the type of object encoded
 */
@FunctionalInterface
public interface ItemEncoder<T> {
  /**
   * The item bytes of {@code item}. The caller may keep the array; an encoder returns a fresh one (or one that
   * nobody changes).
   *
   * @throws NullPointerException if {@code item} is null
   */
  byte[] encode(T item);

  /**
   * This encoder applied to one field of an {@code S}: {@code ItemEncoder.utf8().on(User::email)}.
   *
   * @throws NullPointerException at encode time if the field is null
   */
  default <S> ItemEncoder<S> on(Function<? super S, ? extends T> field) {
    Objects.requireNonNull(field, "field");
    return item -> encode(Objects.requireNonNull(field.apply(Objects.requireNonNull(item, "item")), "field"));
  }

  /** UTF-8 without normalisation (two Unicode forms of "é" are two items). */
  static ItemEncoder<CharSequence> utf8() {
    return item -> Items.utf8(item, "item");
  }

  /** The bytes themselves (a copy, so that a later change to the caller's array changes nothing). */
  static ItemEncoder<byte[]> bytes() {
    return item -> Objects.requireNonNull(item, "item").clone();
  }

  /** The 8 little-endian bytes of the value. */
  static ItemEncoder<Long> longs() {
    return item -> Items.littleEndian(Objects.requireNonNull(item, "item"));
  }

  /**
   * Several encodings of one object, each as a 4-byte little-endian length then its bytes, concatenated in order:
   * {@code composite(List.of(utf8().on(User::tenant), longs().on(User::id)))}.
   *
   * @throws IllegalArgumentException if {@code parts} is empty
   */
  static <T> ItemEncoder<T> composite(List<? extends ItemEncoder<? super T>> parts) {
    List<ItemEncoder<? super T>> copy = List.copyOf(parts);
    if (copy.isEmpty()) {
      throw new IllegalArgumentException("a composite encoder needs at least one part");
    }
    return item -> {
      Objects.requireNonNull(item, "item");
      byte[][] encoded = new byte[copy.size()][];
      long length = 0;
      for (int i = 0; i < encoded.length; i++) {
        encoded[i] = Objects.requireNonNull(copy.get(i).encode(item), "part " + i + " of the composite encoder");
        length += Integer.BYTES + encoded[i].length;
      }
      if (length > Integer.MAX_VALUE - 8) {
        throw new IllegalArgumentException("composite item of " + length + " bytes does not fit in an array");
      }
      byte[] out = new byte[(int) length];
      int at = 0;
      for (byte[] part : encoded) {
        for (int b = 0; b < Integer.BYTES; b++) {
          out[at++] = (byte) (part.length >>> (8 * b));
        }
        System.arraycopy(part, 0, out, at, part.length);
        at += part.length;
      }
      return out;
    };
  }

  /** {@link #composite(List)} of these parts. */
  @SafeVarargs
  static <T> ItemEncoder<T> composite(ItemEncoder<? super T>... parts) {
    List<ItemEncoder<? super T>> list = new ArrayList<>(parts.length);
    for (ItemEncoder<? super T> part : parts) {
      list.add(part);
    }
    return composite(list);
  }
}
