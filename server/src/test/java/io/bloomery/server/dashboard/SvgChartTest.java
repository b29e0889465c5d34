package io.bloomery.server.dashboard;

import static org.assertj.core.api.Assertions.assertThat;

import java.math.BigDecimal;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** The y axis of a linear chart is labelled with round numbers that cover the data. */
class SvgChartTest {

  private static List<String> labels(double min, double max) {
    return SvgChart.linearTicks(min, max).stream().map(SvgChart.Tick::label).toList();
  }

  @Test
  void ticksAreRoundStepsCoveringTheRange() {
    assertThat(labels(0, 1)).containsExactly("0", "0.25", "0.5", "0.75", "1");
    // The ops chart's range for a peak of 121 ops/s was 0..133.1, labelled 0, 33.28, 66.55, ... before.
    assertThat(labels(0, 133.1)).containsExactly("0", "50", "100", "150");
    assertThat(labels(0, 99.7)).containsExactly("0", "25", "50", "75", "100");
    assertThat(labels(0, 1.1)).containsExactly("0", "0.5", "1", "1.5");
    assertThat(labels(0, 8)).containsExactly("0", "2", "4", "6", "8");
    assertThat(labels(17, 23)).containsExactly("16", "18", "20", "22", "24");
    assertThat(labels(0, 0.3)).containsExactly("0", "0.1", "0.2", "0.3");
  }

  @Test
  void tinyAndHugeRanges() {
    assertThat(labels(0, 3e-9)).containsExactly("0", "1e-9", "2e-9", "3e-9");
    assertThat(labels(1.0, 1.000001)).containsExactly("1", "1.00000025", "1.0000005", "1.00000075", "1.000001");
    assertThat(labels(0, 7.3e12)).containsExactly("0", "2,000,000,000,000", "4,000,000,000,000",
        "6,000,000,000,000", "8,000,000,000,000");
    assertThat(labels(0, 9e18)).containsExactly("0", "2.5e18", "5e18", "7.5e18", "1e19");
  }

  @Test
  void anEmptyOrUnusableRangeGetsAUnitAxis() {
    List<String> unit = List.of("0", "0.25", "0.5", "0.75", "1");
    assertThat(labels(0, 0)).isEqualTo(unit);
    assertThat(labels(5, 2)).isEqualTo(unit);
    assertThat(labels(0, Double.NaN)).isEqualTo(unit);
    assertThat(labels(0, Double.POSITIVE_INFINITY)).isEqualTo(unit);
    // A chart made for 0..0 (no traffic yet) widens to 0..1 itself and draws those ticks.
    assertThat(tickLabels(new SvgChart("c", "t", 560, 220, 0, 1, 0, 0, false).render())).isEqualTo(unit);
  }

  /** Over many ranges of non-negative data: a step of 1, 2, 2.5 or 5 × 10^k, 2 to 6 parts, no tick below 0. */
  @Test
  void everyStepIsNiceAndTheAxisCoversTheData() {
    long seed = 0x5eedL;
    java.util.Random random = new java.util.Random(seed);
    for (int i = 0; i < 2000; i++) {
      double max = Math.pow(10, random.nextDouble() * 24 - 12) * (1 + random.nextDouble());
      double min = random.nextBoolean() ? 0 : max * random.nextDouble() * 0.9;
      List<SvgChart.Tick> ticks = SvgChart.linearTicks(min, max);
      String context = "seed " + seed + ", range " + min + ".." + max;
      assertThat(ticks.size()).as(context).isBetween(3, 7);
      assertThat(ticks.get(0).value()).as(context).isLessThanOrEqualTo(min).isGreaterThanOrEqualTo(0);
      assertThat(ticks.get(ticks.size() - 1).value()).as(context).isGreaterThanOrEqualTo(max);
      BigDecimal step = new BigDecimal(ticks.get(1).label().replace(",", ""))
          .subtract(new BigDecimal(ticks.get(0).label().replace(",", "")));
      BigDecimal mantissa = step.movePointLeft(step.precision() - step.scale() - 1).stripTrailingZeros();
      assertThat(mantissa.toPlainString()).as(context).isIn("1", "2", "2.5", "5");
    }
  }

  @Test
  void theRenderedChartLabelsItsYAxisWithTheRoundTicks() {
    SvgChart chart = new SvgChart("ops", "ops", 560, 220, 0, 10, 0, 133.1, false).point(0, 0).point(10, 121);
    assertThat(tickLabels(chart.render())).containsExactly("0", "50", "100", "150");
  }

  private static List<String> tickLabels(String svg) {
    Matcher m = Pattern.compile("<text x=\"58\" y=\"[0-9.]+\" text-anchor=\"end\">([^<]*)</text>").matcher(svg);
    return m.results().map(r -> r.group(1)).toList();
  }
}
