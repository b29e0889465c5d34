package io.bloomery.filter;

/**
 * Thrown by {@code add} when a filter cannot take another item: a non-scaling filter that reached its
 * capacity, a cuckoo filter whose buckets and sub-filter limit are exhausted, or a filter whose next layer
 * the heap cannot hold. The filter is unchanged and keeps answering queries.
 *
 * <p>For the RedisBloom-compatible kinds (scalable, cuckoo) the message is exactly RedisBloom's error reply,
 * so a RESP server can send it verbatim.
 */
public final class FilterFullException extends IllegalStateException {
  private static final long serialVersionUID = 1L;

  /** @param message why the item could not be added (for RedisBloom kinds, RedisBloom's reply text) */
  public FilterFullException(String message) {
    super(message);
  }
}
