package io.bloomery.cuckoo;

import static io.bloomery.testkit.Rejections.dumpReason;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomery.filter.DumpRejectedException;
import io.bloomery.filter.DumpRejectedException.Reason;
import io.bloomery.format.RedisBloomDump;
import io.bloomery.testkit.GoldenDumps;
import io.bloomery.testkit.RedisItems;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** CF.SCANDUMP / CF.LOADCHUNK byte compatibility and hostile chunks (RedisBloom master b28c29451ad4). */
class CuckooDumpTest {
  /** The reasons of a chunk that lies in no sub-filter, or runs past its end (RedisBloom: "Couldn't load chunk!"). */
  private static final Reason[] NOT_LOADED = {Reason.NO_LAYER_AT_OFFSET, Reason.PAST_LAYER_END};

  private static CuckooFilter withNumbers(CuckooFilter filter, int count) {
    for (int i = 0; i < count; i++) {
      filter.add(RedisItems.number(i));
    }
    return filter;
  }

  @Test
  void theFormatsPublicDumpConstantsAreTheCodecs() {
    assertThat(RedisBloomDump.MAX_CHUNK_BYTES).isEqualTo(16 * 1024 * 1024); // RedisBloom's MAX_SCANDUMP_SIZE
    assertThat(RedisBloomDump.CF_HEADER_BYTES).isEqualTo(CuckooDumpCodec.CF_HEADER_BYTES);
  }

  @Test
  void tablesBeyondTheHeapAreRefusedBeforeAllocating() {
    assertThat(CuckooTable.allocate(1L << 55, 255)).isNull();
    long max = Runtime.getRuntime().maxMemory();
    assertThat(CuckooTable.allocate(Long.highestOneBit(max), 2)).as("twice the heap").isNull();
  }

  @Test
  void emptyFilterDumpsAsNilEvenAtPositionZero() {
    RedisBloomDump.Chunk chunk = RedisBloomDump.scanDump(CuckooFilter.create(1000), 0);
    assertThat(chunk.iterator()).isZero();
    assertThat(chunk.data()).isNull();
    assertThat(dumpReason(() -> RedisBloomDump.scanDump(CuckooFilter.create(1000), -1))).isEqualTo(Reason.POSITION);
  }

