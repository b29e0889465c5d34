package io.bloomery.server.persistence;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The journal on an 8 MB tmpfs that fills up, seen from the persistence seam: the reserve takes the record that
 * found the disk full and writes are refused from then on; a record that still cannot be written (a write that got
 * past the check, with the reserve already spent) fails with a reply that says it was applied in memory, and writes
 * stay refused until the snapshot the server takes by itself has captured memory; then everything, that record
 * included, survives a restart. A journal that opens without room for its reserve refuses writes from the start,
 * until there is room.
 */
class JournalFailureTest {
  private static final long WAIT_NANOS = TimeUnit.SECONDS.toNanos(30);

  @TempDir Path dir;
  private SmallDisk disk;

  @BeforeEach
  void mount() throws Exception {
    disk = SmallDisk.mount(dir.resolve("disk"), "8m");
  }

  @AfterEach
  void unmount() throws Exception {
    if (disk != null) { // null when mounting was not allowed and the test was skipped
      disk.close();
    }
  }

  @Test
  void aRecordNotWrittenRefusesWritesUntilASnapshotCapturesMemory() throws Exception {
    Path data = disk.root().resolve("data");
    TestKeyspace keyspace = new TestKeyspace();
    Map<String, String> applied;
    try (Durability durability = Durability.open(data, true, FsyncPolicy.EVERYSEC, keyspace, keyspace, keyspace)) {
      keyspace.journalTo(durability.journal());
      keyspace.apply("BF.ADD", "urls", "before").toCompletableFuture().join();
      assertThat(durability.journal().refusal()).isNull();
      disk.fill();
      int n = 0;
      while (durability.journal().refusal() == null) {
        // every record is written: the last one with the reserve's space
        keyspace.apply("BF.ADD", "urls", "u" + n++).toCompletableFuture().join();
        assertThat(n).as("writes before the disk was found full").isLessThan(100_000);
      }
      assertThat(durability.journal().refusal()).contains("No space left on device");
      assertThat(durability.control().infoFields()).containsEntry("aof_last_write_status", "err");

      disk.fill(); // the reserve's space is gone too
      CompletableFuture<Void> failed = null;
      for (int i = 0; failed == null; i++) {
        CompletableFuture<Void> ack = keyspace.apply("BF.ADD", "urls", "late" + i).toCompletableFuture();
        if (ack.isCompletedExceptionally()) {
          failed = ack;
        }
        assertThat(i).as("writes on a disk without space").isLessThan(100_000);
      }
      CompletableFuture<Void> refused = failed;
      assertThat(catchThrowable(refused::join)).isInstanceOf(CompletionException.class)
          .hasMessageContaining("applied in memory but its journal record was not written")
          .hasMessageContaining("No space left on device");
      assertThat(durability.journal().refusal()).contains("journal write failed");

      disk.free();
      long deadline = System.nanoTime() + WAIT_NANOS;
      while (durability.journal().refusal() != null) {
        assertThat(System.nanoTime()).as("writes accepted again after the automatic snapshot").isLessThan(deadline);
        Thread.sleep(20);
      }
      Map<String, String> info = durability.control().infoFields();
      assertThat(info).containsEntry("aof_last_write_status", "ok").containsEntry("rdb_last_bgsave_status", "ok");
      assertThat(Long.parseLong(info.get("rdb_saves"))).as("snapshots taken").isPositive();
      keyspace.apply("BF.ADD", "urls", "after").toCompletableFuture().join();
      applied = keyspace.dump();
      durability.abandon(); // as a crash: only the snapshot and the journal hold the state
    }
    TestKeyspace fresh = new TestKeyspace();
    try (Durability reopened = Durability.open(data, true, FsyncPolicy.EVERYSEC, fresh, fresh, fresh)) {
      assertThat(fresh.dump()).isEqualTo(applied);
    }
  }

  @Test
  void aJournalOpenedWithoutRoomForItsReserveRefusesWritesUntilThereIs() throws Exception {
    Path data = disk.root().resolve("data");
    TestKeyspace keyspace = new TestKeyspace();
    Durability first = Durability.open(data, true, FsyncPolicy.ALWAYS, keyspace, keyspace, keyspace);
    keyspace.journalTo(first.journal());
    keyspace.apply("BF.ADD", "urls", "before").toCompletableFuture().join();
    Map<String, String> applied = keyspace.dump();
    first.abandon();
    Files.delete(data.resolve(DataDirectory.RESERVE));
    disk.fill();
    TestKeyspace reopened = new TestKeyspace();
    try (Durability durability = Durability.open(data, true, FsyncPolicy.ALWAYS, reopened, reopened, reopened)) {
      reopened.journalTo(durability.journal());
      assertThat(reopened.dump()).isEqualTo(applied);
      assertThat(durability.journal().refusal()).contains("No space left on device");
      assertThat(durability.control().infoFields()).containsEntry("aof_last_write_status", "err");
      disk.free();
      long deadline = System.nanoTime() + WAIT_NANOS;
      while (durability.journal().refusal() != null) {
        assertThat(System.nanoTime()).as("writes accepted once the reserve fits").isLessThan(deadline);
        Thread.sleep(20);
      }
      reopened.apply("BF.ADD", "urls", "after").toCompletableFuture().join();
      assertThat(durability.control().infoFields()).containsEntry("aof_last_write_status", "ok");
    }
  }
}
