package io.bloomery.guard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomery.filter.BloomFilter;
import io.bloomery.format.FilterFormatException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Arrays;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The snapshot file round-trips, and hostile bytes fail with FilterFormatException only. */
class FilterSnapshotFileTest {
  @TempDir Path directory;

  private byte[] validSnapshot() throws Exception {
    BloomFilter filter = BloomFilter.create(1_000, 0.01);
    for (int i = 0; i < 300; i++) {
      filter.add("item-" + i);
    }
    Path file = directory.resolve("s.guard");
    FilterSnapshotFile.write(file, new FilterSnapshotFile.Snapshot(true, 300, 2,
        Instant.ofEpochMilli(1_700_000_000_000L), 1_000, 0.01, "sqlite:/x.db#t", filter, 0x16_B374_D848L));
    return Files.readAllBytes(file);
  }

  @Test
  void roundTrip() throws Exception {
    FilterSnapshotFile.Snapshot read = FilterSnapshotFile.parse("s", validSnapshot());
    assertThat(read.clean()).isTrue();
    assertThat(read.watermark()).isEqualTo(300);
    assertThat(read.generation()).isEqualTo(2);
    assertThat(read.builtAt()).isEqualTo(Instant.ofEpochMilli(1_700_000_000_000L));
    assertThat(read.storeIdentity()).isEqualTo("sqlite:/x.db#t");
    assertThat(read.replicationLsn()).isEqualTo(0x16_B374_D848L);
    for (int i = 0; i < 300; i++) {
      assertThat(read.filter().mightContain("item-" + i)).isTrue();
    }
    try (var files = Files.list(directory)) {
      assertThat(files).hasSize(1); // no temporary file left behind
    }
  }

  @Test
  void everyTruncationIsRefusedCleanly() throws Exception {
    byte[] valid = validSnapshot();
    for (int length = 0; length < valid.length; length += Math.max(1, length / 50)) {
      byte[] truncated = Arrays.copyOf(valid, length);
      assertThatThrownBy(() -> FilterSnapshotFile.parse("t", truncated))
          .as("length %d", length).isInstanceOf(FilterFormatException.class);
    }
  }

  @Test
  void everyFlippedByteIsRefusedCleanly() throws Exception {
    byte[] valid = validSnapshot();
    for (int position = 0; position < valid.length; position += Math.max(1, position / 40)) {
      byte[] flipped = valid.clone();
      flipped[position] ^= 0x01;
      assertThatThrownBy(() -> FilterSnapshotFile.parse("f", flipped))
          .as("position %d", position).isInstanceOf(FilterFormatException.class);
    }
  }

  @Test
  void absurdLengthsWithAValidChecksumAreRefused() throws Exception {
    byte[] valid = validSnapshot();
    int identityLengthOffset = 58;
    int identityLength = Short.toUnsignedInt(
        ByteBuffer.wrap(valid).order(ByteOrder.LITTLE_ENDIAN).getShort(identityLengthOffset));
    int filterLengthOffset = 60 + identityLength;
    for (long absurd : new long[] {-1, Long.MAX_VALUE, Integer.MAX_VALUE, valid.length}) {
      byte[] hostile = valid.clone();
      ByteBuffer.wrap(hostile).order(ByteOrder.LITTLE_ENDIAN).putLong(filterLengthOffset, absurd);
      resign(hostile);
      assertThatThrownBy(() -> FilterSnapshotFile.parse("a", hostile))
          .isInstanceOf(FilterFormatException.class).hasMessageContaining("filter length");
    }
    byte[] hostile = valid.clone();
    ByteBuffer.wrap(hostile).order(ByteOrder.LITTLE_ENDIAN)
        .putShort(identityLengthOffset, (short) 0xFFFF);
    resign(hostile);
    assertThatThrownBy(() -> FilterSnapshotFile.parse("i", hostile))
        .isInstanceOf(FilterFormatException.class).hasMessageContaining("identity length");
    byte[] version = valid.clone();
    version[8] = 9;
    resign(version);
    assertThatThrownBy(() -> FilterSnapshotFile.parse("v", version))
        .isInstanceOf(FilterFormatException.class).hasMessageContaining("version 9");
  }

  @Test
  void versionOneWithoutAReplicationLsnIsStillRead() throws Exception {
    byte[] v2 = validSnapshot();
    byte[] v1 = new byte[v2.length - 8];
    System.arraycopy(v2, 0, v1, 0, 50); // header up to the false-positive rate
    System.arraycopy(v2, 58, v1, 50, v2.length - 58); // identity onwards, without the LSN
    v1[8] = 1;
    resign(v1);
    FilterSnapshotFile.Snapshot read = FilterSnapshotFile.parse("v1", v1);
    assertThat(read.replicationLsn()).isZero();
    assertThat(read.watermark()).isEqualTo(300);
    assertThat(read.storeIdentity()).isEqualTo("sqlite:/x.db#t");
    assertThat(read.filter().mightContain("item-7")).isTrue();
  }

  @Test
  void aVersionTwoHeaderTooShortForItsLsnIsRefused() throws Exception {
    byte[] shortFile = Arrays.copyOf(validSnapshot(), 68);
    resign(shortFile);
    assertThatThrownBy(() -> FilterSnapshotFile.parse("s", shortFile))
        .isInstanceOf(FilterFormatException.class).hasMessageContaining("at least 72 bytes");
  }

  private static void resign(byte[] bytes) {
    CRC32C crc = new CRC32C();
    crc.update(bytes, 0, bytes.length - 4);
    ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN)
        .putInt(bytes.length - 4, (int) crc.getValue());
  }
}
