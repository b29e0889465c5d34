package io.bloomery.server.rdb;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomery.cuckoo.CuckooFilter;
import io.bloomery.format.RedisBloomArrays;
import io.bloomery.format.RedisBloomDump;
import io.bloomery.scalable.ScalableBloomFilter;
import io.bloomery.server.keyspace.ValueType;
import io.bloomery.sketch.CountMinSketch;
import io.bloomery.sketch.TopK;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** Payloads recorded from Redis 8.0.2 + RedisBloom read back, and written again byte for byte. */
class DumpPayloadTest {
  static List<RecordedDumps.Case> cases() {
    return RecordedDumps.cases();
  }

  @ParameterizedTest
  @MethodSource("cases")
  void redisPayloadIsWrittenAgainByteForByte(RecordedDumps.Case recorded) throws Exception {
    Object value = DumpPayload.restore(recorded.dump());
    byte[] ours = DumpPayload.dump(value);
    if (recorded.deterministic()) {
      assertThat(HexFormat.of().formatHex(ours)).isEqualTo(HexFormat.of().formatHex(recorded.dump()));
    } else {
      TopK theirs = (TopK) value;
      TopK again = (TopK) DumpPayload.restore(ours);
      assertThat(RedisBloomArrays.topKBuckets(again)).isEqualTo(RedisBloomArrays.topKBuckets(theirs));
      assertThat(RedisBloomArrays.topKHeap(again)).isEqualTo(RedisBloomArrays.topKHeap(theirs));
      assertThat(again.list()).isEqualTo(theirs.list());
    }
  }

