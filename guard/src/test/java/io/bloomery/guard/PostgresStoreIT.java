package io.bloomery.guard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class PostgresStoreIT extends LedgerStoreContract {
  private String jdbcUrl;

  @Override
  protected LedgerStore createEmptyStore() {
    jdbcUrl = PostgresCluster.shared().createDatabase();
    return PostgresStore.open(jdbcUrl);
  }

  @Override
  protected LedgerStore sameDataStore() {
    return PostgresStore.open(jdbcUrl);
  }

  @Override
  protected void plantRow(byte[] digest, byte[] item) throws Exception {
    try (Connection c = DriverManager.getConnection(jdbcUrl);
        java.sql.PreparedStatement ps = c.prepareStatement(
            "INSERT INTO bloomery_seen (digest, item) VALUES (?, ?)")) {
      ps.setBytes(1, digest);
      ps.setBytes(2, item);
      ps.executeUpdate();
    }
  }

  private static long relationCount(String jdbcUrl) throws Exception {
    try (Connection c = DriverManager.getConnection(jdbcUrl);
        Statement st = c.createStatement();
        ResultSet rs = st.executeQuery(
            "SELECT count(*) FROM pg_class WHERE relnamespace = 'public'::regnamespace")) {
      rs.next();
      return rs.getLong(1);
    }
  }

  /** {seq_scan, idx_scan} of the ledger table, as the statistics system has them. */
  private static long[] pendingScans(String jdbcUrl) throws Exception {
    try (Connection c = DriverManager.getConnection(jdbcUrl); Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("SELECT coalesce(seq_scan, 0), coalesce(idx_scan, 0) FROM pg_stat_user_tables"
            + " WHERE relname = 'bloomery_seen_pending'")) {
      rs.next();
      return new long[] {rs.getLong(1), rs.getLong(2)};
    }
  }

  /** Group commits of 100 new items each, every one clearing the previous one's marks (their replies delivered). */
  private static List<byte[]> groupCommits(LedgerStore store, int from, int groups, List<byte[]> delivered) {
    for (int g = from; g < from + groups; g++) {
      List<byte[]> items = new ArrayList<>();
      for (int i = 0; i < 100; i++) {
        items.add(bytes("https://example.org/" + g + "/" + i));
      }
      LedgerStore.Recorded r = store.insertAllIfAbsent(items, new boolean[items.size()],
          new LedgerStore.Ledger("owner", null, null, delivered), (inserted, claimed) -> inserted.clone());
      assertThat(r.answers()).containsOnly(true);
      delivered = items;
    }
    return delivered;
  }

  @Test
  void deliveredMarksAreClearedThroughTheKeyWhenTheLedgerHoldsFewRowsInManyPages() throws Exception {
    String url = PostgresCluster.shared().createDatabase();
    List<byte[]> delivered;
    try (LedgerStore store = PostgresStore.open(url)) {
      delivered = groupCommits(store, 0, 60, List.of()); // 6,000 marks written and cleared: a queue's pages
    }
    try (Connection c = DriverManager.getConnection(url); Statement st = c.createStatement()) {
      st.execute("VACUUM ANALYZE bloomery_seen_pending"); // what autovacuum records: 100 live rows, ~60 pages
      try (ResultSet rs = st.executeQuery("SELECT relpages, reltuples FROM pg_class"
          + " WHERE relname = 'bloomery_seen_pending'")) {
        rs.next();
        assertThat(rs.getLong(1)).isGreaterThan(20);
        assertThat(rs.getLong(2)).isEqualTo(100);
      }
    }
    long[] before = pendingScans(url);
    try (LedgerStore store = PostgresStore.open(url)) {
      groupCommits(store, 60, 20, delivered);
    } // closing the pool ends its backends, which report their statistics as they exit
    long[] after = pendingScans(url);
    for (int wait = 0; wait < 300 && after[1] - before[1] < 20; wait++) {
      Thread.sleep(100);
      after = pendingScans(url);
    }
    assertThat(after[1] - before[1]).as("index scans of the ledger").isGreaterThanOrEqualTo(20);
    assertThat(after[0] - before[0]).as("sequential scans of the ledger").isZero();
  }

  @Test
  void readOnlySourceIsReadButNeverWritten() throws Exception {
    String url = PostgresCluster.shared().createDatabase();
    try (Connection c = DriverManager.getConnection(url); Statement st = c.createStatement()) {
      st.execute("CREATE TABLE crawled (url text NOT NULL, fetched_at timestamptz)");
      st.execute("INSERT INTO crawled (url) SELECT 'https://example.org/' || g"
          + " FROM generate_series(1, 1000) g");
      st.execute("INSERT INTO crawled (url) VALUES (NULL::text)".replace("NULL::text", "'caf\u00e9'"));
    }
    long relationsBefore = relationCount(url);
    try (ExactStore store = PostgresStore.openReadOnly(url, "crawled", "url")) {
      assertThat(store.isReadOnly()).isTrue();
      assertThat(store.contains(bytes("https://example.org/17"))).isTrue();
      assertThat(store.contains(bytes("caf\u00e9"))).isTrue();
      assertThat(store.contains(bytes("https://example.org/1001"))).isFalse();
      assertThat(store.contains(new byte[] {(byte) 0xff, 0})).isFalse(); // not UTF-8: not in text
      List<String> items = new ArrayList<>();
      assertThat(store.scan(item -> items.add(new String(item))).rows()).isEqualTo(1001);
      assertThat(items).contains("https://example.org/1000");
      assertThatThrownBy(() -> store.insertIfAbsent(bytes("https://example.org/2")))
          .isInstanceOf(ReadOnlyStoreException.class).hasMessageContaining("read-only");
      assertThatThrownBy(store::watermark).isInstanceOf(ReadOnlyStoreException.class);
      try (Guard guard = Guard.builder(store).expectedInsertions(5_000).open()) {
        assertThat(guard.lookup("https://example.org/5").duplicate()).isTrue();
        assertThat(guard.stats().recovery()).startsWith("rebuilt from store: read-only source");
        assertThatThrownBy(() -> guard.addIfAbsent("https://example.org/new"))
            .isInstanceOf(ReadOnlyStoreException.class);
      }
    }
    assertThat(relationCount(url)).isEqualTo(relationsBefore); // no DDL: no table, no index
  }

  @Test
  void readOnlySourceMustExistAndHoldBytesOrText() throws Exception {
    String url = PostgresCluster.shared().createDatabase();
    try (Connection c = DriverManager.getConnection(url); Statement st = c.createStatement()) {
      st.execute("CREATE TABLE numbers (n integer)");
    }
    assertThatThrownBy(() -> PostgresStore.openReadOnly(url, "missing", "url"))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("does not exist");
    assertThatThrownBy(() -> PostgresStore.openReadOnly(url, "numbers", "n"))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("integer");
    assertThatThrownBy(() -> PostgresStore.open(url, "numbers"))
        .isInstanceOf(IllegalStateException.class).hasMessageContaining("lacks the guard's columns");
    assertThatThrownBy(() -> PostgresStore.open(url, "x; DROP TABLE numbers"))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void unreachableServerIsAnErrorNotAnAnswer() {
    String url = "jdbc:postgresql://127.0.0.1:1/nowhere?user=postgres&connectTimeout=2";
    assertThatThrownBy(() -> PostgresStore.open(url))
        .isInstanceOf(StoreUnavailableException.class);
  }
}
