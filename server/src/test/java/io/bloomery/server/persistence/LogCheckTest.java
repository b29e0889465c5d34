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

  private static void flip(Path file, long offset) throws IOException {
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
    assertThat(fixed.lines()).last().isEqualTo("fixed: the server starts on this directory without the records named above");
    assertThat(sideFiles(".cut-")).hasSize(1);
    List<String> items = itemsWithout(7);
    items.add("later");
    assertThat(recovered()).isEqualTo(model(items));
    assertThat(LogCheck.check(dir).startable()).isTrue();
  }

  @Test
  void aDamagedSnapshotIsReportedAsNotRepairable() throws IOException {
    TestKeyspace keyspace = new TestKeyspace();
    try (Durability durability = Durability.open(dir, true, FsyncPolicy.ALWAYS, keyspace, keyspace, keyspace)) {
      keyspace.journalTo(durability.journal());
      keyspace.apply("BF.ADD", "urls", "x").toCompletableFuture().join();
    }
    Path snapshot = DataDirectory.snapshots(dir).firstEntry().getValue();
    flip(snapshot, 40);
    LogCheck.Report fixed = LogCheck.fix(dir);
    assertThat(fixed.startable()).isFalse();
    assertThat(fixed.changed()).isFalse();
    assertThat(fixed.lines()).last().asString().contains("not repairable by cutting the journal").contains(snapshot.toString());
  }

  @Test
  void fixRefusesWhileAServerHoldsTheDirectory() throws IOException {
    TestKeyspace keyspace = new TestKeyspace();
    try (Durability running = Durability.open(dir, true, FsyncPolicy.NO, keyspace, keyspace, keyspace)) {
      assertThatThrownBy(() -> LogCheck.fix(dir)).isInstanceOf(IOException.class).hasMessageContaining("in use by a running server");
    }
  }
}
