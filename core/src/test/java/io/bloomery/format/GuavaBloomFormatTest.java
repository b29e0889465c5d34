package io.bloomery.format;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.common.hash.Funnel;
import com.google.common.hash.Funnels;
import io.bloomery.filter.BloomFilter;
import io.bloomery.hash.ProtocolId;
import io.bloomery.hash.Protocols;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Guava 33 interoperability, against the real Guava {@code BloomFilter} (test dependency): filters
 * Guava writes import with identical answers, and filters Bloomery exports are read by Guava with
 * identical answers, for both the byte-array and the UTF-8 string funnel.
 */
class GuavaBloomFormatTest {
  static final String GOLDEN = "golden/guava";
  static final int NON_MEMBERS = 100_000;

  enum Items {
    /** {@code Funnels.byteArrayFunnel()} over 8 little-endian bytes of {@code i * golden ratio}. */
    BYTES {
      @Override
      byte[] item(long i) {
        return io.bloomery.internal.Items.littleEndian(i * 0x9E37_79B9_7F4A_7C15L);
      }

      @Override
      Object guavaItem(long i) {
        return item(i);
      }

      @SuppressWarnings({"unchecked", "rawtypes"})
      @Override
      Funnel<Object> funnel() {
        return (Funnel) Funnels.byteArrayFunnel();
      }
    },
    /** {@code Funnels.stringFunnel(UTF_8)} over {@code "guava-item-" + i} (with a non-ASCII twist). */
    STRING_UTF8 {
      @Override
      byte[] item(long i) {
        return ((String) guavaItem(i)).getBytes(StandardCharsets.UTF_8);
      }

      @Override
      Object guavaItem(long i) {
        return (i % 7 == 0 ? "gräße-" : "guava-item-") + i;
      }

      @SuppressWarnings({"unchecked", "rawtypes"})
      @Override
      Funnel<Object> funnel() {
        return (Funnel) Funnels.stringFunnel(StandardCharsets.UTF_8);
      }
    };

    abstract byte[] item(long i);

    abstract Object guavaItem(long i);

    abstract Funnel<Object> funnel();
  }

  /** Non-members are the indexes from 2^40 up, far from any member index. */
  static final long NON_MEMBER_BASE = 1L << 40;

  static com.google.common.hash.BloomFilter<Object> guavaFilter(Items items, long n, double fpp) {
    com.google.common.hash.BloomFilter<Object> filter = com.google.common.hash.BloomFilter.create(items.funnel(), n, fpp);
    for (long i = 0; i < n; i++) {
      filter.put(items.guavaItem(i));
    }
    return filter;
  }

