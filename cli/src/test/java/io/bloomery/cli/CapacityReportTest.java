package io.bloomery.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** plan, build and info agree on one capacity: a filter holding the items it was planned for is not over it. */
class CapacityReportTest {
  @TempDir Path dir;

  @Test
  void aBuildOfExactlyThePlannedItemsIsNearButNotOverCapacity() throws IOException {
    JsonNode plan = Cli.run("plan", "--expected", "20000", "--fpp", "0.01", "--json").json();
    long capacity = plan.get("capacity").asLong();
    assertThat(capacity).isGreaterThanOrEqualTo(20_000).isLessThan(21_000);
    assertThat(plan.get("design_fpp").asDouble()).isBetween(0.01, 0.0115);

    Cli.Result built = build(20_000, "planned.blmf");
    assertThat(built.exitCode()).as(built.toString()).isZero();
    assertThat(built.err()).contains("near capacity").doesNotContain("over capacity").doesNotContain("warning");
    assertThat(built.err()).containsPattern("9[0-9]% of its capacity of " + Units.grouped(capacity));

    Cli.Result info = Cli.run("info", dir.resolve("planned.blmf").toString());
    assertThat(info.out()).contains("capacity").contains(Units.grouped(capacity)).contains("NEAR CAPACITY")
        .doesNotContain("OVER");
    JsonNode json = Cli.run("info", dir.resolve("planned.blmf").toString(), "--json").json();
    assertThat(json.get("capacity").asLong()).isEqualTo(capacity);
    assertThat(json.get("over_capacity").asBoolean()).isFalse();
    assertThat(json.get("near_capacity").asBoolean()).isTrue();

    Cli.Result text = Cli.run("plan", "--expected", "20000", "--fpp", "0.01");
    assertThat(text.out()).contains("capacity       " + Units.grouped(capacity) + " items")
        .containsPattern("100%\\s+20,000 items\\s+\\S+\\s+9[0-9]% of capacity")
        .containsPattern("150%\\s+30,000 items\\s+\\S+\\s+14[0-9]% of capacity");
  }

  @Test
  void aBuildBeyondThePlanIsOverCapacity() throws IOException {
    Cli.Result built = build(25_000, "over.blmf");
    assertThat(built.exitCode()).as(built.toString()).isZero();
    assertThat(built.err()).contains("warning: the filter is over capacity").containsPattern("1[12][0-9]% of its capacity");
    Cli.Result info = Cli.run("info", dir.resolve("over.blmf").toString());
    assertThat(info.out()).contains("OVER CAPACITY").doesNotContain("NEAR");
    assertThat(Cli.run("info", dir.resolve("over.blmf").toString(), "--json").json().get("over_capacity").asBoolean())
        .isTrue();
  }

  private Cli.Result build(int items, String output) throws IOException {
    List<String> lines = new ArrayList<>();
    for (int i = 0; i < items; i++) {
      lines.add("https://example.com/page/" + i);
    }
    String input = Cli.lines(dir.resolve(output + ".txt"), lines);
    return Cli.run("build", "--input", input, "--output", dir.resolve(output).toString(), "--expected", "20000",
        "--fpp", "0.01");
  }
}
