package io.bloomery.format;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomery.filter.FilterKind;
import io.bloomery.hash.HashProtocol;
import io.bloomery.hash.ProtocolId;
import io.bloomery.hash.Protocols;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A classic filter file past 2^32 bytes (five mapping segments of at most 1 GiB), mapped with the production
 * segment size. The file is sparse: a real header, a payload of zero pages except the words an
 * item's bits land in, so the test allocates nothing large and writes a few kilobytes. It opens
 * header-only (a checksum would read all 4 GiB).
 */
class MappedPast2GiBTest {
  @TempDir Path directory;

  @Test
  void wordsPastTheFirstTwoGigabytesAreReadAcrossSegments() throws Exception {
    long bits = (1L << 35) + 64 * 1000; // 4 GiB + 8000 bytes of payload: four full segments and a short one
    int hashes = 7;
    long words = (bits + 63) / 64;
    long payloadOffset = FilterFormat.FIXED_PREFIX_LENGTH + Long.BYTES + ClassicBloomBody.FIXED_LENGTH;
    long size = payloadOffset + 8 * words + 4;
    ByteBuffer header = ByteBuffer.allocate((int) payloadOffset).order(ByteOrder.LITTLE_ENDIAN);
    header.put(FilterFormat.MAGIC).put((byte) FilterFormat.FORMAT_VERSION).put((byte) FilterKind.CLASSIC_BLOOM.code())
        .put((byte) ProtocolId.XXH3_EDH_V1.code()).put((byte) 0).putShort((short) 0)
        .putLong(ClassicBloomBody.FIXED_LENGTH + 8 * words).putLong(bits).putInt(hashes).putLong(1);
    HashProtocol protocol = Protocols.defaultProtocol();
    HashProtocol.Placement placement = protocol.bind(bits, hashes, new byte[0]);
    long[] positions = new long[hashes];
    byte[] item;
    int candidate = 0;
    do { // the first item with a bit past byte 2^31 of the payload (bit 2^34): deterministic
      item = ("https://example.com/past-two-gigabytes/" + candidate++).getBytes(StandardCharsets.UTF_8);
      placement.positions(item, 0, item.length, positions);
    } while (java.util.Arrays.stream(positions).noneMatch(p -> p >= 1L << 34));

    Path file = directory.resolve("big" + FilterFormat.FILE_EXTENSION);
    try (RandomAccessFile raw = new RandomAccessFile(file.toFile(), "rw")) {
      raw.setLength(size); // sparse
      raw.write(header.array());
      for (long position : positions) {
        long offset = payloadOffset + 8 * (position >>> 6);
        raw.seek(offset);
        long word = Long.reverseBytes(raw.readLong()) | 1L << position; // the file is little-endian
        raw.seek(offset);
        raw.writeLong(Long.reverseBytes(word));
      }
    }
    assertThat(Files.size(file)).isGreaterThan(1L << 31);

    MappedBloomFilter mapped = FilterFormat.map(file, MappedFilter.Verification.HEADER_ONLY) instanceof MappedBloomFilter m
        ? m : null;
    assertThat(mapped).isNotNull();
    assertThat(mapped.bitSize()).isEqualTo(bits);
    assertThat(mapped.serializedLength()).isEqualTo(size);
    assertThat(mapped.isChecksumVerified()).isFalse();
    assertThat(mapped.mightContain(item)).isTrue();
    for (int i = 0; i < 100; i++) {
      assertThat(mapped.mightContain(("other " + i).getBytes(StandardCharsets.UTF_8))).isFalse();
    }
  }
}
