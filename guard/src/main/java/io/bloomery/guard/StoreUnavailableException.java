package io.bloomery.guard;

/**
 * The exact store could not answer: connection refused, server stopped, timeout, disk error.
 *
 * <p>The outcome of the operation that raised it is <b>unknown</b>, never "absent" and never
 * "duplicate": an insert whose reply was lost may or may not have committed. Retrying the same
 * {@link Guard#addIfAbsent(byte[])} later is safe (the store's unique index decides); the retry
 * reports "duplicate" only if an earlier attempt did commit.
 */
public class StoreUnavailableException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public StoreUnavailableException(String message, Throwable cause) {
    super(message, cause);
  }
}
