package io.bloomery.server.dashboard;

import java.util.Locale;

/** Text for the dashboard's HTML: escaping and the number formats the page uses. */
final class Html {
  private Html() {}

  static String escape(String text) {
    StringBuilder escaped = new StringBuilder(text.length());
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      switch (c) {
        case '&' -> escaped.append("&amp;");
        case '<' -> escaped.append("&lt;");
        case '>' -> escaped.append("&gt;");
        case '"' -> escaped.append("&quot;");
        case '\'' -> escaped.append("&#39;");
        default -> escaped.append(c < 0x20 ? '\uFFFD' : c);
      }
    }
    return escaped.toString();
  }

  /** A count with thousands separators; "n/a" for -1. */
  static String count(long value) {
    return value < 0 ? "n/a" : String.format(Locale.ROOT, "%,d", value);
  }

  /** A rate as a percentage with three decimals, or in scientific notation below 0.01%; "n/a" for NaN. */
  static String rate(double p) {
    if (Double.isNaN(p)) {
      return "n/a";
    }
    if (p == 0 || p >= 1e-4) {
      return String.format(Locale.ROOT, "%.3f%%", p * 100);
    }
    return String.format(Locale.ROOT, "%.3e", p);
  }

  /** A share as a percentage with one decimal; "n/a" for NaN. */
  static String percent(double share) {
    return Double.isNaN(share) ? "n/a" : String.format(Locale.ROOT, "%.1f%%", share * 100);
  }

  /** A duration in milliseconds as "850 ms", "12.3 s", "4.0 min", "2.5 h" or "3.1 d"; "n/a" when negative. */
  static String duration(long millis) {
    if (millis < 0) {
      return "n/a";
    }
    if (millis < 1000) {
      return millis + " ms";
    }
    double seconds = millis / 1000.0;
    if (seconds < 60) {
      return String.format(Locale.ROOT, "%.1f s", seconds);
    }
    if (seconds < 3600) {
      return String.format(Locale.ROOT, "%.1f min", seconds / 60);
    }
    if (seconds < 86400) {
      return String.format(Locale.ROOT, "%.1f h", seconds / 3600);
    }
    return String.format(Locale.ROOT, "%.1f d", seconds / 86400);
  }

  static String number(double value) {
    if (value == Math.rint(value) && Math.abs(value) < 1e15) {
      return String.format(Locale.ROOT, "%,d", (long) value);
    }
    return String.format(Locale.ROOT, Math.abs(value) >= 100 ? "%.0f" : "%.2f", value);
  }
}
