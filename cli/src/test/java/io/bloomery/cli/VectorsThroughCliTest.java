package io.bloomery.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every known-answer vector (core's {@code /vectors/*.json}) through the command line: build, info
 * (packed bits), query --truth (the exact false positives and counts).
 */
class VectorsThroughCliTest {
  @TempDir Path dir;

  @Test
  void sha256DocV1_fixture_packsD291_andReportsExactlyTheFiveFalsePositives() throws IOException {
    JsonNode fixture = Cli.vector("sha256-doc-v1.json").get("fixture");
    List<String> members = strings(fixture.get("members"));
    String filter = build("doc.blmf", members, "sha256-doc-v1", fixture.get("seed_hex").asText(),
        fixture.get("m").asLong(), fixture.get("k").asInt(), false);

    JsonNode info = Cli.run("info", filter, "--json").json();
    assertThat(info.get("packed_bits_hex").asText()).isEqualTo("d291").isEqualTo(fixture.get("packed_bits_hex").asText());
    assertThat(info.get("protocol").asText()).isEqualTo("sha256-doc-v1");
    assertThat(info.get("seed_hex").asText()).isEqualTo("6c6162");
    assertThat(info.get("bits").asLong()).isEqualTo(16);
    assertThat(info.get("hashes").asInt()).isEqualTo(3);
    assertThat(info.get("inserted").asLong()).isEqualTo(4);
    assertThat(info.get("set_bits").asLong()).isEqualTo(fixture.get("occupied_bit_count").asLong());

    List<String> queries = new ArrayList<>(members);
    queries.addAll(range(fixture.get("nonmember_queries").asText(), "doc-%02d"));
    assertThat(queries).hasSize(64);
    QueryOutcome outcome = query(filter, queries, members, false);
    assertThat(outcome.falsePositives).containsExactly("doc-04", "doc-41", "doc-43", "doc-44", "doc-51")
        .containsExactlyElementsOf(strings(fixture.get("false_positives")));
    assertThat(outcome.duplicates).containsExactlyElementsOf(members);
    JsonNode summary = outcome.summary;
    assertThat(summary.get("queried").asLong()).isEqualTo(64);
    assertThat(summary.get("maybe").asLong()).isEqualTo(9);
    assertThat(summary.get("absent").asLong()).isEqualTo(55);
    assertThat(summary.get("false_positives").asLong()).isEqualTo(5);
    assertThat(summary.get("non_members").asLong()).isEqualTo(60);
    assertThat(summary.get("realized_fpp").asDouble()).isEqualTo(5.0 / 60);
    assertThat(summary.get("false_negatives").asLong()).isZero();
  }

  @Test
  void sha256DocV1_smallFilter_fromHexItems_packs8001() throws IOException {
    JsonNode small = Cli.vector("sha256-doc-v1.json").get("small_filter");
    String filter = build("small.blmf", strings(small.get("members_hex")), "sha256-doc-v1",
        small.get("seed_hex").asText(), small.get("m").asLong(), small.get("k").asInt(), true);
    assertThat(Cli.run("info", filter, "--json").json().get("packed_bits_hex").asText())
        .isEqualTo("8001").isEqualTo(small.get("packed_bits_hex").asText());
  }

  @Test
  void sha256Index8_packs3a33_and10Of40QueriesAreFalsePositives() throws IOException {
    JsonNode vector = Cli.vector("sha256-index8.json");
    List<String> members = strings(vector.get("members"));
    String filter = build("index8.blmf", members, "sha256-index8", "", vector.get("m").asLong(),
        vector.get("k").asInt(), false);
    assertThat(Cli.run("info", filter, "--json").json().get("packed_bits_hex").asText())
        .isEqualTo("3a33").isEqualTo(vector.get("packed_bits_hex").asText());

    List<String> queries = strings(vector.get("queries"));
    assertThat(queries).hasSize(40);
    QueryOutcome outcome = query(filter, queries, members, false);
    assertThat(outcome.falsePositives).hasSize(10).containsExactlyElementsOf(strings(vector.get("false_positives")));
    assertThat(outcome.summary.get("false_positives").asLong()).isEqualTo(vector.get("false_positive_count").asLong());
  }

  @Test
  void sha256Index16_matchesPackedBitsDigest_and73Of10000_and8016WhenOverfull() throws IOException {
    JsonNode vector = Cli.vector("sha256-index16.json");
    List<String> members = range(vector.get("members").asText(), "item:%d");
    assertThat(members).hasSize(1000);
    String filter = build("index16.blmf", members, "sha256-index16", "", vector.get("m").asLong(),
        vector.get("k").asInt(), false);
    JsonNode info = Cli.run("info", filter, "--json").json();
    assertThat(info.get("packed_bits_sha256").asText()).isEqualTo(vector.get("packed_bits_sha256").asText());
    assertThat(info.get("bitmap_bytes").asLong()).isEqualTo(vector.get("packed_bytes").asLong());
    assertThat(info.get("set_bits").asLong()).isEqualTo(vector.get("set_bits").asLong());
    assertThat(info.has("packed_bits_hex")).as("10,000 bits is over the 4,096-bit display limit").isFalse();

    List<String> queries = range(vector.get("queries").asText(), "absent:%d");
    assertThat(queries).hasSize(10_000);
    QueryOutcome outcome = query(filter, queries, members, false);
    assertThat(outcome.falsePositives).hasSize(73);
    assertThat(outcome.falsePositives.subList(0, 10)).containsExactlyElementsOf(strings(vector.get("first_10_false_positives")));
    assertThat(outcome.summary.get("realized_fpp").asDouble()).isEqualTo(73 / 10_000.0);
    // The vector's model_estimate (0.00819) is a slightly different approximation than (1 - e^(-kn/m))^k = 0.00815.
    assertThat(outcome.summary.get("model_fpp").asDouble())
        .isCloseTo(vector.get("model_estimate").asDouble(), org.assertj.core.data.Offset.offset(1e-4));

    List<String> overfullMembers = range(vector.get("overfull").get("members").asText(), "item:%d");
    String overfull = build("index16-overfull.blmf", overfullMembers, "sha256-index16", "",
        vector.get("m").asLong(), vector.get("k").asInt(), false);
    QueryOutcome overfullOutcome = query(overfull, queries, overfullMembers, false);
    assertThat(overfullOutcome.falsePositives).hasSize(vector.get("overfull").get("false_positive_count").asInt()).hasSize(8016);
  }

  private String build(String name, List<String> items, String protocol, String seedHex, long bits, int hashes,
      boolean hex) throws IOException {
    String input = Cli.lines(dir.resolve(name + ".items"), items);
    String output = dir.resolve(name).toString();
    List<String> args = new ArrayList<>(List.of("build", "--input", input, "--output", output,
        "--protocol", protocol, "--bits", Long.toString(bits), "--hashes", Integer.toString(hashes)));
    if (!seedHex.isEmpty()) {
      args.addAll(List.of("--seed-hex", seedHex));
    }
    if (hex) {
      args.add("--hex");
    }
    Cli.Result result = Cli.run(args.toArray(String[]::new));
    assertThat(result.exitCode()).as(result.toString()).isZero();
    return output;
  }

  private QueryOutcome query(String filter, List<String> queries, List<String> truth, boolean hex) throws IOException {
    String input = Cli.lines(dir.resolve("queries-" + queries.hashCode()), queries);
    String truthFile = Cli.lines(dir.resolve("truth-" + truth.hashCode()), truth);
    List<String> args = new ArrayList<>(List.of("query", filter, "--input", input, "--truth", truthFile, "--json"));
    if (hex) {
      args.add("--hex");
    }
    Cli.Result result = Cli.run(args.toArray(String[]::new));
    assertThat(result.exitCode()).as(result.toString()).isZero();
    JsonNode json = result.json();
    QueryOutcome outcome = new QueryOutcome(json.get("summary"));
    for (JsonNode item : json.get("items")) {
      boolean maybe = item.get("maybe_present").asBoolean();
      assertThat(item.get("filter").asText()).isEqualTo(maybe ? "maybe" : "absent");
      assertThat(item.get("exact_checked").asBoolean()).as("consulted exactly when the filter said maybe").isEqualTo(maybe);
      if (item.get("duplicate").asBoolean()) {
        outcome.duplicates.add(item.get("item").asText());
      } else if (maybe) {
        outcome.falsePositives.add(item.get("item").asText());
      }
    }
    assertThat(json.get("items")).hasSize(queries.size());
    return outcome;
  }

  private static final class QueryOutcome {
    final JsonNode summary;
    final List<String> falsePositives = new ArrayList<>();
    final List<String> duplicates = new ArrayList<>();

    QueryOutcome(JsonNode summary) {
      this.summary = summary;
    }
  }

  private static List<String> strings(JsonNode array) {
    List<String> values = new ArrayList<>();
    array.forEach(node -> values.add(node.asText()));
    return values;
  }

  /** Expands "doc-04 .. doc-63" or "item:0 .. item:999" with the given format. */
  private static List<String> range(String spec, String format) {
    Matcher matcher = Pattern.compile("^(.*?)(\\d+) \\.\\. (.*?)(\\d+)$").matcher(spec);
    assertThat(matcher.matches()).as(spec).isTrue();
    List<String> values = new ArrayList<>();
    for (int i = Integer.parseInt(matcher.group(2)); i <= Integer.parseInt(matcher.group(4)); i++) {
      values.add(String.format(java.util.Locale.ROOT, format, i));
    }
    return values;
  }
}
