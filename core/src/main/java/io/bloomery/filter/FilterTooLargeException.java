package io.bloomery.filter;

/**
 * Thrown when a filter that was asked for, or described by bytes being loaded, cannot be allocated in this JVM's
 * heap: it is larger than the maximum heap, or the heap cannot hold it even after a full collection. Nothing was kept.
 * The parameters themselves are valid; a smaller filter or a larger heap would succeed.
 */
public final class FilterTooLargeException extends IllegalArgumentException {
  private static final long serialVersionUID = 1L;

  /** @param message what could not be allocated, with its size */
  public FilterTooLargeException(String message) {
    super(message);
  }
}
