package io.bloomery.server.http;

/**
 * How much of the server one HTTP client may hold.
 *
 * @param maxClients connections served at once ({@code http-maxclients}); one more is answered 503 and closed
 * @param requestTimeoutMillis how long a request may take to arrive whole, counted from the connection's opening
 *     or from its first byte ({@code http-request-timeout}); past it the connection is closed
 * @param idleTimeoutMillis how long a kept-alive connection may wait between a response and the next request's
 *     first byte ({@code http-timeout}); past it the connection is closed
 */
public record HttpLimits(int maxClients, long requestTimeoutMillis, long idleTimeoutMillis) {
  /** The longest request line (method, target, version) accepted; a longer one is answered 414. */
  public static final int MAX_REQUEST_LINE_BYTES = 16 * 1024;
  /** The most header bytes accepted; more are answered 431. */
  public static final int MAX_HEADER_BYTES = 32 * 1024;
  /** The largest request body accepted (no endpoint reads one); a larger one is answered 413. */
  public static final int MAX_BODY_BYTES = 16 * 1024;
  /** How long a response may take to be taken by the client before the connection is closed. */
  public static final long WRITE_TIMEOUT_MILLIS = 60_000;

  public HttpLimits {
    if (maxClients < 1 || requestTimeoutMillis < 1 || idleTimeoutMillis < 1) {
      throw new IllegalArgumentException("HTTP limits must be positive: maxClients " + maxClients
          + ", requestTimeoutMillis " + requestTimeoutMillis + ", idleTimeoutMillis " + idleTimeoutMillis);
    }
  }
}
