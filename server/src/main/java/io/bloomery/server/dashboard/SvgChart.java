package io.bloomery.server.dashboard;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * A small server-side SVG line chart: one series, a linear x axis, a linear or logarithmic y axis, dashed vertical
 * marks and labelled points. Drawn by hand so the page needs no script and nothing from the internet.
 *
 * <p>A linear y axis is widened to whole multiples of a round step (1, 2, 2.5 or 5 × 10^k) so that every tick is a
 * round number; a logarithmic one has a tick at each decade.
 */
final class SvgChart {
  private static final int LEFT = 64;
  private static final int RIGHT = 16;
  private static final int TOP = 24;
  private static final int BOTTOM = 48;

  private final String id;
  private final String title;
  private final int width;
  private final int height;
  private final double xMin;
  private final double xMax;
  private final boolean logY;
  private final double yMin;
  private final double yMax;
  private final List<Tick> ticks;
  private final List<double[]> series = new ArrayList<>();
  private final List<String> marks = new ArrayList<>();
  private String xLeftLabel = "";
  private String xRightLabel = "";

  SvgChart(String id, String title, int width, int height, double xMin, double xMax, double yMin, double yMax,
      boolean logY) {
    this.id = id;
    this.title = title;
    this.width = width;
    this.height = height;
    this.xMin = xMin;
    this.xMax = xMax <= xMin ? xMin + 1 : xMax;
    this.logY = logY;
    double top = yMax <= yMin ? yMin + (logY ? yMin * 9 : 1) : yMax;
    if (logY) {
      this.yMin = yMin;
      this.yMax = top;
      this.ticks = decadeTicks(yMin, top);
    } else {
      this.ticks = linearTicks(yMin, top);
      this.yMin = Math.min(yMin, ticks.get(0).value());
      this.yMax = Math.max(top, ticks.get(ticks.size() - 1).value());
    }
  }

  /** A y-axis tick: where it is and what it says. */
  record Tick(double value, String label) {}

  SvgChart xLabels(String left, String right) {
    this.xLeftLabel = left;
    this.xRightLabel = right;
    return this;
  }

  SvgChart point(double x, double y) {
    series.add(new double[] {x, y});
    return this;
  }

  /** A dashed vertical line at {@code x} with a label under the axis; {@code cssClass} names it in the DOM. */
  SvgChart verticalMark(double x, String label, String colour, String cssClass) {
    if (x < xMin || x > xMax) {
      return this;
    }
    double px = px(x);
    marks.add(String.format(Locale.ROOT,
        "<line class=\"%s\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"%s\" stroke-dasharray=\"4 3\"/>"
            + "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\" fill=\"%s\" font-size=\"11\">%s</text>",
        cssClass, px, TOP, px, height - BOTTOM, colour, px, height - BOTTOM + 26 + 12 * (marks.size() % 2), colour,
        Html.escape(label)));
    return this;
  }

  /** A dot at ({@code x}, {@code y}) with a label. */
  SvgChart dot(double x, double y, String label, String cssClass) {
    double px = px(Math.min(x, xMax));
    double py = py(y);
    marks.add(String.format(Locale.ROOT,
        "<circle class=\"%s\" cx=\"%.1f\" cy=\"%.1f\" r=\"5\" fill=\"#000\"/><text x=\"%.1f\" y=\"%.1f\""
            + " font-weight=\"bold\" font-size=\"12\">%s</text>", cssClass, px, py, px + 8, py - 8, Html.escape(label)));
    return this;
  }

  private double px(double x) {
    return LEFT + (x - xMin) / (xMax - xMin) * (width - LEFT - RIGHT);
  }

  private double fraction(double y) {
    if (logY) {
      if (!(y > 0)) {
        return 0;
      }
      return (Math.log10(y) - Math.log10(yMin)) / (Math.log10(yMax) - Math.log10(yMin));
    }
    return (y - yMin) / (yMax - yMin);
  }

  private double py(double y) {
    double f = Math.max(0, Math.min(1, fraction(y)));
    return TOP + (1 - f) * (height - TOP - BOTTOM);
  }

