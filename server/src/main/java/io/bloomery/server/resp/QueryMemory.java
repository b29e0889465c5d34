package io.bloomery.server.resp;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The heap that commands still being read may hold across all connections ({@code maxmemory-clients}): each
 * {@link RespDecoder} reserves here before it allocates for a command that arrives in pieces, and gives it back when
 * the command is complete or the connection fails or closes. Thread-safe; shared by every event loop.
 */
public final class QueryMemory {
  /** No total limit ({@code maxmemory-clients 0}). */
  public static final long UNLIMITED = Long.MAX_VALUE;

  private final long limit;
  private final AtomicLong held = new AtomicLong();

  /** @param limit bytes all connections' pending commands may hold together ({@link #UNLIMITED} for no limit) */
  public QueryMemory(long limit) {
    if (limit < 1) {
      throw new IllegalArgumentException("maxmemory-clients must be positive, not " + limit);
    }
    this.limit = limit;
  }

  /** A budget without a total limit (the per-connection limit still applies). */
  public static QueryMemory unlimited() {
    return new QueryMemory(UNLIMITED);
  }

  /** Takes {@code bytes} from the budget; {@code false}, with nothing taken, if that would pass the limit. */
  boolean reserve(long bytes) {
    long now;
    do {
      now = held.get();
      if (bytes > limit - now) {
        return false;
      }
    } while (!held.compareAndSet(now, now + bytes));
    return true;
  }

  /** Gives back bytes {@link #reserve} took. */
  void release(long bytes) {
    held.addAndGet(-bytes);
  }

  /** Bytes held now. */
  public long held() {
    return held.get();
  }

  /** The total limit ({@link #UNLIMITED} for none). */
  public long limit() {
    return limit;
  }
}
