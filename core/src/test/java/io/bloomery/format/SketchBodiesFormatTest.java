package io.bloomery.format;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.fail;

import io.bloomery.aging.AgePartitionedFilter;
import io.bloomery.counting.CountingBloomFilter;
import io.bloomery.filter.FilterKind;
import io.bloomery.filter.Summary;
import io.bloomery.hash.ProtocolId;
import io.bloomery.hash.Protocols;
import io.bloomery.sketch.CountMinSketch;
import io.bloomery.sketch.DecayRandom;
import io.bloomery.sketch.TDigest;
import io.bloomery.sketch.TopK;
import java.io.ByteArrayInputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.function.LongSupplier;
import java.util.stream.Stream;
import java.util.zip.CRC32C;
import io.bloomery.testkit.FormatCorruptionSweep;
import io.bloomery.testkit.Internals;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Round trips, corruption sweeps and hostile headers for the counting, count-min, top-k and
 * age-partitioned bodies (tables in docs/FORMAT.md).
 */
class SketchBodiesFormatTest {
  private static final byte[] SEED = "s".getBytes(StandardCharsets.UTF_8);
  private static final long NOW = 1_764_460_800_000L;
  private static final LongSupplier CLOCK = () -> NOW;

  static CountingBloomFilter counting(long counters, int hashes, int width, int items) {
    CountingBloomFilter filter = CountingBloomFilter.create(Protocols.defaultProtocol(), SEED, counters, hashes, width);
    for (int i = 0; i < items; i++) {
      filter.add(FormatFixtures.item("c", i % 7)); // repeats give counters above 1
    }
    return filter;
  }

  static CountMinSketch countMin(long width, long depth) {
    CountMinSketch cms = CountMinSketch.initByDimensions(width, depth);
    for (int i = 0; i < 40; i++) {
      cms.incrementBy("cms-" + (i % 9), i + 1);
    }
    cms.incrementBy("big", 4_000_000_000L);
    return cms;
  }

  static TopK topK(long k, long width, long depth) {
    TopK topK = TopK.reserve(k, width, depth, 0.9, DecayRandom.glibc(3));
    for (int i = 0; i < 60; i++) {
      topK.add("t" + (i % 5 == 0 ? 0 : i % 11));
    }
    topK.add(new byte[] {0, 1, 2});
    return topK;
  }

  static AgePartitionedFilter aging(long bits, int generations) {
    long[] now = {NOW};
    AgePartitionedFilter filter = AgePartitionedFilter.create(Protocols.defaultProtocol(), SEED, bits, 3, generations, 1_000, () -> now[0]);
    for (int g = 0; g < generations; g++) {
      for (int i = 0; i < 5; i++) {
        filter.add(FormatFixtures.item("a" + g, i));
      }
      now[0] += 1_000;
    }
    return filter.copy(() -> NOW + (generations - 1) * 1_000L);
  }

  /** A digest with merged and buffered centroids: {@code adds} values, a query (which compresses), 2 more. */
  static TDigest tDigest(long compression, int adds) {
    TDigest digest = TDigest.create(compression);
    for (int i = 0; i < adds; i++) {
      digest.add((i * 7919 % 101) / 3.0 - 10);
    }
    digest.quantile(0.5);
    digest.add(-42.5);
    digest.add(1e9);
    return digest;
  }

  static Stream<Summary> small() {
    return Stream.of(counting(64, 3, 4, 20), countMin(3, 2), topK(2, 2, 2), aging(64, 2), tDigest(1, 3));
  }

