package io.bloomery.cli;

import java.util.Locale;

/** Human-readable numbers for text output: always {@link Locale#ROOT}, binary units for bytes. */
final class Units {
  private Units() {}

  /** 1234567 → "1.23M", 110000000 → "110M" (no trailing zeros); below 10,000 exact. */
  static String count(double value) {
    double abs = Math.abs(value);
    if (abs < 10_000) {
      return String.format(Locale.ROOT, value == Math.rint(value) ? "%.0f" : "%.1f", value);
    }
    if (abs < 1e6) {
      return trimmed(String.format(Locale.ROOT, "%.1f", value / 1e3)) + "k";
    }
    if (abs < 1e9) {
      return trimmed(String.format(Locale.ROOT, "%.2f", value / 1e6)) + "M";
    }
    return trimmed(String.format(Locale.ROOT, "%.2f", value / 1e9)) + "G";
  }

  /** A decimal without trailing zeros after its point: "110.00" → "110", "2.50" → "2.5". */
  private static String trimmed(String decimal) {
    return decimal.indexOf('.') < 0 ? decimal : decimal.replaceAll("\\.?0+$", "");
  }

  /** 12_582_912 → "12.0 MiB (12,582,912 bytes)"; 1 → "1 byte". */
  static String bytes(long bytes) {
    String exact = count(bytes, "byte", "bytes");
    if (bytes < 1024) {
      return exact;
    }
    String[] units = {"KiB", "MiB", "GiB", "TiB", "PiB"};
    double value = bytes;
    int unit = -1;
    while (value >= 1024 && unit < units.length - 1) {
      value /= 1024;
      unit++;
    }
    return String.format(Locale.ROOT, "%.1f %s (%s)", value, units[unit], exact);
  }

  /** 12_582_912 → "12.0 MiB": for figures inside a sentence. */
  static String bytesShort(long bytes) {
    String full = bytes(bytes);
    int paren = full.indexOf(" (");
    return paren < 0 ? full : full.substring(0, paren);
  }

  /** A probability in a readable form: 0.01 → "1.000%", 1.2e-7 → "1.200e-07". */
  static String probability(double p) {
    if (Double.isNaN(p)) {
      return "n/a";
    }
    if (p == 0 || p >= 1e-4) {
      return String.format(Locale.ROOT, "%.3f%%", p * 100);
    }
    return String.format(Locale.ROOT, "%.3e", p);
  }

  /** A grouped count with its noun in the right number: "1 item", "0 items", "1,234 items". */
  static String count(long value, String singular, String plural) {
    return grouped(value) + " " + noun(value, singular, plural);
  }

  /** The noun (or noun and verb, "item was" / "items were") in the number {@code value} calls for. */
  static String noun(long value, String singular, String plural) {
    return value == 1 ? singular : plural;
  }

  /** Thousands separators, locale-independent. */
  static String grouped(long value) {
    return String.format(Locale.ROOT, "%,d", value);
  }
}
