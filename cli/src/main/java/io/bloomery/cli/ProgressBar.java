package io.bloomery.cli;

import java.io.PrintWriter;
import java.util.Locale;

/**
 * A one-line progress bar on stderr, redrawn in place at most five times a second; a no-op when stderr
 * is not a terminal, so piped output and logs stay clean. Cheap enough to call once per item: the
 * clock is read only every 4096 updates.
 */
final class ProgressBar implements AutoCloseable {
  private static final int WIDTH = 30;
  private static final long REDRAW_NANOS = 200_000_000L;

  private final PrintWriter err;
  private final boolean enabled;
  private final String label;
  private final long total;
  private final String unit;
  private final long startNanos = System.nanoTime();
  private long lastDrawNanos;
  private long updates;
  private long done;
  private boolean drawn;

  /**
   * @param total the amount that means 100%, or a negative number when unknown (a counter is shown)
   * @param unit what is counted, for example "items" or "bytes"
   */
  ProgressBar(PrintWriter err, boolean enabled, String label, long total, String unit) {
    this.err = err;
    this.enabled = enabled;
    this.label = label;
    this.total = total;
    this.unit = unit;
  }

  /** Records that {@code done} units are complete. */
  void update(long done) {
    this.done = done;
    if (!enabled || (++updates & 4095) != 0) {
      return;
    }
    long now = System.nanoTime();
    if (now - lastDrawNanos >= REDRAW_NANOS) {
      lastDrawNanos = now;
      draw(now);
    }
  }

  private void draw(long now) {
    double seconds = Math.max(1e-9, (now - startNanos) / 1e9);
    String rate = Units.count(done / seconds) + " " + unit + "/s";
    StringBuilder line = new StringBuilder("\r").append(label).append(' ');
    if (total > 0) {
      double fraction = Math.min(1.0, (double) done / total);
      int filled = (int) Math.round(fraction * WIDTH);
      line.append('[').append("#".repeat(filled)).append(".".repeat(WIDTH - filled)).append("] ");
      line.append(String.format(Locale.ROOT, "%3.0f%% ", fraction * 100));
      line.append(Units.count(done)).append('/').append(Units.count(total)).append(' ').append(unit);
    } else {
      line.append(Units.count(done)).append(' ').append(unit);
    }
    line.append("  ").append(rate).append("   ");
    err.print(line);
    err.flush();
    drawn = true;
  }

  /** Draws the final state and ends the line, if anything was drawn. */
  @Override
  public void close() {
    if (enabled && drawn) {
      draw(System.nanoTime());
      err.println();
      err.flush();
    }
  }
}
