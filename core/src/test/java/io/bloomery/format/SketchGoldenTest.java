package io.bloomery.format;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomery.aging.AgePartitionedFilter;
import io.bloomery.blocked.ScalableBlockedBloomFilter;
import io.bloomery.counting.CountingBloomFilter;
import io.bloomery.filter.Summary;
import io.bloomery.hash.Protocols;
import io.bloomery.sketch.CountMinSketch;
import io.bloomery.sketch.DecayRandom;
import io.bloomery.sketch.TopK;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import java.util.Map;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * Golden files (format version 1) of the counting, count-min, top-k, age-partitioned and scaling blocked kinds: each
 * checked-in file must read to exactly what its recipe builds today, answer identically, and write
 * back byte for byte. Regenerate only deliberately ({@code -Dbloomery.regenerateGolden=true}).
 */
class SketchGoldenTest {
  static final String FOLDER = FilterFormatGoldenTest.FOLDER;
  static final long NOW = 1_764_460_800_000L;
  static final LongSupplier CLOCK = () -> NOW;

  /** File name → recipe. The names spell the recipes. */
  static Map<String, Supplier<Summary>> recipes() {
    return Map.of(
        "counting_xxh3-edh-v1_m1024_k7_w4_n100.blmf", () -> {
          CountingBloomFilter filter = CountingBloomFilter.create(Protocols.defaultProtocol(), new byte[0], 1024, 7, 4);
          for (int i = 0; i < 100; i++) {
            filter.add("item-" + i);
            if (i % 10 == 0) {
              filter.add("item-" + i); // multiplicity 2 for every tenth item
            }
          }
          return filter;
        },
        "count-min_redisbloom-murmur2_w64_d4_n100.blmf", () -> {
          CountMinSketch cms = CountMinSketch.initByDimensions(64, 4);
          for (int i = 0; i < 100; i++) {
            cms.incrementBy("item-" + i, i + 1);
          }
          return cms;
        },
        "top-k_redisbloom-murmur2_k5_w16_d4_n300_glibc1.blmf", () -> {
          TopK topK = TopK.reserve(5, 16, 4, 0.9, DecayRandom.glibc(1));
          for (int i = 0; i < 300; i++) {
            topK.add("item-" + (i % 7 == 0 ? 0 : i % 13));
          }
          return topK;
        },
        "age-partitioned_xxh3-edh-v1_m1024_k7_g4_s60000_n100.blmf", () -> {
          long[] now = {NOW - 3 * 60_000};
          AgePartitionedFilter filter = AgePartitionedFilter.create(Protocols.defaultProtocol(), new byte[0], 1024, 7, 4, 60_000, () -> now[0]);
          for (int i = 0; i < 100; i++) {
            filter.add("item-" + i);
            if (i % 25 == 24) {
              now[0] += 60_000; // 25 items per generation
            }
          }
          return filter.copy(CLOCK);
        },
        "scalable-blocked_xxh3-blocked-v1_c16_e0.05_x2_n100_seed-676f6c64.blmf", () -> {
          ScalableBlockedBloomFilter chain = ScalableBlockedBloomFilter.create(
              "gold".getBytes(java.nio.charset.StandardCharsets.UTF_8), 16, 0.05, 2);
          for (int i = 0; i < 100; i++) {
            chain.add("item-" + i); // 16 + 32 + 64: three layers
          }
          return chain;
        });
  }

  @Test
  void sketchFilesInTheFolderAreExactlyTheRecipes() throws IOException {
    List<String> prefixes = List.of("counting_", "count-min_", "top-k_", "age-partitioned_", "scalable-blocked_");
    assertThat(FormatFixtures.resourceFolder(FOLDER).keySet().stream()
            .filter(name -> prefixes.stream().anyMatch(name::startsWith))
            .collect(Collectors.toList()))
        .containsExactlyInAnyOrderElementsOf(recipes().keySet());
  }

  @Test
  void goldenFilesReadToTheirRecipeAndWriteBackByteIdentically() throws IOException {
    Map<String, byte[]> files = FormatFixtures.resourceFolder(FOLDER);
    for (Map.Entry<String, Supplier<Summary>> recipe : recipes().entrySet()) {
      byte[] golden = files.get(recipe.getKey());
      assertThat(golden).as(recipe.getKey()).isNotNull();
      Summary built = recipe.getValue().get();
      Summary read = FilterFormat.fromBytes(golden);
      if (read instanceof AgePartitionedFilter) {
        read = ((AgePartitionedFilter) read).copy(CLOCK);
      }
      assertThat(read).hasSameClassAs(built);
      assertThat(FilterFormat.toBytes(built)).as("%s: recipe builds the golden bytes", recipe.getKey()).isEqualTo(golden);
      assertThat(FilterFormat.toBytes(read)).as("%s: read-back rewrites byte-identically", recipe.getKey()).isEqualTo(golden);
      for (int i = 0; i < 200; i++) {
        String probe = "item-" + i;
        assertThat(answer(read, probe)).as("%s: %s", recipe.getKey(), probe).isEqualTo(answer(built, probe));
      }
    }
  }

  private static Object answer(Object filter, String probe) {
    if (filter instanceof CountingBloomFilter) {
      return ((CountingBloomFilter) filter).mightContain(probe);
    }
    if (filter instanceof AgePartitionedFilter) {
      return ((AgePartitionedFilter) filter).mightContain(probe);
    }
    if (filter instanceof ScalableBlockedBloomFilter) {
      return ((ScalableBlockedBloomFilter) filter).mightContain(probe);
    }
    if (filter instanceof CountMinSketch) {
      return ((CountMinSketch) filter).count(probe);
    }
    TopK topK = (TopK) filter;
    return List.of(topK.query(probe), topK.count(probe));
  }

  /** Rewrites these kinds' golden files; run only to add a file, never to "fix" a failure. */
  @Test
  @EnabledIfSystemProperty(named = "bloomery.regenerateGolden", matches = "true")
  void regenerate() throws IOException {
    Path dir = Paths.get("src/test/resources").resolve(FOLDER);
    Files.createDirectories(dir);
    for (Map.Entry<String, Supplier<Summary>> recipe : recipes().entrySet()) {
      Files.write(dir.resolve(recipe.getKey()), FilterFormat.toBytes(recipe.getValue().get()));
    }
  }
}
