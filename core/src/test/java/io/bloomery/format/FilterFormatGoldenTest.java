package io.bloomery.format;

import static io.bloomery.format.FormatFixtures.assertSameFilter;
import static org.assertj.core.api.Assertions.assertThat;

import io.bloomery.filter.BloomFilter;
import io.bloomery.hash.ProtocolId;
import io.bloomery.hash.Protocols;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * Golden files of format version 1 ({@code src/test/resources/golden/native/v1/}): current code must
 * read every checked-in file to exactly the filter its recipe builds today, answer identically, and
 * write it back byte for byte. A failure here means either the format or a hash protocol changed —
 * both are frozen once shipped (docs/PROTOCOLS.md, docs/FORMAT.md "Versioning").
 *
 * <p>Files are regenerated only deliberately, by {@link #regenerate()} with {@code
 * -Dbloomery.regenerateGolden=true}; a new format version gets a new {@code vN} folder and the old
 * files stay.
 */
class FilterFormatGoldenTest {
  static final String FOLDER = "golden/native/v1";
  static final int NON_MEMBERS = 10_000;

  /** How each golden file is built; the file name spells the recipe. */
  static final class Recipe {
    final ProtocolId protocol;
    final byte[] seed;
    final long bits;
    final int hashes;
    final List<String> members;
    /** Known answer: how many of {@code non-member-0 .. non-member-9999} the filter reports maybe. */
    final int falsePositives;

    Recipe(ProtocolId protocol, String seed, long bits, int hashes, List<String> members, int falsePositives) {
      this.protocol = protocol;
      this.seed = seed.getBytes(StandardCharsets.UTF_8);
      this.bits = bits;
      this.hashes = hashes;
      this.members = members;
      this.falsePositives = falsePositives;
    }

    String fileName() {
      StringBuilder name = new StringBuilder("classic_").append(protocol.protocolName())
          .append("_m").append(bits).append("_k").append(hashes).append("_n").append(members.size());
      if (seed.length > 0) {
        name.append("_seed-").append(hexOf(seed));
      }
      return name.append(FilterFormat.FILE_EXTENSION).toString();
    }

    BloomFilter build() {
      BloomFilter filter = BloomFilter.create(Protocols.of(protocol), seed, bits, hashes);
      for (String member : members) {
        filter.add(member);
      }
      return filter;
    }
  }

