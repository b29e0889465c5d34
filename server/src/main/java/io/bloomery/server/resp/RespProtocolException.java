package io.bloomery.server.resp;

/**
 * A request stream that breaks RESP or a protocol limit. The connection answers {@link #reply()} and is closed; no
 * other connection is affected.
 */
public final class RespProtocolException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  RespProtocolException(String what) {
    super("Protocol error: " + what);
  }

  /** The error line sent before closing, as Redis words it ({@code ERR Protocol error: ...}). */
  public String reply() {
    return "ERR " + getMessage();
  }
}
