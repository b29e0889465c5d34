package io.bloomery.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.Test;

/** The bench command's figures are consistent (no timing assertions: speeds are only checked to exist). */
class BenchCommandTest {
  @Test
  void smallBench_printsTheAgreedJsonKeys() {
    Cli.Result result = Cli.run("bench", "--keys", "20000", "--queries", "5000", "--rounds", "1", "--json");
    assertThat(result.exitCode()).as(result.toString()).isZero();
    JsonNode report = result.json();
    for (String key : new String[] {"lookup_batched_vs_guava", "lookup_single_vs_guava", "insert_vs_guava",
        "bits_per_key", "realized_fpp", "model_fpp"}) {
      assertThat(report.has(key)).as(key).isTrue();
      assertThat(report.get(key).asDouble()).as(key).isPositive();
    }
    assertThat(report.get("keys").asLong()).isEqualTo(20_000);
    assertThat(report.get("present_maybe").asLong()).isEqualTo(5_000);
    assertThat(report.get("realized_fpp").asDouble() * 5_000).isCloseTo(report.get("false_positives").asDouble(),
        org.assertj.core.api.Assertions.within(1e-6));
  }

  @Test
  void rejectsTinyRuns() {
    Cli.Result result = Cli.run("bench", "--keys", "10");
    assertThat(result.exitCode()).as(result.toString()).isEqualTo(BloomeryCommand.EXIT_USAGE);
    assertThat(result.err()).contains("--keys >= 1000");
  }
}
