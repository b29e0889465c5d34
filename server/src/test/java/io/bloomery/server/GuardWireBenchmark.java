package io.bloomery.server;

import io.bloomery.guard.PostgresCluster;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import redis.clients.jedis.Jedis;

/**
 * The GUARD.* benchmark of docs/BENCHMARKS.md, one run, printed (never asserted):
 *
 * <pre>
 * mvn -B -q -pl server -am test -Dtest=GuardWireBenchmark -Dsurefire.failIfNoSpecifiedTests=false \
 *     -Dbloomery.guardwire.bench=true [-Dbloomery.guardwire.rows=200000]
 * </pre>
 *
 * (a) the crawler's check: GUARD.MEXISTS of 100 links, 95 % never seen, against
 * {@code SELECT url FROM plain WHERE url = ANY(?)} on a table with a primary key on url, both on the same rows;
 * (b) 50 concurrent clients each sending single GUARD.ADDs (group commit) against 50 JDBC connections each running
 * {@code INSERT ... ON CONFLICT DO NOTHING RETURNING} per item, and one client sending GUARD.MADD batches of 1000;
 * (c) the freshness lag of a read-only foreign table followed by logical replication at 10,000 inserts/s.
 */
@EnabledIfSystemProperty(named = "bloomery.guardwire.bench", matches = "true")
class GuardWireBenchmark {
  static final int ROWS = Integer.getInteger("bloomery.guardwire.rows", 200_000);
  static final int LINKS = 20_000;
  static final int CLIENTS = 50;
  static final int ADDS_PER_CLIENT = 200;
  static final int FEED_RATE = 10_000;
  static final int FEED_SECONDS = 10;

  static String seenUrl(long i) {
    return "https://www.example.com/articles/" + i + "/comments?page=" + (i % 7) + "&sort=recent";
  }

  static String newUrl(String run, long i) {
    return "https://www.example.com/new/" + run + "/" + i + "?ref=crawl&depth=" + (i % 5);
  }

  static Object call(Jedis j, String... args) {
    return j.sendCommand(GuardCommandsTest.cmd(args[0]), java.util.Arrays.copyOfRange(args, 1, args.length));
  }

