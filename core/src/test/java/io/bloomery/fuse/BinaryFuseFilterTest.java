package io.bloomery.fuse;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomery.format.FilterFormat;
import io.bloomery.format.FilterFormatException;
import io.bloomery.format.FilterHeader;
import io.bloomery.testkit.FormatCorruptionSweep;
import io.bloomery.testkit.FprAssert;
import io.bloomery.testkit.Keys;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class BinaryFuseFilterTest {

  private static final long KEY_SEED = 20261201L;

  @ParameterizedTest
  @ValueSource(ints = {0, 1, 2, 3, 7, 100, 1_000, 10_007, 200_000})
  void everyItemOfTheBuildSetIsPresent(int n) {
    for (int bits : new int[] {8, 16}) {
      List<byte[]> items = Keys.urls(KEY_SEED, 0, n);
      BinaryFuseFilter filter = BinaryFuseFilter.build(items, bits);
      assertThat(filter.insertedCount()).isEqualTo(n);
      for (byte[] item : items) {
        assertThat(filter.mightContain(item)).as("no false negatives, n=%d, f=%d", n, bits).isTrue();
      }
    }
  }

  @Test
  void falsePositiveRateIsTwoToTheMinusFingerprintBitsWithinABinomialBound() {
    List<byte[]> members = Keys.urls(KEY_SEED, 0, 100_000);
    int probes = 1_000_000;
    for (int bits : new int[] {8, 16}) {
      BinaryFuseFilter filter = BinaryFuseFilter.build(members, bits);
      long positives = 0;
      for (int i = 0; i < probes; i++) {
        positives += filter.mightContain(Keys.urlBytes(KEY_SEED, 100_000L + i)) ? 1 : 0;
      }
      double model = Math.scalb(1.0, -bits);
      assertThat(filter.estimatedFpp()).isEqualTo(model);
      long[] bound = FprAssert.interval(probes, model, 0.999);
      assertThat(positives).as("false positives among %d non-members, f=%d, model %f", probes, bits, model * probes)
          .isBetween(bound[0], bound[1]);
    }
  }

  @Test
  void sizeIsAboutNineBitsPerKeyForEightBitFingerprints() {
    BinaryFuseFilter eight = BinaryFuseFilter.build(Keys.urls(KEY_SEED, 0, 1_000_000), 8);
    // The reference sizing: size factor 1.125 at n = 10^6, rounded up to whole segments.
    assertThat(eight.bitsPerKey()).isBetween(9.0, 9.2);
    BinaryFuseFilter sixteen = BinaryFuseFilter.build(Keys.urls(KEY_SEED, 0, 1_000_000), 16);
    assertThat(sixteen.bitsPerKey()).isEqualTo(2 * eight.bitsPerKey());
  }

  @Test
  void duplicatesCountOnceAndOrderDoesNotMatter() {
    List<byte[]> items = Keys.urls(KEY_SEED, 0, 5_000);
    List<byte[]> shuffled = new ArrayList<>(items);
    java.util.Collections.reverse(shuffled);
    shuffled.addAll(items.subList(0, 1_000));
    byte[] once = FilterFormat.toBytes(BinaryFuseFilter.build(items, 8));
    byte[] withDuplicates = FilterFormat.toBytes(BinaryFuseFilter.build(shuffled, 8));
    assertThat(withDuplicates).isEqualTo(once);
    assertThat(BinaryFuseFilter.build(shuffled, 8).insertedCount()).isEqualTo(5_000);
  }

  @Test
  void fromItemHashesEqualsBuildingFromTheItems() {
    List<byte[]> items = Keys.urls(KEY_SEED, 0, 3_000);
    long[] hashes = items.stream().mapToLong(BinaryFuseFilter::itemHash).toArray();
    assertThat(FilterFormat.toBytes(BinaryFuseFilter.fromItemHashes(hashes, 16)))
        .isEqualTo(FilterFormat.toBytes(BinaryFuseFilter.build(items, 16)));
  }

  /** Pins xxh3-fuse-v1 and the construction: any drift in hashing, sizing or seeding changes these bytes. */
  @Test
  void knownAnswer() throws Exception {
    BinaryFuseFilter filter = BinaryFuseFilter.build(Keys.urls(KEY_SEED, 0, 10_000), 8);
    assertThat(filter.segmentLength()).isEqualTo(512); // 2^floor(ln 10^4 / ln 3.33 + 2.25)
    assertThat(filter.slotCount()).isEqualTo(filter.segmentLength() * (filter.segmentCount() + 2L));
    String digest = HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(FilterFormat.toBytes(filter)));
    assertThat(digest).isEqualTo(KNOWN_DIGEST);
    long falsePositives = 0;
    for (int i = 0; i < 10_000; i++) {
      falsePositives += filter.mightContain(Keys.urlBytes(KEY_SEED, 10_000L + i)) ? 1 : 0;
    }
    assertThat(falsePositives).isEqualTo(KNOWN_FALSE_POSITIVES);
  }

  static final String KNOWN_DIGEST = "7e118ce6c35506f738ba0f644466db7f792eac1d001ee62257a2400c98da088b";
  static final long KNOWN_FALSE_POSITIVES = 44; // model: 10,000 x 2^-8 = 39.1

  @Test
  void addIsRefusedBecauseTheFilterIsStatic() {
    BinaryFuseFilter filter = BinaryFuseFilter.build(List.of(new byte[] {1}), 8);
    assertThatThrownBy(() -> filter.add(new byte[] {2})).isInstanceOf(UnsupportedOperationException.class)
        .hasMessageContaining("immutable");
    assertThat(filter.mightContain(new byte[] {2})).isFalse();
  }

  @Test
  void emptyFilterReportsNothingAndItsModelRateIsZero() {
    BinaryFuseFilter filter = BinaryFuseFilter.build(List.of(), 8);
    assertThat(filter.estimatedFpp()).isZero();
    for (byte[] key : Keys.urls(KEY_SEED, 0, 10_000)) {
      assertThat(filter.mightContain(key)).isFalse();
    }
  }

  @Test
  void parametersAreValidated() {
    assertThatThrownBy(() -> BinaryFuseFilter.build(List.of(), 12)).isInstanceOf(IllegalArgumentException.class)
        .hasMessage("fingerprint bits must be 8 or 16, was 12");
    List<byte[]> withNull = new ArrayList<>();
    withNull.add(null);
    assertThatThrownBy(() -> BinaryFuseFilter.build(withNull, 8)).isInstanceOf(NullPointerException.class).hasMessage("item");
    assertThatThrownBy(() -> BinaryFuseFilter.shapeFor(3_000_000_000L)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("over the limit");
    assertThatThrownBy(() -> BinaryFuseFilter.restore(8, 0, 6, 1, 0, new byte[18], null))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("power of two");
  }

  @Test
  void formatRoundTripAndDescribe() throws Exception {
    List<byte[]> items = Keys.urls(KEY_SEED, 0, 2_000);
    for (int bits : new int[] {8, 16}) {
      BinaryFuseFilter filter = BinaryFuseFilter.build(items, bits);
      byte[] bytes = FilterFormat.toBytes(filter);
      BinaryFuseFilter copy = (BinaryFuseFilter) FilterFormat.fromBytes(bytes);
      assertThat(FilterFormat.toBytes(copy)).isEqualTo(bytes);
      for (byte[] item : items) {
        assertThat(copy.mightContain(item)).isTrue();
      }
      FilterHeader header = FilterFormat.describe(bytes);
      assertThat(header.parameters()).containsEntry("fingerprint_bits", (long) bits).containsEntry("inserted", 2_000L)
          .containsEntry("slots", filter.slotCount());
    }
  }

  @Test
  void everyCorruptionOfASmallFileIsRejected() {
    byte[] valid = FilterFormat.toBytes(BinaryFuseFilter.build(Keys.urls(KEY_SEED, 0, 3), 16));
    assertThat(FormatCorruptionSweep.assertEveryCorruptionRejected(valid)).isPositive();
  }

  @Test
  void aDeclaredHugeSlotArrayIsRefusedBeforeAllocating() {
    BinaryFuseFilter small = BinaryFuseFilter.build(Keys.urls(KEY_SEED, 0, 3), 8);
    byte[] valid = FilterFormat.toBytes(small);
    // The body ends 4 bytes (the CRC) before the end; rewrite its segment count (u32 at body offset 13),
    // then fix the CRC so that only the field check can refuse it.
    int body = valid.length - 4 - (int) (25 + small.slotCount());
    byte[] corrupt = valid.clone();
    int at = body + 13;
    long count = 600_000_000L; // (count + 2) x 4 slots > MAX_SLOTS
    for (int i = 0; i < 4; i++) {
      corrupt[at + i] = (byte) (count >>> (8 * i));
    }
    java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
    crc.update(corrupt, 0, corrupt.length - 4);
    long sum = crc.getValue();
    for (int i = 0; i < 4; i++) {
      corrupt[corrupt.length - 4 + i] = (byte) (sum >>> (8 * i));
    }
    assertThatThrownBy(() -> FilterFormat.fromBytes(corrupt)).isInstanceOf(FilterFormatException.class)
        .hasMessageContaining("segment count");
  }
}
