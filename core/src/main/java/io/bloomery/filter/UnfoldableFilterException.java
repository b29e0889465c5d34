package io.bloomery.filter;

/**
 * Thrown by a {@code fold()} that cannot halve its filter without losing a member: the layout's positions do not
 * map onto the half-size filter's (a bit or block count that is not a power of two, a hash protocol whose bit
 * index is not the high bits of the hash), or the filter is already at its smallest size. The message says which.
 * The filter is unchanged.
 */
public final class UnfoldableFilterException extends IllegalStateException {
  private static final long serialVersionUID = 1L;

  /** @param message why the filter cannot be folded */
  public UnfoldableFilterException(String message) {
    super(message);
  }
}