  @Test
  void tDigestRoundTripKeepsEveryCentroidAndContinuesIdentically() throws Exception {
    for (long compression : new long[] {1, 20, 100}) {
      TDigest digest = tDigest(compression, 2_000);
      byte[] bytes = FilterFormat.toBytes(digest);
      TDigest copy = (TDigest) FilterFormat.fromBytes(bytes);
      assertThat(bytes[6]).isEqualTo((byte) ProtocolId.UNHASHED.code());
      assertThat(copy.unmergedNodes()).isEqualTo(digest.unmergedNodes()).isEqualTo(2);
      assertThat(copy.mergedNodes()).isEqualTo(digest.mergedNodes()).isPositive();
      assertThat(copy.totalCompressions()).isEqualTo(digest.totalCompressions());
      assertThat(copy.insertedCount()).isEqualTo(2_002);
      assertThat(FilterFormat.describe(bytes).parameters()).containsEntry("compression", compression)
          .containsEntry("unmerged_nodes", 2L);
      for (int i = 0; i < 3_000; i++) { // the same adds compress at the same moments over the same centroids
        digest.add(Math.sin(i) * 50);
        copy.add(Math.sin(i) * 50);
      }
      double[] fractions = {0, 0.01, 0.25, 0.5, 0.75, 0.99, 1};
      assertThat(copy.quantiles(fractions)).isEqualTo(digest.quantiles(fractions));
      assertThat(copy.cdf(3.5)).isEqualTo(digest.cdf(3.5));
      assertThat(copy.totalCompressions()).isEqualTo(digest.totalCompressions());
      assertThat(FilterFormat.toBytes(copy)).isEqualTo(FilterFormat.toBytes(digest));
    }
    TDigest empty = (TDigest) FilterFormat.fromBytes(FilterFormat.toBytes(TDigest.create(7)));
    assertThat(empty.insertedCount()).isZero();
    assertThat(empty.min()).isNaN();
    empty.add(3);
    assertThat(empty.min()).isEqualTo(3);
    assertThat(empty.max()).isEqualTo(3);
  }

  @Test
  void countingRoundTripKeepsEveryCounter() throws Exception {
    for (int width : new int[] {4, 8, 16}) {
      CountingBloomFilter filter = counting(1000, 5, width, 300);
      CountingBloomFilter copy = (CountingBloomFilter) FilterFormat.fromBytes(FilterFormat.toBytes(filter));
      assertThat(copy.kind()).isEqualTo(FilterKind.COUNTING_BLOOM);
      assertThat(copy.counterBits()).isEqualTo(width);
      assertThat(copy.insertedCount()).isEqualTo(300);
      assertThat(copy.seed()).isEqualTo(SEED);
      for (long j = 0; j < Internals.wordCount(filter); j++) {
        assertThat(Internals.word(copy, j)).isEqualTo(Internals.word(filter, j));
      }
      assertThat(copy.remove(FormatFixtures.item("c", 3))).isTrue();
      FilterHeader header = FilterFormat.describe(FilterFormat.toBytes(filter));
      assertThat(header.parameters()).containsEntry("counters", 1000L).containsEntry("counterBits", (long) width);
    }
  }

  @Test
  void countMinRoundTripKeepsCountersAndCount() throws Exception {
    for (long[] dims : new long[][] {{5, 3}, {2000, 7}, {1, 1}}) {
      CountMinSketch cms = countMin(dims[0], dims[1]);
      byte[] bytes = FilterFormat.toBytes(cms);
      CountMinSketch copy = (CountMinSketch) FilterFormat.fromBytes(bytes);
      assertThat(copy.width()).isEqualTo(dims[0]);
      assertThat(copy.depth()).isEqualTo(dims[1]);
      assertThat(copy.insertedCount()).isEqualTo(cms.insertedCount());
      for (long i = 0; i < dims[0] * dims[1]; i++) {
        assertThat(Internals.counterAt(copy, i)).isEqualTo(Internals.counterAt(cms, i));
      }
      assertThat(bytes[6]).isEqualTo((byte) ProtocolId.REDISBLOOM_MURMUR2.code());
      assertThat(FilterFormat.describe(bytes).parameters()).containsEntry("width", dims[0]).containsEntry("depth", dims[1]);
    }
  }

  @Test
  void topKRoundTripKeepsBucketsAndHeapAndContinuesIdentically() throws Exception {
    TopK topK = topK(5, 16, 3);
    topK.incrementBy("zero", 0); // a heap item with count 0
    TopK copy = (TopK) FilterFormat.fromBytes(FilterFormat.toBytes(topK));
    assertThat(copy.list()).isEqualTo(topK.list());
    assertThat(copy.decay()).isEqualTo(topK.decay());
    for (int slot = 0; slot < 5; slot++) {
      assertThat(Internals.heapItem(copy, slot)).isEqualTo(Internals.heapItem(topK, slot));
      assertThat(Internals.heapCount(copy, slot)).isEqualTo(Internals.heapCount(topK, slot));
    }
    for (long i = 0; i < 48; i++) {
      assertThat(Internals.bucketFingerprint(copy, i)).isEqualTo(Internals.bucketFingerprint(topK, i));
      assertThat(Internals.bucketCount(copy, i)).isEqualTo(Internals.bucketCount(topK, i));
    }
    TopK a = topK.copy(DecayRandom.glibc(9));
    TopK b = copy.copy(DecayRandom.glibc(9));
    for (int i = 0; i < 500; i++) {
      assertThat(b.add("more" + i % 13)).isEqualTo(a.add("more" + i % 13));
    }
    assertThat(b.list()).isEqualTo(a.list());
  }

