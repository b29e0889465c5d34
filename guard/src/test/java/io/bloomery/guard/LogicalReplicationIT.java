package io.bloomery.guard;

import static io.bloomery.guard.ExactStoreContract.bytes;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.HexFormat;
import java.util.Locale;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Freshness against writers the guard never saw: rows that {@code psql} inserts into the guarded
 * table (single rows, a 100 000-row {@code COPY}, a long transaction that commits after later
 * ones) are duplicates once the stream has delivered them, and nothing is answered "new" after
 * that. Lags are printed, never asserted (speed belongs to the benchmarks).
 */
class LogicalReplicationIT {
  private static final Duration FRESH = Duration.ofSeconds(60);

  @TempDir Path directory;

  /** A foreign insert of {@code item} into the guard's own table, as another program writes it. */
  static String foreignInsert(String... items) {
    StringBuilder sql = new StringBuilder("INSERT INTO bloomery_seen (digest, item) SELECT"
        + " sha256(b), b FROM (VALUES ");
    for (int i = 0; i < items.length; i++) {
      sql.append(i == 0 ? "" : ", ").append("(convert_to('").append(items[i])
          .append("', 'UTF8'))");
    }
    return sql.append(") AS v(b)").toString();
  }

  @Test
  void singleRowsAndALongTransactionFromPsqlBecomeDuplicatesAndNothingIsNewTwice()
      throws Exception {
    String url = PostgresCluster.shared().createDatabase();
    Path snapshot = directory.resolve("seen.guard");
    LogicalReplication replication = LogicalReplication.slot("guard_psql");
    try (Guard guard = Guard.builder(PostgresStore.open(url)).expectedInsertions(10_000)
        .snapshotFile(snapshot).replication(replication).open()) {
      assertThat(guard.awaitFresh(FRESH)).isTrue();
      assertThat(guard.stats().replication().state()).isEqualTo("streaming");
      assertThat(guard.addIfAbsent("own-1")).isTrue();

      // Single rows, each its own psql process and transaction.
      for (int i = 0; i < 20; i++) {
        Psql.run(url, foreignInsert("single-" + i));
      }
      // A long transaction: its rows get the smaller ids but it commits after later ones.
      try (Psql.Session longTx = new Psql.Session(url)) {
        longTx.sync("BEGIN; " + foreignInsert("long-a", "long-b", "long-c") + ";");
        Psql.run(url, foreignInsert("later-1", "later-2"));
        assertThat(guard.awaitFresh(FRESH)).isTrue();
        for (int i = 0; i < 20; i++) {
          assertDuplicate(guard, "single-" + i);
        }
        assertDuplicate(guard, "later-1");
        assertDuplicate(guard, "later-2");
        assertThat(guard.lookup("long-a").duplicate()).as("uncommitted").isFalse();
        longTx.sync("COMMIT;");
      }
      assertThat(guard.awaitFresh(FRESH)).isTrue();
      for (String item : new String[] {"long-a", "long-b", "long-c"}) {
        assertDuplicate(guard, item);
        assertThat(guard.addIfAbsent(item)).as(item).isFalse();
      }
      for (int i = 0; i < 20; i++) {
        assertThat(guard.addIfAbsent("single-" + i)).isFalse();
      }
      assertThat(guard.addIfAbsent("own-1")).isFalse();
      assertThat(guard.addIfAbsent("never-seen")).isTrue();
      ReplicationStatus status = guard.stats().replication();
      assertThat(status.rowsApplied()).isGreaterThanOrEqualTo(25);
      assertThat(status.deletes()).isZero();
      assertThat(guard.stats().staleNegatives()).isZero();
      printLag("single rows and a long transaction", status);
    }

    // Closed: foreign rows keep arriving; the slot retains them and the reopened guard resumes.
    Psql.run(url, foreignInsert("while-closed-1", "while-closed-2"));
    try (Guard guard = Guard.builder(PostgresStore.open(url)).expectedInsertions(10_000)
        .snapshotFile(snapshot).replication(replication).open()) {
      assertThat(guard.stats().recovery()).startsWith("replayed");
      assertThat(guard.awaitFresh(FRESH)).isTrue();
      assertDuplicate(guard, "while-closed-1");
      assertDuplicate(guard, "while-closed-2");
      assertDuplicate(guard, "long-b");
      assertThat(guard.addIfAbsent("while-closed-2")).isFalse();
      guard.closeAndDropSlot();
    }
    assertThat(count(url, "SELECT count(*) FROM pg_replication_slots")).isZero();
    assertThat(count(url, "SELECT count(*) FROM pg_publication")).isZero();
  }

