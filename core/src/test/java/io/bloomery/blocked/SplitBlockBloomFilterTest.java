package io.bloomery.blocked;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomery.filter.IncompatibleFilterException;
import io.bloomery.format.ParquetBloomFormat;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import org.apache.parquet.column.values.bloomfilter.BlockSplitBloomFilter;
import org.apache.parquet.io.api.Binary;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Byte compatibility with parquet-java's BlockSplitBloomFilter and the parquet-testing golden file. */
class SplitBlockBloomFilterTest {

  private static final String[] GOLDEN_KEYS = {"hello", "parquet", "bloom", "filter"};

  private static byte[] golden() throws Exception {
    try (InputStream in = SplitBlockBloomFilterTest.class.getResourceAsStream("/golden/parquet/bloom_filter.xxhash.bin")) {
      return in.readAllBytes();
    }
  }

  private static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  @Test
  void xxh64KnownAnswers() {
    // Third-party XXH64 seed-0 values of the keys parquet-testing's bloom_filter.xxhash.bin was built from
    // ("" is xxHash's own value for the empty input).
    assertThat(Long.toHexString(SplitBlockBloomFilter.hash(new byte[0], 0, 0))).isEqualTo("ef46db3751d8e999");
    assertThat(Long.toHexString(SplitBlockBloomFilter.hash(utf8("hello"), 0, 5))).isEqualTo("26c7827d889f6da3");
    assertThat(Long.toHexString(SplitBlockBloomFilter.hash(utf8("parquet"), 0, 7))).isEqualTo("3c9d29275c52e429");
    assertThat(Long.toHexString(SplitBlockBloomFilter.hash(utf8("bloom"), 0, 5))).isEqualTo("50c8fb9e62dbc53c");
    assertThat(Long.toHexString(SplitBlockBloomFilter.hash(utf8("filter"), 0, 6))).isEqualTo("2a5736cdfcd7a9a1");
    // parquet-java hashes a Binary as its raw bytes: no length prefix.
    BlockSplitBloomFilter parquet = new BlockSplitBloomFilter(1024);
    assertThat(parquet.hash(Binary.fromString("hello"))).isEqualTo(0x26c7827d889f6da3L);
    assertThat(parquet.hash(42L)).isEqualTo(SplitBlockBloomFilter.hash(littleEndian(42L), 0, 8));
  }

  @Test
  void longsAreEightLittleEndianBytes() {
    SplitBlockBloomFilter viaLong = SplitBlockBloomFilter.create(1000, 0.01);
    SplitBlockBloomFilter viaBytes = SplitBlockBloomFilter.create(1000, 0.01);
    for (long v : new long[] {0, 1, -1, Long.MIN_VALUE, 0x0102030405060708L}) {
      viaLong.add(v);
      viaBytes.add(littleEndian(v));
      assertThat(viaBytes.mightContain(v)).isTrue();
    }
    for (long w = 0; w < viaLong.wordCount(); w++) {
      assertThat(viaLong.word(w)).as("word %d", w).isEqualTo(viaBytes.word(w));
    }
    assertThat(viaLong.bitCount()).isPositive();
  }

  private static byte[] littleEndian(long v) {
    return ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(v).array();
  }

  @Test
  void goldenFileLoadsAndAnswersIdentically() throws Exception {
    byte[] bytes = golden();
    assertThat(bytes).hasSize(1040);
    SplitBlockBloomFilter ours = ParquetBloomFormat.fromBytes(bytes);
    assertThat(ours.byteSize()).isEqualTo(1024);
    assertThat(ours.blockCount()).isEqualTo(32);
    for (String key : GOLDEN_KEYS) {
      assertThat(ours.mightContain(key)).as(key).isTrue();
    }
    // parquet-java over the same bitset, for keys in and out.
    byte[] bitset = java.util.Arrays.copyOfRange(bytes, 16, bytes.length);
    BlockSplitBloomFilter parquet = new BlockSplitBloomFilter(bitset);
    int agreeingAbsent = 0;
    for (int i = 0; i < 10_000; i++) {
      String key = "not-a-member-" + i;
      boolean theirs = parquet.findHash(parquet.hash(Binary.fromString(key)));
      assertThat(ours.mightContain(key)).as(key).isEqualTo(theirs);
      agreeingAbsent += theirs ? 0 : 1;
    }
    assertThat(agreeingAbsent).isGreaterThan(9_900);
    // Rebuilding from the four keys gives the golden bytes exactly, header included.
    SplitBlockBloomFilter rebuilt = SplitBlockBloomFilter.ofBytes(1024);
    for (String key : GOLDEN_KEYS) {
      rebuilt.add(key);
    }
    assertThat(ParquetBloomFormat.toBytes(rebuilt)).isEqualTo(bytes);
    assertThat(ParquetBloomFormat.header(1024)).hasSize(16);
  }

