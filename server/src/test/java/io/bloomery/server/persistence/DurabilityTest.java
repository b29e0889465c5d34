package io.bloomery.server.persistence;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomery.sketch.CountMinSketch;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DurabilityTest {
  @TempDir Path dir;

  private Durability open(TestKeyspace keyspace, FsyncPolicy policy) throws IOException {
    Durability durability = Durability.open(dir, true, policy, keyspace, keyspace, keyspace);
    keyspace.journalTo(durability.journal());
    return durability;
  }

  private static void write(TestKeyspace keyspace, int from, int to) {
    for (int i = from; i < to; i++) {
      keyspace.apply("BF.ADD", "urls", "u" + i).toCompletableFuture().join();
      keyspace.apply("CMS.INCRBY", "hits", "k" + (i % 7), "2").toCompletableFuture().join();
    }
  }

  /** Writes {@code pairs} BF.ADD + CMS.INCRBY pairs under {@code always}, then crashes; returns what was acknowledged. */
  private TestKeyspace crashedAfter(int pairs) throws IOException {
    TestKeyspace keyspace = new TestKeyspace();
    Durability durability = open(keyspace, FsyncPolicy.ALWAYS);
    write(keyspace, 0, pairs);
    durability.abandon();
    return keyspace;
  }

  /** What a crash in the middle of writing a record leaves: its first bytes, never forced or acknowledged. */
  static void appendTornWrite(Path segment) throws IOException {
    byte[] record = JournalFormat.encode(TestKeyspace.argv("BF.ADD", "urls", "half-written"), 1_000_000);
    Files.write(segment, java.util.Arrays.copyOf(record, record.length - 5), java.nio.file.StandardOpenOption.APPEND);
  }

  private Map<String, String> recovered(FsyncPolicy policy) throws IOException {
    TestKeyspace fresh = new TestKeyspace();
    try (Durability durability = open(fresh, policy)) {
      return fresh.dump();
    }
  }

  @Test
  void cleanCloseSnapshotsAndReopens() throws IOException {
    TestKeyspace keyspace = new TestKeyspace();
    try (Durability durability = open(keyspace, FsyncPolicy.EVERYSEC)) {
      write(keyspace, 0, 200);
    }
    assertThat(DataDirectory.snapshots(dir)).hasSize(1);
    assertThat(Manifest.read(dir).snapshot()).isEqualTo(DataDirectory.snapshots(dir).firstEntry().getValue().getFileName().toString());
    assertThat(recovered(FsyncPolicy.EVERYSEC)).isEqualTo(keyspace.dump());
  }

  @Test
  void aCrashAfterAcknowledgementLosesNothingUnderEveryPolicy() throws IOException {
    for (FsyncPolicy policy : FsyncPolicy.values()) {
      Path sub = dir.resolve(policy.configName());
      TestKeyspace keyspace = new TestKeyspace();
      Durability durability = Durability.open(sub, true, policy, keyspace, keyspace, keyspace);
      keyspace.journalTo(durability.journal());
      write(keyspace, 0, 100);
      durability.control().save();
      write(keyspace, 100, 150);
      durability.abandon();
      TestKeyspace fresh = new TestKeyspace();
      try (Durability reopened = Durability.open(sub, true, policy, fresh, fresh, fresh)) {
        assertThat(fresh.dump()).as(policy.configName()).isEqualTo(keyspace.dump());
      }
    }
  }

  @Test
  void aTornLastRecordIsTrimmedAndKept() throws IOException {
    Map<String, String> before = crashedAfter(50).dump();
    Path segment = DataDirectory.segments(dir).lastEntry().getValue();
    appendTornWrite(segment);
    assertThat(recovered(FsyncPolicy.ALWAYS)).isEqualTo(before);
    try (var kept = Files.list(dir)) {
      assertThat(kept.map(p -> p.getFileName().toString()).filter(n -> n.contains(".torn-"))).hasSize(1);
    }
  }

  @Test
  void aTornRecordBeforeAFreshlyCreatedEmptySegmentIsTrimmedToo() throws IOException {
    // A crash while a rewrite had just created its next segment, with a record half-written in the current one.
    Map<String, String> before = crashedAfter(10).dump();
    appendTornWrite(DataDirectory.segments(dir).lastEntry().getValue());
    JournalWriter.createSegment(dir, DataDirectory.segments(dir).lastKey() + 1).channel().close();
    assertThat(LogCheck.check(dir).startable()).isTrue();
    assertThat(recovered(FsyncPolicy.ALWAYS)).isEqualTo(before);
  }

  /**
   * Zero bytes after the last record (a writer's preallocated headroom, or pages a power loss never wrote) are
   * unused space: the start cuts them without a warning or a kept copy, and appends continue after the last
   * record.
   */
  @Test
  void aZeroFilledTailIsUnusedSpaceAndAppendsContinueAfterTheLastRecord() throws IOException {
    TestKeyspace keyspace = crashedAfter(20);
    Path segment = DataDirectory.segments(dir).lastEntry().getValue();
    long end = Files.size(segment);
    Files.write(segment, new byte[1 << 20], java.nio.file.StandardOpenOption.APPEND);
    TestKeyspace reopened = new TestKeyspace();
    Durability again = open(reopened, FsyncPolicy.ALWAYS);
    assertThat(reopened.dump()).isEqualTo(keyspace.dump());
    assertThat(Files.size(segment)).isEqualTo(end);
    reopened.apply("BF.ADD", "urls", "after").toCompletableFuture().join();
    Map<String, String> expected = reopened.dump();
    again.abandon();
    try (var files = Files.list(dir)) {
      assertThat(files.map(p -> p.getFileName().toString()).filter(n -> n.contains(".torn-"))).isEmpty();
    }
    assertThat(recovered(FsyncPolicy.ALWAYS)).isEqualTo(expected);
  }

  /**
   * Every acknowledgement under {@code always} comes after the SYNCED mark covers its record, so a record
   * damaged after acknowledgement is never mistaken for a torn write.
   */
  @Test
  void theSyncedMarkCoversEveryAcknowledgedRecordUnderAlways() throws IOException {
    TestKeyspace keyspace = new TestKeyspace();
    Durability durability = open(keyspace, FsyncPolicy.ALWAYS);
    write(keyspace, 0, 30);
    long segmentNumber = durability.writer().currentSegment();
    long size = durability.writer().currentSegmentSize();
    durability.abandon();
    SyncMark mark = SyncMark.read(dir);
    assertThat(mark.sequence()).isEqualTo(60);
    assertThat(mark.segment()).isEqualTo(segmentNumber);
    assertThat(mark.offset()).isEqualTo(size);
  }

  @Test
  void corruptionInTheMiddleRefusesToStartNamingFileAndOffset() throws IOException {
    TestKeyspace keyspace = crashedAfter(20);
    Path segment = DataDirectory.segments(dir).lastEntry().getValue();
    long offset = JournalFormat.HEADER_LENGTH + 100;
    try (RandomAccessFile file = new RandomAccessFile(segment.toFile(), "rw")) {
      file.seek(offset);
      int b = file.read();
      file.seek(offset);
      file.write(b ^ 0x10);
    }
    long[] recordStart = {-1};
    JournalFormat.scan(segment, DataDirectory.segments(dir).lastKey(), 0, (o, a) -> {
      if (o <= offset) {
        recordStart[0] = o;
      }
    });
    TestKeyspace fresh = new TestKeyspace();
    assertThatThrownBy(() -> Durability.open(dir, true, FsyncPolicy.ALWAYS, fresh, fresh, fresh))
        .isInstanceOf(PersistenceCorruptionException.class)
        .hasMessageContaining(segment.getFileName().toString())
        .hasMessageContaining("at offset ")
        .hasMessageContaining("check-log --fix")
        .satisfies(e -> assertThat(((PersistenceCorruptionException) e).offset()).isGreaterThan(recordStart[0]));
  }

  @Test
  void rewritesUnderConcurrentWritesLoseAndDuplicateNothing() throws Exception {
    // The aof-race analogue: increments on a few keys from several threads while rewrites keep cutting.
    TestKeyspace keyspace = new TestKeyspace();
    Durability durability = open(keyspace, FsyncPolicy.EVERYSEC);
    int threads = 4;
    int perThread = 1500;
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    List<Future<?>> writers = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      int id = t;
      writers.add(pool.submit(() -> {
        for (int i = 0; i < perThread; i++) {
          keyspace.apply("CMS.INCRBY", "counter" + (i % 3), "item" + id, "1").toCompletableFuture().join();
        }
      }));
    }
    AtomicBoolean done = new AtomicBoolean();
    int rewrites = 0;
    while (!done.get()) {
      durability.control().save();
      rewrites++;
      done.set(writers.stream().allMatch(Future::isDone));
    }
    for (Future<?> writer : writers) {
      writer.get();
    }
    pool.shutdown();
    durability.abandon();
    TestKeyspace fresh = new TestKeyspace();
    try (Durability reopened = Durability.open(dir, true, FsyncPolicy.EVERYSEC, fresh, fresh, fresh)) {
      assertThat(rewrites).isPositive();
      assertThat(fresh.dump()).isEqualTo(keyspace.dump());
      long total = 0;
      for (int k = 0; k < 3; k++) {
        total += ((CountMinSketch) fresh.value("counter" + k)).insertedCount();
      }
      assertThat(total).isEqualTo((long) threads * perThread);
    }
  }

  @Test
  void groupCommitAcknowledgesOnlyAfterAnFsyncAndSharesThem() throws Exception {
    TestKeyspace keyspace = new TestKeyspace();
    try (Durability durability = open(keyspace, FsyncPolicy.ALWAYS)) {
      int threads = 8;
      int perThread = 100;
      ExecutorService pool = Executors.newFixedThreadPool(threads);
      List<CompletableFuture<Void>> acks = new ArrayList<>();
      List<Future<?>> writers = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        int id = t;
        writers.add(pool.submit(() -> {
          for (int i = 0; i < perThread; i++) {
            CompletableFuture<Void> ack = keyspace.apply("BF.ADD", "k" + id, "i" + i).toCompletableFuture();
            synchronized (acks) {
              acks.add(ack);
            }
            ack.join();
          }
        }));
      }
      for (Future<?> writer : writers) {
        writer.get();
      }
      pool.shutdown();
      CompletableFuture.allOf(acks.toArray(CompletableFuture[]::new)).join();
      PersistenceMetrics metrics = durability.metrics();
      // Every acknowledgement was released by an fsync, and no fsync released nothing but itself.
      assertThat(metrics.fsyncCoveredAppends()).isEqualTo((long) threads * perThread);
      assertThat(metrics.fsyncCount()).isLessThanOrEqualTo((long) threads * perThread);
      assertThat(durability.control().infoFields()).containsEntry("aof_enabled", "1").containsEntry("aof_fsync", "always");
    }
  }

  @Test
  void appendOnlyNoKeepsSnapshotsOnlyAndFoldsAnEarlierJournal() throws IOException {
    TestKeyspace keyspace = new TestKeyspace();
    Durability durability = open(keyspace, FsyncPolicy.ALWAYS);
    write(keyspace, 0, 30);
    durability.abandon();
    TestKeyspace second = new TestKeyspace();
    try (Durability snapshotsOnly = Durability.open(dir, false, FsyncPolicy.EVERYSEC, second, second, second)) {
      second.journalTo(snapshotsOnly.journal());
      assertThat(second.dump()).isEqualTo(keyspace.dump());
      // The folded journal stays as the previous state until the next snapshot replaces it.
      assertThat(Manifest.read(dir).previous()).isEqualTo(Manifest.EMPTY);
      assertThat(DataDirectory.segments(dir)).containsOnlyKeys(1L);
      assertThat(snapshotsOnly.control().infoFields()).containsEntry("aof_enabled", "0");
      write(second, 30, 40);
      assertThat(snapshotsOnly.control().infoFields()).containsEntry("rdb_changes_since_last_save", "20");
    }
    assertThat(DataDirectory.segments(dir)).isEmpty();
    TestKeyspace third = new TestKeyspace();
    try (Durability again = Durability.open(dir, true, FsyncPolicy.EVERYSEC, third, third, third)) {
      assertThat(third.dump()).isEqualTo(second.dump());
    }
  }

  /**
   * A snapshot that runs out of heap fails as an IOException that names the cause (what SAVE answers), never as a
   * stray Error: the background save reports it too, the shutdown completes and releases the directory, and the
   * journal keeps every write.
   */
  @Test
  void aSnapshotThatRunsOutOfHeapFailsWithItsCauseAndShutdownStillCompletes() throws Exception {
    TestKeyspace keyspace = new TestKeyspace();
    SnapshotSource outOfHeap = (atCut, sink) -> keyspace.snapshot(atCut, (key, value, expireAt) -> {
      throw new OutOfMemoryError("Java heap space");
    });
    Durability durability = Durability.open(dir, true, FsyncPolicy.EVERYSEC, outOfHeap, keyspace, keyspace);
    keyspace.journalTo(durability.journal());
    write(keyspace, 0, 50);
    assertThatThrownBy(() -> durability.control().save()).isInstanceOf(IOException.class)
        .hasMessageContaining("Java heap").hasMessageContaining("OutOfMemoryError")
        .hasMessageContaining("the previous snapshot and the whole journal stay in force");
    assertThat(durability.control().infoFields()).containsEntry("rdb_last_bgsave_status", "err");

    assertThat(durability.control().backgroundSave()).isTrue();
    long deadline = System.nanoTime() + 30_000_000_000L;
    while (!durability.control().infoFields().get("rdb_saves").equals("2") && System.nanoTime() < deadline) {
      Thread.sleep(10);
    }
    assertThat(durability.control().infoFields()).containsEntry("rdb_saves", "2")
        .containsEntry("rdb_last_bgsave_status", "err");
    write(keyspace, 50, 60); // writes go on after the failed snapshots

    assertThatThrownBy(durability::close).isInstanceOf(IOException.class).hasMessageContaining("Java heap");
    assertThat(recovered(FsyncPolicy.EVERYSEC)).isEqualTo(keyspace.dump());
  }

  @Test
  void aSecondServerOnTheSameDirectoryIsRefused() throws IOException {
    TestKeyspace keyspace = new TestKeyspace();
    try (Durability first = open(keyspace, FsyncPolicy.NO)) {
      TestKeyspace other = new TestKeyspace();
      assertThatThrownBy(() -> Durability.open(dir, true, FsyncPolicy.NO, other, other, other))
          .isInstanceOf(IOException.class).hasMessageContaining("in use by another server");
    }
  }

  @Test
  void automaticRewriteStartsOnceTheJournalOutgrowsTheThreshold() throws Exception {
    TestKeyspace keyspace = new TestKeyspace();
    DurabilityOptions options = DurabilityOptions.of(dir, true, FsyncPolicy.NO).withAutoRewrite(100, 4096);
    try (Durability durability = Durability.open(options, keyspace, keyspace, keyspace)) {
      keyspace.journalTo(durability.journal());
      write(keyspace, 0, 100);
      long deadline = System.nanoTime() + 30_000_000_000L;
      while (durability.control().lastSaveUnixSeconds() == 0 && System.nanoTime() < deadline) {
        Thread.sleep(50);
      }
      assertThat(durability.control().lastSaveUnixSeconds()).as("an automatic rewrite ran").isPositive();
      assertThat(Manifest.read(dir).snapshot()).isNotNull();
    }
  }

  @Test
  void leftoversOfAnInterruptedRewriteAreIgnoredAndRemoved() throws IOException {
    TestKeyspace keyspace = new TestKeyspace();
    Durability durability = open(keyspace, FsyncPolicy.ALWAYS);
    write(keyspace, 0, 10);
    durability.control().save();
    write(keyspace, 10, 20);
    durability.abandon();
    // A rewrite killed after writing its temp snapshot and creating its next segment, before the manifest.
    Files.write(dir.resolve(".snapshot.0000000099.snap.1234.tmp"), new byte[] {1, 2, 3});
    Files.write(dir.resolve("snapshot.0000000098.snap"), new byte[] {1, 2, 3});
    assertThat(recovered(FsyncPolicy.ALWAYS)).isEqualTo(keyspace.dump());
    assertThat(DataDirectory.temporaries(dir)).isEmpty();
    assertThat(DataDirectory.snapshots(dir)).doesNotContainKey(98L);
  }

  @Test
  void aMissingManifestWithDataFilesRefusesToGuess() throws IOException {
    TestKeyspace keyspace = new TestKeyspace();
    Durability durability = open(keyspace, FsyncPolicy.ALWAYS);
    write(keyspace, 0, 5);
    durability.abandon();
    Files.delete(dir.resolve(DataDirectory.MANIFEST));
    TestKeyspace fresh = new TestKeyspace();
    assertThatThrownBy(() -> Durability.open(dir, true, FsyncPolicy.ALWAYS, fresh, fresh, fresh))
        .isInstanceOf(PersistenceCorruptionException.class).hasMessageContaining("refusing to guess");
  }
}
