package io.bloomery.guard;

import static io.bloomery.guard.ExactStoreContract.bytes;
import static io.bloomery.guard.LogicalReplicationIT.assertDuplicate;
import static io.bloomery.guard.LogicalReplicationIT.count;
import static io.bloomery.guard.LogicalReplicationIT.foreignInsert;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Faults under logical replication: the server crashes mid-stream, the slot is dropped behind
 * the guard's back, logical replication is not available at all. Each ends in a clear state, a
 * recovery, and no committed row answered absent or new after the stream is fresh again.
 */
class LogicalReplicationFaultIT {
  private static final Duration FRESH = Duration.ofSeconds(90);

  @TempDir Path directory;

  /** A foreign writer: plain JDBC, one row per transaction, reconnecting after errors. */
  private static final class ForeignWriter extends Thread {
    private final String url;
    final List<String> committed = new CopyOnWriteArrayList<>();
    final List<String> unknown = new CopyOnWriteArrayList<>();
    final AtomicBoolean stop = new AtomicBoolean();

    ForeignWriter(String url) {
      super("foreign-writer");
      this.url = url;
    }

    @Override
    public void run() {
      int next = 0;
      while (!stop.get()) {
        try (Connection c = DriverManager.getConnection(url);
            PreparedStatement ps = c.prepareStatement(
                "INSERT INTO bloomery_seen (digest, item) VALUES (sha256(?), ?)")) {
          while (!stop.get()) {
            String item = "foreign-" + next++;
            ps.setBytes(1, bytes(item));
            ps.setBytes(2, bytes(item));
            try {
              ps.executeUpdate();
              committed.add(item);
            } catch (SQLException e) {
              unknown.add(item);
              throw e;
            }
          }
        } catch (SQLException e) {
          pause(100); // the server is down: try again
        }
      }
    }

    void awaitCommitted(int n) {
      waitFor(() -> committed.size() >= n, "the foreign writer to commit " + n + " rows");
    }

    void finish() throws InterruptedException {
      stop.set(true);
      join(60_000);
    }
  }

  @Test
  void serverStoppedImmediatelyMidStreamThenRestartedLosesNothing() throws Exception {
    Path snapshot = directory.resolve("seen.guard");
    LogicalReplication replication = LogicalReplication.slot("guard_crash")
        .fenceInterval(Duration.ofMillis(200)).checkpointInterval(Duration.ofSeconds(1));
    try (PostgresCluster cluster = PostgresCluster.startNew()) {
      String url = cluster.createDatabase();
      ForeignWriter writer = new ForeignWriter(url);
      try (Guard guard = Guard.builder(PostgresStore.open(url)).expectedInsertions(50_000)
          .snapshotFile(snapshot).replication(replication).open()) {
        assertThat(guard.awaitFresh(FRESH)).isTrue();
        writer.start();
        writer.awaitCommitted(300);
        for (int i = 0; i < 50; i++) {
          assertThat(guard.addIfAbsent("own-" + i)).isTrue();
        }

        cluster.stopImmediately();
        waitFor(() -> guard.stats().replication().state().equals("reconnecting"),
            "the follower to notice the crash");
        // Not fresh: a negative is confirmed in the store, which is down: an error, not "absent".
        assertThatThrownBy(() -> guard.lookup("never-written"))
            .isInstanceOf(StoreUnavailableException.class);
        assertThat(guard.awaitFresh(Duration.ofMillis(500))).isFalse();

        cluster.start();
        int afterRestart = writer.committed.size() + 300;
        writer.awaitCommitted(afterRestart);
        writer.finish();
        assertThat(guard.awaitFresh(FRESH)).isTrue();
        ReplicationStatus status = guard.stats().replication();
        assertThat(status.state()).isEqualTo("streaming");
        assertThat(status.reconnects()).isPositive();
        assertAllDuplicates(guard, writer.committed);
        for (String item : writer.unknown) { // the crash hit these: the store alone decides
          boolean stored = count(url, "SELECT count(*) FROM bloomery_seen WHERE item = '"
              + item + "'::bytea") == 1;
          assertThat(guard.lookup(item).duplicate()).as(item).isEqualTo(stored);
        }
        for (int i = 0; i < 50; i++) {
          assertThat(guard.addIfAbsent("own-" + i)).isFalse();
        }
        assertThat(guard.lookup("never-written").duplicate()).isFalse();
        LogicalReplicationIT.printLag("after -m immediate", status);
      }

      // The guard restarts after the crash: it resumes from the slot, nothing is new twice.
      Psql.run(url, foreignInsert("after-close"));
      try (Guard guard = Guard.builder(PostgresStore.open(url)).expectedInsertions(50_000)
          .snapshotFile(snapshot).replication(replication).open()) {
        assertThat(guard.stats().recovery()).startsWith("replayed");
        assertThat(guard.awaitFresh(FRESH)).isTrue();
        assertDuplicate(guard, "after-close");
        assertAllDuplicates(guard, writer.committed);
        assertThat(guard.addIfAbsent(writer.committed.get(0))).isFalse();
        guard.closeAndDropSlot();
      }
      assertThat(count(url, "SELECT count(*) FROM pg_replication_slots WHERE database = current_database()")).isZero();
    }
  }

