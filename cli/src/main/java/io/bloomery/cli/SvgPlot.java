package io.bloomery.cli;

import java.util.Locale;

/**
 * Draws an {@link FprCurve} as a standalone SVG document: the curve, a grid line per rate decade, a
 * dashed vertical line per capacity mark (the 80% one, where "near capacity" starts, in amber; 100% in
 * red) and, for an existing filter, a dot at its present position. Written by hand, no library: the
 * document is small and its structure fixed.
 */
final class SvgPlot {
  private SvgPlot() {}

  static String render(FprCurve curve, int width, int height) {
    PlotFrame frame = new PlotFrame(curve, width, height);
    StringBuilder svg = new StringBuilder();
    svg.append("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    svg.append(String.format(Locale.ROOT,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\""
            + " font-family=\"sans-serif\" font-size=\"12\">\n", width, height, width, height));
    svg.append("<title>false-positive rate vs items: ").append(escape(curve.title())).append("</title>\n");
    svg.append(String.format(Locale.ROOT, "<rect width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n", width, height));
    svg.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"24\" font-size=\"14\">%s</text>\n", PlotFrame.LEFT,
        escape("false-positive rate vs items: " + curve.title())));
    for (double decade : curve.decades()) {
      double y = frame.y(decade);
      svg.append(String.format(Locale.ROOT,
          "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#dddddd\"/>\n",
          frame.plotLeft(), y, frame.plotRight(), y));
      svg.append(String.format(Locale.ROOT,
          "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n", frame.plotLeft() - 6, y + 4,
          FprCurve.decadeLabel(decade)));
    }
    svg.append(String.format(Locale.ROOT,
        "<path class=\"axes\" d=\"M%.1f %.1f V%.1f H%.1f\" fill=\"none\" stroke=\"#333333\"/>\n",
        frame.plotLeft(), frame.plotTop(), frame.plotBottom(), frame.plotRight()));
    svg.append(String.format(Locale.ROOT,
        "<text x=\"%.1f\" y=\"%.1f\">0</text>\n", frame.plotLeft(), frame.plotBottom() + 16));
    svg.append(String.format(Locale.ROOT,
        "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s items</text>\n", frame.plotRight(),
        frame.plotBottom() + 16, Units.count(curve.maxItems())));
    svg.append(String.format(Locale.ROOT,
        "<text x=\"16\" y=\"%.1f\" transform=\"rotate(-90 16 %.1f)\" text-anchor=\"middle\">false-positive rate</text>\n",
        (frame.plotTop() + frame.plotBottom()) / 2, (frame.plotTop() + frame.plotBottom()) / 2));
    StringBuilder path = new StringBuilder();
    for (double[] point : frame.points()) {
      path.append(path.isEmpty() ? "M" : " L").append(String.format(Locale.ROOT, "%.1f %.1f", point[0], point[1]));
    }
    svg.append("<path class=\"curve\" d=\"").append(path).append("\" fill=\"none\" stroke=\"#1f6feb\" stroke-width=\"2\"/>\n");
    for (FprCurve.Mark mark : curve.marks()) {
      if (!frame.inside(mark.items())) {
        continue;
      }
      double x = frame.x(mark.items());
      double y = frame.y(mark.rate());
      String tooltip = escape(mark.label() + ": " + Units.grouped(mark.items()) + " items, false-positive rate "
          + Units.probability(mark.rate()));
      if (mark.present()) {
        svg.append(String.format(Locale.ROOT,
            "<circle class=\"mark present\" data-items=\"%d\" cx=\"%.1f\" cy=\"%.1f\" r=\"5\" fill=\"#000000\"><title>%s</title></circle>\n",
            mark.items(), x, y, tooltip));
        svg.append(String.format(Locale.ROOT,
            "<text x=\"%.1f\" y=\"%.1f\" font-weight=\"bold\">now</text>\n", x + 8, y - 8));
        continue;
      }
      svg.append(String.format(Locale.ROOT,
          "<line class=\"mark\" data-percent=\"%s\" data-items=\"%d\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\""
              + " stroke=\"%s\" stroke-dasharray=\"4 3\"><title>%s</title></line>\n",
          mark.label(), mark.items(), x, frame.plotTop(), x, frame.plotBottom(), markColour(mark), tooltip));
      svg.append(String.format(Locale.ROOT,
          "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" fill=\"%s\">%s</text>\n", x, frame.plotBottom() + 32,
          markColour(mark), escape(mark.label())));
      svg.append(String.format(Locale.ROOT,
          "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"10\">%s</text>\n", x,
          frame.plotBottom() + 46, Units.probability(mark.rate())));
    }
    svg.append("</svg>\n");
    return svg.toString();
  }

  /** Amber at 80% (the near-capacity warning), red at 100% and beyond, grey below. */
  static String markColour(FprCurve.Mark mark) {
    return switch (mark.label()) {
      case "80%" -> "#d29922";
      case "100%", "150%", "200%" -> "#cf222e";
      default -> "#6e7781";
    };
  }

  /** Text for an XML element or attribute. */
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
        default -> escaped.append(c < 0x20 && c != '\t' && c != '\n' ? ' ' : c);
      }
    }
    return escaped.toString();
  }
}