  @ParameterizedTest
  @ValueSource(ints = {32, 4096, 131_072, 96 * 1024 + 32})
  void oursLoadInParquetJavaAndTheirsInOurs(int numBytes) throws Exception {
    int members = 100_000;
    SplitBlockBloomFilter ours = SplitBlockBloomFilter.ofBytes(numBytes);
    BlockSplitBloomFilter theirs = new BlockSplitBloomFilter(new byte[numBytes]);
    for (int i = 0; i < members; i++) {
      byte[] key = utf8("https://example.com/item/" + i);
      ours.add(key);
      theirs.insertHash(theirs.hash(Binary.fromConstantByteArray(key)));
    }
    ByteArrayOutputStream theirBytes = new ByteArrayOutputStream();
    theirs.writeTo(theirBytes);
    ByteArrayOutputStream ourBytes = new ByteArrayOutputStream();
    ours.writeBitset(ourBytes);
    assertThat(ourBytes.toByteArray()).isEqualTo(theirBytes.toByteArray());

    BlockSplitBloomFilter loadedInParquet = new BlockSplitBloomFilter(ourBytes.toByteArray());
    SplitBlockBloomFilter loadedInOurs = SplitBlockBloomFilter.restore(numBytes, 0,
        new java.io.ByteArrayInputStream(theirBytes.toByteArray()));
    for (int i = 0; i < 2 * members; i++) {
      byte[] key = utf8((i < members ? "https://example.com/item/" : "https://example.org/other/") + i);
      long hash = loadedInParquet.hash(Binary.fromConstantByteArray(key));
      boolean parquetAnswer = loadedInParquet.findHash(hash);
      assertThat(ours.mightContain(key)).isEqualTo(parquetAnswer);
      assertThat(loadedInOurs.findHash(hash)).isEqualTo(parquetAnswer);
      if (i < members) {
        assertThat(parquetAnswer).isTrue();
      }
    }
  }

  @Test
  void parquetSizedMatchesParquetJava() {
    for (long n : new long[] {1, 1000, 100_000, 5_000_000}) {
      for (double p : new double[] {0.01, 0.05}) {
        int maxBytes = 1 << 20;
        int expectedBytes = new BlockSplitBloomFilter(
            BlockSplitBloomFilter.optimalNumOfBits(n, p) / 8, maxBytes).getBitsetSize();
        assertThat(SplitBlockBloomFilter.createParquetSized(n, p, maxBytes).byteSize()).as("n=%d p=%s", n, p)
            .isEqualTo(expectedBytes);
      }
    }
  }

  @Test
  void realizedFprWithinBinomialBoundOfTheModel() {
    int n = 300_000;
    SplitBlockBloomFilter filter = SplitBlockBloomFilter.create(n, 0.01);
    for (int i = 0; i < n; i++) {
      filter.add("m" + i);
    }
    int probes = 1_000_000;
    long positives = 0;
    for (int i = 0; i < probes; i++) {
      positives += filter.mightContain("x" + i) ? 1 : 0;
    }
    Binomial.assertWithin999(positives, probes, filter.estimatedFpp(), "split-block vs its own estimatedFpp");
    Binomial.assertWithin999(positives, probes, filter.modelFpp(n), "split-block vs model");
    assertThat(filter.estimatedCardinality()).isBetween((long) (n * 0.97), (long) (n * 1.03));
  }

  @Test
  void batchAgreesAndMergeRefusesOtherSizes() {
    SplitBlockBloomFilter a = SplitBlockBloomFilter.create(5000, 0.01);
    SplitBlockBloomFilter b = SplitBlockBloomFilter.create(5000, 0.01);
    byte[][] items = new byte[5000][];
    for (int i = 0; i < items.length; i++) {
      items[i] = utf8("i" + i);
      a.add(items[i]);
    }
    assertThat(b.addAll(items)).isEqualTo(a.insertedCount());
    for (long w = 0; w < a.wordCount(); w++) {
      assertThat(b.word(w)).isEqualTo(a.word(w));
    }
    boolean[] out = new boolean[items.length];
    assertThat(a.mightContainAll(items, out)).isEqualTo(items.length);
    assertThatThrownBy(() -> a.mergeFrom(SplitBlockBloomFilter.ofBytes(64)))
        .isInstanceOf(IncompatibleFilterException.class).hasMessageContaining("block count");
    long inserted = a.insertedCount();
    assertThat(a.isCompatible(a)).isFalse();
    assertThatThrownBy(() -> a.mergeFrom(a)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("itself");
    assertThat(a.insertedCount()).isEqualTo(inserted);
    assertThatThrownBy(() -> SplitBlockBloomFilter.ofBytes(33)).hasMessageContaining("multiple of 32");
  }
}