  @ParameterizedTest
  @MethodSource("cases")
  void partsOfAPayloadAreItsBytesAndABoundedDumpStopsPastItsBound(RecordedDumps.Case recorded) throws Exception {
    Object value = DumpPayload.restore(recorded.dump());
    byte[] whole = DumpPayload.dump(value);
    for (int length : new int[] {0, 1, 7, 64, whole.length}) {
      for (long offset = 0; offset <= whole.length + 1; offset += Math.max(1, whole.length / 13)) {
        DumpPayload.Part part = DumpPayload.part(value, offset, length);
        int from = (int) Math.min(offset, whole.length);
        assertThat(part.total()).isEqualTo(whole.length);
        assertThat(part.bytes()).as("%d bytes at %d", length, offset)
            .isEqualTo(java.util.Arrays.copyOfRange(whole, from, (int) Math.min(whole.length, offset + length)));
      }
    }
    java.io.ByteArrayOutputStream joined = new java.io.ByteArrayOutputStream();
    for (long offset = 0; offset < whole.length; offset += 5) {
      joined.writeBytes(DumpPayload.part(value, offset, 5).bytes());
    }
    assertThat(joined.toByteArray()).isEqualTo(whole);
    assertThat(DumpPayload.dumpAtMost(value, whole.length)).isEqualTo(whole);
    assertThat(DumpPayload.dumpAtMost(value, whole.length - 1)).isNull();
    assertThat(DumpPayload.dumpAtMost(value, 0)).isNull();
    Object again = value;
    assertThatThrownBy(() -> DumpPayload.part(again, -1, 5)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> DumpPayload.part(again, 0, -5)).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void aBloomPayloadIsWrittenFromTheFilterItselfNotFromCopiesOfIt() throws Exception {
    // A layer of two SCANDUMP chunks. Writing its payload allocates the layer's bits once and LZF's output once
    // (length - 1 bytes): no copy of the filter, of its chunks, or of LZF's result, which for a key of gigabytes
    // would each need as much heap again on the node that dumps it.
    ScalableBloomFilter filter = ScalableBloomFilter.create(15_000_000, 0.02, 2);
    for (int i = 0; i < 1000; i++) {
      filter.add(("item:" + i).getBytes(StandardCharsets.UTF_8));
    }
    long layerBytes = RedisBloomDump.bloomPayloadBytes(RedisBloomDump.bloomHeader(filter));
    assertThat(layerBytes).isGreaterThan(RedisBloomDump.MAX_CHUNK_BYTES);
    com.sun.management.ThreadMXBean threads =
        (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
    DumpPayload.part(filter, 0, 16); // loads the classes the measured call runs
    long before = threads.getCurrentThreadAllocatedBytes();
    DumpPayload.Part part = DumpPayload.part(filter, 0, 16);
    long allocated = threads.getCurrentThreadAllocatedBytes() - before;
    assertThat(allocated).as("bytes allocated to write the payload of a filter of %d bytes", layerBytes)
        .isBetween(2 * layerBytes, 2 * layerBytes + (4 << 20));

    byte[] whole = DumpPayload.dump(filter);
    assertThat(part.total()).isEqualTo(whole.length);
    assertThat(part.bytes()).isEqualTo(java.util.Arrays.copyOf(whole, 16));
    ScalableBloomFilter restored = (ScalableBloomFilter) DumpPayload.restore(whole);
    List<RedisBloomDump.Chunk> expected = RedisBloomDump.scanDumpAll(filter);
    List<RedisBloomDump.Chunk> actual = RedisBloomDump.scanDumpAll(restored);
    assertThat(actual).hasSameSizeAs(expected).hasSize(3);
    for (int i = 0; i < expected.size(); i++) {
      assertThat(actual.get(i).iterator()).isEqualTo(expected.get(i).iterator());
      assertThat(actual.get(i).data()).as("chunk %d", i).isEqualTo(expected.get(i).data());
    }
  }

  @Test
  void recordedValuesHoldWhatTheCommandsPutIn() throws Exception {
    ScalableBloomFilter bloom = (ScalableBloomFilter) DumpPayload.restore(RecordedDumps.named("bf/scaled").dump());
    for (int i = 0; i < 100; i++) {
      assertThat(bloom.mightContain(("item" + i).getBytes(StandardCharsets.UTF_8))).isTrue();
    }
    assertThat(bloom.info().numberOfFilters()).isGreaterThan(1);
    CuckooFilter cuckoo = (CuckooFilter) DumpPayload.restore(RecordedDumps.named("cf/expanded").dump());
    assertThat(cuckoo.info().numberOfFilters()).isGreaterThan(1);
    assertThat(cuckoo.mightContain("item59".getBytes(StandardCharsets.UTF_8))).isTrue();
    CountMinSketch cms = (CountMinSketch) DumpPayload.restore(RecordedDumps.named("cms/dim").dump());
    assertThat(cms.count("c")).isEqualTo(100);
    assertThat(cms.insertedCount()).isEqualTo(108);
    TopK topK = (TopK) DumpPayload.restore(RecordedDumps.named("topk/small").dump());
    assertThat(topK.list().get(0).item()).isEqualTo("a".getBytes(StandardCharsets.UTF_8));
    assertThat(topK.list().get(0).count()).isEqualTo(3);
  }

  @Test
  void bloomeryOwnKindsTravelInTheirOwnModuleType() throws Exception {
    io.bloomery.counting.CountingBloomFilter counting = io.bloomery.counting.CountingBloomFilter.create(1000, 0.01);
    counting.add("x".getBytes(StandardCharsets.UTF_8));
    byte[] payload = DumpPayload.dump(counting);
    Object back = DumpPayload.restore(payload);
    assertThat(ValueType.of(back)).isEqualTo(ValueType.COUNTING_BLOOM);
    assertThat(((io.bloomery.counting.CountingBloomFilter) back).mightContain("x".getBytes(StandardCharsets.UTF_8)))
        .isTrue();
    assertThat(ModuleTypeId.decode(new RdbInputFixture(payload).moduleId()).name()).isEqualTo("Bloomery-");
  }

  @Test
  void moduleIdsAreRedisBloomsEncoding() {
    // RedisBloom registers MBbloom-- at encoding version 4: the id Redis writes before every BF value
    assertThat(new ModuleTypeId("MBbloom--", 4).encode()).isEqualTo(RdbInputFixture.idOf(
        RecordedDumps.named("bf/empty").dump()));
    assertThat(ModuleTypeId.decode(new ModuleTypeId("TopK-TYPE", 0).encode()))
        .isEqualTo(new ModuleTypeId("TopK-TYPE", 0));
    assertThatThrownBy(() -> new ModuleTypeId("MBbloom", 4)).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void moduleFieldsReadBackAsWrittenAndRefuseTheWrongOpcode() throws Exception {
    RdbOutput out = new RdbOutput();
    out.moduleSigned(-1);
    out.moduleSigned(1L << 40);
    out.moduleUnsigned(0xFFFF_FFFF_FFFF_FFFFL);
    out.moduleUnsigned(63);
    out.moduleUnsigned(64);
    out.moduleUnsigned(16383);
    out.moduleUnsigned(16384);
    out.moduleDouble(-0.0);
    out.moduleString("12".getBytes(StandardCharsets.US_ASCII)); // integer-encoded, read back as its digits
    out.moduleString("x".repeat(100).getBytes(StandardCharsets.US_ASCII)); // LZF
    out.moduleEof();
    byte[] bytes = out.toByteArray();
    assertThat(HexFormat.of().formatHex(bytes, 0, 11)).isEqualTo("0181ffffffffffffffff01");
    RdbInput in = new RdbInput(new java.io.ByteArrayInputStream(bytes));
    assertThat(in.moduleSigned()).isEqualTo(-1);
    assertThat(in.moduleSigned()).isEqualTo(1L << 40);
    assertThat(in.moduleUnsigned()).isEqualTo(-1L);
    assertThat(in.moduleUnsigned()).isEqualTo(63);
    assertThat(in.moduleUnsigned()).isEqualTo(64);
    assertThat(in.moduleUnsigned()).isEqualTo(16383);
    assertThat(in.moduleUnsigned()).isEqualTo(16384);
    assertThat(Double.doubleToRawLongBits(in.moduleDouble())).isEqualTo(Double.doubleToRawLongBits(-0.0));
    assertThat(in.moduleString()).isEqualTo("12".getBytes(StandardCharsets.US_ASCII));
    assertThat(in.moduleString()).isEqualTo("x".repeat(100).getBytes(StandardCharsets.US_ASCII));
    in.moduleEof();
    assertThat(in.position()).isEqualTo(bytes.length);
    RdbInput wrong = new RdbInput(new java.io.ByteArrayInputStream(bytes));
    assertThatThrownBy(wrong::moduleUnsigned).isInstanceOf(RdbFormatException.class)
        .hasMessageContaining("expected an unsigned integer (opcode 2), found opcode 1");
  }

  @Test
  void crc64IsRedisJonesCrc() {
    byte[] check = "123456789".getBytes(StandardCharsets.US_ASCII);
    assertThat(Crc64.update(0, check, 0, check.length)).isEqualTo(0xe9c6d914c4b8d9caL);
  }

  /** Reads the module id of a payload without reading the value. */
  static final class RdbInputFixture {
    private final byte[] payload;

    RdbInputFixture(byte[] payload) {
      this.payload = payload;
    }

    long moduleId() throws java.io.IOException {
      RdbInput in = new RdbInput(new java.io.ByteArrayInputStream(payload));
      in.u8();
      return in.length();
    }

    static long idOf(byte[] payload) {
      try {
        return new RdbInputFixture(payload).moduleId();
      } catch (java.io.IOException e) {
        throw new AssertionError(e);
      }
    }
  }
}
