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
    JournalFormat.scan(segment, DataDirectory.segments(dir).lastKey(), (o, a) -> offsets.add(o));
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

  @Test
  void aCleanDirectoryIsOkAndAnEmptyOneStartsEmpty() throws IOException {
    assertThat(LogCheck.check(dir).lines()).containsExactly("no persistence files in " + dir + " (a server starts empty here)");
    crashedWithRecords();
    LogCheck.Report report = LogCheck.check(dir);
    assertThat(report.startable()).isTrue();
    assertThat(report.lines()).anyMatch(l -> l.matches("journal\\.0000000001\\.log: ok, 20 records, \\d+ bytes"));
    assertThat(report.lines()).last().isEqualTo("ok: the server starts on this directory");
  }

  @Test
  void aTornTailIsReportedAsStartableAndFixKeepsWhatItCuts() throws IOException {
    List<Map<String, String>> states = crashedWithRecords();
    Path segment = lastSegment();
    long size = Files.size(segment);
    try (RandomAccessFile raf = new RandomAccessFile(segment.toFile(), "rw")) {
      raf.setLength(size - 3);
    }
    LogCheck.Report check = LogCheck.check(dir);
    assertThat(check.startable()).isTrue();
    assertThat(check.changed()).isFalse();
    assertThat(check.lines()).anyMatch(l -> l.contains("torn last record at offset") && l.contains("the server trims it at start"));
    LogCheck.Report fixed = LogCheck.fix(dir);
    assertThat(fixed.changed()).isTrue();
    assertThat(sideFiles(".cut-")).hasSize(1);
    assertThat(recovered()).isEqualTo(states.get(18));
  }

  /**
   * The report of a record cut short gave two byte counts that differed by the record's 8-byte header
   * ("476 bytes left" after the header, "484 bytes from there to the end" from its start). Both now count
   * from the record's first byte, and equal what --fix cuts and keeps.
   */
  @Test
  void aRecordCutShortIsReportedWithOneByteCountThatTheFixCuts() throws IOException {
    crashedWithRecords();
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
    assertThat(check.lines()).contains(segment.getFileName() + ": torn last record at offset " + lastRecord
        + ": record of 8 + " + payload + " bytes runs past the end of the file, which ends " + tail
        + " bytes after the record's start; 19 good records before it; a cut there removes " + tail
        + " bytes, from offset " + lastRecord + " to the end of the file (" + truncated + " bytes);"
        + " the server trims it at start");
    LogCheck.Report fixed = LogCheck.fix(dir);
    assertThat(fixed.lines()).anyMatch(l -> l.startsWith(segment.getFileName() + ": truncated to " + lastRecord
        + " bytes; what was cut (" + tail + " bytes) is kept in " + segment.getFileName() + ".cut-"));
    assertThat(Files.size(segment)).isEqualTo(lastRecord);
    Path kept = dir.resolve(sideFiles(".cut-").get(0));
    assertThat(Files.size(kept)).isEqualTo(tail);
  }

  @Test
  void corruptionInTheMiddleIsNotStartableUntilFixedAndLaterSegmentsAreMovedAside() throws IOException {
    List<Map<String, String>> states = crashedWithRecords();
    Path segment = lastSegment();
    List<Long> offsets = recordOffsets(segment);
    // A later segment, as an interrupted rewrite leaves one, holding one more record.
    JournalWriter.PreparedSegment next = JournalWriter.createSegment(dir, 2);
    next.channel().write(ByteBuffer.wrap(JournalFormat.encode(argv("BF.ADD", "urls", "later"))));
    next.channel().close();
    flip(segment, offsets.get(7) + 12);

    LogCheck.Report check = LogCheck.check(dir);
    assertThat(check.startable()).isFalse();
    assertThat(check.lines()).anyMatch(l -> l.startsWith("journal.0000000001.log: damaged at offset " + offsets.get(7) + ": "));
    assertThat(check.lines()).contains("journal.0000000002.log: follows the damage; --fix moves it aside");
    assertThatThrownBy(this::recovered).isInstanceOf(PersistenceCorruptionException.class)
        .hasMessageContaining("journal.0000000001.log at offset " + offsets.get(7));

    LogCheck.Report fixed = LogCheck.fix(dir);
    assertThat(fixed.startable()).isTrue();
    assertThat(fixed.lines()).last().isEqualTo("fixed: the server starts from the last good record");
    assertThat(Files.size(segment)).isEqualTo(offsets.get(7));
    assertThat(sideFiles(".cut-")).hasSize(2);
    assertThat(recovered()).isEqualTo(states.get(6));
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
