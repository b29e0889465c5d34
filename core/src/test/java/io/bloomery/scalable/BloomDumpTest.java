package io.bloomery.scalable;

import static io.bloomery.testkit.Rejections.dumpReason;
import static io.bloomery.testkit.Rejections.fullReason;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.bloomery.filter.DumpRejectedException;
import io.bloomery.filter.DumpRejectedException.Reason;
import io.bloomery.filter.FilterFullException;
import io.bloomery.format.RedisBloomDump;
import io.bloomery.hash.MurmurHash2;
import io.bloomery.testkit.GoldenDumps;
import io.bloomery.testkit.RedisItems;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** BF.SCANDUMP / BF.LOADCHUNK byte compatibility and hostile chunks (RedisBloom master b28c29451ad4). */
class BloomDumpTest {

  private static ScalableBloomFilter withNumbers(ScalableBloomFilter filter, String prefix, int count) {
    for (int i = 0; i < count; i++) {
      filter.add(RedisItems.of(prefix + i));
    }
    return filter;
  }

  @Test
  void theFormatsPublicDumpConstantsAreTheCodecs() {
    assertThat(RedisBloomDump.MAX_CHUNK_BYTES).isEqualTo(16 * 1024 * 1024); // RedisBloom's MAX_SCANDUMP_SIZE
    assertThat(RedisBloomDump.BF_HEADER_BYTES).isEqualTo(ScalableDumpCodec.BF_HEADER_BYTES);
    assertThat(RedisBloomDump.BF_LINK_BYTES).isEqualTo(ScalableDumpCodec.BF_LINK_BYTES);
  }