  @Test
  void run() throws Exception {
    PostgresCluster pg = PostgresCluster.shared();
    String url = pg.createDatabase();
    try (Connection c = DriverManager.getConnection(url); Statement st = c.createStatement()) {
      st.execute("CREATE TABLE plain (url text PRIMARY KEY)");
      st.execute("INSERT INTO plain SELECT 'https://www.example.com/articles/' || g || '/comments?page=' || (g % 7)"
          + " || '&sort=recent' FROM generate_series(0, " + (ROWS - 1) + ") g");
      st.execute("CREATE TABLE plain_adds (url text PRIMARY KEY)");
      st.execute("ANALYZE plain");
    }
    try (BloomeryServer server = GuardFixtures.server("--store", "pg=" + url, "--guard-timeout", "600000",
        "--store", "feed=" + url, "--store-table", "feed=feed.url");
        Jedis j = new Jedis("127.0.0.1", server.port(), 120_000)) {
      call(j, "GUARD.RESERVE", "crawl", "pg", "0.01", String.valueOf(ROWS * 4L));
      String table = GuardFixtures.psql(url, "SELECT tablename FROM pg_tables WHERE tablename LIKE 'bloomery_seen_%' AND tablename !~ '_(pending|replies)$'")
          .strip();
      GuardFixtures.psql(url, "INSERT INTO " + table + " (digest, item) SELECT sha256(convert_to(url, 'UTF8')),"
          + " convert_to(url, 'UTF8') FROM plain; ANALYZE " + table); // both tables analyzed, as autovacuum would
      call(j, "GUARD.REBUILD", "crawl");
      GuardCommandsTest.server = server;
      GuardCommandsTest.awaitStreaming("crawl");

      // (a) the crawler's check, 100 links per call, 5 of them already seen
      List<List<String>> batches = crawlerCheck(j, url, "(a) 5%% seen, 100 links per call", 100, 20, "a");
      // the same calls with every link new: no store query at all, only the server's own path
      long t5 = System.nanoTime();
      for (int b = 0; b < batches.size(); b++) {
        List<String> args = new ArrayList<>(List.of("GUARD.MEXISTS", "crawl"));
        for (int i = 0; i < 100; i++) {
          args.add(newUrl("z", b * 100L + i));
        }
        call(j, args.toArray(String[]::new));
      }
      double allNewSeconds = (System.nanoTime() - t5) / 1e9;
      crawlerCheck(j, url, "(a'') 1%% seen, 1000 links per call", 1000, 100, "m");
      long t6 = System.nanoTime();
      call(j, "BF.RESERVE", "bf", "0.01", String.valueOf(ROWS * 4L));
      for (int b = 0; b < batches.size(); b++) {
        List<String> args = new ArrayList<>(List.of("BF.MEXISTS", "bf"));
        args.addAll(batches.get(b));
        call(j, args.toArray(String[]::new));
      }
      double bfSeconds = (System.nanoTime() - t6) / 1e9;
      System.out.printf(Locale.ROOT, "BENCH (a') GUARD.MEXISTS all new (no store query) %.0f links/s;"
          + " BF.MEXISTS (no guard, event loop) %.0f links/s%n", LINKS / allNewSeconds, LINKS / bfSeconds);

      // (b) 50 clients, single adds, all new
      int total = CLIENTS * ADDS_PER_CLIENT;
      AtomicLong newGuard = new AtomicLong();
      long t2 = System.nanoTime();
      List<CompletableFuture<Void>> fs = new ArrayList<>();
      for (int cI = 0; cI < CLIENTS; cI++) {
        int client = cI;
        fs.add(CompletableFuture.runAsync(() -> {
          try (Jedis jc = new Jedis("127.0.0.1", server.port(), 120_000)) {
            for (int i = 0; i < ADDS_PER_CLIENT; i++) {
              newGuard.addAndGet((Long) call(jc, "GUARD.ADD", "crawl", newUrl("b" + client, i)));
            }
          }
        }, java.util.concurrent.Executors.newVirtualThreadPerTaskExecutor()));
      }
      for (CompletableFuture<Void> f : fs) {
        f.get();
      }
      double groupSeconds = (System.nanoTime() - t2) / 1e9;
      Map<String, Object> afterAdds = GuardCommandsTest.infoOf(j, "crawl");
      AtomicLong newSql = new AtomicLong();
      long t3 = System.nanoTime();
      fs.clear();
      for (int cI = 0; cI < CLIENTS; cI++) {
        int client = cI;
        fs.add(CompletableFuture.runAsync(() -> {
          try (Connection c = DriverManager.getConnection(url); PreparedStatement ps = c.prepareStatement(
              "INSERT INTO plain_adds (url) VALUES (?) ON CONFLICT DO NOTHING RETURNING url")) {
            for (int i = 0; i < ADDS_PER_CLIENT; i++) {
              ps.setString(1, newUrl("b" + client, i));
              try (ResultSet rs = ps.executeQuery()) {
                if (rs.next()) {
                  newSql.incrementAndGet();
                }
              }
            }
          } catch (java.sql.SQLException e) {
            throw new IllegalStateException(e);
          }
        }, java.util.concurrent.Executors.newVirtualThreadPerTaskExecutor()));
      }
      for (CompletableFuture<Void> f : fs) {
        f.get();
      }
      double perItemSeconds = (System.nanoTime() - t3) / 1e9;
      long t4 = System.nanoTime();
      long newBatched = 0;
      for (int b = 0; b < total / 1000; b++) {
        List<String> args = new ArrayList<>(List.of("GUARD.MADD", "crawl"));
        for (int i = 0; i < 1000; i++) {
          args.add(newUrl("c", b * 1000L + i));
        }
        for (Object r : (List<?>) call(j, args.toArray(String[]::new))) {
          newBatched += (Long) r;
        }
      }
      double batchedSeconds = (System.nanoTime() - t4) / 1e9;
      System.out.printf(Locale.ROOT, "BENCH (b) %d clients x %d single adds: GUARD.ADD group commit %.0f adds/s"
              + " (%d new, %d group commits of %.1f rows on average); INSERT ... ON CONFLICT per item %.0f adds/s"
              + " (%d new); ratio %.2f; one client GUARD.MADD x1000 %.0f adds/s (%d new); group/batched %.2f%n",
          CLIENTS, ADDS_PER_CLIENT, total / groupSeconds, newGuard.get(), (Long) afterAdds.get("group_commits"),
          (double) (Long) afterAdds.get("group_commit_rows") / Math.max(1L, (Long) afterAdds.get("group_commits")),
          total / perItemSeconds, newSql.get(), perItemSeconds / groupSeconds, total / batchedSeconds, newBatched,
          batchedSeconds / groupSeconds);

      freshness(j, server.port(), url);
    }
  }

