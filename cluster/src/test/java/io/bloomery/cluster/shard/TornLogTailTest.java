package io.bloomery.cluster.shard;

import static io.bloomery.cluster.shard.ShardClient.argv;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomery.server.resp.Reply;
import io.bloomery.server.state.Settings;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A replica killed while its log worker wrote a buffer of entries into the open segment can leave the segment ending
 * in the first part of an entry followed by the zeros the segment was preallocated with: {@code write(2)} returns
 * short when a {@code SIGKILL} arrives between pages. That entry was never forced, so no replica counted it, and the
 * replica must start again without it. Ratis's default policy refuses the whole log instead ("Failed to
 * initRaftLog"), which ClusterIT met once: a node killed with {@code -9} that never came back.
 */
@Timeout(120)
class TornLogTailTest {
  @TempDir
  Path dir;

  @Test
  void aReplicaStartsAgainWithoutTheEntryItsKillCutShort() throws Exception {
    ShardGroup group = FreePorts.group("torn", 1);
    ShardReplica.Options options = new ShardReplica.Options(group, "r1", dir.resolve("r1"), Duration.ofMillis(300),
        ShardReplica.Options.DEFAULT_SNAPSHOT_EVERY, ShardReplica.Options.DEFAULT_LOG_SEGMENT_BYTES);
    try (ShardReplica replica = ShardReplica.start(options, new Settings());
        ShardClient client = new ShardClient(group, Duration.ofSeconds(60))) {
      for (int i = 0; i < 20; i++) {
        client.write(argv("BF.ADD", "urls", "kept-" + i));
      }
    }
    Path segment = openSegment(dir.resolve("r1"), group);
    long entriesEnd = Files.size(segment);
    tearAnEntryAtTheEnd(segment);

    try (ShardReplica replica = ShardReplica.start(options, new Settings());
        ShardClient client = new ShardClient(group, Duration.ofSeconds(60))) {
      for (int i = 0; i < 20; i++) {
        assertThat(client.read(argv("BF.EXISTS", "urls", "kept-" + i)).reply()).as("kept-%d", i)
            .isEqualTo(new Reply.Bool(true));
      }
      // Ratis closes the segment it read (log_inprogress_0 becomes log_0-<last index>) and opens a new one.
      Path cut = segmentStartingAt(segment.getParent(), 0);
      assertThat(Files.size(cut)).as("%s, where the torn tail was cut off", cut).isEqualTo(entriesEnd);
      assertThat(client.write(argv("BF.ADD", "urls", "after")).reply()).isEqualTo(new Reply.Bool(true));
    }
    // What was appended after the cut reads back on the next start: the cut left a segment Ratis appends to cleanly.
    try (ShardReplica replica = ShardReplica.start(options, new Settings());
        ShardClient client = new ShardClient(group, Duration.ofSeconds(60))) {
      assertThat(client.read(argv("BF.EXISTS", "urls", "after")).reply()).isEqualTo(new Reply.Bool(true));
      assertThat(client.read(argv("BF.EXISTS", "urls", "kept-19")).reply()).isEqualTo(new Reply.Bool(true));
    }
  }

  @Test
  void damageBeforeTheLastSegmentStillStopsTheStart() throws Exception {
    ShardGroup group = FreePorts.group("damaged", 1);
    ShardReplica.Options options = new ShardReplica.Options(group, "r1", dir.resolve("r1"), Duration.ofMillis(300),
        ShardReplica.Options.DEFAULT_SNAPSHOT_EVERY, 1024);
    try (ShardReplica replica = ShardReplica.start(options, new Settings());
        ShardClient client = new ShardClient(group, Duration.ofSeconds(60))) {
      for (int i = 0; i < 60; i++) {
        client.write(argv("BF.ADD", "urls", "kept-" + i));
      }
    }
    Path current = dir.resolve("r1").resolve(group.groupId().getUuid().toString()).resolve("current");
    List<Path> closed;
    try (Stream<Path> files = Files.list(current)) {
      closed = files.filter(p -> p.getFileName().toString().matches("log_\\d+-\\d+")).sorted().toList();
    }
    assertThat(closed).as("closed segments in %s", current).hasSizeGreaterThan(1);
    Path first = closed.get(0);
    byte[] bytes = Files.readAllBytes(first);
    bytes[bytes.length / 2] ^= 0x40;
    Files.write(first, bytes);

    assertThatThrownBy(() -> ShardReplica.start(options, new Settings()).close())
        .hasStackTraceContaining("gap between logs");
  }

  /** The group's open log segment (Ratis names it {@code log_inprogress_<first index>}). */
  static Path openSegment(Path replicaDir, ShardGroup group) throws IOException {
    Path current = replicaDir.resolve(group.groupId().getUuid().toString()).resolve("current");
    try (Stream<Path> files = Files.list(current)) {
      List<Path> open = files.filter(p -> p.getFileName().toString().startsWith("log_inprogress_")).toList();
      assertThat(open).as("open segments in %s", current).hasSize(1);
      return open.get(0);
    }
  }

  /** The segment, open or closed, whose first entry has {@code index}. */
  static Path segmentStartingAt(Path current, long index) throws IOException {
    try (Stream<Path> files = Files.list(current)) {
      List<Path> found = files.filter(p -> p.getFileName().toString().matches("log_(inprogress_)?" + index + "(-\\d+)?"))
          .toList();
      assertThat(found).as("segments starting at %d in %s", index, current).hasSize(1);
      return found.get(0);
    }
  }

  /**
   * Appends what a write cut short leaves: an entry's length (a protobuf varint, 300 bytes), its first 40 bytes of
   * body, then the preallocated zeros where the rest, and its checksum, would have been.
   */
  static void tearAnEntryAtTheEnd(Path segment) throws IOException {
    ByteBuffer torn = ByteBuffer.allocate(64 << 10);
    torn.put((byte) 0xAC).put((byte) 0x02); // 300 as a varint
    for (int i = 0; i < 40; i++) {
      torn.put((byte) (0x08 + i));
    }
    torn.position(0);
    try (FileChannel channel = FileChannel.open(segment, StandardOpenOption.WRITE, StandardOpenOption.APPEND)) {
      while (torn.hasRemaining()) {
        channel.write(torn);
      }
    }
  }
}
