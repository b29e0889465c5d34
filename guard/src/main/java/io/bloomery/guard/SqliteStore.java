package io.bloomery.guard;

import java.io.IOException;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The embedded exact store: one SQLite file, WAL journal, {@code synchronous=FULL} (a commit is durable on power
 * loss) unless opened with {@link CommitDurability#PROCESS_CRASH}, busy timeout for writers in other processes.
 *
 * <p>Schema ({@code CREATE … IF NOT EXISTS}): {@code id INTEGER PRIMARY KEY AUTOINCREMENT,
 * digest BLOB NOT NULL UNIQUE, item BLOB NOT NULL}. The unique index holds the 32-byte SHA-256 of
 * the item rather than the item, so a long document costs 32 bytes of index; a conflict on the
 * digest is then confirmed by comparing the stored bytes (see {@link DigestCollisionException}).
 *
 * <p>Atomicity: {@code INSERT OR IGNORE} inside a {@code BEGIN IMMEDIATE} transaction; SQLite has a
 * single writer per database, so there is no check/insert race, and {@code changes()} (the update
 * count) says whether the row was inserted. A batch is one transaction (one fsync under FULL), and all or
 * nothing: a collision, an error or a throwing {@link BeforeCommit} rolls the whole batch back. Because writes
 * are serialised, rowid order is commit order, which makes {@code max(id)} a correct watermark.
 *
 * <p>Thread-safe: writes share one connection under a lock; scans open their own read connection
 * (WAL readers do not block the writer).
 */
public final class SqliteStore implements LedgerStore {
  private static final int BUSY_TIMEOUT_MILLIS = 30_000;

  /**
   * What a committed batch survives, which sets SQLite's {@code synchronous} (the journal is WAL either way, and the
   * database stays consistent after any crash; only how many of the last commits can be lost differs).
   */
  public enum CommitDurability {
    /**
     * {@code synchronous=FULL}: the WAL is fsynced at every commit, so a commit survives power loss and an OS crash.
     * What a caller acknowledges after the commit (a guard's reply over RESP) needs this. The default.
     */
    POWER_LOSS("FULL"),
    /**
     * {@code synchronous=NORMAL}: a commit survives the process being killed ({@code kill -9}, OOM), but the commits
     * since the WAL was last synced (at a checkpoint) can be lost to power loss or an OS crash. Enough where the
     * caller has made its output durable before committing, so that a lost commit only repeats items and never
     * loses one ({@code bloomery dedup}, docs/GUARD.md); it spares the fsync of every commit.
     */
    PROCESS_CRASH("NORMAL");

    private final String synchronous;

    CommitDurability(String synchronous) {
      this.synchronous = synchronous;
    }
  }

  private final String url;
  private final CommitDurability durability;
  private final String table;
  private final String identity;
  private final Connection writer;
  private final ReentrantLock writerLock = new ReentrantLock();
  private final SqliteCatchUp catchUp; // null unless opened following other writers
  private final String pendingTable;
  private final String repliesTable;
  private long lastPrune; // under writerLock

  private SqliteStore(Path file, String table, boolean followOtherWriters, CommitDurability durability) {
    this.url = "jdbc:sqlite:" + file.toAbsolutePath();
    this.durability = Objects.requireNonNull(durability, "durability");
    this.table = SqlNames.identifier(table, "table");
    this.identity = "sqlite:" + file.toAbsolutePath().normalize() + "#" + table;
    this.pendingTable = this.table + "_pending";
    this.repliesTable = this.table + "_replies";
    Connection connection = null;
    try {
      connection = connect(true);
      try (Statement st = connection.createStatement()) {
        st.executeUpdate(
            "CREATE TABLE IF NOT EXISTS " + table + " (id INTEGER PRIMARY KEY AUTOINCREMENT,"
                + " digest BLOB NOT NULL UNIQUE, item BLOB NOT NULL)");
        st.executeUpdate("CREATE TABLE IF NOT EXISTS " + pendingTable
            + " (digest BLOB PRIMARY KEY, owner TEXT NOT NULL)");
        st.executeUpdate("CREATE TABLE IF NOT EXISTS " + repliesTable + " (token BLOB PRIMARY KEY,"
            + " request BLOB NOT NULL, answers BLOB, created_at INTEGER NOT NULL)");
      }
    } catch (SQLException e) {
      StoreUnavailableException failure = unavailable("open " + identity, e);
      closeQuietly(connection, failure);
      throw failure;
    }
    this.writer = connection;
    SqliteCatchUp follower = null;
    if (followOtherWriters) {
      try {
        follower = new SqliteCatchUp(connect(false), this.table);
      } catch (SQLException e) {
        StoreUnavailableException failure = unavailable("open " + identity, e);
        closeQuietly(connection, failure);
        throw failure;
      }
    }
    this.catchUp = follower;
  }

  /** Opens (creating if needed) the store in {@code file}, table {@code bloomery_seen}. */
  public static SqliteStore open(Path file) {
    return open(file, "bloomery_seen");
  }

  /** Opens (creating if needed) the store in {@code file} using {@code table}, every commit surviving power loss. */
  public static SqliteStore open(Path file, String table) {
    return open(file, table, CommitDurability.POWER_LOSS);
  }

  /** Opens (creating if needed) the store in {@code file} using {@code table}, its commits as {@code durability} says. */
  public static SqliteStore open(Path file, String table, CommitDurability durability) {
    Objects.requireNonNull(file, "file");
    return new SqliteStore(file, table, false, durability);
  }

  /**
   * Opens the store so that a guard's negatives also know rows that other connections commit to
   * the table (other processes, other programs writing {@code digest} and {@code item}): before a
   * filter negative is answered, {@code PRAGMA data_version} tells whether anything was committed
   * elsewhere, and if so the rows above the covered id are added first (see {@link
   * SqliteCatchUp}). Costs one PRAGMA per filter negative.
   */
  public static SqliteStore openFollowingOtherWriters(Path file, String table) {
    Objects.requireNonNull(file, "file");
    return new SqliteStore(file, table, true, CommitDurability.POWER_LOSS);
  }

  @Override
  public boolean catchesUp() {
    return catchUp != null;
  }

  @Override
  public long catchUp(ItemSink sink) {
    if (catchUp == null) {
      return 0;
    }
    try {
      return catchUp.catchUp(sink);
    } catch (SQLException e) {
      throw unavailable("catch up with other writers", e);
    }
  }

  /**
   * The writer begins its transactions IMMEDIATE (it takes the write lock up front, so two
   * writers never deadlock upgrading a read lock); a reader begins DEFERRED, which in WAL mode is a
   * snapshot that never blocks the writer, so a scan (a rebuild) does not stop inserts.
   */
  private Connection connect(boolean forWriting) throws SQLException {
    Properties props = new Properties();
    props.setProperty("journal_mode", "WAL");
    props.setProperty("synchronous", durability.synchronous);
    props.setProperty("busy_timeout", Integer.toString(BUSY_TIMEOUT_MILLIS));
    props.setProperty("transaction_mode", forWriting ? "IMMEDIATE" : "DEFERRED");
    // Nothing reads generated keys; with them on, the driver prepares and runs a second statement after every
    // insert (the item's insert cost about twice what it does without).
    props.setProperty("jdbc.get_generated_keys", "false");
    return DriverManager.getConnection(url, props);
  }

  private static void closeQuietly(Connection connection, Exception cause) {
    if (connection == null) {
      return;
    }
    try {
      connection.close();
    } catch (SQLException e) {
      cause.addSuppressed(e);
    }
  }

  @Override
  public String identity() {
    return identity;
  }

  @Override
  public boolean isReadOnly() {
    return false;
  }

  @Override
  public boolean contains(byte[] item) {
    Objects.requireNonNull(item, "item");
    writerLock.lock();
    try (PreparedStatement ps =
        writer.prepareStatement("SELECT item FROM " + table + " WHERE digest = ?")) {
      ps.setBytes(1, ItemDigest.of(item));
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() && ItemDigest.confirmSameBytes(rs.getBytes(1), item);
      }
    } catch (SQLException e) {
      throw unavailable("contains", e);
    } finally {
      writerLock.unlock();
    }
  }

  @Override
  public boolean insertIfAbsent(byte[] item) {
    return insertAllIfAbsent(List.of(item))[0];
  }

  @Override
  public boolean[] insertAllIfAbsent(List<byte[]> items, BeforeCommit beforeCommit)
      throws IOException {
    Objects.requireNonNull(beforeCommit, "beforeCommit");
    boolean[] inserted = new boolean[items.size()];
    if (items.isEmpty()) {
      return inserted;
    }
    return inWriteTransaction(() -> {
      insertRows(items, inserted, new boolean[inserted.length]);
      beforeCommit.accept(inserted.clone());
      return inserted;
    });
  }

  /** The body of a write transaction; it commits if the body returns. */
  @FunctionalInterface
  private interface WriteWork<T> {
    T run() throws SQLException, IOException;
  }

  /** Runs {@code work} in one write transaction of the writer connection; anything thrown rolls it back. */
  private <T> T inWriteTransaction(WriteWork<T> work) throws IOException {
    writerLock.lock();
    try {
      writer.setAutoCommit(false);
      try {
        T result = work.run();
        writer.commit();
        return result;
      } catch (SQLException | IOException | RuntimeException e) {
        rollbackQuietly(e);
        throw e;
      } finally {
        writer.setAutoCommit(true);
      }
    } catch (SQLException e) {
      throw unavailable("insert", e);
    } finally {
      writerLock.unlock();
    }
  }

  /**
   * Inserts each item unless stored, inside the writer's open transaction: {@code inserted[i]}
   * whether it was new, {@code duplicate[i]} whether it is a stored duplicate at its first
   * occurrence in the batch (a later occurrence is neither).
   */
  private void insertRows(List<byte[]> items, boolean[] inserted, boolean[] duplicate)
      throws SQLException {
    try (PreparedStatement insert =
            writer.prepareStatement(
                "INSERT OR IGNORE INTO " + table + " (digest, item) VALUES (?, ?)");
        PreparedStatement existing =
            writer.prepareStatement("SELECT item FROM " + table + " WHERE digest = ?")) {
      Map<ItemDigest.Key, byte[]> seenInBatch = new HashMap<>();
      for (int i = 0; i < inserted.length; i++) {
        byte[] item = Objects.requireNonNull(items.get(i), "item");
        byte[] digest = ItemDigest.of(item);
        byte[] earlier = seenInBatch.putIfAbsent(new ItemDigest.Key(digest), item);
        if (earlier != null) {
          ItemDigest.confirmSameBytes(earlier, item);
          continue;
        }
        insert.setBytes(1, digest);
        insert.setBytes(2, item);
        inserted[i] = insert.executeUpdate() == 1;
        if (!inserted[i]) {
          duplicate[i] = true;
          existing.setBytes(1, digest);
          try (ResultSet rs = existing.executeQuery()) {
            rs.next();
            ItemDigest.confirmSameBytes(rs.getBytes(1), item);
          }
        }
      }
    }
  }

  /**
   * The batch and its acknowledgement ledger in one transaction: tables {@code TABLE_pending}
   * (digest, owner) and {@code TABLE_replies} (token, request digest, answers, created_at).
   */
  @Override
  public Recorded insertAllIfAbsent(List<byte[]> items, Ledger ledger, Decide decide) {
    Objects.requireNonNull(ledger, "ledger");
    try {
      return inWriteTransaction(() -> DeliveryLedger.record(new LedgerRows(items), items.size(), ledger, decide));
    } catch (IOException e) {
      throw new AssertionError("a ledger batch does no output", e);
    }
  }

  /** The ledger's statements in SQLite's dialect, on the writer connection: one statement per item. */
  private final class LedgerRows implements DeliveryLedger.Rows {
    private final List<byte[]> items;

    LedgerRows(List<byte[]> items) {
      this.items = items;
    }

    @Override
    public boolean takeToken(byte[] token, byte[] request) throws SQLException {
      try (PreparedStatement ps = writer.prepareStatement("INSERT OR IGNORE INTO " + repliesTable
          + " (token, request, created_at) VALUES (?, ?, ?)")) {
        ps.setBytes(1, token);
        ps.setBytes(2, request);
        ps.setLong(3, System.currentTimeMillis());
        return ps.executeUpdate() == 1;
      }
    }

    @Override
    public byte[][] storedReply(byte[] token) throws SQLException {
      return DeliveryLedger.reply(writer, repliesTable, token);
    }

    @Override
    public DeliveryLedger.Inserted insert(boolean[] inserted, boolean[] duplicate) throws SQLException {
      insertRows(items, inserted, duplicate);
      return DeliveryLedger.Inserted.ROWS_ONLY;
    }

    @Override
    public boolean[] claimForeign(String owner, boolean[] duplicate) throws SQLException {
      boolean[] claimed = new boolean[items.size()];
      try (PreparedStatement ps = writer.prepareStatement(
          "DELETE FROM " + pendingTable + " WHERE digest = ? AND owner <> ?")) {
        for (int i = 0; i < claimed.length; i++) {
          if (duplicate[i]) {
            ps.setBytes(1, ItemDigest.of(items.get(i)));
            ps.setString(2, owner);
            claimed[i] = ps.executeUpdate() == 1;
          }
        }
      }
      return claimed;
    }

    @Override
    public void markPending(String owner, boolean[] pick) throws SQLException {
      try (PreparedStatement ps = writer.prepareStatement("INSERT OR REPLACE INTO " + pendingTable
          + " (digest, owner) VALUES (?, ?)")) {
        for (int i = 0; i < pick.length; i++) {
          if (pick[i]) {
            ps.setBytes(1, ItemDigest.of(items.get(i)));
            ps.setString(2, owner);
            ps.executeUpdate();
          }
        }
      }
    }

    @Override
    public void clearPending(boolean[] pick) throws SQLException {
      List<byte[]> settled = new java.util.ArrayList<>();
      for (int i = 0; i < pick.length; i++) {
        if (pick[i]) {
          settled.add(items.get(i));
        }
      }
      deletePending(null, DeliveryLedger.digestsOf(settled));
    }

    @Override
    public void acknowledge(String owner, List<byte[]> acknowledged) throws SQLException {
      deletePending(owner, DeliveryLedger.digestsOf(acknowledged));
    }

    @Override
    public void storeAnswers(byte[] token, boolean[] answers) throws SQLException {
      try (PreparedStatement ps = writer.prepareStatement(
          "UPDATE " + repliesTable + " SET answers = ? WHERE token = ?")) {
        ps.setBytes(1, DeliveryLedger.encodeAnswers(answers));
        ps.setBytes(2, token);
        ps.executeUpdate();
      }
      long now = System.currentTimeMillis();
      if (now - lastPrune > DeliveryLedger.PRUNE_EVERY_MILLIS) {
        lastPrune = now;
        try (PreparedStatement ps = writer.prepareStatement(
            "DELETE FROM " + repliesTable + " WHERE created_at < ?")) {
          ps.setLong(1, now - DeliveryLedger.REPLY_RETENTION_MILLIS);
          ps.executeUpdate();
        }
      }
    }
  }

  /** Deletes the marks on {@code digests}, of {@code owner} only unless it is null. */
  private void deletePending(String owner, byte[][] digests) throws SQLException {
    if (digests.length == 0) {
      return;
    }
    try (PreparedStatement ps = writer.prepareStatement("DELETE FROM " + pendingTable
        + " WHERE digest = ?" + (owner == null ? "" : " AND owner = ?"))) {
      for (byte[] digest : digests) {
        ps.setBytes(1, digest);
        if (owner != null) {
          ps.setString(2, owner);
        }
        ps.executeUpdate();
      }
    }
  }

  @Override
  public void acknowledge(String owner, List<byte[]> items) {
    if (items.isEmpty()) {
      return;
    }
    Objects.requireNonNull(owner, "owner");
    writerLock.lock();
    try {
      deletePending(owner, DeliveryLedger.digestsOf(items)); // autocommit: one implicit transaction
    } catch (SQLException e) {
      throw unavailable("acknowledge " + items.size() + " items", e);
    } finally {
      writerLock.unlock();
    }
  }

  private void rollbackQuietly(Exception cause) {
    try {
      writer.rollback();
    } catch (SQLException e) {
      cause.addSuppressed(e);
    }
  }

  @Override
  public long watermark() {
    return queryLong("SELECT coalesce(max(id), 0) FROM " + table, "watermark");
  }

  @Override
  public long estimatedRows() {
    return queryLong("SELECT count(*) FROM " + table, "count");
  }

  private long queryLong(String sql, String operation) {
    writerLock.lock();
    try (Statement st = writer.createStatement(); ResultSet rs = st.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    } catch (SQLException e) {
      throw unavailable(operation, e);
    } finally {
      writerLock.unlock();
    }
  }

  @Override
  public ScanResult scan(ItemSink sink) {
    try (Connection reader = connect(false)) {
      long dataVersion = catchUp == null ? 0 : catchUp.dataVersion(); // before the snapshot
      reader.setAutoCommit(false); // one read transaction = one snapshot for both queries
      long watermark;
      try (Statement st = reader.createStatement();
          ResultSet rs = st.executeQuery("SELECT coalesce(max(id), 0) FROM " + table)) {
        rs.next();
        watermark = rs.getLong(1);
      }
      long rows = stream(reader, "SELECT item FROM " + table + " WHERE id <= " + watermark, sink);
      reader.commit();
      if (catchUp != null) {
        catchUp.covered(watermark, dataVersion);
      }
      return new ScanResult(rows, watermark);
    } catch (SQLException e) {
      throw unavailable("scan", e);
    }
  }

  @Override
  public long scanAfter(long watermark, ItemSink sink) {
    try (Connection reader = connect(false)) {
      if (catchUp == null) {
        return stream(reader,
            "SELECT item FROM " + table + " WHERE id > " + watermark + " ORDER BY id", sink);
      }
      long dataVersion = catchUp.dataVersion(); // before the snapshot
      reader.setAutoCommit(false);
      long upTo;
      try (Statement st = reader.createStatement();
          ResultSet rs = st.executeQuery("SELECT coalesce(max(id), 0) FROM " + table)) {
        rs.next();
        upTo = rs.getLong(1);
      }
      long rows = stream(reader, "SELECT item FROM " + table + " WHERE id > " + watermark
          + " AND id <= " + upTo + " ORDER BY id", sink);
      reader.commit();
      catchUp.covered(upTo, dataVersion);
      return rows;
    } catch (SQLException e) {
      throw unavailable("scan after watermark " + watermark, e);
    }
  }

  private static long stream(Connection connection, String sql, ItemSink sink)
      throws SQLException {
    long rows = 0;
    try (Statement st = connection.createStatement()) {
      st.setFetchSize(10_000);
      try (ResultSet rs = st.executeQuery(sql)) {
        while (rs.next()) {
          sink.accept(rs.getBytes(1));
          rows++;
        }
      }
    }
    return rows;
  }

  @Override
  public void close() {
    writerLock.lock();
    try {
      if (catchUp != null) {
        catchUp.close();
      }
      writer.close();
    } catch (SQLException e) {
      throw unavailable("close", e);
    } finally {
      writerLock.unlock();
    }
  }

  @Override
  public String toString() {
    return identity;
  }

  private StoreUnavailableException unavailable(String operation, SQLException e) {
    return new StoreUnavailableException(Credentials.redact(
        "SQLite store " + identity + ": " + operation + " failed: " + e.getMessage()),
        Credentials.redact(e));
  }
}
