package io.bloomery.server.persistence;

import static io.bloomery.server.persistence.TestKeyspace.argv;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LogCheckTest {
  @TempDir Path dir;

  /** Writes 20 adds, crashes, and returns the model state after each record (index i = after i+1 records). */
  private List<Map<String, String>> crashedWithRecords() throws IOException {
    TestKeyspace keyspace = new TestKeyspace();
    Durability durability = Durability.open(dir, true, FsyncPolicy.ALWAYS, keyspace, keyspace, keyspace);
    keyspace.journalTo(durability.journal());
    List<Map<String, String>> states = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      keyspace.apply("BF.ADD", "urls", "u" + i).toCompletableFuture().join();
      states.add(keyspace.dump());
    }
    durability.abandon();
    return states;
  }

  private Path lastSegment() throws IOException {
    return DataDirectory.segments(dir).lastEntry().getValue();
  }

  private List<Long> recordOffsets(Path segment) throws IOException {
    List<Long> offsets = new ArrayList<>();
    JournalFormat.scan(segment, DataDirectory.segments(dir).lastKey(), 0, (o, a) -> offsets.add(o));
    return offsets;
  }

  /** Flips one bit of the byte at {@code offset}: the damage a bad sector or a stray write leaves. */
  static void flip(Path file, long offset) throws IOException {
    try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw")) {
      raf.seek(offset);
      int b = raf.read();
      raf.seek(offset);
      raf.write(b ^ 0x40);
    }
  }

  private Map<String, String> recovered() throws IOException {
    TestKeyspace fresh = new TestKeyspace();
    try (Durability durability = Durability.open(dir, true, FsyncPolicy.ALWAYS, fresh, fresh, fresh)) {
      return fresh.dump();
    }
  }

  private List<String> sideFiles(String marker) throws IOException {
    try (Stream<Path> files = Files.list(dir)) {
      return files.map(p -> p.getFileName().toString()).filter(n -> n.contains(marker)).toList();
    }
  }

  private static Map<String, String> model(List<String> items) {
    TestKeyspace model = new TestKeyspace();
    for (String item : items) {
      model.apply("BF.ADD", "urls", item);
    }
    return model.dump();
  }

  private static List<String> itemsWithout(int skipped) {
    List<String> items = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      if (i != skipped) {
        items.add("u" + i);
      }
    }
    return items;
  }

  @Test
  void aCleanDirectoryIsOkAndAnEmptyOneStartsEmpty() throws IOException {
    assertThat(LogCheck.check(dir).lines()).containsExactly("no persistence files in " + dir + " (a server starts empty here)");
    crashedWithRecords();
    LogCheck.Report report = LogCheck.check(dir);
    assertThat(report.startable()).isTrue();
    assertThat(report.lines()).anyMatch(l -> l.matches("journal\\.0000000001\\.log: ok, 20 records \\(to record 20\\), \\d+ bytes"));
    assertThat(report.lines()).last().isEqualTo("ok: the server starts on this directory");
  }

  @Test
  void aTornWriteIsReportedAsStartableAndFixKeepsWhatItCuts() throws IOException {
    List<Map<String, String>> states = crashedWithRecords();
    Path segment = lastSegment();
    long end = Files.size(segment);
    DurabilityTest.appendTornWrite(segment);
    LogCheck.Report check = LogCheck.check(dir);
    assertThat(check.startable()).isTrue();
    assertThat(check.changed()).isFalse();
    assertThat(check.lines()).anyMatch(l -> l.startsWith(segment.getFileName() + ": torn write at offset " + end + ": ")
        && l.contains("records from 21 on lost") && l.endsWith("never forced to disk, the server cuts it at start"));
    LogCheck.Report fixed = LogCheck.fix(dir);
    assertThat(fixed.changed()).isTrue();
    assertThat(sideFiles(".cut-")).hasSize(1);
    assertThat(Files.size(segment)).isEqualTo(end);
    assertThat(recovered()).isEqualTo(states.get(19));
  }

  /**
   * The last record of an {@code always} journal was acknowledged after an fsync. Cutting into it used to be
   * trimmed as a torn tail with a warning; the SYNCED mark shows it had been forced, so it is damage of an
   * acknowledged record: the server refuses, check-log names the record, and --fix removes it, keeping a copy.
   */
  @Test
  void aCutIntoTheLastAcknowledgedRecordIsDamageNotATornTail() throws IOException {
    List<Map<String, String>> states = crashedWithRecords();
    Path segment = lastSegment();
    long lastRecord = recordOffsets(segment).get(19);
    long size = Files.size(segment);
    long payload = size - lastRecord - JournalFormat.RECORD_HEADER_LENGTH;
    long truncated = size - 3;
    try (RandomAccessFile raf = new RandomAccessFile(segment.toFile(), "rw")) {
      raf.setLength(truncated);
    }
    long tail = truncated - lastRecord;
    LogCheck.Report check = LogCheck.check(dir);
    assertThat(check.startable()).isFalse();
    assertThat(check.lines()).contains(segment.getFileName() + ": damaged at offset " + lastRecord
        + ": record of 24 + " + payload + " bytes runs past the end of the file, which ends " + tail
        + " bytes after the record's start; records from 20 on lost (" + tail + " bytes from offset " + lastRecord
        + "); these bytes had been forced to disk, so their records were acknowledged");
    assertThatThrownBy(this::recovered).isInstanceOf(PersistenceCorruptionException.class)
        .hasMessageContaining("at offset " + lastRecord).hasMessageContaining("records from 20 on lost")
        .hasMessageContaining("forced to disk").hasMessageContaining("check-log --fix");
    LogCheck.Report fixed = LogCheck.fix(dir);
    assertThat(fixed.startable()).isTrue();
    assertThat(Files.size(segment)).isEqualTo(lastRecord);
    assertThat(Files.size(dir.resolve(sideFiles(".cut-").get(0)))).isEqualTo(tail);
    assertThat(recovered()).isEqualTo(states.get(18));
  }

  /**
   * A flipped byte in the middle of the journal used to lose every record after it once --fix cut there
   * (and moved later segments aside). Now exactly the damaged record is named and removed; the records
   * after it, in this segment and the next, are kept.
   */
  @Test
  void aFlippedByteInTheMiddleLosesOnlyThatRecordAndLaterSegmentsStay() throws IOException {
    crashedWithRecords();
    Path segment = lastSegment();
    List<Long> offsets = recordOffsets(segment);
    // A later segment, as an interrupted rewrite leaves one, holding one more record.
    JournalWriter.PreparedSegment next = JournalWriter.createSegment(dir, 2);
    next.channel().write(ByteBuffer.wrap(JournalFormat.encode(argv("BF.ADD", "urls", "later"), 21)));
    next.channel().close();
    for (long inRecord : new long[] {30, 13}) {
      flip(segment, offsets.get(7) + inRecord);
      LogCheck.Report check = LogCheck.check(dir);
      assertThat(check.startable()).isFalse();
      assertThat(check.lines()).anyMatch(l -> l.startsWith("journal.0000000001.log: damaged at offset " + offsets.get(7) + ": ")
          && l.contains("record 8 lost (" + (offsets.get(8) - offsets.get(7)) + " bytes") && l.endsWith("12 good records follow it"));
      assertThat(check.lines()).contains("journal.0000000002.log: ok, 1 record (to record 21), 77 bytes");
      flip(segment, offsets.get(7) + inRecord);
    }
    flip(segment, offsets.get(7) + 30);
    assertThatThrownBy(this::recovered).isInstanceOf(PersistenceCorruptionException.class)
        .hasMessageContaining("journal.0000000001.log at offset " + offsets.get(7)).hasMessageContaining("record 8 lost");

    LogCheck.Report fixed = LogCheck.fix(dir);
    assertThat(fixed.startable()).isTrue();
    assertThat(fixed.lines()).last().isEqualTo("fixed: the server starts on this directory without what is named above");
    assertThat(sideFiles(".cut-")).hasSize(1);
    List<String> items = itemsWithout(7);
    items.add("later");
    assertThat(recovered()).isEqualTo(model(items));
    assertThat(LogCheck.check(dir).startable()).isTrue();
  }

  /** Two snapshots with journal before, between and after them; returns the acknowledged state. */
  private Map<String, String> twoSnapshotsAndAJournal() throws IOException {
    TestKeyspace keyspace = new TestKeyspace();
    Durability durability = Durability.open(dir, true, FsyncPolicy.ALWAYS, keyspace, keyspace, keyspace);
    keyspace.journalTo(durability.journal());
    for (int i = 0; i < 30; i++) {
      keyspace.apply("BF.ADD", "urls", "u" + i).toCompletableFuture().join();
      keyspace.apply("BF.ADD", "other", "o" + i).toCompletableFuture().join();
      if (i == 9 || i == 19) {
        durability.control().save();
      }
    }
    durability.abandon();
    return keyspace.dump();
  }

  private Path currentSnapshot() throws IOException {
    return dir.resolve(Manifest.read(dir).snapshot());
  }

  /**
   * A flipped byte in the snapshot used to make the directory unstartable for good: the server refused, the
   * previous snapshot had been deleted, and check-log --fix said "not repairable". Now the previous snapshot
   * and the journal from it are kept, and --fix falls back to them: nothing is lost.
   */
  @Test
  void aDamagedSnapshotFallsBackToThePreviousOneAndTheJournal() throws IOException {
    Map<String, String> acknowledged = twoSnapshotsAndAJournal();
    Manifest manifest = Manifest.read(dir);
    assertThat(manifest.previous()).isNotNull();
    assertThat(dir.resolve(manifest.previous().snapshot())).exists();
    Path snapshot = currentSnapshot();
    flip(snapshot, Files.size(snapshot) / 2);
    assertThatThrownBy(this::recovered).isInstanceOf(PersistenceCorruptionException.class)
        .hasMessageContaining(snapshot.getFileName().toString()).hasMessageContaining("check-log --fix");
    LogCheck.Report check = LogCheck.check(dir);
    assertThat(check.startable()).isFalse();
    assertThat(check.lines()).anyMatch(l -> l.contains("--fix falls back to the previous state: snapshot "
        + manifest.previous().snapshot()) && l.endsWith("(nothing lost)"));
    LogCheck.Report fixed = LogCheck.fix(dir);
    assertThat(fixed.startable()).isTrue();
    assertThat(fixed.lines()).last().isEqualTo("fixed: the server starts on this directory");
    assertThat(Manifest.read(dir).snapshot()).isEqualTo(manifest.previous().snapshot());
    assertThat(sideFiles(".damaged-")).hasSize(1);
    assertThat(recovered()).isEqualTo(acknowledged);
  }

  /**
   * Without a usable previous state, --fix rewrites the snapshot without the one damaged key and names it;
   * every other key, and the journal after the snapshot, are kept.
   */
  @Test
  void withoutAFallbackFixSkipsTheOneDamagedKeyAndNamesIt() throws IOException {
    twoSnapshotsAndAJournal();
    Manifest manifest = Manifest.read(dir);
    Files.delete(dir.resolve(manifest.previous().snapshot()));
    Path snapshot = currentSnapshot();
    List<String> keys = new ArrayList<>();
    List<Long> entries = new ArrayList<>();
    long[] next = {SnapshotFormat.HEADER_LENGTH};
    SnapshotFormat.read(snapshot, (key, value, expireAt) -> {
      keys.add(new String(key, java.nio.charset.StandardCharsets.UTF_8));
      entries.add(next[0]);
      next[0] += SnapshotFormat.ENTRY_HEAD_LENGTH + key.length + 4
          + io.bloomery.format.FilterFormat.serializedLength((io.bloomery.filter.Summary) value) + 4;
    });
    assertThat(keys).containsExactly("other", "urls");
    flip(snapshot, entries.get(1) + SnapshotFormat.ENTRY_HEAD_LENGTH + 4 + 4 + 40);
    LogCheck.Report check = LogCheck.check(dir);
    assertThat(check.startable()).isFalse();
    assertThat(check.lines()).anyMatch(l -> l.contains("damaged at offset " + entries.get(1)) && l.contains("key 'urls': "));
    assertThat(check.lines()).anyMatch(l -> l.contains("no fallback (" + manifest.previous().snapshot() + " is missing)"));
    LogCheck.Report fixed = LogCheck.fix(dir);
    assertThat(fixed.startable()).isTrue();
    assertThat(fixed.lines()).last().isEqualTo("fixed: the server starts on this directory without what is named above");
    TestKeyspace model = new TestKeyspace();
    for (int i = 0; i < 30; i++) {
      if (i >= 20) {
        model.apply("BF.ADD", "urls", "u" + i);
      }
      model.apply("BF.ADD", "other", "o" + i);
    }
    assertThat(recovered()).isEqualTo(model.dump());
  }

  /**
   * A damaged header at the very start of the segment after a snapshot has no good record before it in that
   * segment; the segment kept with the previous state says which number it held.
   */
  @Test
  void theFirstRecordAfterASnapshotIsNamedFromTheKeptSegmentBeforeIt() throws IOException {
    twoSnapshotsAndAJournal();
    Path segment = lastSegment();
    flip(segment, JournalFormat.HEADER_LENGTH + 1);
    assertThat(LogCheck.check(dir).lines()).anyMatch(l -> l.startsWith(segment.getFileName() + ": damaged at offset 16: ")
        && l.contains("; record 41 lost (") && l.endsWith("19 good records follow it"));
  }

  /** A snapshot becomes the previous one at the next snapshot, and is deleted at the one after. */
  @Test
  void thePreviousSnapshotAndItsJournalAreKeptForOneSnapshotMore() throws IOException {
    TestKeyspace keyspace = new TestKeyspace();
    try (Durability durability = Durability.open(dir, true, FsyncPolicy.ALWAYS, keyspace, keyspace, keyspace)) {
      keyspace.journalTo(durability.journal());
      List<String> seen = new ArrayList<>();
      for (int i = 0; i < 3; i++) {
        keyspace.apply("BF.ADD", "urls", "u" + i).toCompletableFuture().join();
        durability.control().save();
        Manifest manifest = Manifest.read(dir);
        seen.add(manifest.snapshot());
        assertThat(DataDirectory.segments(dir).firstKey()).isEqualTo(manifest.previous().firstSegment());
      }
      List<String> kept = DataDirectory.snapshots(dir).values().stream().map(p -> p.getFileName().toString()).toList();
      assertThat(kept).containsExactly(seen.get(1), seen.get(2));
    }
  }

  @Test
  void fixRefusesWhileAServerHoldsTheDirectory() throws IOException {
    TestKeyspace keyspace = new TestKeyspace();
    try (Durability running = Durability.open(dir, true, FsyncPolicy.NO, keyspace, keyspace, keyspace)) {
      assertThatThrownBy(() -> LogCheck.fix(dir)).isInstanceOf(IOException.class).hasMessageContaining("in use by a running server");
    }
  }

  @Test
  void checkSaysADirectoryHeldByAServerIsInUseAndNotStartable() throws IOException {
    TestKeyspace keyspace = new TestKeyspace();
    try (Durability running = Durability.open(dir, true, FsyncPolicy.NO, keyspace, keyspace, keyspace)) {
      LogCheck.Report held = LogCheck.check(dir);
      assertThat(held.startable()).isFalse();
      assertThat(held.changed()).isFalse();
      assertThat(held.lines()).noneMatch(line -> line.startsWith("ok:"));
      assertThat(held.lines().getLast()).startsWith("in use: a running server holds " + dir)
          .contains("a second server is refused");
    }
    LogCheck.Report stopped = LogCheck.check(dir);
    assertThat(stopped.startable()).isTrue();
    assertThat(stopped.lines().getLast()).isEqualTo("ok: the server starts on this directory");
  }
}
