package io.bloomery.guide;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomery.filter.BloomFilter;
import io.bloomery.format.FilterFormat;
import io.bloomery.format.GuavaBloomFormat;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Bloomery column of docs/FROM-GUAVA.md. Every {@code // region guide-...} here and in {@link GuavaSideTest}
 * appears in the guide verbatim, and every Java block of the guide is one of those regions, so each line of code
 * the guide shows compiles and runs.
 */
class FromGuavaGuideTest {
  @TempDir Path dir;

  record Order(long customerId, String sku) {}

  @Test
  void createAddMightContain() {
    // region guide-bloomery-create
    BloomFilter visited = BloomFilter.create(10_000_000, 0.01);
    boolean changed = visited.add("https://example.com/"); // UTF-8 bytes of the string
    boolean maybe = visited.mightContain("https://example.com/");
    // endregion guide-bloomery-create
    assertThat(changed).isTrue();
    assertThat(maybe).isTrue();
  }

  @Test
  void itemsAreBytes() {
    Order order = new Order(42, "SKU-1");
    // region guide-bloomery-funnel
    BloomFilter orders = BloomFilter.create(1_000_000, 0.001);
    byte[] sku = order.sku().getBytes(StandardCharsets.UTF_8);
    orders.add(ByteBuffer.allocate(8 + sku.length).putLong(order.customerId()).put(sku).array());
    // endregion guide-bloomery-funnel
    byte[] same = ByteBuffer.allocate(8 + sku.length).putLong(42).put(sku).array();
    assertThat(orders.mightContain(same)).isTrue();
  }

  @Test
  void writeAndRead() throws IOException {
    BloomFilter visited = BloomFilter.create(1_000, 0.01);
    visited.add("https://example.com/");
    Path file = dir.resolve("visited.blmf");
    // region guide-bloomery-write
    FilterFormat.write(visited, file);
    BloomFilter loaded = FilterFormat.readBloom(file);
    // endregion guide-bloomery-write
    assertThat(loaded.mightContain("https://example.com/")).isTrue();
  }

  @Test
  void importsWhatGuavaWrote() throws IOException {
    com.google.common.hash.BloomFilter<CharSequence> guava = com.google.common.hash.BloomFilter.create(
        com.google.common.hash.Funnels.stringFunnel(StandardCharsets.UTF_8), 1_000, 0.01);
    guava.put("https://example.com/");
    ByteArrayOutputStream written = new ByteArrayOutputStream();
    guava.writeTo(written);
    InputStream in = new ByteArrayInputStream(written.toByteArray());
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    // region guide-bloomery-import
    BloomFilter imported = GuavaBloomFormat.read(in); // a file Guava's writeTo wrote
    boolean seen = imported.mightContain("https://example.com/"); // as Guava answers
    GuavaBloomFormat.write(imported, out); // Guava's readFrom reads it back
    // endregion guide-bloomery-import
    assertThat(seen).isTrue();
    assertThat(out.toByteArray()).isEqualTo(written.toByteArray());
    for (int i = 0; i < 2_000; i++) {
      assertThat(imported.mightContain("other-" + i)).isEqualTo(guava.mightContain("other-" + i));
    }
  }

  @Test
  void guide_showsEveryRegionVerbatim() throws IOException {
    String guide = Files.readString(repositoryRoot().resolve("docs/FROM-GUAVA.md"), StandardCharsets.UTF_8);
    List<String> regions = new ArrayList<>();
    regions.addAll(regions(FromGuavaGuideTest.class));
    regions.addAll(regions(GuavaSideTest.class));
    assertThat(regions).hasSize(7);
    for (String region : regions) {
      assertThat(guide).as("docs/FROM-GUAVA.md must show this region verbatim:%n%s", region).contains(region);
    }
    Matcher block = Pattern.compile("```java\n(.*?)\n```", Pattern.DOTALL).matcher(guide);
    int blocks = 0;
    while (block.find()) {
      blocks++;
      assertThat(regions).as("a Java block of docs/FROM-GUAVA.md that no test runs").contains(block.group(1).strip());
    }
    assertThat(blocks).isEqualTo(regions.size());
  }

  private static List<String> regions(Class<?> test) throws IOException {
    Path source = repositoryRoot().resolve("core/src/test/java").resolve(test.getName().replace('.', '/') + ".java");
    Matcher region = Pattern.compile("// region (guide-[a-z-]+)\n(.*?)\n\\s*// endregion \\1", Pattern.DOTALL)
        .matcher(Files.readString(source, StandardCharsets.UTF_8));
    List<String> found = new ArrayList<>();
    while (region.find()) {
      found.add(region.group(2).stripIndent().strip());
    }
    return found;
  }

  private static Path repositoryRoot() {
    Path dir = Path.of("").toAbsolutePath();
    while (dir != null && !Files.exists(dir.resolve("docs/FROM-GUAVA.md"))) {
      dir = dir.getParent();
    }
    assertThat(dir).as("docs/FROM-GUAVA.md above " + Path.of("").toAbsolutePath()).isNotNull();
    return dir;
  }
}