  @Test
  void docsExampleIsByteExact() {
    ScalableBloomFilter filter = ScalableBloomFilter.create(10, 0.1);
    filter.add(RedisItems.of("item1"));

    ByteBuffer expected = ByteBuffer.allocate(73).order(ByteOrder.LITTLE_ENDIAN);
    expected.putLong(1).putInt(1).putInt(5).putInt(2);
    expected.putLong(8).putLong(64).putLong(1).putDouble(0.05)
        .putDouble(-Math.log(0.05) / 0.480453013918201).putInt(5).putLong(10).put((byte) 0);
    RedisBloomDump.Chunk header = RedisBloomDump.scanDump(filter, 0);
    assertThat(header.iterator()).isEqualTo(1);
    assertThat(header.data()).isEqualTo(expected.array());

    RedisBloomDump.Chunk bits = RedisBloomDump.scanDump(filter, 1);
    assertThat(bits.iterator()).isEqualTo(9);
    assertThat(bits.data()).isEqualTo(new byte[] {0x01, 0x08, 0x00, (byte) 0x80, 0x00, 0x04, ' ', 0x00});

    RedisBloomDump.Chunk end = RedisBloomDump.scanDump(filter, 9);
    assertThat(end.iterator()).isZero();
    assertThat(end.data()).isEmpty();
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource({
      "bf-reserve-0.1-10-item1.scandump, 0.1, 10, 2, item, 0",
      "bf-reserve-0.01-10-str0-99.scandump, 0.01, 10, 2, '', 100",
      "bf-reserve-0.01-4-expansion4-str0-99.scandump, 0.01, 4, 4, '', 100",
      "bf-reserve-0.01-5-foo0-49.scandump, 0.01, 5, 2, foo, 50",
      "bf-reserve-0.01-3-expansion0-abc.scandump, 0.01, 3, 0, abc, 3"})
  void goldenDumps(String file, double error, long capacity, int expansion, String prefix, int count) {
    ScalableBloomFilter filter = ScalableBloomFilter.create(capacity, error, expansion);
    if (count == 0) {
      filter.add(RedisItems.of("item1"));
    } else {
      withNumbers(filter, prefix, count);
    }
    byte[] dump = GoldenDumps.encode(RedisBloomDump.scanDumpAll(filter));
    if (GoldenDumps.regenerating()) {
      GoldenDumps.write(file, dump);
    }
    assertThat(dump).isEqualTo(GoldenDumps.read(file));

    ScalableBloomFilter loaded = RedisBloomDump.loadBloom(GoldenDumps.decode(GoldenDumps.read(file)));
    assertThat(loaded.debug()).isEqualTo(filter.debug());
    assertThat(loaded.info()).isEqualTo(filter.info());
    for (int i = 0; i < count; i++) {
      assertThat(loaded.mightContain(RedisItems.of(prefix + i))).isTrue();
    }
  }

  @Test
  void roundTripRestoresEverythingAndKeepsGrowing() {
    ScalableBloomFilter filter = withNumbers(ScalableBloomFilter.create(100, 0.001), "", 4000);
    List<RedisBloomDump.Chunk> chunks = RedisBloomDump.scanDumpAll(filter);
    assertThat(chunks).hasSize(1 + 6); // header + one chunk per layer
    ScalableBloomFilter loaded = RedisBloomDump.loadBloom(chunks);
    assertThat(loaded.debug()).isEqualTo(filter.debug());
    assertThat(GoldenDumps.encode(RedisBloomDump.scanDumpAll(loaded))).isEqualTo(GoldenDumps.encode(chunks));
    for (int i = 4000; i < 8000; i++) {
      assertThat(loaded.add(RedisItems.number(i))).isEqualTo(filter.add(RedisItems.number(i)));
    }
    assertThat(loaded.debug()).isEqualTo(filter.debug());
  }

  @Test
  void bloomBitsAreTheChunksBytesAndStayInsideOneLayer() {
    ScalableBloomFilter filter = withNumbers(ScalableBloomFilter.create(100, 0.001), "", 4000);
    List<RedisBloomDump.Chunk> chunks = RedisBloomDump.scanDumpAll(filter);
    long offset = 0;
    for (RedisBloomDump.Chunk chunk : chunks.subList(1, chunks.size())) {
      byte[] data = chunk.data();
      byte[] into = new byte[data.length + 3];
      RedisBloomDump.bloomBits(filter, offset, into, data.length);
      assertThat(java.util.Arrays.copyOf(into, data.length)).as("layer at %d", offset).isEqualTo(data);
      assertThat(java.util.Arrays.copyOfRange(into, data.length, into.length)).containsOnly(0);
      byte[] middle = new byte[data.length / 2];
      RedisBloomDump.bloomBits(filter, offset + data.length / 3, middle, middle.length);
      assertThat(middle).isEqualTo(java.util.Arrays.copyOfRange(data, data.length / 3, data.length / 3 + middle.length));
      long layerStart = offset;
      int layerLength = data.length;
      assertThatThrownBy(() -> RedisBloomDump.bloomBits(filter, layerStart, new byte[layerLength + 1], layerLength + 1))
          .as("across the end of the layer at %d", layerStart).isInstanceOf(IllegalArgumentException.class);
      offset += data.length;
    }
    long end = offset;
    assertThatThrownBy(() -> RedisBloomDump.bloomBits(filter, end, new byte[1], 1))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> RedisBloomDump.bloomBits(filter, -1, new byte[1], 1))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> RedisBloomDump.bloomBits(filter, 0, new byte[1], -1))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> RedisBloomDump.bloomBits(filter, 0, new byte[1], 2))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> RedisBloomDump.bloomBits(filter, Long.MAX_VALUE, new byte[1], 1))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void layersAbove16MiBAreSplitIntoChunksThatNeverCrossALayer() {
    ScalableBloomFilter filter = ScalableBloomFilter.create(15_000_000, 0.02, 2);
    long layerBytes = filter.layers().get(0).bytes();
    assertThat(layerBytes).isGreaterThan(RedisBloomDump.MAX_CHUNK_BYTES);
    for (int i = 0; i < 1000; i++) {
      filter.add(RedisItems.number(i));
    }
    List<RedisBloomDump.Chunk> chunks = RedisBloomDump.scanDumpAll(filter);
    assertThat(chunks).hasSize(3);
    assertThat(chunks.get(1).data()).hasSize(RedisBloomDump.MAX_CHUNK_BYTES);
    assertThat(chunks.get(1).iterator()).isEqualTo(1 + RedisBloomDump.MAX_CHUNK_BYTES);
    assertThat(chunks.get(2).data().length).isEqualTo(layerBytes - RedisBloomDump.MAX_CHUNK_BYTES);
    ScalableBloomFilter loaded = RedisBloomDump.loadBloom(chunks);
    for (int i = 0; i < 1000; i++) {
      assertThat(loaded.mightContain(RedisItems.number(i))).isTrue();
    }
    assertThat(loaded.bitCount()).isEqualTo(filter.bitCount());
  }

  @Test
  void scanningAnyIteratorNeverFails() {
    ScalableBloomFilter filter = withNumbers(ScalableBloomFilter.create(10, 0.01), "", 100);
    long total = filter.layers().stream().mapToLong(ScalableBloomFilter.Layer::bytes).sum();
    for (long iterator = -5; iterator <= total + 1024; iterator++) {
      RedisBloomDump.Chunk chunk = RedisBloomDump.scanDump(filter, iterator);
      if (iterator < 1 || iterator > total) {
        assertThat(chunk.iterator()).isEqualTo(iterator == 0 ? 1 : 0);
      } else {
        assertThat(chunk.iterator()).isEqualTo(iterator + chunk.data().length);
      }
    }
    assertThat(RedisBloomDump.scanDump(filter, Long.MIN_VALUE).isEnd()).isTrue();
    assertThat(RedisBloomDump.scanDump(filter, Long.MAX_VALUE).isEnd()).isTrue();
  }

  // ---------------------------------------------------------------- hostile input

  private static byte[] headerOf(ScalableBloomFilter filter) {
    return RedisBloomDump.scanDump(filter, 0).data();
  }

  private static void assertBadHeader(byte[] header) {
    assertThat(dumpReason(() -> RedisBloomDump.loadHeader(header)))
        .isIn(Reason.HEADER_LENGTH, Reason.HEADER_INVALID, Reason.TOO_LARGE);
  }

  @Test
  void testScandumpInvalidHeaderCorruptions() {
    byte[] header = headerOf(withNumbers(ScalableBloomFilter.create(5, 0.01), "foo", 50));
    assertThat(header.length).isGreaterThan(80);
    byte[] link2 = header.clone();
    for (int i = 0; i < 8; i++) {
      link2[72 + i] = 0;
    }
    assertBadHeader(link2);
    byte[] options = header.clone();
    for (int i = 0; i < 4; i++) {
      options[12 + i] = (byte) 255;
    }
    assertBadHeader(options);
    byte[] size = header.clone();
    for (int i = 0; i < 4; i++) {
      size[i] = 0;
    }
    assertBadHeader(size);
    byte[] mixed = header.clone();
    for (int i = 0; i < 8; i++) {
      mixed[36 + i] = 0;
      mixed[i] = 0;
    }
    assertBadHeader(mixed);
  }

  @Test
  void testScandumpInvalidHeaderAlloc() {
    byte[] header = headerOf(ScalableBloomFilter.create(100, 0.01));
    ByteBuffer buffer = ByteBuffer.wrap(header).order(ByteOrder.LITTLE_ENDIAN);
    long huge = 1L << 61;
    buffer.putLong(20, huge).putLong(28, huge * 8); // consistent bytes/bits, impossible allocation
    assertBadHeader(header);
  }

  @Test
  void everyTruncationAndExtensionOfAHeaderIsRejected() {
    byte[] header = headerOf(withNumbers(ScalableBloomFilter.create(10, 0.01), "", 100));
    for (int length = 0; length < header.length; length++) {
      assertBadHeader(java.util.Arrays.copyOf(header, length));
    }
    assertBadHeader(java.util.Arrays.copyOf(header, header.length + 1));
  }

  @Test
  void everySingleByteFlipOfAHeaderLoadsConsistentlyOrIsRejected() {
    byte[] header = headerOf(withNumbers(ScalableBloomFilter.create(10, 0.01), "", 100));
    for (int i = 0; i < header.length; i++) {
      for (int bit = 0; bit < 8; bit++) {
        byte[] flipped = header.clone();
        flipped[i] ^= (byte) (1 << bit);
        try {
          ScalableBloomFilter loaded = RedisBloomDump.loadHeader(flipped);
          // RedisBloom accepts some flips (entries, error, hash-width-neutral fields); the result must still work.
          loaded.mightContain(RedisItems.of("x"));
          assertThat(RedisBloomDump.scanDump(loaded, 0).data()).isEqualTo(flipped);
        } catch (DumpRejectedException e) {
          assertThat(e.reason()).isIn(Reason.HEADER_LENGTH, Reason.HEADER_INVALID, Reason.TOO_LARGE);
        }
      }
    }
  }

  @Test
  void headersWithoutLayersOrWithMismatchedLengthsAreRejected() {
    ByteBuffer noLayers = ByteBuffer.allocate(20).order(ByteOrder.LITTLE_ENDIAN);
    noLayers.putLong(0).putInt(0).putInt(5).putInt(2);
    assertBadHeader(noLayers.array());
    ByteBuffer manyClaimed = ByteBuffer.allocate(20 + 53).order(ByteOrder.LITTLE_ENDIAN);
    manyClaimed.putLong(0).putInt(-1).putInt(5).putInt(2);
    assertBadHeader(manyClaimed.array());
  }

  @Test
  void testScandumpInvalidChunks() {
    ScalableBloomFilter filter = withNumbers(ScalableBloomFilter.create(100, 0.01), "", 50);
    byte[] garbage = RedisItems.of("garbage");
    assertThat(dumpReason(() -> RedisBloomDump.loadChunk(filter, Long.MIN_VALUE, garbage)))
        .isEqualTo(Reason.POSITION);
    assertThat(dumpReason(() -> RedisBloomDump.loadChunk(filter, 920_000_000_000_000_000L, garbage)))
        .isEqualTo(Reason.NO_LAYER_AT_OFFSET);
    assertThat(dumpReason(() -> RedisBloomDump.loadChunk(filter, 4, garbage))).isEqualTo(Reason.POSITION);
    assertThat(dumpReason(() -> RedisBloomDump.loadChunk(filter, 1, headerOf(filter)))).isEqualTo(Reason.POSITION);
    long bytes = filter.layers().get(0).bytes();
    assertThat(dumpReason(() -> RedisBloomDump.loadChunk(filter, bytes + 2, new byte[2])))
        .isEqualTo(Reason.PAST_LAYER_END);
    for (int i = 0; i < 50; i++) {
      assertThat(filter.mightContain(RedisItems.number(i))).isTrue();
    }
  }

  @Test
  void randomChunksOnlyRaiseTheThreeAllowedErrors() {
    Random random = new Random(20260622);
    Set<Reason> allowed = Set.of(Reason.NO_LAYER_AT_OFFSET, Reason.PAST_LAYER_END, Reason.POSITION);
    ScalableBloomFilter filter = withNumbers(ScalableBloomFilter.create(1000, 0.01), "", 3000);
    long total = filter.layers().stream().mapToLong(ScalableBloomFilter.Layer::bytes).sum();
    for (int round = 0; round < 2000; round++) {
      byte[] data = new byte[random.nextInt(4096)];
      random.nextBytes(data);
      long iterator = random.nextInt(4) == 0 ? random.nextLong() : (long) (random.nextDouble() * 2 * total);
      try {
        RedisBloomDump.loadChunk(filter, iterator, data);
      } catch (DumpRejectedException e) {
        assertThat(allowed).contains(e.reason());
      }
    }
  }

  @Test
  void testArbitraryOffset() {
    byte[] header = HexFormat.of().parseHex(
        "1118f3dd74480100" + "01000000" + "01000000" + "01000000"
            + "0100000000000000" + "0800000000000000" + "1118f3dd74480100"
            + "9a9999999999b93f" + "9a9999999999b93f" + "01000000" + "1118f3dd74480100" + "00");
    ScalableBloomFilter filter = RedisBloomDump.loadHeader(header);
    assertThat(filter.is64BitHash()).isFalse();
    assertThat(fullReason(() -> filter.add(RedisItems.of("1"))))
        .isIn(FilterFullException.Reason.GROWTH_LIMIT, FilterFullException.Reason.OUT_OF_HEAP);
    assertThat(dumpReason(() -> RedisBloomDump.loadChunk(filter, 71752852194637L, RedisItems.of("HELLO"))))
        .isEqualTo(Reason.NO_LAYER_AT_OFFSET);
    assertThat(filter.filterCount()).isEqualTo(1);
  }

  // ---------------------------------------------------------------- legacy layouts

  /** A header for one layer, built field by field. */
  private static byte[] legacyHeader(int options, long bytes, long bits, double error, long entries, int n2) {
    double bpe = -Math.log(error) / 0.480453013918201;
    ByteBuffer out = ByteBuffer.allocate(73).order(ByteOrder.LITTLE_ENDIAN);
    out.putLong(0).putInt(1).putInt(options).putInt(2);
    out.putLong(bytes).putLong(bits).putLong(0).putDouble(error).putDouble(bpe)
        .putInt((int) Math.ceil(0.693147180559945 * bpe)).putLong(entries).put((byte) n2);
    return out.array();
  }

  private static long[] expectedPositions(byte[] item, boolean hash64, int hashes, long modulus) {
    long a;
    long b;
    if (hash64) {
      a = MurmurHash2.hash64A(item, 0xc6a4a7935bd1e995L);
      b = MurmurHash2.hash64A(item, a);
    } else {
      a = MurmurHash2.hash32(item, 0, item.length, 0x9747b28c) & 0xFFFFFFFFL;
      b = MurmurHash2.hash32(item, 0, item.length, (int) a) & 0xFFFFFFFFL;
    }
    long[] out = new long[hashes];
    for (int i = 0; i < hashes; i++) {
      out[i] = Long.remainderUnsigned(a + i * b, modulus);
    }
    return out;
  }

  @ParameterizedTest(name = "options {0}, n2 {1}")
  @CsvSource({"0, 10", "1, 0", "4, 10", "5, 0", "0, 3"})
  void legacyHashAndPowerOfTwoLayersSetTheDocumentedBits(int options, int n2) {
    long bits = n2 > 0 ? Math.max(64, 1L << n2) : 960;
    long modulus = n2 > 0 ? 1L << n2 : bits;
    byte[] header = legacyHeader(options, bits / 8, bits, 0.01, 100, n2);
    ScalableBloomFilter filter = RedisBloomDump.loadHeader(header);
    byte[] item = RedisItems.of("legacy-item");
    assertThat(filter.add(item)).isTrue();
    byte[] layer = RedisBloomDump.scanDump(filter, 1).data();
    boolean hash64 = (options & 4) != 0;
    int hashes = filter.layers().get(0).hashes();
    byte[] expected = new byte[layer.length];
    for (long position : expectedPositions(item, hash64, hashes, modulus)) {
      expected[(int) (position >>> 3)] |= (byte) (1 << (position & 7));
    }
    assertThat(layer).isEqualTo(expected);
    assertThat(filter.debug().get(1)).contains("hashwidth:" + (hash64 ? 64 : 32));
  }

  @Test
  void legacyPowerOfTwoChainGrowsWithPowerOfTwoLayers() {
    // options 4 = FORCE64 without NOROUND: RedisBloom 1.1-2.1 filters; new layers are rounded to 2^n2 bits.
    ScalableBloomFilter filter = RedisBloomDump.loadHeader(legacyHeader(4, 128, 1024, 0.005, 10, 10));
    for (int i = 0; i < 200; i++) {
      filter.add(RedisItems.number(i));
    }
    for (ScalableBloomFilter.Layer layer : filter.layers().subList(1, filter.layers().size())) {
      assertThat(layer.n2()).isPositive();
      assertThat(layer.bits()).isEqualTo(Math.max(64, 1L << layer.n2()));
      assertThat(layer.capacity()).isGreaterThanOrEqualTo(20); // bloom_init adds the spare bits' capacity
    }
    for (int i = 0; i < 200; i++) {
      assertThat(filter.mightContain(RedisItems.number(i))).isTrue();
    }
    ScalableBloomFilter reloaded = RedisBloomDump.loadBloom(RedisBloomDump.scanDumpAll(filter));
    assertThat(reloaded.debug()).isEqualTo(filter.debug());
  }
}
