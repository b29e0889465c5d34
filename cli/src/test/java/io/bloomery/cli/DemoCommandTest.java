package io.bloomery.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.Test;

/** The demo's figures are consistent (no timing assertions: speeds are only checked to be measured). */
class DemoCommandTest {
  @Test
  void smallDemo_reportsConsistentFigures() {
    Cli.Result result = Cli.run("demo", "--urls", "50000", "--json");
    assertThat(result.exitCode()).as(result.toString()).isZero();
    JsonNode report = result.json();
    assertThat(report.get("urls").asLong()).isEqualTo(50_000);
    assertThat(report.get("false_negatives").asLong()).isZero();
    assertThat(report.get("member_probes").asLong()).isEqualTo(50_000);
    assertThat(report.get("nonmember_probes").asLong()).isEqualTo(1_000_000);
    assertThat(report.get("bits_per_key").asDouble()).isBetween(9.5, 9.7);
    double realized = report.get("realized_fpp").asDouble();
    assertThat(realized).isBetween(report.get("model_fpp_999_low").asDouble(), report.get("model_fpp_999_high").asDouble());
    assertThat(report.get("realized_fpp").asDouble() * 1_000_000).isEqualTo(report.get("false_positives").asDouble());
    assertThat(report.get("lookups_per_second").asDouble()).isPositive();
    assertThat(report.get("hashset_lookups_per_second").asLong()).isPositive();
    assertThat(report.get("hashset_bytes").asLong()).as("measured retained heap of 50k URL strings").isGreaterThan(50_000L * 80);
    assertThat(report.get("mean_url_bytes").asDouble()).isBetween(70.0, 90.0);
    assertThat(result.err()).contains("1. plan").contains("4. exact");
  }
}
