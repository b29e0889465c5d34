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

  /**
   * A byte of client input as it may appear in a reply line or a log line: printable ASCII as itself, anything else
   * escaped ({@code \r}, {@code \n}, {@code \t}, {@code \xHH}), so a client cannot break the reply's framing or
   * write control sequences into the log.
   */
  public static String escape(byte b) {
    int c = b & 0xFF;
    return switch (c) {
      case '\r' -> "\\r";
      case '\n' -> "\\n";
      case '\t' -> "\\t";
      default -> c >= 0x20 && c < 0x7F ? String.valueOf((char) c)
          : String.format(java.util.Locale.ROOT, "\\x%02x", c);
    };
  }

  /** The error line sent before closing, as Redis words it ({@code ERR Protocol error: ...}). */
  public String reply() {
    return "ERR " + getMessage();
  }
}