  @Test
  void agePartitionedRoundTripKeepsGenerations() throws Exception {
    AgePartitionedFilter filter = aging(1000, 4);
    AgePartitionedFilter copy = ((AgePartitionedFilter) FilterFormat.fromBytes(FilterFormat.toBytes(filter))).copy(filter.clockMillis());
    AgePartitionedFilter.Snapshot expected = filter.snapshot();
    AgePartitionedFilter.Snapshot actual = copy.snapshot();
    assertThat(actual.newestGeneration()).isEqualTo(expected.newestGeneration());
    for (int g = 0; g < 4; g++) {
      assertThat(actual.generation(g).insertedCount()).isEqualTo(expected.generation(g).insertedCount());
      for (long j = 0; j < Internals.wordCount(expected.generation(g)); j++) {
        assertThat(Internals.word(actual.generation(g), j)).isEqualTo(Internals.word(expected.generation(g), j));
      }
      for (int i = 0; i < 5; i++) {
        assertThat(copy.mightContain(FormatFixtures.item("a" + g, i))).isTrue();
      }
    }
    assertThat(copy.generationSpanMillis()).isEqualTo(1_000);
  }

  /**
   * A t-digest's arrays follow its compression, not the centroids its file holds: a changed compression byte must
   * be caught by the checksum before the digest is built. Compression 1 with bit 28 of the field set is
   * 268,435,457 (within the format's bound), a capacity of 1.6G centroids, 26 GB: built first, it was refused as too
   * large for the heap instead (after a full collection); the file is 106 bytes.
   */
  @Test
  void aCorruptedTDigestCompressionIsCaughtByTheChecksumBeforeTheDigestIsBuilt() {
    byte[] valid = FilterFormat.toBytes(tDigest(1, 3));
    int bodyStart = 18 + ((valid[8] & 0xFF) | (valid[9] & 0xFF) << 8);
    byte[] corrupt = valid.clone();
    corrupt[bodyStart + 3] ^= 16;
    assertThatThrownBy(() -> FilterFormat.fromBytes(corrupt)).isInstanceOf(FilterFormatException.class)
        .hasMessageContaining("checksum mismatch");
    assertThatThrownBy(() -> FilterFormat.read(new ByteArrayInputStream(corrupt), 1 << 20))
        .isInstanceOf(FilterFormatException.class).hasMessageContaining("checksum mismatch");
  }

  /** The shared sweep: every byte XOR every pattern, every truncation, every trailing byte. */
  @ParameterizedTest
  @MethodSource("small")
  void everyCorruptionIsRejected(Summary filter) {
    byte[] valid = FilterFormat.toBytes(filter);
    assertThat(valid.length).isLessThan(150);
    assertThat(FormatCorruptionSweep.assertEveryCorruptionRejected(valid)).isGreaterThan(255 * valid.length);
  }

