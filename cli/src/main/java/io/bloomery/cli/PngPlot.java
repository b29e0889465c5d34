package io.bloomery.cli;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.geom.Ellipse2D;
import java.awt.geom.Line2D;
import java.awt.geom.Path2D;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.io.OutputStream;
import java.util.List;
import javax.imageio.ImageIO;

/**
 * Draws an {@link FprCurve} as a PNG through Java2D and {@link ImageIO}, with the same layout and colours
 * as {@link SvgPlot}. Runs headless ({@code java.awt.headless} is set before the first AWT class loads).
 */
final class PngPlot {
  private PngPlot() {}

  static void write(FprCurve curve, int width, int height, OutputStream out) throws IOException {
    System.setProperty("java.awt.headless", "true");
    PlotFrame frame = new PlotFrame(curve, width, height);
    BufferedImage image = new BufferedImage(width, height, BufferedImage.TYPE_INT_RGB);
    Graphics2D g = image.createGraphics();
    try {
      g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
      g.setRenderingHint(RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
      g.setColor(Color.WHITE);
      g.fillRect(0, 0, width, height);
      g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
      g.setColor(Color.decode("#333333"));
      g.drawString("false-positive rate vs items: " + curve.title(), PlotFrame.LEFT, 24);
      for (double decade : curve.decades()) {
        float y = (float) frame.y(decade);
        g.setColor(Color.decode("#dddddd"));
        g.draw(new Line2D.Double(frame.plotLeft(), y, frame.plotRight(), y));
        g.setColor(Color.decode("#333333"));
        String label = FprCurve.decadeLabel(decade);
        g.drawString(label, (float) frame.plotLeft() - 6 - g.getFontMetrics().stringWidth(label), y + 4);
      }
      g.draw(new Line2D.Double(frame.plotLeft(), frame.plotTop(), frame.plotLeft(), frame.plotBottom()));
      g.draw(new Line2D.Double(frame.plotLeft(), frame.plotBottom(), frame.plotRight(), frame.plotBottom()));
      g.drawString("0", (float) frame.plotLeft(), (float) frame.plotBottom() + 16);
      String right = Units.count(curve.maxItems()) + " items";
      g.drawString(right, (float) frame.plotRight() - g.getFontMetrics().stringWidth(right), (float) frame.plotBottom() + 16);
      Path2D.Double path = new Path2D.Double();
      List<double[]> points = frame.points();
      path.moveTo(points.get(0)[0], points.get(0)[1]);
      for (double[] point : points.subList(1, points.size())) {
        path.lineTo(point[0], point[1]);
      }
      g.setColor(Color.decode("#1f6feb"));
      g.setStroke(new BasicStroke(2f));
      g.draw(path);
      BasicStroke dashed = new BasicStroke(1f, BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER, 10f, new float[] {4f, 3f}, 0f);
      for (FprCurve.Mark mark : curve.marks()) {
        if (!frame.inside(mark.items())) {
          continue;
        }
        double x = frame.x(mark.items());
        if (mark.present()) {
          double y = frame.y(mark.rate());
          g.setColor(Color.BLACK);
          g.fill(new Ellipse2D.Double(x - 5, y - 5, 10, 10));
          g.drawString("now", (float) x + 8, (float) y - 8);
          continue;
        }
        g.setColor(Color.decode(SvgPlot.markColour(mark)));
        g.setStroke(dashed);
        g.draw(new Line2D.Double(x, frame.plotTop(), x, frame.plotBottom()));
        int labelWidth = g.getFontMetrics().stringWidth(mark.label());
        g.drawString(mark.label(), (float) (x - labelWidth / 2.0), (float) frame.plotBottom() + 32);
        String rate = Units.probability(mark.rate());
        g.drawString(rate, (float) (x - g.getFontMetrics().stringWidth(rate) / 2.0), (float) frame.plotBottom() + 46);
      }
    } finally {
      g.dispose();
    }
    if (!ImageIO.write(image, "png", out)) {
      throw new IOException("no PNG writer in this Java runtime");
    }
  }
}
