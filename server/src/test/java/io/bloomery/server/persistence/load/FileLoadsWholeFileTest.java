package io.bloomery.server.persistence.load;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomery.blocked.BlockedBloomFilter;
import io.bloomery.filter.BloomFilter;
import io.bloomery.filter.Summary;
import io.bloomery.format.FilterFormat;
import io.bloomery.hash.Protocols;
import io.bloomery.server.keyspace.Key;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a cluster node relies on to send a Bloomery file through a shard's log: {@link FileLoads#isWholeFile} tells a
 * file that came whole in one chunk (a write any replica applies alike) from a header that more chunks must follow,
 * never throwing on hostile bytes; {@link FileLoads#takeStaged} gives back a staged load's bytes exactly, and its
 * accounting and staging file with them.
 */
class FileLoadsWholeFileTest {
  @TempDir Path dir;

  private static List<byte[]> files() {
    BloomFilter classic = BloomFilter.create(Protocols.defaultProtocol(), "seed".getBytes(StandardCharsets.UTF_8),
        1000, 7);
    BlockedBloomFilter blocked = BlockedBloomFilter.create(new byte[0], 9, 6);
    for (int i = 0; i < 100; i++) {
      classic.add(("item-" + i).getBytes(StandardCharsets.UTF_8));
      blocked.add(("item-" + i).getBytes(StandardCharsets.UTF_8));
    }
    return List.of(FilterFormat.toBytes(classic), FilterFormat.toBytes(blocked));
  }

  @Test
  void onlyAWholeFileIsWholeAndNoBytesMakeItThrow() {
    for (byte[] file : files()) {
      assertThat(FileLoads.isWholeFile(file)).isTrue();
      for (int length = 0; length < file.length; length++) {
        assertThat(FileLoads.isWholeFile(Arrays.copyOf(file, length))).as("a prefix of %d bytes", length).isFalse();
      }
      assertThat(FileLoads.isWholeFile(Arrays.copyOf(file, file.length + 1))).isFalse();
      int header = FileLoads.headerLength(file);
      byte[] unsigned = file.clone();
      Arrays.fill(unsigned, header - 8, header, (byte) 0xFF); // a body of 2^64 - 1 bytes: not a negative length
      assertThat(FileLoads.isWholeFile(unsigned)).isFalse();
      assertThat(FileLoads.isWholeFile(Arrays.copyOf(unsigned, header + 3))).as("3 bytes short of a CRC").isFalse();
    }
    long seed = System.nanoTime();
    SplittableRandom random = new SplittableRandom(seed);
    for (int i = 0; i < 10_000; i++) {
      byte[] hostile = new byte[random.nextInt(64)];
      random.nextBytes(hostile);
      System.arraycopy("BLMF".getBytes(StandardCharsets.US_ASCII), 0, hostile, 0, Math.min(4, hostile.length));
      boolean whole = FileLoads.isWholeFile(hostile); // must not throw
      if (whole) {
        assertThat(hostile.length).as("seed %d", seed).isEqualTo(FileLoads.headerLength(hostile) + 4
            + (int) java.nio.ByteBuffer.wrap(hostile, FileLoads.headerLength(hostile) - 8, 8)
                .order(java.nio.ByteOrder.LITTLE_ENDIAN).getLong());
      }
    }
  }

  @Test
  void aStagedLoadIsTakenBackByteForByteAndReleased() throws Exception {
    byte[] file = files().get(1);
    int header = FileLoads.headerLength(file);
    try (FileLoads loads = new FileLoads(System::currentTimeMillis)) {
      loads.configure(dir, false, 60_000);
      Key key = Key.of("k".getBytes(StandardCharsets.UTF_8));
      assertThat(loads.begin(CALLER, key, Arrays.copyOf(file, header))).isNull();
      assertThat(loads.pending(key)).isTrue();
      FileLoads.Step step = null;
      for (int at = header; at < file.length; at += 100) {
        assertThat(step).isNull();
        step = loads.next(CALLER, key, at + 1, Arrays.copyOfRange(file, at, Math.min(file.length, at + 100)));
      }
      assertThat(step).isInstanceOf(FileLoads.Finish.class);
      assertThat(loads.stagedBytes()).isEqualTo(file.length);
      FileLoads.Finish finish = (FileLoads.Finish) step;
      assertThat(loads.takeStaged(finish)).isEqualTo(file);
      assertThat(loads.stagedBytes()).isZero();
      assertThat(loads.reservedBytes()).isZero();
      assertThat(loads.pendingCount() + loads.finishingCount()).isZero();
      try (var left = Files.list(dir)) {
        assertThat(left).as("the staging file is gone").isEmpty();
      }
      assertThatThrownBy(() -> loads.takeStaged(finish)).as("taken once").isInstanceOf(LoadException.class)
          .hasMessageContaining("cancelled");
    }
  }

  private static final LoadCaller CALLER = new LoadCaller() {
    @Override
    public long clientId() {
      return 1;
    }

    @Override
    public boolean replaying() {
      return false;
    }

    @Override
    public void admit(long bytes, long largestArray) {}

    @Override
    public void admitReserved(long bytes, long largestArray) {}
  };
}
