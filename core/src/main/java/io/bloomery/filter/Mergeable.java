package io.bloomery.filter;

/**
 * A kind whose instances combine: {@link #mergeFrom} adds everything {@code other} holds to this one.
 *
 * <p>The same rules hold for every mergeable kind, so callers can rely on them without knowing the kind:
 *
 * <ul>
 *   <li>{@code isCompatible(null)} and {@code mergeFrom(null)} throw {@link NullPointerException} naming
 *       {@code other};
 *   <li>a filter is never compatible with itself: {@code isCompatible(this)} is {@code false} and
 *       {@code mergeFrom(this)} throws {@link IllegalArgumentException} (a self-merge would double counts);
 *   <li>{@code isCompatible(other)} is {@code true} exactly when {@code mergeFrom(other)} would succeed for
 *       parameter reasons; an incompatible merge throws {@link IncompatibleFilterException} naming the
 *       first differing parameter, and changes nothing;
 *   <li>{@code other} is never changed.
 * </ul>
 *
 * @param <F> the kind itself
 */
public interface Mergeable<F extends Mergeable<F>> {

  /**
   * Whether {@link #mergeFrom} would accept {@code other}: the same placement parameters, and not this
   * instance.
   *
   * @throws NullPointerException if {@code other} is null
   */
  boolean isCompatible(F other);

  /**
   * Adds everything {@code other} holds to this instance; {@code other} is unchanged.
   *
   * @throws NullPointerException if {@code other} is null
   * @throws IncompatibleFilterException if a placement parameter differs; nothing is changed
   * @throws IllegalArgumentException if {@code other} is this instance
   */
  void mergeFrom(F other);
}
