package io.bloomery.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.bloomery.cli.BenchHarness;
import io.bloomery.cli.BloomeryCommand;
import java.io.InputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * {@code bloomery bench} with this module on the class path, as {@code ./bloomery bench} runs it: the
 * CLI's command finds {@link QuickBenchHarness} through its service file. The figures are consistent
 * (no timing assertions: speeds are only checked to exist).
 */
class BenchCommandTest {
  record Result(int exitCode, String out, String err) {}

  private static Result bloomery(String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    CommandLine commandLine = BloomeryCommand.newCommandLine(new BloomeryCommand(InputStream.nullInputStream(), false));
    commandLine.setOut(new PrintWriter(out, true));
    commandLine.setErr(new PrintWriter(err, true));
    int exitCode = commandLine.execute(args);
    return new Result(exitCode, out.toString(), err.toString());
  }

  @Test
  void theServiceFile_namesThisModulesHarness() {
    assertThat(BenchHarness.find()).get().isInstanceOf(QuickBenchHarness.class);
  }

  @Test
  void smallBench_printsTheAgreedJsonKeys() throws Exception {
    Result result = bloomery("bench", "--keys", "20000", "--queries", "5000", "--rounds", "1", "--json");
    assertThat(result.exitCode()).as(result.toString()).isZero();
    JsonNode report = new ObjectMapper().readTree(result.out());
    for (String key : new String[] {"lookup_batched_vs_guava", "lookup_single_vs_guava", "insert_vs_guava",
        "bits_per_key", "realized_fpp", "model_fpp"}) {
      assertThat(report.has(key)).as(key).isTrue();
      assertThat(report.get(key).asDouble()).as(key).isPositive();
    }
    assertThat(report.get("keys").asLong()).isEqualTo(20_000);
    assertThat(report.get("present_maybe").asLong()).isEqualTo(5_000);
    assertThat(report.get("realized_fpp").asDouble() * 5_000).isCloseTo(report.get("false_positives").asDouble(),
        within(1e-6));
  }

  @Test
  void table_countsTheRoundsAsAsked() {
    Result result = bloomery("bench", "--keys", "1000", "--queries", "1000", "--rounds", "1");
    assertThat(result.exitCode()).as(result.toString()).isZero();
    assertThat(result.out()).contains("medians of 1 measured round after 2 warm-up rounds");
  }

  @Test
  void rejectsTinyRuns() {
    Result result = bloomery("bench", "--keys", "10");
    assertThat(result.exitCode()).as(result.toString()).isEqualTo(BloomeryCommand.EXIT_USAGE);
    assertThat(result.err()).contains("--keys >= 1000");
  }
}
