package io.bloomery.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomery.blocked.BlockedBloomFilter;
import io.bloomery.counting.CountingBloomFilter;
import io.bloomery.format.FilterFormat;
import java.awt.image.BufferedImage;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;
import javax.imageio.ImageIO;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

/** {@code plan --plot}, {@code info --plot} and {@code --plot-output}: the text plot, SVG and PNG. */
class PlotCommandTest {
  @TempDir Path dir;

  @Test
  void planPlot_matchesTheGoldenText_andIsAllThatStdoutCarries() throws Exception {
    Cli.Result result = Cli.run("plan", "--expected", "1000", "--fpp", "0.01", "--plot", "--plot-width", "24",
        "--plot-height", "5");
    assertThat(result.exitCode()).as(result.toString()).isZero();
    assertThat(result.out()).isEqualTo(golden("plan-1000-1pct-24x5.txt"));
    assertThat(result.err()).isEmpty();
    assertThat(result.out()).doesNotContain("\r", "\u001b");
  }

  @Test
  void planPlot_marksEveryOverfillLevelWithTheModelRate() {
    Cli.Result result = Cli.run("plan", "--expected", "1M", "--fpp", "1%", "--plot");
    assertThat(result.exitCode()).as(result.toString()).isZero();
    List<String> all = result.outLines();
    // The plan's own figures first (m, k, bits per key, capacity), then the plot, whose legend is the overfill table.
    assertThat(all.subList(0, 6)).anySatisfy(line -> assertThat(line).startsWith("  bits (m)       9,585,059"))
        .anySatisfy(line -> assertThat(line).startsWith("  hashes (k)     7"))
        .anySatisfy(line -> assertThat(line).startsWith("  bits per key   9.585"))
        .anySatisfy(line -> assertThat(line).startsWith("  capacity       1,022,131 items"));
    assertThat(result.out()).doesNotContain("Overfill:");
    List<String> lines = all.subList(all.indexOf("") + 1, all.size());
    assertThat(lines.get(0)).isEqualTo("false-positive rate vs items: planned classic Bloom filter, 9,585,059 bits, 7 hashes");
    assertThat(lines).hasSize(1 + TextPlot.DEFAULT_HEIGHT + 2 + 1 + 5);
    assertThat(lines.get(1 + TextPlot.DEFAULT_HEIGHT + 1)).endsWith("2.2M items");
    assertThat(result.out()).containsOnlyOnce("┬ marks").doesNotContain("(┬)");
    // Plan's own overfill table gives the same rates: the plot draws core's model, nothing of its own.
    Cli.Result table = Cli.run("plan", "--expected", "1M", "--fpp", "1%", "--json");
    for (int i = 0; i < 5; i++) {
      var level = table.json().get("overfill").get(i);
      assertThat(lines.get(lines.size() - 5 + i)).contains(level.get("percent_of_expected").asInt() + "%",
          Units.grouped(level.get("insertions").asLong()) + " items", Units.probability(level.get("fpp").asDouble()));
    }
    String axis = lines.get(1 + TextPlot.DEFAULT_HEIGHT);
    assertThat(axis.chars().filter(c -> c == '┬').count()).isEqualTo(5);
  }

  @Test
  void planPlot_labelsTheItemsAxisWithoutTrailingZeros() {
    List<String> lines = Cli.run("plan", "--expected", "50M", "--fpp", "1%", "--plot").outLines();
    assertThat(lines).anySatisfy(line -> assertThat(line).endsWith(" 110M items"));
    assertThat(String.join("\n", lines)).doesNotContain(".00M");
  }

  @Test
  void lowRatesAreDrawnOnALogAxisThatReachesThem_notFlattenedOntoItsBottom() {
    // Planned for 1e-4, the curve spends its first third below 1e-6; the axis reaches down to its first point after 0.
    List<String> lines = Cli.run("plan", "--expected", "1000", "--fpp", "1e-4", "--plot", "--plot-height", "10").outLines();
    int title = lines.indexOf(lines.stream().filter(l -> l.startsWith("false-positive rate vs items")).findFirst().orElseThrow());
    String bottom = lines.get(title + 10);
    // The lowest dot row of the plot (braille dots 7 and 8): only the first points, 0 items and the next, lie on it.
    long onTheFloor = bottom.chars().filter(c -> c >= '\u2800' && c <= '\u28ff')
        .map(c -> Integer.bitCount((c - 0x2800) & 0xC0)).sum();
    assertThat(onTheFloor).as("points on the bottom edge: " + bottom).isLessThanOrEqualTo(2);
    FprCurve curve = new FprCurve("t", n -> io.bloomery.sizing.BloomMath.falsePositiveRate(19_171, 13, n), 1000, -1);
    assertThat(curve.lowRate()).isLessThanOrEqualTo(curve.rate(curve.maxItems() / FprCurve.FIRST_POINT)).isLessThan(1e-6);
  }

  @Test
  void infoPlot_marksThePresentPosition() throws Exception {
    String filter = builtFilter(700);
    Cli.Result result = Cli.run("info", filter, "--plot");
    assertThat(result.exitCode()).as(result.toString()).isZero();
    assertThat(result.err()).isEmpty();
    assertThat(result.out()).contains("▲").containsPattern("now +700 items +0\\.1\\d\\d% +\\(▲\\)");
    assertThat(result.outLines().get(0)).contains("f.bf (classic, 9,586 bits, 7 hashes)");
  }

