package io.bloomery.filter;

import java.util.Objects;

/**
 * Thrown when a piece of a chunked dump (the header or a data chunk that a filter's scan produced, as
 * {@code io.bloomery.format.RedisBloomDump} reads them) cannot be loaded; {@link #reason()} says why. Nothing was
 * kept: a rejected header creates no filter, a rejected chunk writes nothing. The message says what was expected and
 * what was found; a server that imitates another product maps {@link #reason()} to that product's reply.
 */
public final class DumpRejectedException extends IllegalArgumentException {
  private static final long serialVersionUID = 1L;

  /** What was wrong with the piece. */
  public enum Reason {
    /** The header has the wrong length. */
    HEADER_LENGTH,
    /** The header describes no filter the kind can hold (inconsistent or out-of-range fields). */
    HEADER_INVALID,
    /** The header describes a filter that does not fit in the heap. */
    TOO_LARGE,
    /** The iterator or position is not one a scan hands out (zero, negative, or too small for the chunk). */
    POSITION,
    /** The position is the header's, sent to a filter that exists already. */
    HEADER_AGAIN,
    /** The chunk is empty, or no layer or sub-filter holds its offset. */
    NO_LAYER_AT_OFFSET,
    /** The chunk runs past the end of the layer or sub-filter that holds its offset. */
    PAST_LAYER_END
  }

  private final Reason reason;

  /**
   * @param reason what was wrong
   * @param message what was expected and what was found
   */
  public DumpRejectedException(Reason reason, String message) {
    super(message);
    this.reason = Objects.requireNonNull(reason, "reason");
  }

  /** What was wrong with the piece. */
  public Reason reason() {
    return reason;
  }
}