  @Test
  void aSlotDroppedBehindTheGuardsBackIsRecreatedWithoutAGap() throws Exception {
    String url = PostgresCluster.shared().createDatabase();
    try (Guard guard = Guard.builder(PostgresStore.open(url)).expectedInsertions(10_000)
        .snapshotFile(directory.resolve("dropped.guard"))
        .replication(LogicalReplication.slot("guard_dropped")).open()) {
      assertThat(guard.awaitFresh(FRESH)).isTrue();
      Psql.run(url, foreignInsert("before-drop"));
      // Drop it the way an operator would: end the walsender that holds it, then drop it.
      waitFor(() -> {
        try {
          Psql.run(url, "SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots"
              + " WHERE slot_name = 'guard_dropped' AND active_pid IS NOT NULL;"
              + " SELECT pg_drop_replication_slot('guard_dropped')");
          return true;
        } catch (Exception stillActive) {
          return false;
        }
      }, "the slot to be dropped");
      Psql.run(url, foreignInsert("while-dropped-1", "while-dropped-2"));
      assertThat(guard.awaitFresh(FRESH)).isTrue();
      ReplicationStatus status = guard.stats().replication();
      assertThat(status.resyncs()).isPositive();
      assertThat(status.state()).isEqualTo("streaming");
      Psql.run(url, foreignInsert("after-resync"));
      assertThat(guard.awaitFresh(FRESH)).isTrue();
      for (String item : List.of("before-drop", "while-dropped-1", "while-dropped-2",
          "after-resync")) {
        assertDuplicate(guard, item);
        assertThat(guard.addIfAbsent(item)).as(item).isFalse();
      }
      assertThat(count(url, "SELECT count(*) FROM pg_replication_slots WHERE database = current_database()")).isEqualTo(1);
      guard.closeAndDropSlot();
    }
    assertThat(count(url, "SELECT count(*) FROM pg_replication_slots WHERE database = current_database()")).isZero();
  }

  @Test
  void anOpenThatFailsAfterCreatingItsSlotDropsIt() throws Exception {
    String url = PostgresCluster.shared().createDatabase();
    // the snapshot path is a directory that is not empty: the slot is created and its rows read, then the
    // first checkpoint cannot replace the path
    Path snapshot = directory.resolve("taken.guard");
    java.nio.file.Files.createDirectories(snapshot.resolve("occupied"));
    String slots = "SELECT count(*) FROM pg_replication_slots WHERE slot_name = 'guard_failed_open'"
        + " AND database = current_database()";
    assertThatThrownBy(() -> Guard.builder(PostgresStore.open(url)).expectedInsertions(1_000)
        .snapshotFile(snapshot).replication(LogicalReplication.slot("guard_failed_open")).open())
        .isInstanceOf(java.io.UncheckedIOException.class).hasMessageContaining("cannot write guard snapshot");
    assertThat(count(url, slots)).as("no slot retains WAL for the guard that never opened").isZero();

    // a slot that existed before the open (a reopen) stays for the next open
    java.nio.file.Files.delete(snapshot.resolve("occupied"));
    java.nio.file.Files.delete(snapshot);
    Guard.builder(PostgresStore.open(url)).expectedInsertions(1_000).snapshotFile(snapshot)
        .replication(LogicalReplication.slot("guard_failed_open")).open().close();
    assertThat(count(url, slots)).isEqualTo(1);
    ReplicationSlots.Slot listed = ReplicationSlots.list(url, "guard_failed").get(0);
    assertThat(listed.name()).isEqualTo("guard_failed_open");
    assertThat(listed.active()).isFalse();
    assertThat(listed.retainedWalBytes()).isNotNegative();
    assertThat(ReplicationSlots.drop(url, "guard_failed_open")).isTrue();
    assertThat(count(url, slots)).isZero();
    assertThat(ReplicationSlots.drop(url, "guard_failed_open")).isFalse();
    assertThat(count(url, "SELECT count(*) FROM pg_publication WHERE pubname = 'guard_failed_open'")).isZero();
  }

