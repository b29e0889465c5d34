package io.bloomery.server.rdb;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Arrays;
import java.util.List;
import java.util.function.Consumer;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;
import org.junit.jupiter.api.Test;

/**
 * Hostile {@code RESTORE} payloads: each is refused with {@link RdbFormatException} (the footer's own subclass where
 * Redis answers "DUMP payload version or checksum are wrong"), never another exception, and huge declared sizes are
 * refused before anything of that size is allocated.
 */
class DumpPayloadHostileTest {
  private static final List<RecordedDumps.Case> CASES = RecordedDumps.cases();

  /** {@code object} with a version-12 footer and its correct CRC. */
  static byte[] withFooter(byte[] object, int version) {
    byte[] body = Arrays.copyOf(object, object.length + 2);
    body[object.length] = (byte) version;
    body[object.length + 1] = (byte) (version >>> 8);
    RdbOutput out = new RdbOutput();
    out.raw(body);
    out.littleEndian64(Crc64.update(0, body, 0, body.length));
    return out.toByteArray();
  }

  private static byte[] object(byte[] payload) {
    return Arrays.copyOf(payload, payload.length - 10);
  }

  private static byte[] moduleValue(String typeName, int encodingVersion, Consumer<RdbOutput> fields) {
    RdbOutput out = new RdbOutput();
    out.rawByte(DumpPayload.RDB_TYPE_MODULE_2);
    out.length(new ModuleTypeId(typeName, encodingVersion).encode());
    fields.accept(out);
    out.moduleEof();
    return withFooter(out.toByteArray(), DumpPayload.RDB_VERSION);
  }

  @Test
  void everyTruncationIsAVersionOrChecksumError() {
    for (RecordedDumps.Case c : CASES) {
      byte[] payload = c.dump();
      for (int length = 0; length < payload.length; length++) {
        byte[] cut = Arrays.copyOf(payload, length);
        assertThatThrownBy(() -> DumpPayload.restore(cut)).as(c.name() + " cut to " + length)
            .isInstanceOf(DumpPayload.VersionOrChecksumException.class);
      }
    }
  }

  @Test
  void everyTruncatedObjectUnderAValidFooterIsAFormatError() {
    for (RecordedDumps.Case c : CASES) {
      byte[] object = object(c.dump());
      for (int length = 0; length < object.length; length++) {
        byte[] payload = withFooter(Arrays.copyOf(object, length), DumpPayload.RDB_VERSION);
        assertThatThrownBy(() -> DumpPayload.restore(payload)).as(c.name() + " object cut to " + length)
            .isInstanceOf(RdbFormatException.class)
            .isNotInstanceOf(DumpPayload.VersionOrChecksumException.class);
      }
    }
  }

  @Test
  void aWrongCrcOrANewerVersionIsRefusedAndAnOlderVersionRead() throws Exception {
    byte[] payload = RecordedDumps.named("cms/dim").dump();
    for (int i = payload.length - 8; i < payload.length; i++) {
      byte[] bad = payload.clone();
      bad[i] ^= 0x01;
      assertThatThrownBy(() -> DumpPayload.restore(bad)).isInstanceOf(DumpPayload.VersionOrChecksumException.class);
    }
    byte[] flippedBody = payload.clone();
    flippedBody[5] ^= 0x40;
    assertThatThrownBy(() -> DumpPayload.restore(flippedBody))
        .isInstanceOf(DumpPayload.VersionOrChecksumException.class);
    assertThatThrownBy(() -> DumpPayload.restore(withFooter(object(payload), 13)))
        .isInstanceOf(DumpPayload.VersionOrChecksumException.class).hasMessageContaining("version 13");
    assertThat(DumpPayload.restore(withFooter(object(payload), 11))).isNotNull();
  }

  @Test
  void otherModulesAndNewerEncodingsAndOtherObjectTypesAreRefused() {
    byte[] json = moduleValue("ReJSON-RL", 3, out -> out.moduleUnsigned(1));
    assertThatThrownBy(() -> DumpPayload.restore(json)).isInstanceOf(RdbFormatException.class)
        .hasMessageContaining("no module type ReJSON-RL");
    byte[] newer = moduleValue("MBbloom--", 5, out -> out.moduleUnsigned(1));
    assertThatThrownBy(() -> DumpPayload.restore(newer)).hasMessageContaining("encoding version 5");
    RdbOutput string = new RdbOutput();
    string.rawByte(0);
    string.string("plain");
    assertThatThrownBy(() -> DumpPayload.restore(withFooter(string.toByteArray(), 12)))
        .isInstanceOf(RdbFormatException.class).hasMessageContaining("object type 0");
    byte[] missingEof = Arrays.copyOf(object(RecordedDumps.named("cms/dim").dump()),
        object(RecordedDumps.named("cms/dim").dump()).length - 1);
    assertThatThrownBy(() -> DumpPayload.restore(withFooter(missingEof, 12))).isInstanceOf(RdbFormatException.class);
  }

