package io.bloomery.format;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomery.cuckoo.CuckooFilter;
import io.bloomery.filter.FilterKind;
import io.bloomery.hash.ProtocolId;
import io.bloomery.scalable.ScalableBloomFilter;
import io.bloomery.testkit.FormatCorruptionSweep;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.stream.Stream;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** {@link ScalableBloomBody} and {@link CuckooBody}: round trips, describe, and the corruption sweep. */
class RedisBloomBodiesTest {

  private static byte[] item(int i) {
    return ("item-" + i).getBytes(StandardCharsets.UTF_8);
  }

  private static ScalableBloomFilter scalable(long capacity, int expansion, int items) {
    ScalableBloomFilter filter = ScalableBloomFilter.create(capacity, 0.01, expansion);
    for (int i = 0; i < items; i++) {
      filter.add(item(i));
    }
    return filter;
  }

  private static CuckooFilter cuckoo(long capacity, int bucketSize, int expansion, int items) {
    CuckooFilter filter = CuckooFilter.create(capacity, bucketSize, 20, expansion);
    for (int i = 0; i < items; i++) {
      filter.add(item(i));
    }
    return filter;
  }

  @Test
  void scalableRoundTripIsExactAndTheBodyIsTheScanDump() throws Exception {
    ScalableBloomFilter filter = scalable(10, 2, 100);
    byte[] bytes = FilterFormat.toBytes(filter);
    ScalableBloomFilter read = (ScalableBloomFilter) FilterFormat.fromBytes(bytes);
    assertThat(read.debug()).isEqualTo(filter.debug());
    assertThat(read.info()).isEqualTo(filter.info());
    ByteArrayOutputStream scandump = new ByteArrayOutputStream();
    for (RedisBloomDump.Chunk chunk : RedisBloomDump.scanDumpAll(filter)) {
      scandump.writeBytes(chunk.data());
    }
    assertThat(Arrays.copyOfRange(bytes, 18, bytes.length - 4)).isEqualTo(scandump.toByteArray());
    assertThat(bytes[5]).isEqualTo((byte) FilterKind.SCALABLE_BLOOM.code());
    assertThat(bytes[6]).isEqualTo((byte) ProtocolId.REDISBLOOM_MURMUR64A.code());
    ScalableBloomFilter streamed = (ScalableBloomFilter) FilterFormat.read(new ByteArrayInputStream(bytes));
    assertThat(RedisBloomDump.bloomHeader(streamed)).isEqualTo(RedisBloomDump.bloomHeader(filter));
    for (int i = 100; i < 300; i++) {
      assertThat(read.add(item(i))).isEqualTo(filter.add(item(i)));
    }
    assertThat(read.debug()).isEqualTo(filter.debug());
  }

  @Test
  void cuckooRoundTripIsExactIncludingAnEmptyFilter() throws Exception {
    for (CuckooFilter filter : new CuckooFilter[] {cuckoo(64, 2, 2, 1000), cuckoo(1000, 4, 1, 0)}) {
      filter.remove(item(3));
      byte[] bytes = FilterFormat.toBytes(filter);
      CuckooFilter read = (CuckooFilter) FilterFormat.fromBytes(bytes);
      assertThat(read.debug()).isEqualTo(filter.debug());
      assertThat(read.info()).isEqualTo(filter.info());
      assertThat(RedisBloomDump.cuckooHeader(read)).isEqualTo(RedisBloomDump.cuckooHeader(filter));
      long slots = RedisBloomDump.cuckooPayloadBytes(RedisBloomDump.cuckooHeader(filter));
      assertThat(bytes.length).isEqualTo(18 + 38 + slots + 4);
      CuckooFilter streamed = (CuckooFilter) FilterFormat.read(new ByteArrayInputStream(bytes));
      assertThat(streamed.occupiedSlots()).isEqualTo(filter.occupiedSlots());
      for (int i = 0; i < 1000; i++) {
        assertThat(read.count(item(i))).isEqualTo(filter.count(item(i)));
      }
    }
  }

  @Test
  void describeReportsTheRedisBloomHeaders() throws Exception {
    FilterHeader bloom = FilterFormat.describe(FilterFormat.toBytes(scalable(10, 2, 100)));
    assertThat(bloom.kind()).isEqualTo(FilterKind.SCALABLE_BLOOM);
    assertThat(bloom.parameters()).containsEntry("layers", 4L).containsEntry("items", scalable(10, 2, 100).insertedCount())
        .containsEntry("options", 5L).containsEntry("growth", 2L).containsEntry("payloadBytes", 280L);
    FilterHeader cf = FilterFormat.describe(FilterFormat.toBytes(cuckoo(64, 2, 2, 1000)));
    assertThat(cf.kind()).isEqualTo(FilterKind.CUCKOO);
    assertThat(cf.parameters()).containsEntry("filters", 5L).containsEntry("buckets", 32L)
        .containsEntry("items", 1000L).containsEntry("bucketSize", 2L).containsEntry("expansion", 2L);
  }

