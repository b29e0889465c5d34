package io.bloomery.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomery.server.persistence.Durability;
import io.bloomery.server.persistence.FsyncPolicy;
import io.bloomery.server.persistence.SnapshotSource;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CheckLogCommandTest {
  @TempDir Path dir;

  /** Opens {@link #dir} as a server does, holding its lock; its snapshots fail, so the journal keeps every record. */
  private Durability open() throws IOException {
    SnapshotSource failing = (atCut, sink) -> {
      throw new IOException("no snapshot in this test: the journal keeps the records");
    };
    return Durability.open(dir, true, FsyncPolicy.ALWAYS, failing, argv -> {}, (k, v, e) -> {});
  }

  /** A data directory whose journal holds {@code records} commands (its final snapshot is made to fail). */
  private Path journalOf(int records) throws IOException {
    Durability durability = open();
    for (int i = 0; i < records; i++) {
      durability.journal().append(List.of("BF.ADD".getBytes(StandardCharsets.UTF_8), "k".getBytes(StandardCharsets.UTF_8),
          ("item" + i).getBytes(StandardCharsets.UTF_8))).toCompletableFuture().join();
    }
    assertThatThrownBy(durability::close).hasMessageContaining("no snapshot in this test");
    return dir.resolve("journal.0000000001.log");
  }

  @Test
  void reportsAGoodDirectory() throws IOException {
    journalOf(3);
    Cli.Result result = Cli.run("check-log", dir.toString());
    assertThat(result.exitCode()).as(result.toString()).isZero();
    assertThat(result.out()).contains("journal.0000000001.log: ok, 3 records").contains("ok: the server starts on this directory");
  }

  @Test
  void findsMidFileDamageAndFixesItKeepingACopyAndTheRecordsAfterIt() throws IOException {
    Path segment = journalOf(10);
    long size = Files.size(segment);
    long record = (size - 16) / 10;
    try (RandomAccessFile raf = new RandomAccessFile(segment.toFile(), "rw")) {
      raf.seek(16 + 24 + 3);
      raf.write('!');
    }
    Cli.Result check = Cli.run("check-log", dir.toString());
    assertThat(check.exitCode()).as(check.toString()).isEqualTo(1);
    assertThat(check.out()).contains("journal.0000000001.log: damaged at offset 16: record checksum mismatch")
        .contains("; record 1 lost (" + record + " bytes from offset 16); 9 good records follow it")
        .contains("not valid: run with --fix");
    Cli.Result fix = Cli.run("check-log", "--fix", dir.toString());
    assertThat(fix.exitCode()).as(fix.toString()).isZero();
    assertThat(fix.out()).contains("removed the damaged bytes, now " + (size - record) + " bytes; what was removed is kept in"
        + " journal.0000000001.log.cut-at-16-")
        .contains("fixed: the server starts on this directory without what is named above");
    assertThat(Files.size(segment)).isEqualTo(size - record);
    try (Stream<Path> files = Files.list(dir)) {
      assertThat(files.filter(p -> p.getFileName().toString().startsWith("journal.0000000001.log.cut-at-16-"))).hasSize(1);
    }
    Cli.Result again = Cli.run("check-log", dir.toString());
    assertThat(again.exitCode()).isZero();
    assertThat(again.out()).contains("journal.0000000001.log: ok, 9 records (to record 10)");
  }

  @Test
  void aMissingDirectoryIsAOneLineFailure() {
    Cli.Result result = Cli.run("check-log", dir.resolve("nowhere").toString());
    assertThat(result.exitCode()).isEqualTo(1);
    assertThat(result.err().strip()).doesNotContain("\n").startsWith("bloomery check-log: ").contains("is not a directory");
  }

  @Test
  void aDirectoryARunningServerHoldsIsReportedInUseAndFixIsRefused() throws IOException {
    journalOf(2);
    Durability running = open();
    try {
      Cli.Result check = Cli.run("check-log", dir.toString());
      assertThat(check.exitCode()).as(check.toString()).isEqualTo(1);
      assertThat(check.out()).contains("journal.0000000001.log: ok, 2 records")
          .contains("in use: a running server holds " + dir).doesNotContain("ok: the server starts");
      Cli.Result fix = Cli.run("check-log", "--fix", dir.toString());
      assertThat(fix.exitCode()).as(fix.toString()).isEqualTo(1);
      assertThat(fix.err()).contains("in use by a running server");
    } finally {
      assertThatThrownBy(running::close).hasMessageContaining("no snapshot in this test");
    }
    Cli.Result stopped = Cli.run("check-log", dir.toString());
    assertThat(stopped.exitCode()).as(stopped.toString()).isZero();
    assertThat(stopped.out()).contains("ok: the server starts on this directory");
  }
}