  static byte[] writeTo(com.google.common.hash.BloomFilter<Object> filter) throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    filter.writeTo(out);
    return out.toByteArray();
  }

  static Stream<Arguments> grid() {
    List<Arguments> grid = new ArrayList<>();
    for (Items items : Items.values()) {
      for (long n : new long[] {1, 1_000, 20_000}) {
        for (double fpp : new double[] {0.03, 0.01, 1e-4}) {
          grid.add(Arguments.of(items, n, fpp));
        }
      }
    }
    return grid.stream();
  }

  @ParameterizedTest(name = "{0} n={1} fpp={2}")
  @MethodSource("grid")
  void guavaFilterImportsWithIdenticalAnswers(Items items, long n, double fpp) throws IOException {
    com.google.common.hash.BloomFilter<Object> guava = guavaFilter(items, n, fpp);
    byte[] bytes = writeTo(guava);
    BloomFilter imported = GuavaBloomFormat.fromBytes(bytes);

    assertThat(imported.protocolId()).isEqualTo(ProtocolId.GUAVA_MURMUR128_MITZ64);
    assertThat(imported.seed()).isEmpty();
    assertThat(imported.bitSize()).isEqualTo(64L * ((bytes.length - 6) / 8));
    assertThat(imported.insertedCount()).isEqualTo(Math.min(guava.approximateElementCount(), imported.bitCount()));
    assertThat(imported.estimatedFpp()).isCloseTo(guava.expectedFpp(), org.assertj.core.data.Offset.offset(1e-12));
    for (long i = 0; i < n; i++) {
      assertThat(imported.mightContain(items.item(i))).as("member %d", i).isTrue();
    }
    int falsePositives = assertSameAnswersOnNonMembers(imported, guava, items);
    // Not a statistical test (that is BloomFilter's job); a sanity bound that the probes hit non-members.
    assertThat(falsePositives).isLessThan(NON_MEMBERS / 10);

    assertThat(GuavaBloomFormat.toBytes(imported)).as("export is byte-identical to Guava's writeTo").isEqualTo(bytes);
  }

  @ParameterizedTest(name = "{0} n={1} fpp={2}")
  @MethodSource("grid")
  void bloomeryFilterExportsToGuavaWithIdenticalAnswers(Items items, long n, double fpp) throws IOException {
    com.google.common.hash.BloomFilter<Object> reference = guavaFilter(items, n, fpp);
    byte[] referenceBytes = writeTo(reference);
    long bits = 64L * ((referenceBytes.length - 6) / 8);
    int hashes = referenceBytes[1] & 0xFF;

    BloomFilter ours = BloomFilter.create(Protocols.of(ProtocolId.GUAVA_MURMUR128_MITZ64), new byte[0], bits, hashes);
    for (long i = 0; i < n; i++) {
      ours.add(items.item(i));
    }
    byte[] exported = GuavaBloomFormat.toBytes(ours);
    assertThat(exported).as("same items, same parameters: same bytes as Guava").isEqualTo(referenceBytes);

    com.google.common.hash.BloomFilter<Object> readByGuava =
        com.google.common.hash.BloomFilter.readFrom(new ByteArrayInputStream(exported), items.funnel());
    for (long i = 0; i < n; i++) {
      assertThat(readByGuava.mightContain(items.guavaItem(i))).as("member %d", i).isTrue();
    }
    assertSameAnswersOnNonMembers(ours, readByGuava, items, NON_MEMBERS / 5);
  }

  private static int assertSameAnswersOnNonMembers(
      BloomFilter ours, com.google.common.hash.BloomFilter<Object> guava, Items items) {
    return assertSameAnswersOnNonMembers(ours, guava, items, NON_MEMBERS);
  }

  private static int assertSameAnswersOnNonMembers(
      BloomFilter ours, com.google.common.hash.BloomFilter<Object> guava, Items items, int count) {
    int falsePositives = 0;
    for (long i = NON_MEMBER_BASE; i < NON_MEMBER_BASE + count; i++) {
      boolean maybe = ours.mightContain(items.item(i));
      if (maybe != guava.mightContain(items.guavaItem(i))) {
        throw new AssertionError("non-member " + i + ": Bloomery says " + maybe + ", Guava the opposite");
      }
      falsePositives += maybe ? 1 : 0;
    }
    return falsePositives;
  }

  @net.jqwik.api.Property(tries = 60, seed = "20261130")
  void anyGuavaFilterOfRandomItemsImportsAndExportsExactly(
      @net.jqwik.api.ForAll @net.jqwik.api.constraints.Size(min = 1, max = 400) List<byte[]> members,
      @net.jqwik.api.ForAll @net.jqwik.api.constraints.Size(max = 400) List<byte[]> probes,
      @net.jqwik.api.ForAll @net.jqwik.api.constraints.DoubleRange(min = 1e-5, max = 0.3) @net.jqwik.api.constraints.Scale(6)
          double fpp)
      throws IOException {
    @SuppressWarnings({"unchecked", "rawtypes"})
    com.google.common.hash.BloomFilter<byte[]> guava =
        com.google.common.hash.BloomFilter.create(Funnels.byteArrayFunnel(), members.size(), fpp);
    members.forEach(guava::put);
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    guava.writeTo(out);
    BloomFilter imported = GuavaBloomFormat.fromBytes(out.toByteArray());
    for (byte[] member : members) {
      assertThat(imported.mightContain(member)).isTrue();
    }
    for (byte[] probe : probes) {
      assertThat(imported.mightContain(probe)).isEqualTo(guava.mightContain(probe));
    }
    assertThat(GuavaBloomFormat.toBytes(imported)).isEqualTo(out.toByteArray());
    // And through Bloomery's own format and back, still Guava's bytes.
    assertThat(GuavaBloomFormat.toBytes(FilterFormat.readBloom(FilterFormat.toBytes(imported))))
        .isEqualTo(out.toByteArray());
  }

  @Test
  void streamReadConsumesExactlyOneFilter() throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    guavaFilter(Items.STRING_UTF8, 100, 0.01).writeTo(out);
    guavaFilter(Items.BYTES, 50, 0.05).writeTo(out);
    out.write(42);
    ByteArrayInputStream in = new ByteArrayInputStream(out.toByteArray());
    BloomFilter first = GuavaBloomFormat.read(in);
    BloomFilter second = GuavaBloomFormat.read(in);
    assertThat(first.mightContain(Items.STRING_UTF8.item(99))).isTrue();
    assertThat(second.mightContain(Items.BYTES.item(49))).isTrue();
    assertThat(in.read()).isEqualTo(42);
  }

  @Test
  void exportRefusesFiltersGuavaCannotRepresent() {
    BloomFilter xxh3 = BloomFilter.create(1000, 0.01);
    assertThatThrownBy(() -> GuavaBloomFormat.toBytes(xxh3))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("can only carry filters placed by 'guava-murmur128-mitz64'")
        .hasMessageContaining("this filter uses 'xxh3-edh-v1'");
  }

  @Test
  void guavaMitz32FilterIsRefusedWithTheReason() throws Exception {
    byte[] bytes = FormatFixtures.resourceFolder(GOLDEN).get("guava-33.8.0_mitz32_string-utf8_n100_fpp0.03.bin");
    assertThat(bytes[0]).isEqualTo((byte) GuavaBloomFormat.MURMUR128_MITZ_32_ORDINAL);
    assertThatThrownBy(() -> GuavaBloomFormat.fromBytes(bytes))
        .isExactlyInstanceOf(FilterFormatException.class)
        .hasMessageStartingWith("strategy ordinal at offset 0: expected 1 (MURMUR128_MITZ_64), found 0 (MURMUR128_MITZ_32")
        .hasMessageContaining("Guava issue #1119");
  }

  // ---------------------------------------------------------------------------------------------
  // Golden files written by Guava itself.

  /** A Guava golden file: which items, how many, at which fpp, and the pinned known answer. */
  static final class GoldenRecipe {
    final Items items;
    final long n;
    final double fpp;
    final int falsePositives;

    GoldenRecipe(Items items, long n, double fpp, int falsePositives) {
      this.items = items;
      this.n = n;
      this.fpp = fpp;
      this.falsePositives = falsePositives;
    }

    String fileName() {
      return String.format(Locale.ROOT, "guava-33.8.0_mitz64_%s_n%d_fpp%s.bin",
          items == Items.BYTES ? "bytes" : "string-utf8", n, java.math.BigDecimal.valueOf(fpp).toPlainString());
    }
  }

  static List<GoldenRecipe> goldenRecipes() {
    return List.of(
        new GoldenRecipe(Items.STRING_UTF8, 1_000, 0.01, GOLDEN_FP_STRING),
        new GoldenRecipe(Items.BYTES, 500, 0.001, GOLDEN_FP_BYTES));
  }

  // Known answers among the 100,000 non-members, recorded when Guava 33.8.0 wrote the files.
  static final int GOLDEN_FP_STRING = 1064;
  static final int GOLDEN_FP_BYTES = 114;

  static final String MITZ32_FILE = "guava-33.8.0_mitz32_string-utf8_n100_fpp0.03.bin";

  @Test
  void guavaGoldenFilesImportWithIdenticalAnswersAndExportByteIdentically() throws IOException {
    Map<String, byte[]> files = FormatFixtures.resourceFolder(GOLDEN);
    assertThat(files.keySet()).containsExactlyInAnyOrderElementsOf(
        Stream.concat(goldenRecipes().stream().map(GoldenRecipe::fileName), Stream.of(MITZ32_FILE))
            .collect(Collectors.toList()));
    for (GoldenRecipe recipe : goldenRecipes()) {
      byte[] golden = files.get(recipe.fileName());
      BloomFilter imported = GuavaBloomFormat.fromBytes(golden);
      com.google.common.hash.BloomFilter<Object> guava =
          com.google.common.hash.BloomFilter.readFrom(new ByteArrayInputStream(golden), recipe.items.funnel());
      for (long i = 0; i < recipe.n; i++) {
        assertThat(imported.mightContain(recipe.items.item(i))).as("%s member %d", recipe.fileName(), i).isTrue();
      }
      assertThat(assertSameAnswersOnNonMembers(imported, guava, recipe.items))
          .as("%s: false positives among %d non-members", recipe.fileName(), NON_MEMBERS)
          .isEqualTo(recipe.falsePositives);
      assertThat(GuavaBloomFormat.toBytes(imported)).isEqualTo(golden);
      // And the file is still what this Guava writes for the recipe.
      assertThat(writeTo(guavaFilter(recipe.items, recipe.n, recipe.fpp))).isEqualTo(golden);
    }
  }

  /** Writes the Guava golden files with the Guava on the test classpath (33.8.0-jre). */
  @Test
  @EnabledIfSystemProperty(named = "bloomery.regenerateGolden", matches = "true")
  void regenerate() throws Exception {
    Path dir = Paths.get("src/test/resources").resolve(GOLDEN);
    Files.createDirectories(dir);
    for (GoldenRecipe recipe : goldenRecipes()) {
      com.google.common.hash.BloomFilter<Object> guava = guavaFilter(recipe.items, recipe.n, recipe.fpp);
      Files.write(dir.resolve(recipe.fileName()), writeTo(guava));
      int falsePositives = 0;
      for (long i = NON_MEMBER_BASE; i < NON_MEMBER_BASE + NON_MEMBERS; i++) {
        falsePositives += guava.mightContain(recipe.items.guavaItem(i)) ? 1 : 0;
      }
      System.out.println("golden " + recipe.fileName() + " false positives: " + falsePositives);
    }
    // MITZ_32 is reachable only through Guava's package-private create(funnel, n, fpp, strategy).
    Class<?> strategies = Class.forName("com.google.common.hash.BloomFilterStrategies");
    Object mitz32 = strategies.getEnumConstants()[GuavaBloomFormat.MURMUR128_MITZ_32_ORDINAL];
    Class<?> strategy = Class.forName("com.google.common.hash.BloomFilter$Strategy");
    Method create = com.google.common.hash.BloomFilter.class.getDeclaredMethod(
        "create", Funnel.class, long.class, double.class, strategy);
    create.setAccessible(true);
    @SuppressWarnings("unchecked")
    com.google.common.hash.BloomFilter<Object> filter =
        (com.google.common.hash.BloomFilter<Object>) create.invoke(null, Items.STRING_UTF8.funnel(), 100L, 0.03, mitz32);
    for (long i = 0; i < 100; i++) {
      filter.put(Items.STRING_UTF8.guavaItem(i));
    }
    Files.write(dir.resolve(MITZ32_FILE), writeTo(filter));
  }
}