  static Stream<byte[]> smallFiles() {
    return Stream.of(FilterFormat.toBytes(scalable(3, 2, 8)), FilterFormat.toBytes(cuckoo(4, 1, 1, 6)));
  }

  @ParameterizedTest
  @MethodSource("smallFiles")
  void everySingleByteChangeTruncationAndExtensionIsRejected(byte[] valid) throws Exception {
    FilterFormat.fromBytes(valid);
    assertThat(FormatCorruptionSweep.assertEveryCorruptionRejected(valid)).isPositive();
  }

  /** A file whose body is {@code body}, with a correct checksum: hostile values reach the body parsers. */
  private static byte[] envelope(FilterKind kind, byte[] body) {
    ByteBuffer out = ByteBuffer.allocate(18 + body.length + 4).order(ByteOrder.LITTLE_ENDIAN);
    out.put(new byte[] {0x42, 0x4C, 0x4D, 0x46, 1, (byte) kind.code(), (byte) ProtocolId.REDISBLOOM_MURMUR64A.code(), 0});
    out.putShort((short) 0).putLong(body.length).put(body);
    CRC32C crc = new CRC32C();
    crc.update(out.array(), 0, 18 + body.length);
    out.putInt((int) crc.getValue());
    return out.array();
  }

  @Test
  void hostileHeadersWithValidChecksumsAreRejectedBeforeAllocating() {
    byte[] bloomHeader = RedisBloomDump.bloomHeader(scalable(10, 2, 5));
    ByteBuffer.wrap(bloomHeader).order(ByteOrder.LITTLE_ENDIAN).putLong(20, 1L << 60).putLong(28, 1L << 63);
    assertThatThrownBy(() -> FilterFormat.fromBytes(envelope(FilterKind.SCALABLE_BLOOM, bloomHeader)))
        .isInstanceOf(FilterFormatException.class).hasMessageContaining("fails the layer checks");

    byte[] huge = RedisBloomDump.bloomHeader(scalable(10, 2, 5));
    ByteBuffer.wrap(huge).order(ByteOrder.LITTLE_ENDIAN).putLong(20, 1L << 33).putLong(28, 1L << 36);
    assertThatThrownBy(() -> FilterFormat.fromBytes(envelope(FilterKind.SCALABLE_BLOOM, huge)))
        .isInstanceOf(FilterFormatException.class).hasMessageContaining("body length");

    byte[] manyLayers = Arrays.copyOf(RedisBloomDump.bloomHeader(scalable(10, 2, 5)), 20);
    ByteBuffer.wrap(manyLayers).order(ByteOrder.LITTLE_ENDIAN).putInt(8, -1);
    assertThatThrownBy(() -> FilterFormat.fromBytes(envelope(FilterKind.SCALABLE_BLOOM, manyLayers)))
        .isInstanceOf(FilterFormatException.class);

    byte[] cuckooHeader = RedisBloomDump.cuckooHeader(cuckoo(100, 2, 1, 5));
    ByteBuffer.wrap(cuckooHeader).order(ByteOrder.LITTLE_ENDIAN).putLong(8, 1L << 50);
    assertThatThrownBy(() -> FilterFormat.fromBytes(envelope(FilterKind.CUCKOO, cuckooHeader)))
        .isInstanceOf(FilterFormatException.class).hasMessageContaining("body length");
    ByteBuffer.wrap(cuckooHeader).order(ByteOrder.LITTLE_ENDIAN).putLong(8, 3);
    assertThatThrownBy(() -> FilterFormat.fromBytes(envelope(FilterKind.CUCKOO, cuckooHeader)))
        .isInstanceOf(FilterFormatException.class).hasMessageContaining("integrity checks reject it");
  }

  @Test
  void aStreamDeclaringAHugeBodyIsRefusedByTheReadLimit() {
    byte[] file = FilterFormat.toBytes(cuckoo(1L << 20, 4, 1, 10));
    assertThatThrownBy(() -> FilterFormat.read(new ByteArrayInputStream(file), 1024))
        .isInstanceOf(FilterFormatException.class).hasMessageContaining("read limit");
  }
}
