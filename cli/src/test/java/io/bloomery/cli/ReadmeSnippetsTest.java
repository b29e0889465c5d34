package io.bloomery.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomery.filter.BloomFilter;
import io.bloomery.format.FilterFormat;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The README's Java example is the region between the {@code // region readme-quickstart} markers
 * below; a test checks the README shows exactly that text, so the example always compiles and runs.
 */
class ReadmeSnippetsTest {
  @TempDir Path dir;

  @Test
  void quickstart_runs() throws IOException {
    Path file = dir.resolve("visited.blmf");
    // region readme-quickstart
    // 10M URLs at a 1% false-positive rate: 95,850,584 bits (11.4 MiB), 7 hashes.
    BloomFilter visited = BloomFilter.create(10_000_000, 0.01);

    visited.add("https://example.com/"); // items are bytes; strings are UTF-8, never normalised
    boolean maybe = visited.mightContain("https://example.com/"); // true: go and check the store
    boolean unseen = !visited.mightContain("https://example.org/"); // absent is definite

    // One self-describing file: protocol, seed, m, k, inserted count, bits, CRC-32C.
    FilterFormat.write(visited, file);
    BloomFilter loaded = FilterFormat.readBloom(file);
    // endregion readme-quickstart

    assertThat(maybe).isTrue();
    assertThat(loaded.mightContain("https://example.com/")).isTrue();
    assertThat(loaded.bitSize()).isEqualTo(visited.bitSize());
    assertThat(unseen).isTrue(); // holds for this pair; any single non-member is a false positive with p = 1%
  }

  @Test
  void readme_showsTheRegionVerbatim() throws IOException {
    String test = Files.readString(sourceOf(ReadmeSnippetsTest.class), StandardCharsets.UTF_8);
    Matcher region = Pattern.compile("// region readme-quickstart\n(.*?)\n\\s*// endregion readme-quickstart", Pattern.DOTALL)
        .matcher(test);
    assertThat(region.find()).isTrue();
    String snippet = region.group(1).stripIndent().strip();
    String readme = Files.readString(repositoryRoot().resolve("README.md"), StandardCharsets.UTF_8);
    assertThat(readme).as("README.md must contain the quickstart region of ReadmeSnippetsTest verbatim").contains(snippet);
  }

  private static Path repositoryRoot() {
    Path dir = Path.of("").toAbsolutePath();
    while (dir != null && !Files.exists(dir.resolve("README.md"))) {
      dir = dir.getParent();
    }
    assertThat(dir).as("README.md above " + Path.of("").toAbsolutePath()).isNotNull();
    return dir;
  }

  private static Path sourceOf(Class<?> type) {
    return repositoryRoot().resolve("cli/src/test/java").resolve(type.getName().replace('.', '/') + ".java");
  }
}
