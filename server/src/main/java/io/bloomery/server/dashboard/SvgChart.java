package io.bloomery.server.dashboard;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * A small server-side SVG line chart: one series, a linear x axis, a linear or logarithmic y axis, dashed vertical
 * marks and labelled points. Drawn by hand so the page needs no script and nothing from the internet.
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
  private double yMin;
  private double yMax;
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
    this.yMin = yMin;
    this.yMax = yMax <= yMin ? yMin + (logY ? yMin * 9 : 1) : yMax;
  }

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
    for (double tick : ticks()) {
      double y = py(tick);
      svg.append(String.format(Locale.ROOT,
          "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/><text x=\"%d\" y=\"%.1f\""
              + " text-anchor=\"end\">%s</text>", LEFT, y, width - RIGHT, y, LEFT - 6, y + 4, tickLabel(tick)));
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

  private List<Double> ticks() {
    List<Double> ticks = new ArrayList<>();
    if (logY) {
      for (int e = (int) Math.floor(Math.log10(yMin)); e <= (int) Math.ceil(Math.log10(yMax)); e++) {
        double decade = Math.pow(10, e);
        if (decade >= yMin * 0.999 && decade <= yMax * 1.001) {
          ticks.add(decade);
        }
      }
    } else {
      for (int i = 0; i <= 4; i++) {
        ticks.add(yMin + (yMax - yMin) * i / 4);
      }
    }
    return ticks;
  }

  private String tickLabel(double tick) {
    if (logY) {
      int exponent = (int) Math.round(Math.log10(tick));
      return exponent == 0 ? "1" : "1e" + exponent;
    }
    return Html.number(tick);
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
