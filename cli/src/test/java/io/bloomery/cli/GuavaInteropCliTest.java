package io.bloomery.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.google.common.hash.BloomFilter;
import com.google.common.hash.Funnels;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A Guava user's migration through the CLI, against the real Guava (33.x). */
class GuavaInteropCliTest {
  @TempDir Path dir;

  @Test
  void guavaWrittenFilter_answersIdenticallyThroughInfoAndQuery() throws IOException {
    BloomFilter<CharSequence> guava = BloomFilter.create(Funnels.stringFunnel(StandardCharsets.UTF_8), 1_000, 0.01);
    List<String> queries = new ArrayList<>();
    for (int i = 0; i < 1_000; i++) {
      guava.put("member-" + i);
    }
    for (int i = 0; i < 3_000; i++) {
      queries.add((i % 3 == 0 ? "member-" : "other-") + i);
    }
    Path file = dir.resolve("guava.bin");
    try (OutputStream out = Files.newOutputStream(file)) {
      guava.writeTo(out);
    }
    JsonNode info = Cli.run("info", file.toString(), "--format", "guava", "--json").json();
    assertThat(info.get("protocol").asText()).isEqualTo("guava-murmur128-mitz64");
    assertThat(info.get("format").asText()).isEqualTo("guava");

    String input = Cli.lines(dir.resolve("q.txt"), queries);
    Cli.Result result = Cli.run("query", file.toString(), "--format", "guava", "--input", input);
    assertThat(result.exitCode()).as(result.toString()).isZero();
    List<String> expected = queries.stream().map(q -> (guava.mightContain(q) ? "maybe" : "absent") + "\t" + q).toList();
    assertThat(result.outLines()).containsExactlyElementsOf(expected);
  }

  @Test
  void builtWithOutputFormatGuava_isReadByGuava() throws IOException {
    List<String> members = new ArrayList<>();
    for (int i = 0; i < 500; i++) {
      members.add("url-" + i);
    }
    String input = Cli.lines(dir.resolve("m.txt"), members);
    Path file = dir.resolve("for-guava.bin");
    Cli.Result built = Cli.run("build", "--input", input, "--output", file.toString(), "--expected", "500", "--fpp",
        "0.01", "--output-format", "guava");
    assertThat(built.exitCode()).as(built.toString()).isZero();
    BloomFilter<CharSequence> guava;
    try (InputStream in = Files.newInputStream(file)) {
      guava = BloomFilter.readFrom(in, Funnels.stringFunnel(StandardCharsets.UTF_8));
    }
    for (String member : members) {
      assertThat(guava.mightContain(member)).as(member).isTrue();
    }
    Cli.Result ours = Cli.run("query", file.toString(), "--format", "guava", "--input", input);
    assertThat(ours.outLines()).hasSize(500).allMatch(line -> line.startsWith("maybe\t"));
  }
}
