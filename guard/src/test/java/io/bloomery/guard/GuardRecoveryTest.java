package io.bloomery.guard;

import static io.bloomery.guard.ExactStoreContract.bytes;
import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/**
 * After a stop, clean or not, the guard never answers from a filter that may lag the store: it
 * replays the rows after the snapshot's watermark or rebuilds, and logs which.
 */
class GuardRecoveryTest {
  @TempDir Path directory;
  private Path database;
  private Path snapshot;
  private final ListAppender<ILoggingEvent> log = new ListAppender<>();

  @BeforeEach
  void captureLog() {
    database = directory.resolve("seen.db");
    snapshot = directory.resolve("seen.guard");
    log.start();
    ((Logger) LoggerFactory.getLogger(Guard.class)).addAppender(log);
  }

  @AfterEach
  void releaseLog() {
    ((Logger) LoggerFactory.getLogger(Guard.class)).detachAppender(log);
  }

  private Guard open() {
    return open(SqliteStore.open(database), 10_000);
  }

  private Guard open(ExactStore store, long expected) {
    return Guard.builder(store).expectedInsertions(expected).fpp(0.01).snapshotFile(snapshot)
        .open();
  }

  private List<String> messages() {
    List<String> out = new ArrayList<>();
    log.list.forEach(e -> out.add(e.getFormattedMessage()));
    return out;
  }

  private static List<byte[]> items(String prefix, int count) {
    List<byte[]> items = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      items.add(bytes(prefix + i));
    }
    return items;
  }

  private static void assertAllDuplicates(Guard guard, List<byte[]> items) {
    for (byte[] item : items) {
      assertThat(guard.lookup(item)).isEqualTo(new Verdict(true, true, true));
    }
  }

  @Test
  void firstOpenBuildsThenCleanCloseReplaysNothing() {
    try (Guard guard = open()) {
      guard.addIfAbsent(items("a", 100));
      assertThat(guard.stats().recovery()).startsWith("rebuilt from store: no snapshot at");
    }
    try (Guard guard = open()) {
      assertThat(guard.stats().recovery()).startsWith("replayed 0 rows after watermark 100")
          .contains("(clean stop)");
      assertAllDuplicates(guard, items("a", 100));
    }
    assertThat(messages()).anySatisfy(m -> assertThat(m).contains("rebuilt from store: no snapshot"))
        .anySatisfy(m -> assertThat(m).contains("replayed 0 rows after watermark 100"));
  }

  @Test
  void uncleanStopReplaysRowsCommittedAfterTheWatermark() {
    Guard crashed = open();
    crashed.addIfAbsent(items("before-", 100));
    crashed.checkpoint();
    crashed.addIfAbsent(items("after-", 40));
    // Rows committed whose filter bits were never persisted (the process dies before any
    // checkpoint): written straight into the store to stand for commits the snapshot lacks.
    try (ExactStore direct = SqliteStore.open(database)) {
      direct.insertAllIfAbsent(items("behind-", 25));
    }
    // The process dies: no close(), no clean snapshot. (Its store connection is simply dropped.)
    crashed.store().close();

    try (Guard guard = open()) {
      assertThat(guard.stats().recovery())
          .isEqualTo("replayed 65 rows after watermark 100 (unclean stop)");
      assertAllDuplicates(guard, items("before-", 100));
      assertAllDuplicates(guard, items("after-", 40));
      assertAllDuplicates(guard, items("behind-", 25));
      assertThat(guard.addIfAbsent(items("behind-", 25))).doesNotContain(true);
    }
    assertThat(messages()).anySatisfy(
        m -> assertThat(m).contains("replayed 65 rows after watermark 100").contains("unclean"));
  }

  @Test
  void corruptSnapshotIsRebuiltFromTheStore() throws Exception {
    try (Guard guard = open()) {
      guard.addIfAbsent(items("x", 300));
    }
    byte[] file = Files.readAllBytes(snapshot);
    file[file.length / 2] ^= 0x10;
    Files.write(snapshot, file);
    try (Guard guard = open()) {
      assertThat(guard.stats().recovery()).startsWith("rebuilt from store: snapshot")
          .contains("unreadable").contains("CRC-32C mismatch");
      assertAllDuplicates(guard, items("x", 300));
    }
    Files.write(snapshot, new byte[] {'B', 'L', 'M'}); // truncated
    try (Guard guard = open()) {
      assertThat(guard.stats().recovery()).contains("unreadable").contains("at least 64 bytes");
      assertAllDuplicates(guard, items("x", 300));
    }
    assertThat(messages()).anySatisfy(m -> assertThat(m).contains("rebuilt from store: snapshot"));
  }

  @Test
  void snapshotOfAnotherStoreOrSizingIsNotTrusted() {
    try (Guard guard = open()) {
      guard.addIfAbsent(items("x", 10));
    }
    try (Guard guard = open(SqliteStore.open(database), 20_000)) {
      assertThat(guard.stats().recovery())
          .isEqualTo("rebuilt from store: sizing changed from n=10000 p=0.01 to n=20000 p=0.01");
      assertAllDuplicates(guard, items("x", 10));
    }
    try (Guard guard = open(SqliteStore.open(directory.resolve("other.db")), 20_000)) {
      assertThat(guard.stats().recovery()).startsWith("rebuilt from store: snapshot belongs to");
    }
  }

  @Test
  void storeBehindTheSnapshotForcesRebuild() throws Exception {
    try (Guard guard = open()) {
      guard.addIfAbsent(items("x", 50));
    }
    Files.delete(database); // the store was restored from an older (here: empty) backup
    try (Guard guard = open()) {
      assertThat(guard.stats().recovery()).contains("store watermark 0 is behind");
      assertThat(guard.lookup("x1").maybePresent()).isFalse();
    }
  }
}
