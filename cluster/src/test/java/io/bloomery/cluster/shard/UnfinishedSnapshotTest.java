package io.bloomery.cluster.shard;

import static io.bloomery.cluster.shard.ShardClient.argv;
import static org.assertj.core.api.Assertions.assertThat;

import io.bloomery.server.resp.Reply;
import io.bloomery.server.state.Settings;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A replica killed while it wrote a snapshot leaves the snapshot's temporary file in its state machine directory
 * (ShardChaosIT kills leaders at that moment); starting again removes it and keeps everything else.
 */
@Timeout(120)
class UnfinishedSnapshotTest {
  @TempDir
  Path dir;

  @Test
  void startingAgainDeletesTheTemporaryFileOfAnInterruptedSnapshot() throws Exception {
    ShardGroup group = FreePorts.group("unfinished", 1);
    ShardReplica.Options options = new ShardReplica.Options(group, "r1", dir.resolve("r1"), Duration.ofMillis(300),
        1, ShardReplica.Options.DEFAULT_LOG_SEGMENT_BYTES);
    long index;
    try (ShardReplica replica = ShardReplica.start(options, new Settings());
        ShardClient client = new ShardClient(group, Duration.ofSeconds(60))) {
      index = client.write(argv("BF.ADD", "urls", "kept")).logIndex();
    }
    Path sm = dir.resolve("r1").resolve(group.groupId().getUuid().toString()).resolve("sm");
    Path unfinished = Files.writeString(sm.resolve(".snapshot.1_" + (index + 1) + ".3kq9x0.tmp"), "half a snapshot");
    Path unrelated = Files.writeString(sm.resolve("notes.tmp"), "not ours");

    try (ShardReplica replica = ShardReplica.start(options, new Settings());
        ShardClient client = new ShardClient(group, Duration.ofSeconds(60))) {
      assertThat(unfinished).doesNotExist();
      assertThat(unrelated).exists();
      assertThat(client.read(argv("BF.EXISTS", "urls", "kept")).reply()).isEqualTo(new Reply.Bool(true));
    }
  }
}
