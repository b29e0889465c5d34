package io.bloomery.server.persistence.load;

/**
 * A chunk or load that the loads refuse: the message is the error reply the client gets ({@code ERR ...}); the load
 * it concerns, if any, is abandoned and nothing of it stays.
 */
public final class LoadException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public LoadException(String reply) {
    super(reply, null, false, false);
  }

  /** The error reply, {@code ERR ...}. */
  public String reply() {
    return getMessage();
  }
}
