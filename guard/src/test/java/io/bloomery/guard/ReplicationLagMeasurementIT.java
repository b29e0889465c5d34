package io.bloomery.guard;

import static io.bloomery.guard.ExactStoreContract.bytes;
import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * The freshness lag under a sustained foreign write load: a JDBC writer commits batches of 100
 * rows paced at 10 000 rows/s for 10 s while a sampler measures, for the newest committed row every
 * 50 ms, the time from its commit returning to {@link Guard#lookup} calling it a duplicate.
 * Correctness is asserted (every row a duplicate afterwards); the figures are printed, not
 * asserted (they depend on the machine: see docs/GUARD.md for a measured run).
 */
class ReplicationLagMeasurementIT {

  @Test
  void lagUnderTenThousandForeignInsertsPerSecond() throws Exception {
    String url = PostgresCluster.shared().createDatabase();
    try (Guard guard = Guard.builder(PostgresStore.open(url)).expectedInsertions(400_000)
        .replication(LogicalReplication.slot("guard_lag")).open()) {
      assertThat(guard.awaitFresh(Duration.ofSeconds(60))).isTrue();
      AtomicReference<Object[]> newest = new AtomicReference<>(); // {item, commit nanos}
      AtomicBoolean done = new AtomicBoolean();
      List<String> committed = Collections.synchronizedList(new ArrayList<>());
      long[] rate = new long[1];
      Thread writer = new Thread(() -> {
        try (Connection c = DriverManager.getConnection(url);
            PreparedStatement ps = c.prepareStatement("INSERT INTO bloomery_seen (digest, item)"
                + " SELECT sha256(b), b FROM unnest(?::bytea[]) AS u(b)")) {
          long start = System.nanoTime();
          int next = 0;
          for (int batch = 0; batch < 1_000; batch++) {
            long due = start + batch * 10_000_000L; // 100 rows every 10 ms = 10 000 rows/s
            while (System.nanoTime() < due) {
              Thread.onSpinWait();
            }
            byte[][] rows = new byte[100][];
            String last = null;
            for (int i = 0; i < rows.length; i++) {
              last = "lag-" + next++;
              rows[i] = bytes(last);
              committed.add(last);
            }
            ps.setArray(1, c.createArrayOf("bytea", rows));
            ps.executeUpdate();
            newest.set(new Object[] {last, System.nanoTime()});
          }
          rate[0] = (long) (next / ((System.nanoTime() - start) / 1e9));
        } catch (Exception e) {
          throw new IllegalStateException(e);
        } finally {
          done.set(true);
        }
      }, "lag-writer");
      writer.start();
      List<Long> lagsMicros = new ArrayList<>();
      while (!done.get()) {
        Object[] sample = newest.get();
        if (sample != null) {
          String item = (String) sample[0];
          while (!guard.lookup(item).duplicate()) {
            Thread.onSpinWait();
          }
          lagsMicros.add((System.nanoTime() - (long) sample[1]) / 1_000);
        }
        Thread.sleep(50);
      }
      writer.join();
      assertThat(guard.awaitFresh(Duration.ofSeconds(60))).isTrue();
      long absent = committed.stream().filter(i -> !guard.lookup(i).duplicate()).count();
      assertThat(absent).isZero();
      Collections.sort(lagsMicros);
      int n = lagsMicros.size();
      ReplicationStatus status = guard.stats().replication();
      System.out.printf(Locale.ROOT, "measured: %d foreign rows at %d rows/s (batches of 100);"
              + " commit-to-duplicate lag over n=%d samples: p50 %.1f ms, p99 %.1f ms, max %.1f"
              + " ms; follower max commit-to-filter lag %d ms%n", committed.size(), rate[0], n,
          lagsMicros.get(n / 2) / 1e3, lagsMicros.get(Math.min(n - 1, n * 99 / 100)) / 1e3,
          lagsMicros.get(n - 1) / 1e3, status.maxCommitLagMillis());
      guard.closeAndDropSlot();
    }
  }
}
