package io.bloomery.spark;

/**
 * A Bloomery job over a Dataset failed for a reason the caller can act on: a null item, a column of
 * the wrong type, a filter file of the wrong kind, a corrupt slice. The message is one line and says
 * what was expected and what was found; when the failure happened in a Spark task it is the task's
 * own message, not Spark's wrapper.
 */
public class BloomerySparkException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /** An exception with a one-line {@code message}. */
  public BloomerySparkException(String message) {
    super(message);
  }

  /** An exception with a one-line {@code message} and its cause. */
  public BloomerySparkException(String message, Throwable cause) {
    super(message, cause);
  }
}