  @Test
  void infoPlot_drawsBlockedFilters_withTheirOwnModel() throws Exception {
    BlockedBloomFilter blocked = BlockedBloomFilter.create(10_000, 0.01);
    IntStream.range(0, 5000).forEach(blocked::add);
    Path file = dir.resolve("blocked.bf");
    FilterFormat.write(blocked, file);
    Cli.Result result = Cli.run("info", file.toString(), "--plot");
    assertThat(result.exitCode()).as(result.toString()).isZero();
    assertThat(result.out()).contains("now", Units.probability(blocked.modelFpp(5000)));
  }

  @Test
  void infoPlot_refusesKindsWithoutACurve() throws Exception {
    Path file = dir.resolve("counting.bf");
    FilterFormat.write(CountingBloomFilter.create(1000, 0.01), file);
    Cli.Result result = Cli.run("info", file.toString(), "--plot");
    assertThat(result.exitCode()).isEqualTo(BloomeryCommand.EXIT_FAILURE);
    assertThat(result.err()).contains("--plot and --plot-output draw classic, blocked and split-block").hasLineCount(1);
    assertThat(result.out()).isEmpty();
  }

  @Test
  void svg_isWellFormed_andCarriesTheMarksAndThePresentPosition() throws Exception {
    Path svg = dir.resolve("f.svg");
    Cli.Result result = Cli.run("info", builtFilter(700), "--plot-output", svg.toString());
    assertThat(result.exitCode()).as(result.toString()).isZero();
    assertThat(result.err()).startsWith("wrote plot " + svg);
    assertThat(result.out()).contains("capacity").doesNotContain("<svg"); // the usual text, the picture in its file
    DocumentBuilderFactory factory = DocumentBuilderFactory.newInstance();
    factory.setNamespaceAware(true);
    Document document = factory.newDocumentBuilder().parse(svg.toFile());
    Element root = document.getDocumentElement();
    assertThat(root.getLocalName()).isEqualTo("svg");
    assertThat(root.getAttribute("width")).isEqualTo("800");
    List<String> percents = new ArrayList<>();
    NodeList lines = document.getElementsByTagNameNS("http://www.w3.org/2000/svg", "line");
    for (int i = 0; i < lines.getLength(); i++) {
      Element line = (Element) lines.item(i);
      if (line.getAttribute("class").equals("mark")) {
        percents.add(line.getAttribute("data-percent"));
      }
    }
    assertThat(percents).containsExactly("50%", "80%", "100%", "150%", "200%");
    NodeList circles = document.getElementsByTagNameNS("http://www.w3.org/2000/svg", "circle");
    assertThat(circles.getLength()).isEqualTo(1);
    assertThat(((Element) circles.item(0)).getAttribute("data-items")).isEqualTo("700");
  }

  @Test
  void png_decodesWithTheRightSize() throws Exception {
    Path png = dir.resolve("plan.png");
    Cli.Result result = Cli.run("plan", "--expected", "1000", "--fpp", "0.01", "--plot-output", png.toString());
    assertThat(result.exitCode()).as(result.toString()).isZero();
    assertThat(result.out()).startsWith("Plan for 1,000 items");
    BufferedImage image = ImageIO.read(png.toFile());
    assertThat(image).isNotNull();
    assertThat(image.getWidth()).isEqualTo(PlotFrame.DEFAULT_WIDTH);
    assertThat(image.getHeight()).isEqualTo(PlotFrame.DEFAULT_HEIGHT);
    // Not a blank canvas: the curve's blue is somewhere.
    boolean blue = false;
    for (int x = 0; x < image.getWidth() && !blue; x++) {
      for (int y = 0; y < image.getHeight() && !blue; y++) {
        int rgb = image.getRGB(x, y) & 0xffffff;
        blue = (rgb & 0xff) > 0xc0 && ((rgb >> 16) & 0xff) < 0x60;
      }
    }
    assertThat(blue).as("the curve is drawn").isTrue();
  }

  @Test
  void contradictoryOrBadPlotOptions_areUsageErrors() {
    assertUsage(Cli.run("plan", "--expected", "1000", "--fpp", "0.01", "--plot", "--json"), "--plot and --json are contradictory");
    assertUsage(Cli.run("plan", "--expected", "1000", "--fpp", "0.01", "--plot-output", dir.resolve("x.gif").toString()),
        "must end in .svg or .png");
    assertUsage(Cli.run("plan", "--expected", "1000", "--fpp", "0.01", "--plot", "--plot-width", "3"), "--plot-width must be in");
    assertUsage(Cli.run("plan", "--expected", "1000", "--fpp", "0.01", "--plot", "--plot-height", "100000"),
        "--plot-height must be in");
    assertThat(dir.resolve("x.gif")).doesNotExist();
  }

  private static void assertUsage(Cli.Result result, String message) {
    assertThat(result.exitCode()).as(result.toString()).isEqualTo(BloomeryCommand.EXIT_USAGE);
    assertThat(result.err()).contains(message).hasLineCount(1);
    assertThat(result.out()).isEmpty();
  }

  private String builtFilter(int items) throws Exception {
    StringBuilder lines = new StringBuilder();
    for (int i = 1; i <= items; i++) {
      lines.append(i).append('\n');
    }
    Path input = dir.resolve("items");
    Files.writeString(input, lines);
    return Cli.build(input.toString(), dir.resolve("f.bf"), "--expected", "1000", "--fpp", "0.01");
  }

  private static String golden(String name) throws Exception {
    try (InputStream in = PlotCommandTest.class.getResourceAsStream("/plots/" + name)) {
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
  }
}
