package io.bloomery.server.state;

import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.event.Level;

/**
 * One kind of event that clients can cause at will (protocol errors, wrong passwords, unexpected errors), logged at
 * most {@link #LINES_PER_WINDOW} times per {@link #WINDOW_SECONDS} seconds: further lines of the window are
 * dropped and counted, and the next line logged after the window says how many were ({@code suppressed K <kind>
 * lines since the last one logged}). Thread-safe.
 */
public final class RateLimitedLog {
  /** Lines of one kind logged per window. */
  public static final int LINES_PER_WINDOW = 10;
  /** The window's length. */
  public static final long WINDOW_SECONDS = 10;

  private final Logger log;
  private final Level level;
  private final String kind;
  private final LongSupplier nanoClock;
  private long windowStart;
  private int logged;
  private long suppressed;

  /**
   * @param kind the event's name in the summary line ("protocol error")
   * @param level the level both the lines and the summary are logged at
   */
  public RateLimitedLog(Logger log, Level level, String kind) {
    this(log, level, kind, System::nanoTime);
  }

  RateLimitedLog(Logger log, Level level, String kind, LongSupplier nanoClock) {
    this.log = log;
    this.level = level;
    this.kind = kind;
    this.nanoClock = nanoClock;
    this.windowStart = nanoClock.getAsLong();
  }

  /** Logs an SLF4J-formatted line, unless this window's lines are spent (then it only counts it). */
  public void log(String format, Object... args) {
    long dropped;
    synchronized (this) {
      long now = nanoClock.getAsLong();
      if (now - windowStart >= TimeUnit.SECONDS.toNanos(WINDOW_SECONDS)) {
        windowStart = now;
        logged = 0;
      }
      if (logged >= LINES_PER_WINDOW) {
        suppressed++;
        return;
      }
      logged++;
      dropped = suppressed;
      suppressed = 0;
    }
    if (!log.isEnabledForLevel(level)) {
      return;
    }
    if (dropped > 0) {
      log.atLevel(level).log("suppressed {} {} lines since the last one logged", dropped, kind);
    }
    log.atLevel(level).log(format, args);
  }
}
