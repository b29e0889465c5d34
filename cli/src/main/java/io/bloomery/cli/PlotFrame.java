package io.bloomery.cli;

import java.util.ArrayList;
import java.util.List;

/**
 * The geometry shared by the picture renderers ({@link SvgPlot}, {@link PngPlot}): a canvas of
 * {@code width x height} pixels whose plot area leaves margins for the axis labels, and the mapping of
 * items and rates onto it (rates on a log axis, see {@link FprCurve}).
 */
record PlotFrame(FprCurve curve, int width, int height) {
  static final int DEFAULT_WIDTH = 800;
  static final int DEFAULT_HEIGHT = 450;
  static final int LEFT = 70;
  static final int RIGHT = 30;
  static final int TOP = 40;
  static final int BOTTOM = 60;
  /** Points along the curve; enough that a 2000-pixel-wide picture shows no corners. */
  static final int SAMPLES = 400;

  double x(long items) {
    return LEFT + curve.xFraction(items) * (width - LEFT - RIGHT);
  }

  double y(double rate) {
    return TOP + (1 - curve.yFraction(rate)) * (height - TOP - BOTTOM);
  }

  double plotLeft() {
    return LEFT;
  }

  double plotRight() {
    return width - RIGHT;
  }

  double plotTop() {
    return TOP;
  }

  double plotBottom() {
    return height - BOTTOM;
  }

  /** The curve as pixel coordinates, left to right. */
  List<double[]> points() {
    List<double[]> points = new ArrayList<>(SAMPLES + 1);
    for (int i = 0; i <= SAMPLES; i++) {
      long items = Math.round(curve.maxItems() * (double) i / SAMPLES);
      points.add(new double[] {x(items), y(curve.rate(items))});
    }
    return points;
  }

  /** Whether a mark at {@code items} falls inside the plot area (the present position may be past it). */
  boolean inside(long items) {
    return items <= curve.maxItems();
  }
}