  String render() {
    StringBuilder svg = new StringBuilder();
    svg.append(String.format(Locale.ROOT,
        "<svg id=\"%s\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\""
            + " font-family=\"sans-serif\" font-size=\"11\" role=\"img\"><title>%s</title>"
            + "<rect width=\"%d\" height=\"%d\" fill=\"#fff\"/>",
        id, width, height, width, height, Html.escape(title), width, height));
    svg.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"16\" font-size=\"13\">%s</text>", LEFT, Html.escape(title)));
    for (Tick tick : ticks) {
      double y = py(tick.value());
      svg.append(String.format(Locale.ROOT,
          "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/><text x=\"%d\" y=\"%.1f\""
              + " text-anchor=\"end\">%s</text>", LEFT, y, width - RIGHT, y, LEFT - 6, y + 4, tick.label()));
    }
    svg.append(String.format(Locale.ROOT, "<path d=\"M%d %d V%d H%d\" fill=\"none\" stroke=\"#333\"/>", LEFT, TOP,
        height - BOTTOM, width - RIGHT));
    svg.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\">%s</text>", LEFT, height - BOTTOM + 14,
        Html.escape(xLeftLabel)));
    svg.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%s</text>", width - RIGHT,
        height - BOTTOM + 14, Html.escape(xRightLabel)));
    if (!series.isEmpty()) {
      StringBuilder path = new StringBuilder();
      for (double[] point : series) {
        path.append(path.isEmpty() ? "M" : " L")
            .append(String.format(Locale.ROOT, "%.1f %.1f", px(point[0]), py(point[1])));
      }
      svg.append("<path class=\"series\" d=\"").append(path)
          .append("\" fill=\"none\" stroke=\"#1f6feb\" stroke-width=\"2\"/>");
      if (series.size() == 1) {
        double[] only = series.get(0);
        svg.append(String.format(Locale.ROOT, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"#1f6feb\"/>", px(only[0]),
            py(only[1])));
      }
    }
    marks.forEach(svg::append);
    svg.append("</svg>");
    return svg.toString();
  }

  private static List<Tick> decadeTicks(double min, double max) {
    List<Tick> ticks = new ArrayList<>();
    for (int e = (int) Math.floor(Math.log10(min)); e <= (int) Math.ceil(Math.log10(max)); e++) {
      double decade = Math.pow(10, e);
      if (decade >= min * 0.999 && decade <= max * 1.001) {
        ticks.add(new Tick(decade, e == 0 ? "1" : "1e" + e));
      }
    }
    return ticks;
  }

  /**
   * Ticks for a linear axis over [{@code min}, {@code max}] ({@code min < max}, both finite): the step is the
   * smallest of 1, 2, 2.5 and 5 × 10^k that splits the range into at most four parts, and the ticks run over the
   * multiples of it from the one at or below {@code min} to the one at or above {@code max} (so data that is never
   * negative gets an axis from 0 or above). Each value and label is computed from its integer multiple, exactly.
   * Anything else (an empty, inverted or non-finite range) gets the ticks of 0..1.
   */
  static List<Tick> linearTicks(double min, double max) {
    if (!(Double.isFinite(min) && Double.isFinite(max) && max - min > 0 && Double.isFinite(max - min))) {
      return linearTicks(0, 1); // nothing sensible to fit: a plain unit axis rather than NaN ticks
    }
    double raw = (max - min) / 4;
    int exponent = (int) Math.floor(Math.log10(raw));
    double magnitude = Math.pow(10, exponent);
    // The step is tenths * 10^(exponent - 1): 1, 2, 2.5, 5 or 10 times 10^exponent.
    int tenths = 100;
    for (int candidate : new int[] {10, 20, 25, 50, 100}) {
      if (candidate / 10.0 * magnitude >= raw * (1 - 1e-12)) {
        tenths = candidate;
        break;
      }
    }
    BigDecimal step = BigDecimal.valueOf(tenths).scaleByPowerOfTen(exponent - 1);
    double stepValue = step.doubleValue();
    long first = (long) Math.floor(min / stepValue + 1e-9);
    long last = (long) Math.ceil(max / stepValue - 1e-9);
    List<Tick> ticks = new ArrayList<>();
    for (long k = first; k <= last; k++) {
      BigDecimal value = step.multiply(BigDecimal.valueOf(k));
      ticks.add(new Tick(value.doubleValue(), label(value)));
    }
    return ticks;
  }

  private static String label(BigDecimal value) {
    BigDecimal plain = value.signum() == 0 ? BigDecimal.ZERO : value.stripTrailingZeros();
    double magnitude = Math.abs(plain.doubleValue());
    if (magnitude != 0 && (magnitude >= 1e15 || magnitude < 1e-6)) {
      return plain.toString().replace("E+", "e").replace("E", "e");
    }
    if (plain.scale() <= 0) {
      return String.format(Locale.ROOT, "%,d", plain.longValueExact());
    }
    return plain.toPlainString();
  }

  /** The decade at or below {@code rate}, for a log axis; {@code fallback} when the rate is not positive. */
  static double decadeBelow(double rate, double fallback) {
    return rate > 0 ? Math.pow(10, Math.floor(Math.log10(rate))) : fallback;
  }

  /** The decade at or above {@code rate}, at most 1. */
  static double decadeAbove(double rate) {
    return rate > 0 ? Math.min(1, Math.pow(10, Math.ceil(Math.log10(rate)))) : 1;
  }
}
