package io.bloomery.bench.guard;

import io.bloomery.guard.ExactStore;
import io.bloomery.guard.Guard;
import io.bloomery.guard.GuardStats;
import io.bloomery.guard.PostgresStore;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The guard benchmark on the crawler workload, against the naive "SELECT per URL, then INSERT"
 * loop on the same PostgreSQL, plus the initial build of a filter from an existing large table.
 *
 * <p>Not JMH: each figure is one pass over a deterministic stream against a real server, measured
 * end to end (items/s, store statements). Run it through {@code scripts/bench-guard.sh}, which
 * starts a throwaway PostgreSQL 15 cluster:
 *
 * <pre>
 * scripts/bench-guard.sh --n 10000000 --side-by-side 20000 --build-rows 10000000
 * </pre>
 *
 * or directly against any server: {@code java -cp bench/target/benchmarks.jar
 * io.bloomery.bench.guard.GuardDedupBench --jdbc jdbc:postgresql://127.0.0.1:5432/db?user=u}.
 *
 * <ul>
 *   <li>{@code --side-by-side N}: the first N items of the stream through (a) the naive loop
 *       (autocommit SELECT, then INSERT when absent), (b) the guard one item per call and (c) the
 *       guard in batches; each on its own fresh table, one connection/thread; repeated
 *       {@code --rounds R} times, interleaved.
 *   <li>{@code --n N}: the guard in batches over N items (the crawler workload at scale).
 *   <li>{@code --build-rows N}: a table of N URLs is generated server-side, then a guard with no
 *       snapshot builds its filter by streaming it (server-side cursor), for the guard's own table
 *       and for someone else's text column opened read-only.
 * </ul>
 */
public final class GuardDedupBench {
  private GuardDedupBench() {}

  public static void main(String[] args) throws Exception {
    Map<String, String> options = parse(args);
    String jdbc = require(options, "--jdbc");
    long n = Long.parseLong(options.getOrDefault("--n", "10000000"));
    long sideBySide = Long.parseLong(options.getOrDefault("--side-by-side", "20000"));
    long buildRows = Long.parseLong(options.getOrDefault("--build-rows", "10000000"));
    int batch = Integer.parseInt(options.getOrDefault("--batch", "1000"));
    int rounds = Integer.parseInt(options.getOrDefault("--rounds", "1"));
    double repeat = Double.parseDouble(options.getOrDefault("--repeat", "0.5"));
    double fpp = Double.parseDouble(options.getOrDefault("--fpp", "0.01"));

    System.out.printf(Locale.ROOT, "# crawler workload: %.0f%% repeats, seed 1, fpp %s, batch %d;"
        + " %d cores (%s), Java %s%n", repeat * 100, fpp, batch,
        Runtime.getRuntime().availableProcessors(), System.getProperty("os.arch"),
        Runtime.version());
    System.out.println("| run | items | new | items/s | SELECTs (lookups) | INSERT statements"
        + " | round trips | lookups of new items avoided |");
    System.out.println("|---|---:|---:|---:|---:|---:|---:|---:|");
    // Interleaved rounds: the machine is shared, so compare runs made back to back and quote medians.
    for (int round = 0; round < rounds && sideBySide > 0; round++) {
      naive(jdbc, sideBySide, repeat);
      guard(jdbc, "guard_b1", sideBySide, repeat, 1, fpp);
      guard(jdbc, "guard_side", sideBySide, repeat, batch, fpp);
    }
    if (n > 0) {
      guard(jdbc, "guard_seen", n, repeat, batch, fpp);
    }
    if (buildRows > 0) {
      build(jdbc, buildRows, fpp);
    }
  }

  /** The naive loop: SELECT per URL, then INSERT if absent (autocommit, as most code does it). */
  private static void naive(String jdbc, long n, double repeat) throws SQLException {
    try (Connection c = DriverManager.getConnection(jdbc)) {
      try (Statement st = c.createStatement()) {
        st.execute("DROP TABLE IF EXISTS naive_seen");
        st.execute("CREATE TABLE naive_seen (url text PRIMARY KEY)");
      }
      CrawlerUrls urls = new CrawlerUrls(1, repeat);
      long selects = 0;
      long inserts = 0;
      long started = System.nanoTime();
      try (PreparedStatement select = c.prepareStatement("SELECT 1 FROM naive_seen WHERE url = ?");
          PreparedStatement insert = c.prepareStatement("INSERT INTO naive_seen (url) VALUES (?)")) {
        for (long i = 0; i < n; i++) {
          String url = new String(urls.next(), StandardCharsets.UTF_8);
          select.setString(1, url);
          selects++;
          boolean present;
          try (ResultSet rs = select.executeQuery()) {
            present = rs.next();
          }
          if (!present) {
            insert.setString(1, url);
            insert.executeUpdate();
            inserts++;
          }
        }
      }
      double seconds = (System.nanoTime() - started) / 1e9;
      System.out.printf(Locale.ROOT, "| naive SELECT then INSERT | %,d | %,d | %,.0f | %,d | %,d |"
              + " %,d | 0%% (%,d lookups of new items made) |%n", n, inserts, n / seconds, selects,
          inserts, selects + inserts, inserts);
    }
  }

  private static void guard(String jdbc, String table, long n, double repeat, int batch,
      double fpp) throws SQLException {
    dropTable(jdbc, table);
    CrawlerUrls urls = new CrawlerUrls(1, repeat);
    long expected = Math.max(1, Math.round(n * (1 - repeat)));
    long fresh = 0;
    long roundTrips = 0;
    long started = System.nanoTime();
    GuardStats stats;
    try (Guard guard = Guard.builder(PostgresStore.open(jdbc, table)).expectedInsertions(expected)
        .fpp(fpp).open()) {
      List<byte[]> pending = new ArrayList<>(batch);
      for (long i = 0; i < n; i++) {
        pending.add(urls.next());
        if (pending.size() == batch || i == n - 1) {
          for (boolean isNew : guard.addIfAbsent(pending)) {
            fresh += isNew ? 1 : 0;
          }
          roundTrips++;
          pending.clear();
        }
      }
      stats = guard.stats();
    }
    double seconds = (System.nanoTime() - started) / 1e9;
    // One item per call: a "maybe" is looked up first (one SELECT; a false positive then also
    // INSERTs), a negative is inserted directly. A batch is one statement that confirms in place.
    long selects = batch == 1 ? stats.storeLookupsMade() : 0;
    long inserts = batch == 1
        ? stats.storeLookupsAvoided() + stats.realizedFalsePositives() : roundTrips;
    System.out.printf(Locale.ROOT, "| guard, batch %d | %,d | %,d | %,.0f | %,d (filter maybe:"
            + " %,d) | %,d | %,d | %.3f%% (%,d of %,d; realized FPR %.4f%%, model at end"
            + " %.4f%%) |%n", batch, n, fresh, n / seconds, selects, stats.storeLookupsMade(),
        inserts, batch == 1 ? selects + inserts : roundTrips,
        100.0 * stats.storeLookupsAvoided() / fresh, stats.storeLookupsAvoided(), fresh,
        100 * stats.realizedFalsePositiveRate(), 100 * stats.modelFalsePositiveRate());
  }

  /** Initial build of a filter by streaming an existing table of {@code rows} URLs. */
  private static void build(String jdbc, long rows, double fpp) throws SQLException {
    dropTable(jdbc, "build_seen");
    dropTable(jdbc, "crawled");
    long started = System.nanoTime();
    String url = "'https://host' || (g & 4095) || '.example.com/section/' || (g / 7 % 97)"
        + " || '/page-' || g";
    try (Connection c = DriverManager.getConnection(jdbc); Statement st = c.createStatement()) {
      st.execute("CREATE TABLE crawled (url text NOT NULL)");
      st.execute("INSERT INTO crawled SELECT " + url + " FROM generate_series(1, " + rows + ") g");
      st.execute("CREATE TABLE build_seen (id bigserial PRIMARY KEY, digest bytea NOT NULL,"
          + " item bytea NOT NULL)");
      st.execute("INSERT INTO build_seen (digest, item) SELECT sha256(convert_to(url, 'UTF8')),"
          + " convert_to(url, 'UTF8') FROM crawled");
      st.execute("CREATE UNIQUE INDEX build_seen_digest_key ON build_seen (digest)");
      st.execute("VACUUM ANALYZE build_seen");
      st.execute("VACUUM ANALYZE crawled");
    }
    System.out.printf(Locale.ROOT, "%n(generated %,d rows server-side in %.1f s)%n%n", rows,
        (System.nanoTime() - started) / 1e9);
    System.out.println("| initial build (streamed, server-side cursor) | rows | seconds | rows/s"
        + " | filter m bits, k |");
    System.out.println("|---|---:|---:|---:|---|");
    buildOnce("guard's own table (bytea)", PostgresStore.open(jdbc, "build_seen"), rows, fpp);
    buildOnce("someone else's text column, read-only",
        PostgresStore.openReadOnly(jdbc, "crawled", "url"), rows, fpp);
  }

  private static void buildOnce(String label, ExactStore store, long rows, double fpp) {
    long started = System.nanoTime();
    try (Guard guard = Guard.builder(store).expectedInsertions(rows).fpp(fpp).open()) {
      double seconds = (System.nanoTime() - started) / 1e9;
      GuardStats stats = guard.stats();
      System.out.printf(Locale.ROOT, "| %s | %,d | %.2f | %,.0f | %,d, %d |%n", label, rows,
          seconds, rows / seconds, stats.bits(), stats.hashes());
    }
  }

  private static void dropTable(String jdbc, String table) throws SQLException {
    try (Connection c = DriverManager.getConnection(jdbc); Statement st = c.createStatement()) {
      st.execute("DROP TABLE IF EXISTS " + table);
    }
  }

  private static Map<String, String> parse(String[] args) {
    Map<String, String> options = new LinkedHashMap<>();
    for (int i = 0; i < args.length; i += 2) {
      if (!args[i].startsWith("--") || i + 1 >= args.length) {
        throw new IllegalArgumentException("usage: --jdbc URL [--n N] [--side-by-side N]"
            + " [--build-rows N] [--rounds R] [--batch N] [--repeat SHARE] [--fpp P]");
      }
      options.put(args[i], args[i + 1]);
    }
    return options;
  }

  private static String require(Map<String, String> options, String name) {
    String value = options.get(name);
    if (value == null) {
      throw new IllegalArgumentException(name + " is required");
    }
    return value;
  }
}
