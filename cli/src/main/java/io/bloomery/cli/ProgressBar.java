package io.bloomery.cli;

import java.io.PrintWriter;
import java.util.Locale;

/**
 * A one-line progress bar on stderr, redrawn in place at most five times a second and erased when closed (the
 * command's own report follows in its place); a no-op when stderr is not a terminal, so piped output and logs stay
 * clean. With a known total it shows the time left at the rate so far; bytes are shown in binary units. Cheap
 * enough to call once per item: the clock is read only every 4096 updates.
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
  private boolean closed;
  private int drawnWidth;

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
    String line = line(label, done, total, unit, Math.max(1e-9, (now - startNanos) / 1e9));
    err.print("\r" + line + " ".repeat(Math.max(0, drawnWidth - line.length())));
    err.flush();
    drawnWidth = line.length();
    drawn = true;
  }

  /**
   * The bar's text after {@code seconds}: the label, for a known total the bar, percentage, done/total and the time
   * left at the rate so far, then the rate. Bytes are shown in binary units (KiB, MiB).
   */
  static String line(String label, long done, long total, String unit, double seconds) {
    boolean bytes = unit.equals("bytes");
    double rate = done / seconds;
    StringBuilder line = new StringBuilder(label).append(' ');
    if (total > 0) {
      double fraction = Math.min(1.0, (double) done / total);
      int filled = (int) Math.round(fraction * WIDTH);
      line.append('[').append("#".repeat(filled)).append(".".repeat(WIDTH - filled)).append("] ");
      line.append(String.format(Locale.ROOT, "%3.0f%% ", fraction * 100));
      line.append(bytes ? Units.bytesShort(done) + "/" + Units.bytesShort(total)
          : Units.count(done) + "/" + Units.count(total) + " " + unit);
    } else {
      line.append(bytes ? Units.bytesShort(done) : Units.count(done) + " " + unit);
    }
    line.append("  ").append(bytes ? Units.bytesShort(Math.round(rate)) : Units.count(rate) + " " + unit).append("/s");
    if (total > 0 && done < total && rate > 0) {
      line.append("  ETA ").append(duration((total - done) / rate));
    }
    return line.toString();
  }

  /** Seconds as "45s", "3m05s" or "2h07m". */
  static String duration(double seconds) {
    long s = (long) Math.ceil(seconds);
    if (s < 60) {
      return s + "s";
    }
    if (s < 3600) {
      return String.format(Locale.ROOT, "%dm%02ds", s / 60, s % 60);
    }
    return String.format(Locale.ROOT, "%dh%02dm", s / 3600, s % 3600 / 60);
  }

  /** Erases the bar, if anything was drawn, so that what the command prints next starts a clean line. Idempotent. */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    if (enabled && drawn) {
      err.print("\r" + " ".repeat(drawnWidth) + "\r");
      err.flush();
    }
  }
}