  @Test
  void hugeDeclaredSizesAreRefusedWithoutAllocatingThem() {
    long before = usedHeap();
    // a CMS of 2^31 x 2^31 counters whose counter string declares 2^40 bytes
    byte[] hugeString = moduleValue("CMSk-TYPE", 0, out -> {
      out.moduleUnsigned(1L << 31);
      out.moduleUnsigned(1L << 31);
      out.moduleUnsigned(0);
      out.length(RdbOutput.MODULE_OPCODE_STRING);
      out.length(1L << 40);
    });
    assertThatThrownBy(() -> DumpPayload.restore(hugeString)).isInstanceOf(RdbFormatException.class)
        .hasMessageContaining("passes the largest string");
    // a string that declares just under 2 GiB and holds 3 bytes
    byte[] shortString = moduleValue("CMSk-TYPE", 0, out -> {
      out.moduleUnsigned(20);
      out.moduleUnsigned(5);
      out.moduleUnsigned(0);
      out.length(RdbOutput.MODULE_OPCODE_STRING);
      out.length(RdbInput.MAX_STRING_BYTES);
      out.raw(new byte[] {1, 2, 3});
    });
    assertThatThrownBy(() -> DumpPayload.restore(shortString)).isInstanceOf(RdbFormatException.class)
        .hasMessageContaining("unexpected end");
    // LZF data of 4 bytes that declares 1 GiB uncompressed
    byte[] lzfBomb = moduleValue("CMSk-TYPE", 0, out -> {
      out.moduleUnsigned(20);
      out.moduleUnsigned(5);
      out.moduleUnsigned(0);
      out.length(RdbOutput.MODULE_OPCODE_STRING);
      out.rawByte(0xC3);
      out.length(4);
      out.length(1 << 30);
      out.raw(new byte[] {0, 0, (byte) 0xE0, (byte) 0xFF});
    });
    assertThatThrownBy(() -> DumpPayload.restore(lzfBomb)).isInstanceOf(RdbFormatException.class)
        .hasMessageContaining("cannot make");
    // a cuckoo filter of 65535 sub-filters of 2^40 buckets, then a bloom filter of 2^60 layers
    byte[] hugeCuckoo = moduleValue("MBbloomCF", 4, out -> {
      out.moduleUnsigned(65535);
      out.moduleUnsigned(1L << 40);
      for (int i = 0; i < 5; i++) {
        out.moduleUnsigned(i == 2 ? 2 : 1);
      }
    });
    assertThatThrownBy(() -> DumpPayload.restore(hugeCuckoo)).isInstanceOf(RdbFormatException.class);
    byte[] hugeChain = moduleValue("MBbloom--", 4, out -> {
      out.moduleUnsigned(0);
      out.moduleUnsigned(1L << 60);
    });
    assertThatThrownBy(() -> DumpPayload.restore(hugeChain)).isInstanceOf(RdbFormatException.class)
        .hasMessageContaining("layers");
    // a top-k sketch of k = 2^32 - 1 with a 24-byte heap
    byte[] hugeTopK = moduleValue("TopK-TYPE", 0, out -> {
      out.moduleUnsigned(0xFFFF_FFFFL);
      out.moduleUnsigned(1);
      out.moduleUnsigned(1);
      out.moduleDouble(0.9);
      out.moduleString(new byte[8]);
      out.moduleString(new byte[24]);
    });
    assertThatThrownBy(() -> DumpPayload.restore(hugeTopK)).isInstanceOf(RdbFormatException.class)
        .hasMessageContaining("heap bytes");
    assertThat(usedHeap() - before).as("heap grown by the refusals").isLessThan(256L << 20);
  }

  private static long usedHeap() {
    Runtime r = Runtime.getRuntime();
    return r.totalMemory() - r.freeMemory();
  }

  @Property(tries = 2000)
  void mutatedPayloadsUnderAValidFooterReadOrFailCleanly(@ForAll("mutations") Tuple.Tuple2<Integer, int[]> mutation) {
    byte[] object = object(CASES.get(mutation.get1()).dump());
    int[] edits = mutation.get2();
    for (int i = 0; i + 1 < edits.length; i += 2) {
      int at = Math.floorMod(edits[i], object.length);
      switch (Math.floorMod(edits[i + 1], 4)) {
        case 0 -> object[at] ^= (byte) (1 << Math.floorMod(edits[i + 1] >> 2, 8));
        case 1 -> object[at] = (byte) (edits[i + 1] >> 2);
        case 2 -> object = Arrays.copyOf(object, Math.max(1, at));
        default -> {
          byte[] longer = Arrays.copyOf(object, object.length + 1);
          System.arraycopy(object, at, longer, at + 1, object.length - at);
          longer[at] = (byte) (edits[i + 1] >> 2);
          object = longer;
        }
      }
    }
    byte[] payload = withFooter(object, DumpPayload.RDB_VERSION);
    try {
      Object value = DumpPayload.restore(payload);
      assertThat(DumpPayload.restore(DumpPayload.dump(value))).isNotNull();
    } catch (RdbFormatException expected) {
      assertThat(expected).isNotInstanceOf(DumpPayload.VersionOrChecksumException.class);
    }
  }

  @Provide
  Arbitrary<Tuple.Tuple2<Integer, int[]>> mutations() {
    Arbitrary<Integer> which = Arbitraries.integers().between(0, CASES.size() - 1);
    Arbitrary<int[]> edits = Arbitraries.integers().array(int[].class).ofMinSize(2).ofMaxSize(8);
    return net.jqwik.api.Combinators.combine(which, edits).as(Tuple::of);
  }
}
