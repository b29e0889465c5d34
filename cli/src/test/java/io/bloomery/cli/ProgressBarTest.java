package io.bloomery.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.api.Test;

/** The progress bar's text: time left, binary byte units, and nothing left on the screen once closed. */
class ProgressBarTest {

  @Test
  void aKnownTotalShowsTheTimeLeft_andBytesInBinaryUnits() {
    String line = ProgressBar.line("reading", 5L << 20, 20L << 20, "bytes", 2.0);
    assertThat(line).isEqualTo("reading [########......................]  25% 5.0 MiB/20.0 MiB  2.5 MiB/s  ETA 6s");
    assertThat(ProgressBar.line("   build", 250_000, 1_000_000, "URLs", 10.0))
        .isEqualTo("   build [########......................]  25% 250k/1M URLs  25k URLs/s  ETA 30s");
    assertThat(ProgressBar.line("reading", 3000, -1, "items", 1.0)).isEqualTo("reading 3000 items  3000 items/s");
    assertThat(ProgressBar.line("reading", 10, 10, "items", 1.0)).doesNotContain("ETA");
    assertThat(ProgressBar.duration(0.2)).isEqualTo("1s");
    assertThat(ProgressBar.duration(185)).isEqualTo("3m05s");
    assertThat(ProgressBar.duration(7620)).isEqualTo("2h07m");
  }

  @Test
  void closingErasesTheBar() {
    StringWriter text = new StringWriter();
    try (ProgressBar bar = new ProgressBar(new PrintWriter(text), true, "reading", 1L << 30, "bytes")) {
      for (int i = 1; i <= 4096; i++) {
        bar.update(i * 1024L);
      }
    }
    String drawn = text.toString();
    String line = drawn.substring(1, drawn.indexOf('\r', 1)); // one draw: the 4096th update
    assertThat(line).startsWith("reading [").contains("4.0 MiB/1.0 GiB").contains("ETA ");
    assertThat(drawn).isEqualTo("\r" + line + "\r" + " ".repeat(line.length()) + "\r");
  }

  @Test
  void aBarThatIsOffDrawsNothing() {
    StringWriter text = new StringWriter();
    try (ProgressBar bar = new ProgressBar(new PrintWriter(text), false, "reading", 100, "items")) {
      for (int i = 1; i <= 10_000; i++) {
        bar.update(i);
      }
    }
    assertThat(text.toString()).isEmpty();
  }
}