  @Test
  void aSlotInvalidatedBecauseItsWalWasRemovedIsReplacedOnOpen() throws Exception {
    Path snapshot = directory.resolve("lost.guard");
    LogicalReplication replication = LogicalReplication.slot("guard_lost");
    try (PostgresCluster cluster = PostgresCluster.startNew()) {
      String url = cluster.createDatabase();
      try (Guard guard = Guard.builder(PostgresStore.open(url)).expectedInsertions(50_000)
          .snapshotFile(snapshot).replication(replication).open()) {
        assertThat(guard.addIfAbsent("own-before")).isTrue();
      }
      // While the guard is away the slot may keep at most 1 MB of WAL; 20 MB of foreign rows
      // and checkpoints later its WAL is gone.
      Psql.run(url, "ALTER SYSTEM SET max_slot_wal_keep_size = '1MB'");
      Psql.run(url, "SELECT pg_reload_conf()");
      int round = 0;
      while (!"lost".equals(Psql.run(url, "SELECT wal_status FROM pg_replication_slots WHERE"
          + " slot_name = 'guard_lost'").trim())) {
        assertThat(round).as("rounds of WAL until the slot is invalidated").isLessThan(10);
        Psql.run(url, "INSERT INTO bloomery_seen (digest, item) SELECT sha256(b), b FROM (SELECT"
            + " convert_to('lost-" + round + "-' || g || '-' || repeat('x', 1000), 'UTF8') AS b"
            + " FROM generate_series(1, 20000) g) s");
        Psql.run(url, "SELECT pg_switch_wal()");
        Psql.run(url, "CHECKPOINT");
        round++;
      }
      try (Guard guard = Guard.builder(PostgresStore.open(url)).expectedInsertions(50_000)
          .snapshotFile(snapshot).replication(replication).open()) {
        assertThat(guard.stats().recovery()).contains("new replication slot guard_lost")
            .contains("invalidated");
        assertThat(guard.awaitFresh(FRESH)).isTrue();
        assertDuplicate(guard, "own-before");
        assertDuplicate(guard, "lost-0-1-" + "x".repeat(1000));
        assertDuplicate(guard, "lost-0-20000-" + "x".repeat(1000));
        assertThat(guard.addIfAbsent("lost-0-7-" + "x".repeat(1000))).isFalse();
        guard.closeAndDropSlot();
      }
    }
  }

  @Test
  void withoutLogicalWalTheGuardSaysSoAndFallsBackToScheduledRebuilds() throws Exception {
    try (PostgresCluster cluster = PostgresCluster.startNew("replica")) {
      String url = cluster.createDatabase();
      try (Guard guard = Guard.builder(PostgresStore.open(url)).expectedInsertions(10_000)
          .replication(LogicalReplication.slot("guard_replica")
              .fallbackRebuildInterval(Duration.ofMillis(300))).open()) {
        ReplicationStatus status = guard.stats().replication();
        assertThat(status.state()).isEqualTo("unavailable");
        assertThat(status.detail()).contains("wal_level is replica");
        assertThat(guard.awaitFresh(Duration.ofSeconds(1))).isFalse();
        assertThat(guard.addIfAbsent("own")).isTrue();
        assertThat(guard.addIfAbsent("own")).isFalse();
        long generation = guard.stats().generation();
        Psql.run(url, foreignInsert("foreign"));
        waitFor(() -> guard.stats().generation() >= generation + 2, "two scheduled rebuilds");
        assertDuplicate(guard, "foreign"); // the documented fallback: seen after a rebuild
      }
      assertThat(count(url, "SELECT count(*) FROM pg_replication_slots WHERE database = current_database()")).isZero();
    }
  }

  @Test
  void aRoleWithoutReplicationPrivilegeFallsBackWithAClearReason() throws Exception {
    String url = PostgresCluster.shared().createDatabase();
    Psql.run(url, "DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'plain')"
        + " THEN CREATE ROLE plain LOGIN; END IF; END $$; GRANT CREATE ON SCHEMA public TO plain");
    String plainUrl = url.replace("user=postgres", "user=plain");
    try (Guard guard = Guard.builder(PostgresStore.open(plainUrl)).expectedInsertions(1_000)
        .replication(LogicalReplication.slot("guard_plain")
            .fallbackRebuildInterval(Duration.ZERO)).open()) {
      ReplicationStatus status = guard.stats().replication();
      assertThat(status.state()).isEqualTo("unavailable");
      assertThat(status.detail()).contains("role plain lacks the REPLICATION attribute");
      assertThat(guard.addIfAbsent("x")).isTrue();
      assertThat(guard.lookup("x").duplicate()).isTrue();
    }
  }

  private static void assertAllDuplicates(Guard guard, List<String> items) {
    long absent = items.stream().filter(item -> !guard.lookup(item).duplicate()).count();
    assertThat(absent).as("committed foreign rows answered absent, of %d", items.size()).isZero();
  }

  static void waitFor(BooleanSupplier condition, String what) {
    long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("timed out waiting for " + what);
      }
      pause(50);
    }
  }

  private static void pause(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
