package io.bloomery.server.keyspace;

/**
 * The time age-partitioned filters see: the wall clock, except while a journaled command is replayed, when it is
 * the time recorded with the command. So {@code AGE.ADD} replays into the generation it was first added to.
 */
public final class CommandClock {
  private static final ThreadLocal<Long> PINNED = new ThreadLocal<>();

  private CommandClock() {}

  /** Unix milliseconds for the command running on this thread. */
  public static long now() {
    Long pinned = PINNED.get();
    return pinned != null ? pinned : System.currentTimeMillis();
  }

  /** Runs {@code body} with the clock pinned at {@code millis} on this thread. */
  public static <T> T at(long millis, java.util.function.Supplier<T> body) {
    Long before = PINNED.get();
    PINNED.set(millis);
    try {
      return body.get();
    } finally {
      if (before == null) {
        PINNED.remove();
      } else {
        PINNED.set(before);
      }
    }
  }
}
