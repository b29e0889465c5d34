package io.bloomery.cli;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * cli alone has no benchmark harness (it lives in the bench artifact, which depends on cli): the
 * command still checks its options, then fails with one line that says how to run it.
 */
class BenchWithoutHarnessTest {
  @Test
  void noHarnessOnTheClassPath() {
    assertThat(BenchHarness.find()).isEmpty();
  }

  @Test
  void validOptions_exit1_withOneLineSayingWhereTheBenchmarkIs() {
    Cli.Result result = Cli.run("bench", "--keys", "1000", "--queries", "1000", "--rounds", "1");
    assertThat(result.exitCode()).as(result.toString()).isEqualTo(BloomeryCommand.EXIT_FAILURE);
    assertThat(result.out()).isEmpty();
    assertThat(result.err().strip()).isEqualTo("bloomery bench: " + BenchCommand.NO_HARNESS);
  }

  @Test
  void badOptions_areStillUsageErrors() {
    Cli.Result tiny = Cli.run("bench", "--keys", "10");
    assertThat(tiny.exitCode()).as(tiny.toString()).isEqualTo(BloomeryCommand.EXIT_USAGE);
    assertThat(tiny.err()).contains("--keys >= 1000");
  }
}
