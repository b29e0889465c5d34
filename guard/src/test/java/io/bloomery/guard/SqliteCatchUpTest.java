package io.bloomery.guard;

import static io.bloomery.guard.ExactStoreContract.bytes;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * SQLite and writers the guard never saw: with {@link SqliteStore#openFollowingOtherWriters} a
 * guard's negatives know every row other connections and programs committed, at once and
 * without a rebuild; without it (the plain store) they know them after the next rebuild.
 */
class SqliteCatchUpTest {
  @TempDir Path directory;

  /** A foreign writer on its own connection, writing the guard's schema as any program could. */
  private static void foreignInsert(Path file, String item) throws Exception {
    try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + file);
        PreparedStatement ps = c.prepareStatement(
            "INSERT OR IGNORE INTO bloomery_seen (digest, item) VALUES (?, ?)")) {
      c.createStatement().execute("PRAGMA busy_timeout = 30000");
      ps.setBytes(1, ItemDigest.of(bytes(item)));
      ps.setBytes(2, bytes(item));
      ps.executeUpdate();
    }
  }

  @Test
  void negativesKnowRowsOtherGuardsAndOtherConnectionsCommitted() throws Exception {
    Path file = directory.resolve("seen.db");
    Path snapshot = directory.resolve("seen.guard");
    try (Guard following = Guard.builder(
            SqliteStore.openFollowingOtherWriters(file, "bloomery_seen"))
            .expectedInsertions(10_000).snapshotFile(snapshot).open();
        Guard other = Guard.builder(SqliteStore.open(file)).expectedInsertions(10_000).open();
        Guard plain = Guard.builder(SqliteStore.open(file)).expectedInsertions(10_000).open()) {
      for (int i = 0; i < 300; i++) {
        String viaGuard = "other-guard-" + i;
        String viaConnection = "connection-" + i;
        assertThat(other.addIfAbsent(viaGuard)).isTrue();
        foreignInsert(file, viaConnection);
        // At once: no lag, no rebuild.
        assertThat(following.lookup(viaGuard).duplicate()).as(viaGuard).isTrue();
        assertThat(following.lookup(viaConnection).duplicate()).as(viaConnection).isTrue();
        assertThat(following.addIfAbsent(viaConnection)).isFalse();
        assertThat(following.lookup("own-" + i).duplicate()).isFalse();
        assertThat(following.addIfAbsent("own-" + i)).isTrue();
        assertThat(other.addIfAbsent("own-" + i)).isFalse(); // exactly once across guards
      }
      assertThat(following.stats().staleNegatives()).isZero();
      // The plain store's negatives know foreign rows only after a rebuild (documented).
      assertThat(plain.lookup("connection-7").maybePresent()).isFalse();
      plain.rebuild();
      assertThat(plain.lookup("connection-7").duplicate()).isTrue();
    }
    // Reopened from its snapshot (replay after the watermark), it keeps following.
    foreignInsert(file, "while-closed");
    try (Guard following = Guard.builder(
            SqliteStore.openFollowingOtherWriters(file, "bloomery_seen"))
            .expectedInsertions(10_000).snapshotFile(snapshot).open()) {
      assertThat(following.stats().recovery()).startsWith("replayed 1 rows");
      assertThat(following.lookup("while-closed").duplicate()).isTrue();
      foreignInsert(file, "after-reopen");
      assertThat(following.lookup("after-reopen").duplicate()).isTrue();
    }
  }

  @Test
  void rowsTheSqlite3ShellInsertsAreDuplicatesAtOnce() throws Exception {
    Path shell = Path.of("/usr/bin/sqlite3");
    Assumptions.assumeTrue(Files.isExecutable(shell), "the sqlite3 shell is not installed");
    Path file = directory.resolve("shell.db");
    try (Guard guard = Guard.builder(SqliteStore.openFollowingOtherWriters(file, "bloomery_seen"))
        .expectedInsertions(1_000).open()) {
      for (String item : List.of("shell-1", "shell-2", "shell-ünïcode")) {
        byte[] bytes = item.getBytes(StandardCharsets.UTF_8);
        String sql = "INSERT INTO bloomery_seen (digest, item) VALUES (X'"
            + HexFormat.of().formatHex(ItemDigest.of(bytes)) + "', X'"
            + HexFormat.of().formatHex(bytes) + "');";
        Process process = new ProcessBuilder(shell.toString(), "-cmd", ".timeout 30000",
            file.toString(), sql).redirectErrorStream(true).start();
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(process.exitValue()).as(new String(process.getInputStream().readAllBytes(),
            StandardCharsets.UTF_8)).isZero();
        assertThat(guard.lookup(item).duplicate()).as(item).isTrue();
        assertThat(guard.addIfAbsent(item)).isFalse();
      }
    }
  }
}
