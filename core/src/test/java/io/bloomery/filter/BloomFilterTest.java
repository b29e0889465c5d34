package io.bloomery.filter;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomery.hash.HashProtocol;
import io.bloomery.hash.ProtocolId;
import io.bloomery.hash.Protocols;
import io.bloomery.sizing.BloomMath;
import io.bloomery.testkit.Hex;
import io.bloomery.testkit.Keys;
import java.io.EOFException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

class BloomFilterTest {

  private static final HashProtocol XXH3 = Protocols.defaultProtocol();
  private static final byte[] NO_SEED = new byte[0];

  static long[] wordsOf(BloomFilter filter) {
    long[] words = new long[Math.toIntExact(filter.wordCount())];
    for (int j = 0; j < words.length; j++) {
      words[j] = filter.word(j);
    }
    return words;
  }

  @Test
  void createSizesWithBloomMathAndTheDefaultProtocol() {
    BloomFilter filter = BloomFilter.create(1_000_000, 0.01);
    assertThat(filter.kind()).isEqualTo(FilterKind.CLASSIC_BLOOM);
    assertThat(filter.protocolId()).isEqualTo(ProtocolId.XXH3_EDH_V1);
    assertThat(filter.seed()).isEmpty();
    assertThat(filter.bitSize()).isEqualTo(9_585_059);
    assertThat(filter.hashCount()).isEqualTo(7);
    assertThat(filter.wordCount()).isEqualTo((9_585_059 + 63) / 64);
    assertThat(filter.capacity()).isEqualTo(1_022_131).isEqualTo(BloomMath.capacityForHashes(9_585_059, 7));
    assertThat(filter.insertedCount()).isZero();
    assertThat(filter.bitCount()).isZero();
    assertThat(filter.fillRatio()).isZero();
    assertThat(filter.estimatedFpp()).isZero();
    assertThat(filter.estimatedCardinality()).isZero();
    assertThat(filter.isNearCapacity()).isFalse();
    assertThatThrownBy(() -> BloomFilter.create(0, 0.01)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> BloomFilter.create(100, 1.0)).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void addSetsExactlyThePositionsTheProtocolDefines() {
    // The allocation-free walk in BloomFilter must equal HashProtocol.Placement.positions.
    // Every registered protocol, so one that wrongly claims DoubleHashingPlacement is caught.
    for (ProtocolId id : Protocols.implemented()) {
      HashProtocol protocol = Protocols.of(id);
      long m = acceptsBits(protocol, 1_000_064) ? 1_000_064 : 65_472; // multiples of 64 (Guava); doc-v1 <= 65535
      int k = 9;
      HashProtocol.Placement placement = protocol.bind(m, k, NO_SEED);
      for (int i = 0; i < 200; i++) {
        byte[] key = Keys.binary(3, i, 40);
        BloomFilter filter = BloomFilter.create(protocol, NO_SEED, m, k);
        filter.add(key);
        long[] positions = new long[k];
        placement.positions(key, 0, key.length, positions);
        long[] expected = new long[Math.toIntExact(filter.wordCount())];
        for (long position : positions) {
          expected[(int) (position >>> 6)] |= 1L << position;
        }
        assertThat(wordsOf(filter)).isEqualTo(expected);
        assertThat(filter.bitCount()).isEqualTo(java.util.Arrays.stream(expected).map(Long::bitCount).sum());
      }
    }
  }

  private static boolean acceptsBits(HashProtocol protocol, long bits) {
    try {
      protocol.checkParameters(bits, 9, NO_SEED);
      return true;
    } catch (IllegalArgumentException e) {
      return false;
    }
  }

  @Test
  void offsetAndLengthSelectTheItem() {
    BloomFilter filter = BloomFilter.create(XXH3, NO_SEED, 10_000, 5);
    byte[] buffer = "xxhelloyy".getBytes(StandardCharsets.UTF_8);
    assertThat(filter.add(buffer, 2, 5)).isTrue();
    assertThat(filter.mightContain("hello")).isTrue();
    assertThat(filter.add("hello")).isFalse();
    assertThatThrownBy(() -> filter.add(buffer, 5, 5)).isInstanceOf(IndexOutOfBoundsException.class);
    assertThatThrownBy(() -> filter.mightContain(buffer, -1, 2)).isInstanceOf(IndexOutOfBoundsException.class);
    assertThatThrownBy(() -> filter.add(null, 0, 0)).isInstanceOf(NullPointerException.class).hasMessage("item");
  }

  @Test
  void longItemsAreEightLittleEndianBytes() {
    BloomFilter filter = BloomFilter.create(XXH3, NO_SEED, 10_000, 5);
    filter.add(0x0102030405060708L);
    BloomFilter other = BloomFilter.create(XXH3, NO_SEED, 10_000, 5);
    other.add(new byte[] {8, 7, 6, 5, 4, 3, 2, 1});
    assertThat(wordsOf(filter)).isEqualTo(wordsOf(other));
  }

  @Test
  void unicodeFormsAreDifferentItems() {
    BloomFilter nfc = BloomFilter.create(XXH3, NO_SEED, 1 << 20, 7);
    BloomFilter nfd = BloomFilter.create(XXH3, NO_SEED, 1 << 20, 7);
    nfc.add("caf\u00e9");
    nfd.add("cafe\u0301");
    assertThat(wordsOf(nfc)).isNotEqualTo(wordsOf(nfd));
  }

  @Test
  void statisticsFollowTheSetBits() {
    long m = 100_000;
    int k = 7;
    BloomFilter filter = BloomFilter.create(XXH3, NO_SEED, m, k);
    int n = 5_000;
    for (int i = 0; i < n; i++) {
      filter.add(Keys.urlBytes(11, i));
    }
    long set = 0;
    for (long word : wordsOf(filter)) {
      set += Long.bitCount(word);
    }
    assertThat(filter.bitCount()).isEqualTo(set);
    assertThat(filter.fillRatio()).isEqualTo((double) set / m);
    assertThat(filter.estimatedFpp()).isEqualTo(Math.pow((double) set / m, k));
    assertThat(filter.estimatedCardinality())
        .isEqualTo(Math.round(-(double) m / k * Math.log(1 - (double) set / m)));
    assertThat(filter.insertedCount()).isLessThanOrEqualTo(n).isGreaterThan(n - 10);
    assertThat(filter.capacity()).isEqualTo(10_663); // largest n with round(100000 ln2 / n) >= 7
    assertThat(filter.isNearCapacity()).isFalse(); // ~5000 of 10663
  }

  @Test
  void cardinalityEstimateIsWithinAFewPercentAtModerateFill() {
    for (int n : new int[] {1_000, 20_000, 60_000}) {
      BloomFilter filter = BloomFilter.create(100_000, 0.01);
      for (int i = 0; i < n; i++) {
        filter.add(Keys.urlBytes(12, i));
      }
      assertThat((double) filter.estimatedCardinality()).as("n=%d", n).isCloseTo(n, org.assertj.core.data.Percentage.withPercentage(3));
    }
  }

  @Test
  void nearCapacityTurnsOnAt80PercentOfCapacity() {
    BloomFilter filter = BloomFilter.create(XXH3, NO_SEED, 1_000_000, 7); // capacity 106,638
    assertThat(filter.capacity()).isEqualTo(106_638);
    int i = 0;
    while (!filter.isNearCapacity()) {
      filter.add(Keys.urlBytes(13, i++));
    }
    // Turned on when the estimate reached 0.8 * 106638 = 85310.4; the estimate tracks i within ~1%.
    assertThat(filter.estimatedCardinality()).isGreaterThanOrEqualTo(85_311);
    assertThat((double) i).isCloseTo(85_311, org.assertj.core.data.Percentage.withPercentage(2));
  }

  @Test
  void saturatedFilterReportsUnboundedCardinality() {
    BloomFilter filter = BloomFilter.create(XXH3, NO_SEED, 64, 3);
    for (int i = 0; filter.bitCount() < 64; i++) {
      filter.add(Keys.binary(14, i, 8));
    }
    assertThat(filter.fillRatio()).isEqualTo(1.0);
    assertThat(filter.estimatedFpp()).isEqualTo(1.0);
    assertThat(filter.estimatedCardinality()).isEqualTo(Long.MAX_VALUE);
    assertThat(filter.isNearCapacity()).isTrue();
    assertThat(filter.mightContain("anything at all")).isTrue();
    assertThat(filter.add("anything at all")).isFalse();
  }

  @Test
  void mergeIsTheUnionAndAddsTheCounts() {
    BloomFilter left = BloomFilter.create(XXH3, "s".getBytes(StandardCharsets.UTF_8), 50_000, 5);
    BloomFilter right = BloomFilter.create(XXH3, "s".getBytes(StandardCharsets.UTF_8), 50_000, 5);
    BloomFilter union = BloomFilter.create(XXH3, "s".getBytes(StandardCharsets.UTF_8), 50_000, 5);
    for (int i = 0; i < 3_000; i++) {
      byte[] key = Keys.urlBytes(15, i);
      (i % 3 == 0 ? left : right).add(key);
      union.add(key);
    }
    long leftCount = left.insertedCount();
    long rightCount = right.insertedCount();
    assertThat(left.isCompatible(right)).isTrue();
    assertThat(left.isCompatible(left)).isFalse();
    left.mergeFrom(right);
    assertThat(wordsOf(left)).isEqualTo(wordsOf(union));
    assertThat(left.bitCount()).isEqualTo(union.bitCount());
    assertThat(left.insertedCount()).isEqualTo(leftCount + rightCount);
    assertThatThrownBy(() -> left.mergeFrom(left)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("itself");
  }

  @Test
  void mergeRefusesEachMismatchNamingTheParameterAndBothValues() {
    byte[] seed = {1, 2};
    BloomFilter base = BloomFilter.create(XXH3, seed, 6_400, 5);
    base.add("kept");
    long[] before = wordsOf(base);
    assertIncompatible(base, BloomFilter.create(Protocols.of(ProtocolId.SHA256_DOC_V1), seed, 6_400, 5),
        "hash protocol", "this filter: xxh3-edh-v1, other filter: sha256-doc-v1");
    assertIncompatible(base, BloomFilter.create(XXH3, new byte[] {1, 3}, 6_400, 5), "seed", "this filter: 0102, other filter: 0103");
    assertIncompatible(base, BloomFilter.create(XXH3, NO_SEED, 6_400, 5), "seed", "other filter: (empty)");
    assertIncompatible(base, BloomFilter.create(XXH3, seed, 6_464, 5), "bit count m", "this filter: 6400, other filter: 6464");
    assertIncompatible(base, BloomFilter.create(XXH3, seed, 6_400, 6), "hash count k", "this filter: 5, other filter: 6");
    assertThat(wordsOf(base)).isEqualTo(before);
    assertThat(base.insertedCount()).isEqualTo(1);
  }

  private static void assertIncompatible(BloomFilter base, BloomFilter other, String parameter, String values) {
    other.add("other");
    assertThat(base.isCompatible(other)).isFalse();
    assertThatThrownBy(() -> base.mergeFrom(other))
        .isInstanceOfSatisfying(IncompatibleFilterException.class, e -> assertThat(e.parameter()).isEqualTo(parameter))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(parameter + " differs")
        .hasMessageContaining(values);
  }

  @Test
  void copyIsIndependent() {
    BloomFilter filter = BloomFilter.create(XXH3, NO_SEED, 10_000, 4);
    filter.add("a");
    BloomFilter copy = filter.copy();
    assertThat(wordsOf(copy)).isEqualTo(wordsOf(filter));
    assertThat(copy.insertedCount()).isEqualTo(1);
    assertThat(copy.bitCount()).isEqualTo(filter.bitCount());
    copy.add("b");
    assertThat(filter.mightContain("b")).isFalse();
    assertThat(filter.insertedCount()).isEqualTo(1);
  }

  @Test
  void seedIsCopiedInAndOut() {
    byte[] seed = {9, 9};
    BloomFilter filter = BloomFilter.create(XXH3, seed, 1_000, 3);
    seed[0] = 0;
    assertThat(filter.seed()).containsExactly(9, 9);
    filter.seed()[0] = 0;
    assertThat(filter.seed()).containsExactly(9, 9);
  }

  @Test
  void restoreRebuildsFromWords() throws IOException {
    BloomFilter original = BloomFilter.create(XXH3, "r".getBytes(StandardCharsets.UTF_8), 1_000, 5);
    for (int i = 0; i < 80; i++) {
      original.add(Keys.urlBytes(16, i));
    }
    long[] words = wordsOf(original);
    int[] next = {0};
    BloomFilter restored =
        BloomFilter.restore(XXH3, original.seed(), 1_000, 5, original.insertedCount(), () -> words[next[0]++]);
    assertThat(next[0]).isEqualTo(words.length);
    assertThat(wordsOf(restored)).isEqualTo(words);
    assertThat(restored.insertedCount()).isEqualTo(original.insertedCount());
    assertThat(restored.bitCount()).isEqualTo(original.bitCount());
    for (int i = 0; i < 80; i++) {
      assertThat(restored.mightContain(Keys.urlBytes(16, i))).isTrue();
    }
  }

  @Test
  void restoreRefusesStrayBitsNegativeCountsAndPassesOnReadErrors() {
    // m = 1000: the last word (j = 15) holds bits 960..1023, of which only 960..999 exist.
    assertThatThrownBy(() -> BloomFilter.restore(XXH3, NO_SEED, 1_000, 5, 0, () -> -1L))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("bits set at or beyond m = 1000")
        .hasMessageContaining("1000");
    assertThatThrownBy(() -> BloomFilter.restore(XXH3, NO_SEED, 1_000, 5, -1, () -> 0L))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("inserted count");
    assertThatThrownBy(() -> BloomFilter.restore(XXH3, NO_SEED, 1_000, 5, 0, () -> {
          throw new EOFException("truncated");
        }))
        .isInstanceOf(EOFException.class);
    assertThatThrownBy(() -> BloomFilter.restore(Protocols.of(ProtocolId.SHA256_DOC_V1), NO_SEED, 70_000, 5, 0, () -> 0L))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("65535");
  }

  @Test
  void packedBytesAreLittleEndianAndTrimmedToM() {
    BloomFilter filter = BloomFilter.create(XXH3, NO_SEED, 12, 1);
    assertThat(filter.toPackedBytes()).hasSize(2);
    int i = 0;
    while (filter.bitCount() < 12) {
      filter.add(Keys.binary(17, i++, 4));
    }
    assertThat(Hex.encode(filter.toPackedBytes())).isEqualTo("ff0f");
    assertThat(filter.word(0)).isEqualTo(0xFFFL);
    assertThatThrownBy(() -> filter.word(1)).isInstanceOf(IndexOutOfBoundsException.class);
  }

  @Test
  void writePackedBytesStreamsExactlyTheBytesOfToPackedBytes() throws IOException {
    for (long bits : new long[] {1, 7, 8, 63, 64, 65, 1_000, 524_288 + 3, 1_048_583}) {
      BloomFilter filter = BloomFilter.create(XXH3, NO_SEED, bits, 3);
      for (int i = 0; i < bits / 10 + 1; i++) {
        filter.add("item-" + i);
      }
      java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
      filter.writePackedBytes(out);
      assertThat(out.toByteArray()).as("m = %d", bits).isEqualTo(filter.toPackedBytes());
    }
  }

  @Test
  void invalidParametersAreRefused() {
    assertThatThrownBy(() -> BloomFilter.create(XXH3, NO_SEED, 0, 3)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> BloomFilter.create(XXH3, NO_SEED, BloomFilter.MAX_BITS + 1, 3))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("2^40");
    assertThatThrownBy(() -> BloomFilter.create(XXH3, NO_SEED, 100, 0)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> BloomFilter.create(null, NO_SEED, 100, 3)).isInstanceOf(NullPointerException.class).hasMessage("protocol");
    assertThatThrownBy(() -> BloomFilter.create(XXH3, null, 100, 3)).isInstanceOf(NullPointerException.class).hasMessage("seed");
  }

  @Test
  void segmentedStorageIndexesEveryWordAcrossSegments() throws IOException {
    // 4 words per segment; m = 64 * 37 + 5 bits = 38 words = 10 segments, the last one partial.
    long m = 64 * 37 + 5;
    for (HashProtocol protocol : List.of(XXH3, Protocols.of(ProtocolId.SHA256_INDEX16))) {
      BloomFilter segmented = new BloomFilter(protocol, NO_SEED, m, 3, 2);
      BloomFilter flat = BloomFilter.create(protocol, NO_SEED, m, 3);
      for (int i = 0; i < 700; i++) {
        byte[] key = Keys.binary(18, i, 20);
        assertThat(segmented.add(key)).isEqualTo(flat.add(key));
      }
      assertThat(wordsOf(segmented)).isEqualTo(wordsOf(flat));
      assertThat(segmented.toPackedBytes()).isEqualTo(flat.toPackedBytes());
      assertThat(segmented.bitCount()).isEqualTo(flat.bitCount());
      long[] words = wordsOf(flat);
      assertThat(words[37] >>> 5).as("no bits beyond m").isZero();
      assertThat(words[37]).as("the last, partial segment is used").isNotZero();
      for (int i = 0; i < 2_000; i++) {
        byte[] key = Keys.binary(19, i, 20);
        assertThat(segmented.mightContain(key)).isEqualTo(flat.mightContain(key));
      }
      BloomFilter copy = segmented.copy();
      assertThat(wordsOf(copy)).isEqualTo(words);
      BloomFilter target = new BloomFilter(protocol, NO_SEED, m, 3, 1);
      target.mergeFrom(segmented);
      assertThat(wordsOf(target)).isEqualTo(words);
      int[] next = {0};
      BloomFilter refilled = new BloomFilter(protocol, NO_SEED, m, 3, 0);
      refilled.fill(() -> words[next[0]++]);
      assertThat(wordsOf(refilled)).isEqualTo(words);
    }
  }

  @Test
  void segmentShiftTooSmallForTheFilterIsRefused() {
    assertThatThrownBy(() -> new BloomFilter(XXH3, NO_SEED, 1L << 40, 3, 0)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> new BloomFilter(XXH3, NO_SEED, 100, 3, 31)).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void toStringSummarises() {
    BloomFilter filter = BloomFilter.create(XXH3, NO_SEED, 100, 3);
    filter.add("x");
    assertThat(filter.toString()).contains("xxh3-edh-v1", "m=100", "k=3", "inserted=1");
  }
}
