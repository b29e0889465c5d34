package io.bloomery.cli;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Locale;
import picocli.CommandLine.Option;

/**
 * {@code --plot}, {@code --plot-output} and the text plot's size, shared by {@code plan} and {@code
 * info}. {@code --plot} puts the plot (with its legend of figures) on standard output in place of the
 * usual text; {@code --plot-output} writes a picture and leaves standard output as it was.
 */
final class PlotOptions {
  @Option(names = "--plot",
      description = "Draw the false-positive rate against the number of items (Unicode braille) instead of the text summary.")
  boolean plot;

  @Option(names = "--plot-output", paramLabel = "FILE.svg|FILE.png",
      description = "Also write the plot as a picture; the format follows the name's extension (.svg or .png).")
  Path output;

  @Option(names = "--plot-width", paramLabel = "COLUMNS", defaultValue = "" + TextPlot.DEFAULT_WIDTH,
      description = "Width of the --plot curve in characters (default: ${DEFAULT-VALUE}).")
  int width;

  @Option(names = "--plot-height", paramLabel = "LINES", defaultValue = "" + TextPlot.DEFAULT_HEIGHT,
      description = "Height of the --plot curve in lines (default: ${DEFAULT-VALUE}).")
  int height;

  /** Refuses contradictory or out-of-range options before any work is done. */
  void validate(boolean json) {
    if (plot && json) {
      throw CliException.usage("--plot and --json are contradictory: the plot is text; use --plot-output for a picture");
    }
    if (width < TextPlot.MIN_WIDTH || width > TextPlot.MAX_SIZE) {
      throw CliException.usage("--plot-width must be in [" + TextPlot.MIN_WIDTH + ", " + TextPlot.MAX_SIZE + "], was " + width);
    }
    if (height < TextPlot.MIN_HEIGHT || height > TextPlot.MAX_SIZE) {
      throw CliException.usage("--plot-height must be in [" + TextPlot.MIN_HEIGHT + ", " + TextPlot.MAX_SIZE + "], was " + height);
    }
    if (output != null) {
      pictureFormat();
    }
  }

  boolean wanted() {
    return plot || output != null;
  }

  /** Draws what was asked for: the text plot on {@code out}, the picture into its file (noted on {@code err}). */
  void draw(FprCurve curve, PrintWriter out, PrintWriter err) throws IOException {
    if (plot) {
      out.print(TextPlot.render(curve, width, height));
      out.flush();
    }
    if (output != null) {
      long bytes = switch (pictureFormat()) {
        case "svg" -> AtomicFile.write(output,
            stream -> stream.write(SvgPlot.render(curve, PlotFrame.DEFAULT_WIDTH, PlotFrame.DEFAULT_HEIGHT)
                .getBytes(StandardCharsets.UTF_8)));
        default -> AtomicFile.write(output,
            stream -> PngPlot.write(curve, PlotFrame.DEFAULT_WIDTH, PlotFrame.DEFAULT_HEIGHT, stream));
      };
      err.printf(Locale.ROOT, "wrote plot %s (%s)%n", output, Units.bytesShort(bytes));
      err.flush();
    }
  }

  private String pictureFormat() {
    String name = output.getFileName() == null ? "" : output.getFileName().toString().toLowerCase(Locale.ROOT);
    if (name.endsWith(".svg")) {
      return "svg";
    }
    if (name.endsWith(".png")) {
      return "png";
    }
    throw CliException.usage("--plot-output " + output + ": the name must end in .svg or .png (that picks the format)");
  }
}
