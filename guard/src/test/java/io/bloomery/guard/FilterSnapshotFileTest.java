package io.bloomery.guard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomery.blocked.BlockedBloomFilter;
import io.bloomery.blocked.SplitBlockBloomFilter;
import io.bloomery.counting.CountingBloomFilter;
import io.bloomery.filter.BloomFilter;
import io.bloomery.filter.FilterKind;
import io.bloomery.filter.MembershipFilter;
import io.bloomery.format.FilterFormat;
import io.bloomery.format.FilterFormatException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
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
        Instant.ofEpochMilli(1_700_000_000_000L), 1_000, 0.01, "sqlite:/x.db#t", GuardFilter.of(filter),
        0x16_B374_D848L));
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
      assertThat(read.filter().mightContain(("item-" + i).getBytes(StandardCharsets.UTF_8))).isTrue();
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
    assertThat(read.filter().mightContain("item-7".getBytes(StandardCharsets.UTF_8))).isTrue();
  }

  @Test
  void aVersionTwoHeaderTooShortForItsLsnIsRefused() throws Exception {
    byte[] shortFile = Arrays.copyOf(validSnapshot(), 68);
    resign(shortFile);
    assertThatThrownBy(() -> FilterSnapshotFile.parse("s", shortFile))
        .isInstanceOf(FilterFormatException.class).hasMessageContaining("at least 72 bytes");
  }

  @Test
  void theBlockedKindsRoundTripAndTheClassicLayoutIsUnchanged() throws Exception {
    for (MembershipFilter filter : List.of(BlockedBloomFilter.create(5_000, 0.01), SplitBlockBloomFilter.create(5_000, 0.01),
        BloomFilter.create(5_000, 0.01))) {
      for (int i = 0; i < 1_000; i++) {
        filter.add("item-" + i);
      }
      Path file = directory.resolve(filter.kind().kindName() + ".guard");
      FilterSnapshotFile.Snapshot written = new FilterSnapshotFile.Snapshot(false, 1_000, 3, Instant.ofEpochMilli(5),
          5_000, 0.01, "jdbc:postgresql://db/x#seen", GuardFilter.of(filter), 77);
      FilterSnapshotFile.write(file, written);
      FilterSnapshotFile.Snapshot read = FilterSnapshotFile.read(file);
      assertThat(read.filter().kind()).isEqualTo(filter.kind());
      assertThat(FilterFormat.toBytes(read.filter().filter())).isEqualTo(FilterFormat.toBytes(filter));
      assertThat(read.watermark()).isEqualTo(1_000);
      assertThat(read.replicationLsn()).isEqualTo(77);
      // The streamed writer's bytes are the layout the byte-array writer produced: a snapshot written
      // before the guard took other kinds reads the same.
      assertThat(Files.readAllBytes(file)).isEqualTo(byteArrayLayout(written, filter));
    }
  }

  /** The snapshot as the version 2 writer laid it out in one array, field by field. */
  private static byte[] byteArrayLayout(FilterSnapshotFile.Snapshot s, MembershipFilter filter) {
    byte[] identity = s.storeIdentity().getBytes(StandardCharsets.UTF_8);
    byte[] body = FilterFormat.toBytes(filter);
    ByteBuffer out = ByteBuffer.allocate(68 + identity.length + body.length + 4).order(ByteOrder.LITTLE_ENDIAN);
    out.put("BLMGUARD".getBytes(StandardCharsets.US_ASCII)).put((byte) 2).put((byte) (s.clean() ? 1 : 0));
    out.putLong(s.watermark()).putLong(s.generation()).putLong(s.builtAt().toEpochMilli());
    out.putLong(s.expectedInsertions()).putDouble(s.fpp()).putLong(s.replicationLsn());
    out.putShort((short) identity.length).put(identity).putLong(body.length).put(body);
    byte[] bytes = out.array();
    resign(bytes);
    return bytes;
  }

  @Test
  void aSnapshotOfAKindTheGuardCannotUseIsRefusedByName() throws Exception {
    byte[] valid = validSnapshot();
    int identityLength = Short.toUnsignedInt(ByteBuffer.wrap(valid).order(ByteOrder.LITTLE_ENDIAN).getShort(58));
    byte[] counting = FilterFormat.toBytes(CountingBloomFilter.create(100, 0.01));
    ByteBuffer hostile = ByteBuffer.allocate(68 + identityLength + counting.length + 4).order(ByteOrder.LITTLE_ENDIAN);
    hostile.put(valid, 0, 68 + identityLength - 8).putLong(counting.length).put(counting);
    byte[] bytes = hostile.array();
    resign(bytes);
    assertThatThrownBy(() -> FilterSnapshotFile.parse("c", bytes)).isInstanceOf(FilterFormatException.class)
        .hasMessageContaining("counting").hasMessageContaining(FilterKind.BLOCKED_BLOOM.kindName());
  }

  private static void resign(byte[] bytes) {
    CRC32C crc = new CRC32C();
    crc.update(bytes, 0, bytes.length - 4);
    ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN)
        .putInt(bytes.length - 4, (int) crc.getValue());
  }
}