  /**
   * Hostile headers with a valid checksum: every 4- or 8-byte body field overwritten with extreme
   * values is refused with FilterFormatException, never an OutOfMemoryError or an index error.
   */
  @ParameterizedTest
  @MethodSource("small")
  void hostileBodyFieldsWithValidChecksumsFailCleanly(Summary filter) {
    byte[] valid = FilterFormat.toBytes(filter);
    int seedLength = (valid[8] & 0xFF) | (valid[9] & 0xFF) << 8;
    int bodyStart = 18 + seedLength;
    long[] extremes = {0, 1, 2, 0xFFFF_FFFFL, 0x7FFF_FFFFL, 0x8000_0000L, Long.MAX_VALUE, -1L, 1L << 40, 3};
    int accepted = 0;
    for (int offset = bodyStart; offset < Math.min(bodyStart + 40, valid.length - 4); offset++) {
      for (int size : new int[] {1, 4, 8}) {
        if (offset + size > valid.length - 4) {
          continue;
        }
        for (long value : extremes) {
          byte[] hostile = valid.clone();
          ByteBuffer buffer = ByteBuffer.wrap(hostile).order(ByteOrder.LITTLE_ENDIAN);
          if (size == 1) {
            hostile[offset] = (byte) value;
          } else if (size == 4) {
            buffer.putInt(offset, (int) value);
          } else {
            buffer.putLong(offset, value);
          }
          fixChecksum(hostile);
          try {
            FilterFormat.fromBytes(hostile);
            accepted++; // some values are legitimate (a different count, fingerprint or word)
          } catch (FilterFormatException expected) {
            assertThat(expected.getMessage()).isNotBlank();
          } catch (Throwable other) {
            throw new AssertionError(
                "offset " + offset + " size " + size + " value " + value + ": expected FilterFormatException, found " + other, other);
          }
        }
      }
    }
    assertThat(accepted).isGreaterThanOrEqualTo(0);
  }

  @Test
  void hostileDimensionsAreRefusedBeforeAllocating() {
    byte[] cms = FilterFormat.toBytes(countMin(5, 3));
    ByteBuffer b = ByteBuffer.wrap(cms).order(ByteOrder.LITTLE_ENDIAN);
    b.putLong(18, 1L << 30);
    b.putLong(26, 1L << 30);
    fixChecksum(cms);
    assertRejected(cms, "CMS 2^30 x 2^30");

    byte[] topK = FilterFormat.toBytes(topK(3, 4, 2));
    ByteBuffer t = ByteBuffer.wrap(topK).order(ByteOrder.LITTLE_ENDIAN);
    t.putInt(18, -1); // k = 2^32 - 1
    fixChecksum(topK);
    assertRejected(topK, "TopK k = 2^32 - 1");

    byte[] wide = FilterFormat.toBytes(topK(3, 4, 2));
    ByteBuffer w = ByteBuffer.wrap(wide).order(ByteOrder.LITTLE_ENDIAN);
    w.putInt(22, -1); // width = 2^32 - 1
    w.putInt(26, -1); // depth = 2^32 - 1: width x depth passes 2^63
    fixChecksum(wide);
    assertRejected(wide, "TopK (2^32 - 1) x (2^32 - 1)");
    assertThatThrownBy(() -> FilterFormat.fromBytes(wide)).hasMessageContaining("width x depth at offset");

    byte[] aging = FilterFormat.toBytes(aging(100, 2));
    ByteBuffer a = ByteBuffer.wrap(aging).order(ByteOrder.LITTLE_ENDIAN);
    a.putInt(18 + SEED.length + 12, 1024); // g = 1024 generations
    fixChecksum(aging);
    assertRejected(aging, "1024 generations");
  }

  @Test
  void sketchesRefuseAnotherProtocolOrASeed() {
    byte[] cms = FilterFormat.toBytes(countMin(5, 3));
    cms[6] = (byte) ProtocolId.XXH3_EDH_V1.code();
    fixChecksum(cms);
    assertRejected(cms, "CMS under xxh3");
  }

  private static void fixChecksum(byte[] bytes) {
    CRC32C crc = new CRC32C();
    crc.update(bytes, 0, bytes.length - 4);
    ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN).putInt(bytes.length - 4, (int) crc.getValue());
  }

  private static void assertRejected(byte[] bytes, String what) {
    assertRejectedFromBytes(bytes, what);
    try {
      Object filter = FilterFormat.read(new ByteArrayInputStream(bytes), 1 << 20);
      fail("accepted from a stream (%s) as %s", what, filter);
    } catch (FilterFormatException expected) {
      assertThat(expected.getMessage()).as(what).isNotBlank();
    } catch (Throwable other) {
      throw new AssertionError(what + " (stream): expected FilterFormatException, found " + other, other);
    }
  }

  private static void assertRejectedFromBytes(byte[] bytes, String what) {
    try {
      Object filter = FilterFormat.fromBytes(bytes);
      fail("accepted (%s) as %s", what, filter);
    } catch (FilterFormatException expected) {
      assertThat(expected.getMessage()).as(what).isNotBlank();
    } catch (Throwable other) {
      throw new AssertionError(what + ": expected FilterFormatException, found " + other, other);
    }
  }
}