  @Test
  void headerLayoutAndWholeSubFilterChunks() {
    CuckooFilter filter = withNumbers(CuckooFilter.create(64, 2, 20, 2), 1000);
    List<RedisBloomDump.Chunk> chunks = RedisBloomDump.scanDumpAll(filter);
    ByteBuffer header = ByteBuffer.wrap(chunks.get(0).data()).order(ByteOrder.LITTLE_ENDIAN);
    assertThat(chunks.get(0).data()).hasSize(38);
    assertThat(header.getLong(0)).isEqualTo(1000);
    assertThat(header.getLong(8)).isEqualTo(32);
    assertThat(header.getLong(16)).isZero();
    assertThat(header.getLong(24)).isEqualTo(5);
    assertThat(header.getShort(32)).isEqualTo((short) 2);
    assertThat(header.getShort(34)).isEqualTo((short) 20);
    assertThat(header.getShort(36)).isEqualTo((short) 2);
    long position = 1;
    for (int i = 0; i < 5; i++) {
      long slots = 32L * (1L << i) * 2;
      RedisBloomDump.Chunk chunk = chunks.get(1 + i);
      assertThat(chunk.data()).hasSize((int) slots);
      position += slots;
      assertThat(chunk.iterator()).isEqualTo(position);
    }
    assertThat(chunks).hasSize(6);
    // a position inside a small sub-filter still returns that whole sub-filter (CF_GetEncodedChunk)
    RedisBloomDump.Chunk middle = RedisBloomDump.scanDump(filter, 10);
    assertThat(middle.data()).isEqualTo(chunks.get(1).data());
    assertThat(middle.iterator()).isEqualTo(10 + 64);
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource({
      "cf-reserve-64-bucketsize2-str0-999.scandump, 64, 2, 1, 1000, 0",
      "cf-reserve-64-expansion2-str0-999.scandump, 64, 2, 2, 1000, 0",
      "cf-reserve-1000-k1-deleted.scandump, 1000, 2, 1, 0, 1"})
  void goldenDumps(String file, long capacity, int bucketSize, int expansion, int numbers, int k1Deleted) {
    CuckooFilter filter = withNumbers(CuckooFilter.create(capacity, bucketSize, 20, expansion), numbers);
    if (k1Deleted > 0) {
      filter.add(RedisItems.of("k1"));
      filter.add(RedisItems.of("k1"));
      filter.remove(RedisItems.of("k1"));
    }
    byte[] dump = GoldenDumps.encode(RedisBloomDump.scanDumpAll(filter));
    if (GoldenDumps.regenerating()) {
      GoldenDumps.write(file, dump);
    }
    assertThat(dump).isEqualTo(GoldenDumps.read(file));
    CuckooFilter loaded = RedisBloomDump.loadCuckoo(GoldenDumps.decode(GoldenDumps.read(file)));
    assertThat(loaded.debug()).isEqualTo(filter.debug());
    assertThat(loaded.info()).isEqualTo(filter.info());
    for (int i = 0; i < numbers; i++) {
      assertThat(loaded.mightContain(RedisItems.number(i))).isTrue();
    }
    if (k1Deleted > 0) {
      assertThat(loaded.count(RedisItems.of("k1"))).isEqualTo(1);
      assertThat(loaded.deletedCount()).isEqualTo(1);
    }
  }

  @Test
  void subFiltersAbove16MiBAreSlicedAndRestored() {
    CuckooFilter filter = CuckooFilter.create(1L << 25, 1, 20, 1); // 2^25 buckets × 1 slot = 32 MiB
    withNumbers(filter, 5000);
    List<RedisBloomDump.Chunk> chunks = RedisBloomDump.scanDumpAll(filter);
    assertThat(chunks).hasSize(3);
    assertThat(chunks.get(1).data()).hasSize(RedisBloomDump.MAX_CHUNK_BYTES);
    assertThat(chunks.get(2).data()).hasSize(RedisBloomDump.MAX_CHUNK_BYTES);
    CuckooFilter loaded = RedisBloomDump.loadCuckoo(chunks);
    for (int i = 0; i < 5000; i++) {
      assertThat(loaded.mightContain(RedisItems.number(i))).isTrue();
    }
    assertThat(loaded.occupiedSlots()).isEqualTo(5000);
  }

  @Test
  void testScandumpInvalidHeader() {
    byte[] header = RedisBloomDump.scanDump(withNumbers(CuckooFilter.create(100), 10), 0).data();
    byte[] zeroed = header.clone();
    Arrays.fill(zeroed, 0, 9, (byte) 0);
    // numItems 0 and a numBuckets of 0 in its low byte: RedisBloom answers exactly "Couldn't create filter!"
    assertThat(dumpReason(() -> RedisBloomDump.loadCuckooHeader(zeroed))).isEqualTo(Reason.HEADER_INVALID);
    assertThat(dumpReason(() -> RedisBloomDump.loadCuckooHeader(Arrays.copyOf(header, 37)))).isEqualTo(Reason.HEADER_LENGTH);
    assertThat(dumpReason(() -> RedisBloomDump.loadCuckooHeader(Arrays.copyOf(header, 46)))).isEqualTo(Reason.HEADER_LENGTH);
  }

  @Test
  void testScandumpInvalidHeaderAlloc() {
    byte[] header = RedisBloomDump.scanDump(withNumbers(CuckooFilter.create(100), 10), 0).data();
    ByteBuffer.wrap(header).order(ByteOrder.LITTLE_ENDIAN).putLong(8, 1L << 55);
    assertThat(dumpReason(() -> RedisBloomDump.loadCuckooHeader(header))).isEqualTo(Reason.TOO_LARGE);
  }

  @Test
  void everySingleByteFlipOfAHeaderLoadsOrIsRejectedCleanly() {
    byte[] header = RedisBloomDump.scanDump(withNumbers(CuckooFilter.create(100, 2, 20, 2), 300), 0).data();
    for (int i = 0; i < header.length; i++) {
      for (int bit = 0; bit < 8; bit++) {
        byte[] flipped = header.clone();
        flipped[i] ^= (byte) (1 << bit);
        try {
          CuckooFilter loaded = RedisBloomDump.loadCuckooHeader(flipped);
          loaded.mightContain(RedisItems.of("x"));
          // bytes 26..31 are the sub-filter count's high bits, which RedisBloom's 16-bit field drops
          assertThat(RedisBloomDump.cuckooHeader(loaded)).isEqualTo(i >= 26 && i < 32 ? header : flipped);
        } catch (DumpRejectedException e) {
          assertThat(e.reason()).isIn(Reason.HEADER_INVALID, Reason.TOO_LARGE);
        }
      }
    }
  }

  @Test
  void hostileChunksAreRejectedWithTheirReasons() {
    CuckooFilter filter = withNumbers(CuckooFilter.create(100), 50);
    assertThat(dumpReason(() -> RedisBloomDump.loadChunk(filter, 0, new byte[4]))).isEqualTo(Reason.POSITION);
    assertThat(dumpReason(() -> RedisBloomDump.loadChunk(filter, 1, new byte[38]))).isEqualTo(Reason.HEADER_AGAIN);
    assertThat(dumpReason(() -> RedisBloomDump.loadChunk(filter, 5, new byte[0]))).isIn(NOT_LOADED);
    assertThat(dumpReason(() -> RedisBloomDump.loadChunk(filter, 3, new byte[4]))).isIn(NOT_LOADED);
    assertThat(dumpReason(() -> RedisBloomDump.loadChunk(filter, -7, new byte[4]))).isIn(NOT_LOADED);
    assertThat(dumpReason(() -> RedisBloomDump.loadChunk(filter, Long.MAX_VALUE, new byte[4]))).isIn(NOT_LOADED);
    assertThat(dumpReason(() -> RedisBloomDump.loadChunk(filter, 128 + 2, new byte[2])))
        .as("a chunk that starts right after the last sub-filter").isIn(NOT_LOADED);
    assertThat(dumpReason(() -> RedisBloomDump.loadChunk(filter, 128 + 1, new byte[129]))).isIn(NOT_LOADED);
    for (int i = 0; i < 50; i++) {
      assertThat(filter.mightContain(RedisItems.number(i))).isTrue();
    }
  }

  @Test
  void quirksOfRedisBloomsLoaderAreKept() {
    CuckooFilter source = withNumbers(CuckooFilter.create(100), 10);
    byte[] header = RedisBloomDump.cuckooHeader(source);
    // a sub-filter count of 65537 is cut to its low 16 bits: one sub-filter; 65536 cuts to none
    byte[] wide = header.clone();
    ByteBuffer.wrap(wide).order(ByteOrder.LITTLE_ENDIAN).putLong(24, 65537);
    assertThat(RedisBloomDump.cuckooHeader(RedisBloomDump.loadCuckooHeader(wide))).isEqualTo(header);
    ByteBuffer.wrap(wide).order(ByteOrder.LITTLE_ENDIAN).putLong(24, 65536);
    assertThat(dumpReason(() -> RedisBloomDump.loadCuckooHeader(wide))).isEqualTo(Reason.HEADER_INVALID);
    // an offset past the end (128 slots here) lands at the last sub-filter with the remainder: 129 - 128 = 1
    CuckooFilter filter = RedisBloomDump.loadCuckooHeader(header);
    byte[] data = {1, 2, 3, 4};
    RedisBloomDump.loadChunk(filter, 129 + data.length + 1, data);
    assertThat(io.bloomery.internal.KindAccess.cuckooDumps(CuckooFilter.class).cuckooSlots(filter, 1, 4)).containsExactly(1, 2, 3, 4);
    // ... if it fits there
    assertThat(dumpReason(() -> RedisBloomDump.loadChunk(filter, 128 + 126 + data.length + 1, data)))
        .isIn(NOT_LOADED);
  }

  @Test
  void randomChunksOnlyRaiseAllowedErrors() {
    Random random = new Random(533);
    Set<Reason> allowed = Set.of(Reason.NO_LAYER_AT_OFFSET, Reason.PAST_LAYER_END, Reason.POSITION,
        Reason.HEADER_AGAIN);
    CuckooFilter filter = withNumbers(CuckooFilter.create(256, 2, 20, 2), 2000);
    long total = RedisBloomDump.cuckooPayloadBytes(RedisBloomDump.cuckooHeader(filter));
    for (int round = 0; round < 2000; round++) {
      byte[] data = new byte[random.nextInt(1024)];
      random.nextBytes(data);
      long position = random.nextInt(4) == 0 ? random.nextLong() : (long) (random.nextDouble() * 2 * total);
      try {
        RedisBloomDump.loadChunk(filter, position, data);
      } catch (DumpRejectedException e) {
        assertThat(allowed).contains(e.reason());
      }
    }
  }

  @Test
  void scanningAnyPositionNeverFails() {
    CuckooFilter filter = withNumbers(CuckooFilter.create(64, 2, 20, 2), 500);
    long total = RedisBloomDump.cuckooPayloadBytes(RedisBloomDump.cuckooHeader(filter));
    for (long position = 0; position <= total + 1024; position++) {
      RedisBloomDump.Chunk chunk = RedisBloomDump.scanDump(filter, position);
      assertThat(chunk.isEnd()).isEqualTo(position > total);
    }
  }
}