  static List<String> items(String format, int count) {
    List<String> items = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      items.add(String.format(java.util.Locale.ROOT, format, i));
    }
    return items;
  }

  static List<Recipe> recipes() {
    List<String> hundred = items("item-%d", 100);
    return List.of(
        new Recipe(ProtocolId.XXH3_EDH_V1, "", 1024, 7, hundred, FP_XXH3),
        new Recipe(ProtocolId.XXH3_EDH_V1, "tenant-a", 1000, 5, items("item-%d", 50), FP_XXH3_SEEDED),
        // The sha256-doc-v1 fixture of docs/PROTOCOLS.md / vectors/sha256-doc-v1.json.
        new Recipe(ProtocolId.SHA256_DOC_V1, "lab", 16, 3, items("doc-%02d", 4), FP_DOC_FIXTURE),
        new Recipe(ProtocolId.SHA256_INDEX8, "", 1024, 7, hundred, FP_INDEX8),
        new Recipe(ProtocolId.SHA256_INDEX16, "", 1024, 7, hundred, FP_INDEX16),
        new Recipe(ProtocolId.GUAVA_MURMUR128_MITZ64, "", 1024, 7, hundred, FP_GUAVA));
  }

  // Known answers, recorded when the files were generated (model for m = 1024, k = 7, n = 100:
  // (1 - e^(-kn/m))^k = 0.73%, i.e. ~73 of 10,000; Guava's MITZ_64 walks h1 + i*h2 mod 1024, which
  // repeats positions when h2 is even and m a power of two, hence its higher count).
  static final int FP_XXH3 = 63;
  static final int FP_XXH3_SEEDED = 4;
  static final int FP_DOC_FIXTURE = 816;
  static final int FP_INDEX8 = 83;
  static final int FP_INDEX16 = 77;
  static final int FP_GUAVA = 107;

  @Test
  void everyProtocolDesignedForClassicFiltersHasAGoldenFile() {
    // Protocols of other kinds (Parquet, RedisBloom, blocked) keep golden files of their own kind.
    assertThat(recipes().stream().map(r -> r.protocol).collect(Collectors.toSet()))
        .containsExactlyInAnyOrderElementsOf(FilterFormatRoundTripTest.CLASSIC_PROTOCOLS);
  }

  @Test
  void classicFilesInTheFolderAreExactlyTheRecipes() throws IOException {
    // Other kinds keep their golden files in the same folder under their own prefix and recipes.
    assertThat(FormatFixtures.resourceFolder(FOLDER).keySet().stream().filter(name -> name.startsWith("classic_")))
        .containsExactlyInAnyOrderElementsOf(recipes().stream().map(Recipe::fileName).collect(Collectors.toList()));
  }

  @Test
  void goldenFilesReadToTheirRecipeAndWriteBackByteIdentically() throws IOException {
    Map<String, byte[]> files = FormatFixtures.resourceFolder(FOLDER);
    for (Recipe recipe : recipes()) {
      byte[] golden = files.get(recipe.fileName());
      assertThat(golden).as(recipe.fileName()).isNotNull();
      BloomFilter read = FilterFormat.readBloom(golden);
      BloomFilter built = recipe.build();
      assertSameFilter(read, built, 0, 0);
      for (String member : recipe.members) {
        assertThat(read.mightContain(member)).as("%s: member %s", recipe.fileName(), member).isTrue();
      }
      int falsePositives = 0;
      for (int i = 0; i < NON_MEMBERS; i++) {
        String probe = "non-member-" + i;
        boolean maybe = read.mightContain(probe);
        assertThat(maybe).isEqualTo(built.mightContain(probe));
        falsePositives += maybe ? 1 : 0;
      }
      assertThat(falsePositives).as("%s: false positives among %d non-members", recipe.fileName(), NON_MEMBERS)
          .isEqualTo(recipe.falsePositives);
      assertThat(FilterFormat.toBytes(read)).as(recipe.fileName()).isEqualTo(golden);
      assertThat(FilterFormat.toBytes(built)).as(recipe.fileName()).isEqualTo(golden);
    }
  }

  @Test
  void docFixtureMatchesThePublishedVector() throws IOException {
    byte[] golden = FormatFixtures.resourceFolder(FOLDER).get("classic_sha256-doc-v1_m16_k3_n4_seed-6c6162.blmf");
    BloomFilter fixture = FilterFormat.readBloom(golden);
    assertThat(fixture.toPackedBytes()).isEqualTo(FormatFixtures.hex("d291"));
    assertThat(fixture.bitCount()).isEqualTo(7);
    List<String> falsePositives = new ArrayList<>();
    for (String probe : items("doc-%02d", 64).subList(4, 64)) {
      if (fixture.mightContain(probe)) {
        falsePositives.add(probe);
      }
    }
    assertThat(falsePositives).containsExactly("doc-04", "doc-41", "doc-43", "doc-44", "doc-51");
  }

  /** Rewrites the golden files from the recipes; run only to add a file, never to "fix" a failure. */
  @Test
  @EnabledIfSystemProperty(named = "bloomery.regenerateGolden", matches = "true")
  void regenerate() throws IOException {
    Path dir = Paths.get("src/test/resources").resolve(FOLDER);
    Files.createDirectories(dir);
    for (Recipe recipe : recipes()) {
      BloomFilter filter = recipe.build();
      Files.write(dir.resolve(recipe.fileName()), FilterFormat.toBytes(filter));
      int falsePositives = 0;
      for (int i = 0; i < NON_MEMBERS; i++) {
        falsePositives += filter.mightContain("non-member-" + i) ? 1 : 0;
      }
      System.out.println("golden " + recipe.fileName() + " false positives: " + falsePositives);
    }
  }

  static String hexOf(byte[] bytes) {
    StringBuilder out = new StringBuilder();
    for (byte b : bytes) {
      out.append(String.format(java.util.Locale.ROOT, "%02x", b & 0xFF));
    }
    return out.toString();
  }
}
