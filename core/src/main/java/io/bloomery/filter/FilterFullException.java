package io.bloomery.filter;

import java.util.Objects;

/**
 * Thrown by {@code add} when a filter cannot take another item; {@link #reason()} says why. The filter is unchanged
 * and keeps answering queries. The message says what was full, in Bloomery's words; a server that imitates another
 * product maps {@link #reason()} to that product's reply.
 */
public final class FilterFullException extends IllegalStateException {
  private static final long serialVersionUID = 1L;

  /** Why a filter could not take another item. */
  public enum Reason {
    /** A non-scaling filter holds the number of items it was created for. */
    AT_CAPACITY,
    /** A cuckoo filter found no free slot for the item's fingerprint and may not grow now. */
    NO_FREE_SLOT,
    /** A scaling filter may not add another layer or sub-filter: its limit is reached, or no layer can be sized. */
    GROWTH_LIMIT,
    /** The next layer or sub-filter does not fit in the heap. */
    OUT_OF_HEAP
  }

  private final Reason reason;

  /**
   * @param reason why the item could not be added
   * @param message what was full, for people
   */
  public FilterFullException(Reason reason, String message) {
    super(message);
    this.reason = Objects.requireNonNull(reason, "reason");
  }

  /** Why the item could not be added. */
  public Reason reason() {
    return reason;
  }
}