  /**
   * The crawler's check: {@link #LINKS} links in calls of {@code perCall}, every {@code seenEvery}-th one seen,
   * GUARD.MEXISTS against {@code SELECT url FROM plain WHERE url = ANY(?)} of the same links per statement (one
   * connection each). (a) is 100 a call with 5 % seen; (a'') the "links that are mostly new", 1000 a call
   * with 1 % seen. Returns the calls.
   */
  private static List<List<String>> crawlerCheck(Jedis j, String url, String label, int perCall, int seenEvery,
      String run) throws Exception {
    List<List<String>> batches = new ArrayList<>();
    for (int b = 0; b < LINKS / perCall; b++) {
      List<String> batch = new ArrayList<>();
      for (int i = 0; i < perCall; i++) {
        long n = (long) b * perCall + i;
        batch.add(i % seenEvery == 0 ? seenUrl(n * 7919 % ROWS) : newUrl(run, n));
      }
      batches.add(batch);
    }
    Map<String, Object> before = GuardCommandsTest.infoOf(j, "crawl");
    long t0 = System.nanoTime();
    long dupGuard = 0;
    for (List<String> batch : batches) {
      List<String> args = new ArrayList<>(List.of("GUARD.MEXISTS", "crawl"));
      args.addAll(batch);
      for (Object v : (List<?>) call(j, args.toArray(String[]::new))) {
        dupGuard += (Long) ((List<?>) v).get(2);
      }
    }
    double guardSeconds = (System.nanoTime() - t0) / 1e9;
    Map<String, Object> after = GuardCommandsTest.infoOf(j, "crawl");
    long made = (Long) after.get("store_lookups_made") - (Long) before.get("store_lookups_made");
    long avoided = (Long) after.get("store_lookups_avoided") - (Long) before.get("store_lookups_avoided");
    long dupSql = 0;
    double sqlSeconds;
    try (Connection c = DriverManager.getConnection(url);
        PreparedStatement ps = c.prepareStatement("SELECT url FROM plain WHERE url = ANY(?)")) {
      long t1 = System.nanoTime();
      for (List<String> batch : batches) {
        ps.setArray(1, c.createArrayOf("text", batch.toArray()));
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            dupSql++;
          }
        }
      }
      sqlSeconds = (System.nanoTime() - t1) / 1e9;
    }
    System.out.printf(Locale.ROOT, "BENCH " + label + " rows=%d links=%d: GUARD.MEXISTS %.0f links/s (%d duplicates,"
            + " store lookups made %d avoided %d = %.2f%%); SELECT ... = ANY %.0f links/s (%d duplicates); ratio %.2f%n",
        ROWS, LINKS, LINKS / guardSeconds, dupGuard, made, avoided, 100.0 * avoided / (made + avoided),
        LINKS / sqlSeconds, dupSql, sqlSeconds / guardSeconds);
    return batches;
  }

  /**
   * (c) A read-only foreign table followed by logical replication: a JDBC writer inserts {@link #FEED_RATE} rows/s
   * (one 100-row INSERT every 10 ms, autocommit) for {@link #FEED_SECONDS} s; for every 10th statement a prober
   * client polls GUARD.MEXISTS over RESP until the statement's last row is "maybe". The lag of a sample is the time
   * from the INSERT's return (its commit) to the first GUARD.MEXISTS reply that has the row; the prober polls
   * every open sample in one call per round, so a sample's lag is at most one round late.
   */
  private static void freshness(Jedis j, int port, String url) throws Exception {
    try (Connection c = DriverManager.getConnection(url); Statement st = c.createStatement()) {
      st.execute("CREATE TABLE IF NOT EXISTS feed (id bigserial PRIMARY KEY, url text NOT NULL)");
    }
    call(j, "GUARD.RESERVE", "feed", "feed", "0.01", String.valueOf(4L * FEED_RATE * FEED_SECONDS));
    GuardCommandsTest.awaitStreaming("feed");
    java.util.concurrent.ConcurrentLinkedQueue<Object[]> committed = new java.util.concurrent.ConcurrentLinkedQueue<>();
    java.util.concurrent.atomic.AtomicBoolean writing = new java.util.concurrent.atomic.AtomicBoolean(true);
    AtomicLong rows = new AtomicLong();
    long[] writeNanos = new long[1];
    CompletableFuture<Void> writer = CompletableFuture.runAsync(() -> {
      try (Connection c = DriverManager.getConnection(url); PreparedStatement ps = c.prepareStatement(
          "INSERT INTO feed (url) SELECT unnest(?::text[])")) {
        long start = System.nanoTime();
        int statements = FEED_RATE * FEED_SECONDS / 100;
        for (int n = 0; n < statements; n++) {
          long due = start + n * 10_000_000L;
          while (System.nanoTime() < due) {
            java.util.concurrent.locks.LockSupport.parkNanos(due - System.nanoTime());
          }
          String[] batch = new String[100];
          for (int i = 0; i < 100; i++) {
            batch[i] = newUrl("feed", n * 100L + i);
          }
          ps.setArray(1, c.createArrayOf("text", batch));
          ps.executeUpdate();
          rows.addAndGet(100);
          if (n % 10 == 0) {
            committed.add(new Object[] {batch[99], System.nanoTime()});
          }
        }
        writeNanos[0] = System.nanoTime() - start;
      } catch (java.sql.SQLException e) {
        throw new IllegalStateException(e);
      } finally {
        writing.set(false);
      }
    });
    List<Long> lags = new ArrayList<>();
    List<Object[]> open = new ArrayList<>();
    long rounds = 0;
    try (Jedis prober = new Jedis("127.0.0.1", port, 120_000)) {
      while (writing.get() || !committed.isEmpty() || !open.isEmpty()) {
        Object[] sample;
        while ((sample = committed.poll()) != null) {
          open.add(sample);
        }
        if (open.isEmpty()) {
          Thread.onSpinWait();
          continue;
        }
        List<String> args = new ArrayList<>(List.of("GUARD.MEXISTS", "feed"));
        for (Object[] o : open) {
          args.add((String) o[0]);
        }
        List<?> verdicts = (List<?>) call(prober, args.toArray(String[]::new));
        long now = System.nanoTime();
        rounds++;
        List<Object[]> still = new ArrayList<>();
        for (int i = 0; i < open.size(); i++) {
          if ((Long) ((List<?>) verdicts.get(i)).get(0) == 1L) {
            lags.add(now - (Long) open.get(i)[1]);
          } else {
            still.add(open.get(i));
          }
        }
        open = still;
      }
    }
    writer.get();
    java.util.Collections.sort(lags);
    Map<String, Object> info = GuardCommandsTest.infoOf(j, "feed");
    System.out.printf(Locale.ROOT, "BENCH (c) foreign inserts %d rows in %.1f s = %.0f rows/s (target %d);"
            + " %d samples, %d probe rounds; lag commit -> GUARD.MEXISTS maybe: p50 %.1f ms, p99 %.1f ms, max %.1f ms;"
            + " GUARD.INFO max_commit_lag_ms %s, replication_rows %s%n",
        rows.get(), writeNanos[0] / 1e9, rows.get() / (writeNanos[0] / 1e9), FEED_RATE, lags.size(), rounds,
        lags.get(lags.size() / 2) / 1e6, lags.get((int) (lags.size() * 0.99)) / 1e6, lags.get(lags.size() - 1) / 1e6,
        info.get("max_commit_lag_ms"), info.get("replication_rows"));
  }
}
