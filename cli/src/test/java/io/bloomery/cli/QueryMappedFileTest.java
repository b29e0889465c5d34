package io.bloomery.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomery.blocked.BlockedBloomFilter;
import io.bloomery.filter.BloomFilter;
import io.bloomery.filter.MembershipFilter;
import io.bloomery.format.FilterFormat;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code query} maps classic and blocked files (read in place) and answers as the heap filter does. */
class QueryMappedFileTest {
  @TempDir Path dir;

  @Test
  void classicAndBlockedFilesAnswerEveryLineAsTheHeapFilter() throws Exception {
    List<String> lines = new ArrayList<>();
    for (int i = 0; i < 400; i++) {
      lines.add("https://example.org/page/" + i);
    }
    Path input = Files.write(dir.resolve("items.txt"), lines);
    for (MembershipFilter filter : List.of(BloomFilter.create(200, 0.05), BlockedBloomFilter.create(200, 0.05))) {
      for (String line : lines.subList(0, 200)) {
        filter.add(line);
      }
      Path file = dir.resolve(filter.kind().kindName() + ".blmf");
      FilterFormat.write(filter, file);
      Cli.Result result = Cli.run("query", file.toString(), "--input", input.toString());
      assertThat(result.exitCode()).as(result.err()).isZero();
      List<String> expected = new ArrayList<>();
      for (String line : lines) {
        expected.add((filter.mightContain(line) ? "maybe" : "absent") + "\t" + line);
      }
      assertThat(result.out().lines().toList()).isEqualTo(expected);
    }
  }
}
