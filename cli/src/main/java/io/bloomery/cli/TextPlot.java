package io.bloomery.cli;

import java.util.Arrays;
import java.util.Locale;

/**
 * Draws an {@link FprCurve} as text: the curve in Unicode braille (each character holds a 2 x 4 grid of
 * dots, so a 60-column plot has 120 points across), a logarithmic rate axis labelled by decades, the
 * capacity marks as ticks on the items axis, and a legend with each mark's exact figures under one heading. No colour and
 * no escape sequences: the same text on a terminal, in a file or in a pipe.
 */
final class TextPlot {
  static final int DEFAULT_WIDTH = 60;
  static final int DEFAULT_HEIGHT = 14;
  static final int MIN_WIDTH = 20;
  static final int MIN_HEIGHT = 4;
  static final int MAX_SIZE = 1000;

  private static final int LABEL_WIDTH = 5;
  private static final char BRAILLE_BLANK = '\u2800';
  /** Braille dot bits by (column, row) within a character: rows 0-2 are dots 1-3 / 4-6, row 3 dots 7 / 8. */
  private static final int[][] DOT_BITS = {{0x01, 0x02, 0x04, 0x40}, {0x08, 0x10, 0x20, 0x80}};

  private TextPlot() {}

  /**
   * The plot, {@code width} characters of curve by {@code height} lines, followed by the axis, its labels
   * and the legend; every line ends with {@code \n}.
   */
  static String render(FprCurve curve, int width, int height) {
    int dotsAcross = width * 2;
    int dotsDown = height * 4;
    int[][] cells = new int[height][width];
    int previousRow = -1;
    for (int x = 0; x < dotsAcross; x++) {
      long items = Math.round(curve.maxItems() * (double) x / (dotsAcross - 1));
      int row = dotRow(curve, curve.rate(items), dotsDown);
      int from = previousRow < 0 ? row : Math.min(row, previousRow + (row > previousRow ? 1 : 0));
      int to = previousRow < 0 ? row : Math.max(row, previousRow - (row < previousRow ? 1 : 0));
      for (int y = Math.min(from, to); y <= Math.max(from, to); y++) {
        cells[y / 4][x / 2] |= DOT_BITS[x % 2][y % 4];
      }
      previousRow = row;
    }
    String[] labels = new String[height];
    for (double decade : curve.decades()) {
      labels[dotRow(curve, decade, dotsDown) / 4] = FprCurve.decadeLabel(decade);
    }
    StringBuilder text = new StringBuilder();
    text.append("false-positive rate vs items: ").append(curve.title()).append('\n');
    for (int line = 0; line < height; line++) {
      String label = labels[line];
      text.append(String.format(Locale.ROOT, "%" + LABEL_WIDTH + "s ", label == null ? "" : label));
      text.append(label == null ? '│' : '┤');
      for (int column = 0; column < width; column++) {
        text.append((char) (BRAILLE_BLANK + cells[line][column]));
      }
      text.append('\n');
    }
    char[] axis = ("└" + "─".repeat(width)).toCharArray();
    char[] ticks = new char[width + 1];
    Arrays.fill(ticks, ' ');
    for (FprCurve.Mark mark : curve.marks()) {
      int column = column(curve, mark.items(), width);
      if (column <= width) {
        if (mark.present()) {
          ticks[column] = '▲';
        } else {
          axis[column] = '┬';
        }
      }
    }
    String indent = " ".repeat(LABEL_WIDTH + 1);
    text.append(indent).append(axis).append('\n');
    if (curve.present() >= 0) {
      text.append((indent + new String(ticks)).stripTrailing()).append('\n');
    }
    String right = Units.count(curve.maxItems()) + " items";
    text.append(indent).append('0').append(" ".repeat(Math.max(1, width - right.length()))).append(right).append('\n');
    text.append("  ┬ marks on the items axis:\n");
    for (FprCurve.Mark mark : curve.marks()) {
      String where = mark.present() ? "  (▲)" : column(curve, mark.items(), width) <= width ? "" : "  (beyond the axis)";
      text.append(String.format(Locale.ROOT, "  %-5s %15s items  %-10s%s", mark.label(), Units.grouped(mark.items()),
          Units.probability(mark.rate()), where).stripTrailing()).append('\n');
    }
    return text.toString();
  }

  /** The dot row of {@code rate}: 0 at the top. */
  private static int dotRow(FprCurve curve, double rate, int dotsDown) {
    return (int) Math.round((1 - curve.yFraction(rate)) * (dotsDown - 1));
  }

  /** The axis character under {@code items}: 0 is the corner, 1..width the curve's columns. */
  private static int column(FprCurve curve, long items, int width) {
    int dot = (int) Math.min(Integer.MAX_VALUE, Math.round(curve.xFraction(items) * (width * 2 - 1)));
    return 1 + dot / 2;
  }
}