  /**
   * The follower blocks in the stream's read between messages instead of polling. With periodic fences and
   * checkpoints off it is idle until something arrives, yet a checkpoint's position reaches the server (the
   * checkpoint's wake-up fence), and a close wakes it, confirms the clean snapshot's position and ends the stream.
   */
  @Test
  void anIdleFollowerStillConfirmsCheckpointsAndStopsOnClose() throws Exception {
    String url = PostgresCluster.shared().createDatabase();
    Path snapshot = directory.resolve("idle.guard");
    LogicalReplication replication = LogicalReplication.slot("guard_idle").fenceInterval(Duration.ZERO)
        .checkpointInterval(Duration.ZERO);
    try (Guard guard = Guard.builder(PostgresStore.open(url)).expectedInsertions(10_000)
        .snapshotFile(snapshot).replication(replication).open()) {
      assertThat(guard.awaitFresh(FRESH)).isTrue();
      Psql.run(url, foreignInsert("idle-1", "idle-2"));
      assertThat(guard.awaitFresh(FRESH)).isTrue();
      guard.checkpoint();
      String checkpointed = lsn(FilterSnapshotFile.read(snapshot).replicationLsn());
      LogicalReplicationFaultIT.waitFor(() -> confirmedAtLeast(url, "guard_idle", checkpointed),
          "the slot confirmed to the checkpoint's " + checkpointed);
      assertDuplicate(guard, "idle-2");
      assertThat(guard.stats().replication().state()).isEqualTo("streaming");
    }
    String closed = lsn(FilterSnapshotFile.read(snapshot).replicationLsn());
    LogicalReplicationFaultIT.waitFor(() -> confirmedAtLeast(url, "guard_idle", closed),
        "the slot confirmed to the clean snapshot's " + closed);
    LogicalReplicationFaultIT.waitFor(() -> {
      try {
        return count(url, "SELECT count(*) FROM pg_replication_slots WHERE slot_name = 'guard_idle' AND active") == 0;
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    }, "the stream of slot guard_idle to end");
    try (Guard guard = Guard.builder(PostgresStore.open(url)).expectedInsertions(10_000)
        .snapshotFile(snapshot).replication(replication).open()) {
      assertThat(guard.stats().recovery()).startsWith("replayed");
      assertDuplicate(guard, "idle-1");
      guard.closeAndDropSlot();
    }
  }

  private static String lsn(long lsn) {
    return org.postgresql.replication.LogSequenceNumber.valueOf(lsn).asString();
  }

  private static boolean confirmedAtLeast(String url, String slot, String lsn) {
    try {
      return count(url, "SELECT count(*) FROM pg_replication_slots WHERE slot_name = '" + slot
          + "' AND confirmed_flush_lsn >= '" + lsn + "'::pg_lsn") == 1;
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  @Test
  void aHundredThousandRowCopyIntoSomeoneElsesTableIsFollowedReadOnly() throws Exception {
    String url = PostgresCluster.shared().createDatabase();
    Psql.run(url, "CREATE TABLE crawl_links (id bigserial PRIMARY KEY, url text NOT NULL);"
        + " CREATE INDEX ON crawl_links (url);"
        + " INSERT INTO crawl_links (url) SELECT 'https://before.example/' || g"
        + " FROM generate_series(1, 1000) g");
    int rows = 100_000;
    Path copy = directory.resolve("copy.sql");
    StringBuilder data = new StringBuilder("COPY crawl_links (url) FROM STDIN;\n");
    for (int i = 0; i < rows; i++) {
      data.append("https://copied.example/").append(i).append('\n');
    }
    Files.writeString(copy, data.append("\\.\n"), StandardCharsets.UTF_8);
    try (Guard guard = Guard.builder(PostgresStore.openReadOnly(url, "crawl_links", "url"))
        .expectedInsertions(200_000).replication(LogicalReplication.slot("guard_copy")).open()) {
      assertThat(guard.stats().recovery()).contains("new replication slot guard_copy");
      assertDuplicate(guard, "https://before.example/1000");
      assertThat(guard.awaitFresh(FRESH)).isTrue();

      long started = System.nanoTime();
      Psql.runFile(url, copy);
      long copied = System.nanoTime();
      assertThat(guard.awaitFresh(FRESH)).isTrue();
      long fresh = System.nanoTime();
      long falseNew = 0;
      for (int i = 0; i < rows; i += 10) { // every 10th: each "maybe" is a query
        if (!guard.lookup("https://copied.example/" + i).duplicate()) {
          falseNew++;
        }
      }
      assertThat(falseNew).as("copied rows answered absent after the lag").isZero();
      assertThat(guard.lookup("https://copied.example/" + rows).duplicate()).isFalse();
      ReplicationStatus status = guard.stats().replication();
      assertThat(status.rowsApplied()).isEqualTo(rows);
      System.out.printf(Locale.ROOT, "measured: COPY of %d rows took %d ms in psql; the stream"
              + " had them all %d ms after the COPY returned (commit-to-filter lag %d ms)%n",
          rows, (copied - started) / 1_000_000, (fresh - copied) / 1_000_000,
          status.lastCommitLagMillis());
      printLag("100k COPY", status);

      // Updates and deletes are counted; a truncate advises a rebuild.
      Psql.run(url, "UPDATE crawl_links SET url = url || '#moved' WHERE id <= 10;"
          + " DELETE FROM crawl_links WHERE id BETWEEN 11 AND 30");
      assertThat(guard.awaitFresh(FRESH)).isTrue();
      status = guard.stats().replication();
      assertThat(status.updates()).isEqualTo(10);
      assertThat(status.deletes()).isEqualTo(20);
      assertThat(status.rebuildAdvised()).isFalse();
      assertDuplicate(guard, "https://before.example/1#moved");
      Psql.run(url, "TRUNCATE crawl_links");
      assertThat(guard.awaitFresh(FRESH)).isTrue();
      assertThat(guard.stats().replication().truncates()).isEqualTo(1);
      assertThat(guard.stats().replication().rebuildAdvised()).isTrue();
      assertThat(guard.lookup("https://copied.example/5").duplicate()).isFalse();
      guard.closeAndDropSlot();
    }
    assertThat(count(url, "SELECT count(*) FROM pg_replication_slots")).isZero();
  }

  @Test
  void aTableWithoutReplicaIdentityKeepsAcceptingTheOwnersDeletes() throws Exception {
    String url = PostgresCluster.shared().createDatabase();
    Psql.run(url, "CREATE TABLE events (url text)"); // no primary key: no replica identity
    try (Guard guard = Guard.builder(PostgresStore.openReadOnly(url, "events", "url"))
        .expectedInsertions(1_000).replication(LogicalReplication.slot("guard_nopk")).open()) {
      assertThat(guard.awaitFresh(FRESH)).isTrue();
      Psql.run(url, "INSERT INTO events VALUES ('https://a.example/'), ('https://b.example/')");
      // A publication of deletes would make PostgreSQL refuse this DELETE: it must still work.
      Psql.run(url, "DELETE FROM events WHERE url = 'https://b.example/';"
          + " UPDATE events SET url = url WHERE false");
      assertThat(guard.awaitFresh(FRESH)).isTrue();
      assertDuplicate(guard, "https://a.example/");
      assertThat(guard.lookup("https://b.example/").duplicate()).isFalse(); // the store decides
      ReplicationStatus status = guard.stats().replication();
      assertThat(status.detail()).contains("updates and deletes are not published");
      assertThat(status.deletes()).isZero();
      guard.closeAndDropSlot();
    }
  }

  static void assertDuplicate(Guard guard, String item) {
    Verdict verdict = guard.lookup(bytes(item));
    assertThat(verdict.duplicate()).as("%s is a duplicate (%s)", item, verdict).isTrue();
  }

  static long count(String url, String sql) throws Exception {
    try (Connection c = DriverManager.getConnection(url); Statement st = c.createStatement();
        ResultSet rs = st.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    }
  }

  static void printLag(String what, ReplicationStatus status) {
    System.out.printf(Locale.ROOT, "measured (%s): %d transactions, %d rows applied;"
            + " commit-to-filter lag last %d ms, max %d ms; freshness lag %d ms%n", what,
        status.transactions(), status.rowsApplied(), status.lastCommitLagMillis(),
        status.maxCommitLagMillis(), status.freshnessLagMillis());
  }

  static String sha256Hex(byte[] item) throws Exception {
    return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(item));
  }
}
