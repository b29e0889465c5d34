package io.bloomery.guard;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The production exact store: PostgreSQL over JDBC, pooled by HikariCP.
 *
 * <p><b>Owned table</b> ({@link #open(String, String)}): created if absent as {@code id bigserial
 * PRIMARY KEY, digest bytea NOT NULL, item bytea NOT NULL} with a unique index on {@code digest}
 * (SHA-256 of the item; see {@link ItemDigest} for why a digest). DDL runs under a transaction-level
 * advisory lock so that several processes may open the same table at once.
 *
 * <p><b>Atomic check-and-insert, one round trip per batch.</b> A batch is one statement:
 *
 * <pre>{@code
 * WITH input AS (SELECT * FROM unnest(?::bytea[], ?::bytea[]) WITH ORDINALITY AS u(digest, item, ord)),
 *      ins   AS (INSERT INTO t (digest, item) SELECT digest, item FROM input ORDER BY digest
 *                ON CONFLICT (digest) DO NOTHING RETURNING digest)
 * SELECT i.ord, ins.digest IS NOT NULL AS inserted, s.item = i.item AS same_bytes
 * FROM input i LEFT JOIN ins ON ins.digest = i.digest LEFT JOIN t s ON s.digest = i.digest
 * }</pre>
 *
 * The statement runs in a transaction that commits only after every conflicting row was confirmed
 * byte-equal and the caller's {@link BeforeCommit} returned, so a batch is all or nothing: a digest
 * collision on one item commits none of the others, like SQLite. While the transaction is open, a
 * concurrent inserter of one of its new items waits for it (and then sees a duplicate, or inserts
 * after a rollback).
 *
 * <p>{@code ON CONFLICT DO NOTHING} is PostgreSQL's speculative insertion: a concurrent uncommitted
 * insert of the same digest makes the second inserter wait for the first to commit or abort, so
 * exactly one caller sees its row returned. Rows go in digest order, so concurrent batches that
 * share keys lock them in the same order and cannot deadlock (a deadlock or serialization failure,
 * which aborts the whole statement, is retried). Repeats inside one batch are resolved in Java before
 * sending (first occurrence wins). For a conflicting row the same statement compares the stored bytes
 * with the offered ones; only when the conflicting row committed after the statement's snapshot (a
 * race with another inserter) is a second query needed to confirm the bytes.
 *
 * <p><b>Watermark</b>: {@code max(id)}. Sequence values are handed out at insert time, not commit
 * time, so {@code max(id)} is commit-ordered only when no insert is in flight; {@link Guard} takes it
 * under its exclusive write gate, which makes it exact for writes made through that guard. Rows
 * written by other processes can commit late with a smaller id; see {@link Guard} on multiple
 * writers.
 *
 * <p><b>Read-only source</b> ({@link #openReadOnly}): an existing table and column (bytea, or text
 * read as UTF-8) that belongs to someone else. The filter is built from it and "maybe" is confirmed
 * against it, but the store never writes to it, issues no DDL and refuses inserts with
 * {@link ReadOnlyStoreException}.
 *
 * <p>Streaming: scans use a server-side cursor (autocommit off, fetch size 10 000) in a
 * {@code REPEATABLE READ READ ONLY} transaction, so the rows and the watermark come from one
 * snapshot and memory stays flat on tables of any size.
 *
 * <p>Thread-safe. Errors (connection refused, server gone, pool timeout after 5 s) raise
 * {@link StoreUnavailableException} carrying the SQLSTATE.
 */
public final class PostgresStore implements LedgerStore {
  private static final int FETCH_SIZE = 10_000;
  private static final int MAX_ATTEMPTS = 5;

  private final HikariDataSource pool;
  private final String table;
  private final String column;
  private final boolean readOnly;
  private final boolean textColumn;
  private final String identity;
  /** The store as messages name it: the URL once, then the table and column. */
  private final String shown;
  private final String pendingTable;
  private final String repliesTable;
  private final java.util.concurrent.atomic.AtomicLong lastPrune =
      new java.util.concurrent.atomic.AtomicLong();

  private PostgresStore(String jdbcUrl, String table, String column, boolean readOnly, int poolSize,
      Duration statementTimeout) {
    this.table = SqlNames.qualified(table, "table");
    this.column = SqlNames.identifier(column, "column");
    this.readOnly = readOnly;
    this.identity = "postgresql:" + withoutQuery(jdbcUrl) + "#" + table + "." + column;
    this.shown = withoutQuery(jdbcUrl) + " (table " + table + ", column " + column + ")";
    this.pendingTable = this.table + "_pending";
    this.repliesTable = this.table + "_replies";
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(jdbcUrl);
    config.setMaximumPoolSize(poolSize);
    long timeoutMillis = statementTimeout.toMillis();
    if (timeoutMillis < 0) {
      throw new IllegalArgumentException("statementTimeout must be >= 0, got " + statementTimeout);
    }
    config.setConnectionTimeout(timeoutMillis > 0 ? Math.max(250, Math.min(5_000, timeoutMillis)) : 5_000);
    // The guard's own tables are read by key only (scans say otherwise in their transaction). Its ledger table is a
    // queue whose rows live for milliseconds: once autovacuum has recorded a few live rows in many pages, the planner
    // prefers a sequential scan of every page to delete delivered marks, in every group commit (a third of
    // PostgreSQL's CPU in the group-commit benchmark, docs/BENCHMARKS.md); its primary key finds them directly.
    String init = (timeoutMillis > 0 ? "SET statement_timeout = " + timeoutMillis + "; " : "")
        + (readOnly ? "" : "SET enable_seqscan = off");
    if (!init.isEmpty()) {
      config.setConnectionInitSql(init);
    }
    config.setPoolName("bloomery-guard");
    config.setAutoCommit(true);
    try {
      this.pool = new HikariDataSource(config);
    } catch (RuntimeException e) {
      throw new StoreUnavailableException(Credentials.redact("PostgreSQL store " + shown
          + ": cannot connect: " + e.getMessage()), Credentials.redact(e));
    }
    try {
      if (readOnly) {
        this.textColumn = inspectReadOnlyColumn();
      } else {
        createTableIfAbsent();
        this.textColumn = false;
      }
    } catch (SQLException e) {
      pool.close();
      throw unavailable("open", e);
    } catch (RuntimeException e) {
      pool.close();
      throw e;
    }
  }

  /** Opens the guard's own table {@code bloomery_seen}, creating it if absent. */
  public static PostgresStore open(String jdbcUrl) {
    return open(jdbcUrl, "bloomery_seen");
  }

  /** Opens the guard's own {@code table} (NAME or SCHEMA.NAME), creating it if absent. */
  public static PostgresStore open(String jdbcUrl, String table) {
    return open(jdbcUrl, table, Duration.ZERO);
  }

  /**
   * {@link #open(String, String)} whose connections run with {@code statement_timeout} (zero: none): no
   * statement of an insert or lookup runs longer; one that does fails with SQLSTATE 57014, raised as {@link
   * StoreUnavailableException}. Scans (builds, rebuilds, replays) are exempt: they read whole tables.
   */
  public static PostgresStore open(String jdbcUrl, String table, Duration statementTimeout) {
    return new PostgresStore(Objects.requireNonNull(jdbcUrl, "jdbcUrl"), table, "item", false, 8,
        statementTimeout);
  }

  /**
   * Opens someone else's table as a read-only source: {@code column} (bytea, or text/varchar read
   * as UTF-8 bytes) holds the items. The table must exist; nothing is ever written to it.
   */
  public static PostgresStore openReadOnly(String jdbcUrl, String table, String column) {
    return openReadOnly(jdbcUrl, table, column, Duration.ZERO);
  }

  /** {@link #openReadOnly(String, String, String)} with a {@code statement_timeout} as for {@link #open}. */
  public static PostgresStore openReadOnly(String jdbcUrl, String table, String column,
      Duration statementTimeout) {
    return new PostgresStore(Objects.requireNonNull(jdbcUrl, "jdbcUrl"), table, column, true, 4,
        statementTimeout);
  }

  /**
   * The URL without its query (user, password and connection options), credentials redacted: part of the
   * store's identity and of every message.
   */
  private static String withoutQuery(String jdbcUrl) {
    int query = jdbcUrl.indexOf('?');
    return Credentials.redact(query < 0 ? jdbcUrl : jdbcUrl.substring(0, query));
  }

  private void createTableIfAbsent() throws SQLException {
    String simpleName = table.substring(table.lastIndexOf('.') + 1);
    try (Connection c = pool.getConnection()) {
      c.setAutoCommit(false);
      try (PreparedStatement lock = c.prepareStatement("SELECT pg_advisory_xact_lock(hashtext(?))");
          Statement ddl = c.createStatement()) {
        lock.setString(1, "bloomery-guard:" + table);
        lock.execute();
        ddl.execute("CREATE TABLE IF NOT EXISTS " + table
            + " (id bigserial PRIMARY KEY, digest bytea NOT NULL, item bytea NOT NULL)");
        List<String> missing = new ArrayList<>(List.of("id", "digest", "item"));
        try (PreparedStatement ps = c.prepareStatement("SELECT attname FROM pg_attribute"
            + " WHERE attrelid = to_regclass(?) AND attnum > 0 AND NOT attisdropped")) {
          ps.setString(1, table);
          try (ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
              missing.remove(rs.getString(1));
            }
          }
        }
        if (!missing.isEmpty()) {
          throw new IllegalStateException("table " + table + " exists but lacks the guard's"
              + " columns " + missing + "; to build a filter from someone else's table open it"
              + " read-only with its column, or choose another table name");
        }
        ddl.execute("CREATE UNIQUE INDEX IF NOT EXISTS " + simpleName + "_digest_key ON "
            + table + " (digest)");
        ddl.execute("CREATE TABLE IF NOT EXISTS " + pendingTable
            + " (digest bytea PRIMARY KEY, owner text NOT NULL)");
        ddl.execute("CREATE TABLE IF NOT EXISTS " + repliesTable + " (token bytea PRIMARY KEY,"
            + " request bytea NOT NULL, answers bytea,"
            + " created_at timestamptz NOT NULL DEFAULT now())");
        c.commit();
      } catch (SQLException | RuntimeException e) {
        c.rollback();
        throw e;
      }
    }
  }

  /** Returns whether the column is text (else bytea); refuses other types and missing columns. */
  private boolean inspectReadOnlyColumn() throws SQLException {
    try (Connection c = pool.getConnection();
        PreparedStatement ps = c.prepareStatement(
            "SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid ="
                + " to_regclass(?) AND attname = lower(?) AND attnum > 0 AND NOT attisdropped")) {
      ps.setString(1, table);
      ps.setString(2, column);
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          throw new IllegalArgumentException("read-only source " + table + "." + column
              + " does not exist (the guard never creates someone else's table)");
        }
        String type = rs.getString(1);
        if (type.equals("bytea")) {
          return false;
        }
        if (type.equals("text") || type.startsWith("character")) {
          return true;
        }
        throw new IllegalArgumentException("read-only source column " + table + "." + column
            + " has type " + type + "; expected bytea, text or varchar");
      }
    }
  }

  @Override
  public String identity() {
    return identity;
  }

  @Override
  public boolean isReadOnly() {
    return readOnly;
  }

  @Override
  public boolean contains(byte[] item) {
    Objects.requireNonNull(item, "item");
    try (Connection c = pool.getConnection()) {
      if (readOnly) {
        return containsReadOnly(c, item);
      }
      try (PreparedStatement ps =
          c.prepareStatement("SELECT item FROM " + table + " WHERE digest = ?")) {
        ps.setBytes(1, ItemDigest.of(item));
        try (ResultSet rs = ps.executeQuery()) {
          return rs.next() && ItemDigest.confirmSameBytes(rs.getBytes(1), item);
        }
      }
    } catch (SQLException e) {
      throw unavailable("contains", e);
    }
  }

  /** One {@code SELECT item … WHERE digest = ANY(?)} for the guard's own table; item by item for a source. */
  @Override
  public boolean[] containsAll(List<byte[]> items) {
    if (readOnly || items.size() <= 1) {
      return LedgerStore.super.containsAll(items);
    }
    byte[][] digests = new byte[items.size()][];
    for (int i = 0; i < digests.length; i++) {
      digests[i] = ItemDigest.of(Objects.requireNonNull(items.get(i), "item"));
    }
    java.util.Map<java.nio.ByteBuffer, byte[]> stored = new java.util.HashMap<>();
    try (Connection c = pool.getConnection();
        PreparedStatement ps = c.prepareStatement("SELECT digest, item FROM " + table
            + " WHERE digest = ANY(?)")) {
      ps.setObject(1, digests); // byte[][]: sent as binary bytea[]
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          stored.put(java.nio.ByteBuffer.wrap(rs.getBytes(1)), rs.getBytes(2));
        }
      }
    } catch (SQLException e) {
      throw unavailable("contains", e);
    }
    boolean[] out = new boolean[digests.length];
    for (int i = 0; i < out.length; i++) {
      byte[] s = stored.get(java.nio.ByteBuffer.wrap(digests[i]));
      out[i] = s != null && ItemDigest.confirmSameBytes(s, items.get(i));
    }
    return out;
  }

  private boolean containsReadOnly(Connection c, byte[] item) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(
        "SELECT 1 FROM " + table + " WHERE " + column + " = ? LIMIT 1")) {
      if (textColumn) {
        String text = strictUtf8(item);
        if (text == null || text.indexOf('\0') >= 0) {
          return false; // a text column cannot hold these bytes
        }
        ps.setString(1, text);
      } else {
        ps.setBytes(1, item);
      }
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next();
      }
    }
  }

  private static String strictUtf8(byte[] bytes) {
    try {
      return StandardCharsets.UTF_8.newDecoder()
          .onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT)
          .decode(ByteBuffer.wrap(bytes))
          .toString();
    } catch (CharacterCodingException e) {
      return null;
    }
  }

  /**
   * One item: a plain {@code INSERT … ON CONFLICT (digest) DO NOTHING} (update count 1 or 0), and
   * for a conflict a second query that confirms the stored bytes. Cheaper per call than the batch
   * statement, whose CTE costs more to plan and run than it saves on a single row.
   */
  @Override
  public boolean insertIfAbsent(byte[] item) {
    return insertIfAbsent(item, false);
  }

  /**
   * With {@code probablyPresent} (the filter said "maybe", usually a duplicate) the stored bytes
   * are read first: found, it is a duplicate after one read-only round trip; absent (a false
   * positive), the atomic insert follows.
   */
  @Override
  public boolean insertIfAbsent(byte[] item, boolean probablyPresent) {
    Objects.requireNonNull(item, "item");
    if (readOnly) {
      return insertAllIfAbsent(List.of(item))[0]; // refuses with the read-only message
    }
    byte[] digest = ItemDigest.of(item);
    try (Connection c = pool.getConnection()) {
      if (probablyPresent) {
        try (PreparedStatement ps =
            c.prepareStatement("SELECT item FROM " + table + " WHERE digest = ?")) {
          ps.setBytes(1, digest);
          try (ResultSet rs = ps.executeQuery()) {
            if (rs.next()) {
              ItemDigest.confirmSameBytes(rs.getBytes(1), item);
              return false; // a committed, byte-equal row: a duplicate
            }
          }
        }
      }
      try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + table
          + " (digest, item) VALUES (?, ?) ON CONFLICT (digest) DO NOTHING")) {
        ps.setBytes(1, digest);
        ps.setBytes(2, item);
        if (ps.executeUpdate() == 1) {
          return true;
        }
      }
      confirmRaced(c, List.of(0), List.of(digest), List.of(item));
      return false;
    } catch (SQLException e) {
      throw unavailable("insert", e);
    }
  }

  @Override
  public boolean[] insertAllIfAbsent(List<byte[]> items, BeforeCommit beforeCommit)
      throws IOException {
    Objects.requireNonNull(beforeCommit, "beforeCommit");
    if (readOnly) {
      throw new ReadOnlyStoreException("PostgreSQL source " + table + "." + column
          + " is read-only for the guard (someone else's table): addIfAbsent is refused;"
          + " use lookup, or give the guard its own table");
    }
    boolean[] inserted = new boolean[items.size()];
    Batch batch = Batch.of(items);
    List<byte[]> digests = batch.digests();
    List<byte[]> distinct = batch.distinct();
    int[] sentIndex = batch.sentIndex();
    if (distinct.isEmpty()) {
      beforeCommit.accept(inserted.clone());
      return inserted;
    }
    // One transaction: the statement's rows commit only after every item was confirmed (a digest
    // collision throws first) and beforeCommit returned; anything else rolls it back.
    return inTransaction("insert batch of " + distinct.size(), (c, sent) -> {
      boolean[] sentInserted = insertDistinct(c, digests, distinct, null, null);
      for (int i = 0; i < inserted.length; i++) {
        inserted[i] = sentIndex[i] >= 0 && sentInserted[sentIndex[i]];
      }
      beforeCommit.accept(inserted.clone());
      return inserted;
    });
  }

  /** The body of a transaction; {@code sent} is set once it may not be sent again. */
  @FunctionalInterface
  private interface Work<T> {
    T run(Connection c, java.util.concurrent.atomic.AtomicBoolean sent) throws SQLException, IOException;
  }

  /**
   * Runs {@code work} in one transaction that commits if it returns and rolls back otherwise. A deadlock or
   * serialization failure aborts the whole transaction, so nothing was written: it is sent again unless the work
   * said it may not be (its decisions may have had side effects in the caller).
   */
  private <T> T inTransaction(String operation, Work<T> work) throws IOException {
    for (int attempt = 1; ; attempt++) {
      java.util.concurrent.atomic.AtomicBoolean sent = new java.util.concurrent.atomic.AtomicBoolean();
      try (Connection c = pool.getConnection()) {
        c.setAutoCommit(false);
        boolean committed = false;
        try {
          T result = work.run(c, sent);
          c.commit();
          committed = true;
          return result;
        } finally {
          if (!committed) {
            rollbackQuietly(c);
          }
          restoreAutoCommitQuietly(c);
        }
      } catch (SQLException e) {
        boolean retryable = "40P01".equals(e.getSQLState()) || "40001".equals(e.getSQLState());
        if (!retryable || sent.get() || attempt == MAX_ATTEMPTS) {
          throw unavailable(operation, e);
        }
      }
    }
  }


  /**
   * A batch with its repeats resolved: the first occurrence of each item is sent ({@code
   * sentIndex[i]} its position among the sent), a later one ({@code -1}) is a duplicate of it.
   */
  private record Batch(List<byte[]> digests, List<byte[]> distinct, int[] sentIndex) {
    static Batch of(List<byte[]> items) {
      Map<ItemDigest.Key, Integer> firstIndex = new HashMap<>();
      List<byte[]> digests = new ArrayList<>();
      List<byte[]> distinct = new ArrayList<>();
      int[] sentIndex = new int[items.size()];
      for (int i = 0; i < items.size(); i++) {
        byte[] item = Objects.requireNonNull(items.get(i), "item");
        byte[] digest = ItemDigest.of(item);
        Integer first = firstIndex.putIfAbsent(new ItemDigest.Key(digest), i);
        if (first != null) {
          ItemDigest.confirmSameBytes(items.get(first), item);
          sentIndex[i] = -1;
          continue;
        }
        sentIndex[i] = distinct.size();
        digests.add(digest);
        distinct.add(item);
      }
      return new Batch(digests, distinct, sentIndex);
    }

    /** The digests of the items with {@code pick[i]} set (first occurrences only). */
    byte[][] digestsOf(boolean[] pick) {
      List<byte[]> out = new ArrayList<>();
      for (int i = 0; i < pick.length; i++) {
        if (pick[i] && sentIndex[i] >= 0) {
          out.add(digests.get(sentIndex[i]));
        }
      }
      return out.toArray(new byte[0][]);
    }
  }

  /**
   * The batch and its acknowledgement ledger in one transaction: tables {@code TABLE_pending}
   * (digest, owner) and {@code TABLE_replies} (token, request digest, answers, created_at).
   */
  @Override
  public Recorded insertAllIfAbsent(List<byte[]> items, Ledger ledger, Decide decide) {
    Objects.requireNonNull(ledger, "ledger");
    requireOwnedTable("insert");
    return inLedgerTransaction(items, Batch.of(items), ledger, decide);
  }

  /**
   * With no item "maybe", no token and no repeat, the batch first goes as one autocommit statement (insert, pending
   * marks, clearing of delivered marks, and the commit in one round trip) that commits only if every item is new: a
   * plain {@code INSERT} whose unique index fails the whole statement on a stored (or concurrently inserted) digest,
   * and then nothing is written and the batch runs in its transaction as without the hint.
   */
  @Override
  public Recorded insertAllIfAbsent(List<byte[]> items, boolean[] probablyPresent, Ledger ledger, Decide decide) {
    Objects.requireNonNull(ledger, "ledger");
    requireOwnedTable("insert");
    if (probablyPresent.length != items.size()) {
      throw new IllegalArgumentException(probablyPresent.length + " hints for " + items.size() + " items");
    }
    Batch batch = Batch.of(items);
    boolean anyMaybe = false;
    for (boolean maybe : probablyPresent) {
      anyMaybe |= maybe;
    }
    if (!anyMaybe && ledger.token() == null && !items.isEmpty() && batch.distinct().size() == items.size()) {
      Recorded recorded = insertAllNew(batch, ledger, decide);
      if (recorded != null) {
        return recorded;
      }
    }
    return inLedgerTransaction(items, batch, ledger, decide);
  }

  /**
   * The one-round-trip path: the batch's rows, their pending marks and the deletion of delivered marks in one
   * statement, committed by autocommit. Returns null if nothing was written (an item was stored already, or a
   * deadlock or serialization failure aborted the statement): the batch then needs its transaction. Once the
   * statement may have committed (it returned, or failed in a way that leaves its outcome unknown) {@code decide}
   * is called with every item inserted, so that the caller's marks exist before any reply or error.
   */
  private Recorded insertAllNew(Batch batch, Ledger ledger, Decide decide) {
    boolean acks = !ledger.acknowledged().isEmpty();
    int n = batch.distinct().size();
    Connection c;
    try {
      c = pool.getConnection();
    } catch (SQLException e) {
      throw unavailable("insert batch of " + n, e); // nothing was sent
    }
    long inserted;
    try (c; PreparedStatement ps = c.prepareStatement("WITH ins AS (INSERT INTO " + table + " (digest, item)"
        + " SELECT u.digest, u.item FROM unnest(?::bytea[], ?::bytea[]) AS u(digest, item) ORDER BY u.digest"
        + " RETURNING digest), marked AS (INSERT INTO " + pendingTable + " (digest, owner) SELECT digest, ? FROM ins"
        + " ORDER BY digest ON CONFLICT (digest) DO UPDATE SET owner = excluded.owner)"
        + (acks ? ", acked AS (DELETE FROM " + pendingTable + " WHERE digest = ANY(?) AND owner = ?)" : "")
        + " SELECT count(*) FROM ins")) {
      ps.setObject(1, batch.digests().toArray(new byte[0][])); // byte[][]: sent as binary bytea[]
      ps.setObject(2, batch.distinct().toArray(new byte[0][]));
      ps.setString(3, ledger.owner());
      if (acks) {
        ps.setObject(4, DeliveryLedger.digestsOf(ledger.acknowledged()));
        ps.setString(5, ledger.owner());
      }
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        inserted = rs.getLong(1);
      }
    } catch (SQLException e) {
      String state = e.getSQLState();
      if ("23505".equals(state) || "40P01".equals(state) || "40001".equals(state)) {
        return null; // the statement failed whole: nothing of it was written
      }
      allNew(n, decide); // the commit's outcome is unknown: answered (and marked) as if it committed
      throw unavailable("insert batch of " + n, e);
    }
    Recorded recorded = allNew(n, decide); // committed: the caller's marks first, whatever follows
    if (inserted != n) {
      throw new IllegalStateException("a plain INSERT of " + n + " rows committed " + inserted);
    }
    return recorded;
  }

  /** {@code decide} for a batch whose every item was inserted; its outcome, each answer new as the contract says. */
  private static Recorded allNew(int n, Decide decide) {
    boolean[] all = new boolean[n];
    java.util.Arrays.fill(all, true);
    boolean[] answers = decide.answers(all, new boolean[n]);
    for (boolean a : answers) {
      if (!a) {
        throw new IllegalStateException("Decide answered an inserted item duplicate");
      }
    }
    return new Recorded(all, answers, false);
  }

  private Recorded inLedgerTransaction(List<byte[]> items, Batch batch, Ledger ledger, Decide decide) {
    try {
      return inTransaction("insert batch of " + batch.distinct().size(),
          (c, sent) -> DeliveryLedger.record(new LedgerRows(c, sent, batch, ledger), items.size(), ledger, decide));
    } catch (IOException e) {
      throw new AssertionError("a ledger batch does no output", e);
    }
  }

  /** The ledger's statements in PostgreSQL's dialect: one statement per step, items as {@code bytea[]}. */
  private final class LedgerRows implements DeliveryLedger.Rows {
    private final Connection c;
    private final java.util.concurrent.atomic.AtomicBoolean sent;
    private final Batch batch;
    private final Ledger ledger;

    LedgerRows(Connection c, java.util.concurrent.atomic.AtomicBoolean sent, Batch batch, Ledger ledger) {
      this.c = c;
      this.sent = sent;
      this.batch = batch;
      this.ledger = ledger;
    }

    @Override
    public boolean takeToken(byte[] token, byte[] request) throws SQLException {
      try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + repliesTable
          + " (token, request) VALUES (?, ?) ON CONFLICT (token) DO NOTHING")) {
        ps.setBytes(1, token);
        ps.setBytes(2, request);
        return ps.executeUpdate() == 1;
      }
    }

    @Override
    public byte[][] storedReply(byte[] token) throws SQLException {
      return DeliveryLedger.reply(c, repliesTable, token);
    }

    /** The rows, their pending marks (without a token) and the deletion of delivered marks in one statement. */
    @Override
    public DeliveryLedger.Inserted insert(boolean[] inserted, boolean[] duplicate) throws SQLException {
      if (batch.distinct().isEmpty()) {
        return DeliveryLedger.Inserted.ROWS_ONLY;
      }
      boolean[] sentInserted = insertDistinct(c, batch.digests(), batch.distinct(),
          ledger.token() == null ? ledger.owner() : null, ledger);
      for (int i = 0; i < inserted.length; i++) {
        inserted[i] = batch.sentIndex()[i] >= 0 && sentInserted[batch.sentIndex()[i]];
        duplicate[i] = batch.sentIndex()[i] >= 0 && !inserted[i];
      }
      return new DeliveryLedger.Inserted(ledger.token() == null, !ledger.acknowledged().isEmpty());
    }

    @Override
    public boolean[] claimForeign(String owner, boolean[] duplicate) throws SQLException {
      boolean[] claimed = new boolean[duplicate.length];
      byte[][] candidates = batch.digestsOf(duplicate);
      if (candidates.length == 0) {
        return claimed;
      }
      java.util.Set<ItemDigest.Key> taken = new java.util.HashSet<>();
      try (PreparedStatement ps = c.prepareStatement("DELETE FROM " + pendingTable
          + " WHERE digest = ANY(?) AND owner <> ? RETURNING digest")) {
        ps.setObject(1, candidates); // byte[][]: sent as binary bytea[]
        ps.setString(2, owner);
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            taken.add(new ItemDigest.Key(rs.getBytes(1)));
          }
        }
      }
      for (int i = 0; i < claimed.length; i++) {
        claimed[i] = duplicate[i]
            && taken.contains(new ItemDigest.Key(batch.digests().get(batch.sentIndex()[i])));
      }
      return claimed;
    }

    @Override
    public void deciding() {
      sent.set(true); // the caller's decision may have side effects: not sent twice
    }

    @Override
    public void markPending(String owner, boolean[] pick) throws SQLException {
      byte[][] marks = batch.digestsOf(pick);
      if (marks.length == 0) {
        return;
      }
      java.util.Arrays.sort(marks, java.util.Arrays::compareUnsigned); // one lock order for all
      try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + pendingTable
          + " (digest, owner) SELECT unnest(?::bytea[]), ? ON CONFLICT (digest)"
          + " DO UPDATE SET owner = excluded.owner")) {
        ps.setObject(1, marks); // byte[][]: sent as binary bytea[]
        ps.setString(2, owner);
        ps.executeUpdate();
      }
    }

    @Override
    public void clearPending(boolean[] pick) throws SQLException {
      byte[][] settled = batch.digestsOf(pick);
      if (settled.length > 0) {
        deletePending(c, null, settled);
      }
    }

    @Override
    public void acknowledge(String owner, List<byte[]> items) throws SQLException {
      deletePending(c, owner, DeliveryLedger.digestsOf(items));
    }

    @Override
    public void storeAnswers(byte[] token, boolean[] answers) throws SQLException {
      try (PreparedStatement ps = c.prepareStatement(
          "UPDATE " + repliesTable + " SET answers = ? WHERE token = ?")) {
        ps.setBytes(1, DeliveryLedger.encodeAnswers(answers));
        ps.setBytes(2, token);
        ps.executeUpdate();
      }
      long now = System.currentTimeMillis();
      long last = lastPrune.get();
      if (now - last > DeliveryLedger.PRUNE_EVERY_MILLIS && lastPrune.compareAndSet(last, now)) {
        try (Statement st = c.createStatement()) {
          st.execute("SET LOCAL enable_seqscan = on"); // no index on created_at: read the table (the last statement)
        }
        try (PreparedStatement ps = c.prepareStatement("DELETE FROM " + repliesTable
            + " WHERE created_at < now() - make_interval(secs => ?)")) {
          ps.setLong(1, DeliveryLedger.REPLY_RETENTION_MILLIS / 1000);
          ps.executeUpdate();
        }
      }
    }
  }

  /** Deletes the marks on {@code digests}, of {@code owner} only unless it is null. */
  private void deletePending(Connection c, String owner, byte[][] digests) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("DELETE FROM " + pendingTable
        + " WHERE digest = ANY(?)" + (owner == null ? "" : " AND owner = ?"))) {
      ps.setObject(1, digests); // byte[][]: sent as binary bytea[]
      if (owner != null) {
        ps.setString(2, owner);
      }
      ps.executeUpdate();
    }
  }

  @Override
  public void acknowledge(String owner, List<byte[]> items) {
    if (items.isEmpty() || readOnly) {
      return;
    }
    try (Connection c = pool.getConnection()) {
      deletePending(c, Objects.requireNonNull(owner, "owner"), DeliveryLedger.digestsOf(items));
    } catch (SQLException e) {
      throw unavailable("acknowledge " + items.size() + " items", e);
    }
  }

  private static void rollbackQuietly(Connection c) {
    try {
      c.rollback();
    } catch (SQLException e) {
      // The connection is gone; the server aborts the transaction with it.
    }
  }

  private static void restoreAutoCommitQuietly(Connection c) {
    try {
      c.setAutoCommit(true);
    } catch (SQLException e) {
      // A broken connection; the pool discards it.
    }
  }

  /**
   * The one-statement batch insert of distinct items. Rows are inserted in digest order, so two
   * batches that share keys take their index locks in the same order and cannot deadlock each other.
   */
  private boolean[] insertDistinct(Connection c, List<byte[]> digests, List<byte[]> distinct,
      String markOwner, Ledger ledger) throws SQLException {
    boolean[] sentInserted = new boolean[distinct.size()];
    List<Integer> unconfirmed = new ArrayList<>();
    boolean acks = ledger != null && !ledger.acknowledged().isEmpty();
    // With a ledger the same statement marks the inserted rows pending and clears delivered
    // marks: no extra round trip for the common case of new items.
    try (PreparedStatement ps = c.prepareStatement(
        "WITH input AS (SELECT u.digest, u.item, u.ord FROM unnest(?::bytea[], ?::bytea[])"
            + " WITH ORDINALITY AS u(digest, item, ord)),"
            + " ins AS (INSERT INTO " + table + " (digest, item) SELECT digest, item FROM input"
            + " ORDER BY digest ON CONFLICT (digest) DO NOTHING RETURNING digest)"
            + (markOwner == null ? "" : ", marked AS (INSERT INTO " + pendingTable + " (digest,"
                + " owner) SELECT digest, ? FROM ins ORDER BY digest ON CONFLICT (digest)"
                + " DO UPDATE SET owner = excluded.owner)")
            + (acks ? ", acked AS (DELETE FROM " + pendingTable
                + " WHERE digest = ANY(?) AND owner = ?)" : "")
            // A row this statement inserted is invisible to its own snapshot: only a conflict is looked
            // up (CASE evaluates the subquery for those rows only), one index probe per duplicate.
            + " SELECT i.ord, ins.digest IS NOT NULL, CASE WHEN ins.digest IS NULL THEN"
            + " (SELECT s.item = i.item FROM " + table + " s WHERE s.digest = i.digest) END"
            + " FROM input i LEFT JOIN ins ON ins.digest = i.digest")) {
      ps.setObject(1, digests.toArray(new byte[0][])); // byte[][]: sent as binary bytea[]
      ps.setObject(2, distinct.toArray(new byte[0][])); // byte[][]: sent as binary bytea[]
      int next = 3;
      if (markOwner != null) {
        ps.setString(next++, markOwner);
      }
      if (acks) {
        ps.setObject(next++, DeliveryLedger.digestsOf(ledger.acknowledged())); // binary bytea[]
        ps.setString(next, ledger.owner());
      }
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          int sent = (int) rs.getLong(1) - 1;
          boolean wasInserted = rs.getBoolean(2);
          sentInserted[sent] = wasInserted;
          if (!wasInserted) {
            boolean same = rs.getBoolean(3);
            if (rs.wasNull()) {
              unconfirmed.add(sent); // the conflicting row committed after our snapshot
            } else if (!same) {
              throw new DigestCollisionException("two different items share SHA-256 "
                  + new ItemDigest.Key(digests.get(sent)) + " in " + table);
            }
          }
        }
      }
    }
    if (!unconfirmed.isEmpty()) {
      confirmRaced(c, unconfirmed, digests, distinct);
    }
    return sentInserted;
  }

  /** Byte-equality confirmation of conflicting rows, read in a new snapshot (READ COMMITTED). */
  private void confirmRaced(
      Connection c, List<Integer> unconfirmed, List<byte[]> digests, List<byte[]> items)
      throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement("SELECT item FROM " + table + " WHERE digest = ?")) {
      for (int sent : unconfirmed) {
        ps.setBytes(1, digests.get(sent));
        try (ResultSet rs = ps.executeQuery()) {
          if (!rs.next()) {
            throw new SQLException("conflicting row for a digest vanished (was the table"
                + " truncated concurrently?)", "55000");
          }
          ItemDigest.confirmSameBytes(rs.getBytes(1), items.get(sent));
        }
      }
    }
  }

  @Override
  public long watermark() {
    requireOwnedTable("watermark");
    try (Connection c = pool.getConnection()) {
      return queryLong(c, "SELECT coalesce(max(id), 0) FROM " + table);
    } catch (SQLException e) {
      throw unavailable("watermark", e);
    }
  }

  @Override
  public long estimatedRows() {
    try (Connection c = pool.getConnection();
        PreparedStatement ps = c.prepareStatement(
            "SELECT reltuples::bigint FROM pg_class WHERE oid = to_regclass(?)")) {
      ps.setString(1, table);
      try (ResultSet rs = ps.executeQuery()) {
        if (rs.next() && rs.getLong(1) >= 0) {
          return rs.getLong(1);
        }
      }
      return queryLong(c, "SELECT count(*) FROM " + table);
    } catch (SQLException e) {
      throw unavailable("estimate rows", e);
    }
  }

  @Override
  public ScanResult scan(ItemSink sink) {
    try (Connection c = pool.getConnection()) {
      c.setAutoCommit(false);
      try {
        try (Statement st = c.createStatement()) {
          st.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY");
          st.execute("SET LOCAL statement_timeout = 0"); // a whole table, however long it takes
          st.execute("SET LOCAL enable_seqscan = on"); // read in table order, not through an index
        }
        long watermark = readOnly ? 0 : queryLong(c, "SELECT coalesce(max(id), 0) FROM " + table);
        long rows = stream(c, "SELECT " + column + " FROM " + table + " WHERE " + column
            + " IS NOT NULL", sink);
        c.commit();
        return new ScanResult(rows, watermark);
      } finally {
        c.rollback();
        c.setAutoCommit(true);
      }
    } catch (SQLException e) {
      throw unavailable("scan", e);
    }
  }

  @Override
  public long scanAfter(long watermark, ItemSink sink) {
    requireOwnedTable("scanAfter");
    try (Connection c = pool.getConnection()) {
      c.setAutoCommit(false);
      try {
        try (Statement st = c.createStatement()) {
          st.execute("SET LOCAL statement_timeout = 0");
        }
        long rows = stream(
            c, "SELECT item FROM " + table + " WHERE id > " + watermark + " ORDER BY id", sink);
        c.commit();
        return rows;
      } finally {
        c.rollback();
        c.setAutoCommit(true);
      }
    } catch (SQLException e) {
      throw unavailable("scan after watermark " + watermark, e);
    }
  }

  private static long queryLong(Connection c, String sql) throws SQLException {
    try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    }
  }

  private long stream(Connection c, String sql, ItemSink sink) throws SQLException {
    long rows = 0;
    try (Statement st = c.createStatement()) {
      st.setFetchSize(FETCH_SIZE);
      try (ResultSet rs = st.executeQuery(sql)) {
        while (rs.next()) {
          sink.accept(textColumn ? rs.getString(1).getBytes(StandardCharsets.UTF_8)
              : rs.getBytes(1));
          rows++;
        }
      }
    }
    return rows;
  }

  private void requireOwnedTable(String operation) {
    if (readOnly) {
      throw new ReadOnlyStoreException("PostgreSQL source " + table + "." + column
          + " is read-only and has no watermark (" + operation + ")");
    }
  }

  @Override
  public void close() {
    pool.close();
  }

  /** The JDBC URL (with any credentials in it: never log it), for a replication follower. */
  String jdbcUrl() {
    return pool.getJdbcUrl();
  }

  String tableName() {
    return table;
  }

  String columnName() {
    return column;
  }

  boolean isTextColumn() {
    return textColumn;
  }

  @Override
  public String toString() {
    return identity;
  }

  private StoreUnavailableException unavailable(String operation, SQLException e) {
    String state = e.getSQLState();
    if (state != null && (state.startsWith("08") || state.startsWith("57P"))) {
      // The server went away or restarted: every pooled connection is suspect, not only this one.
      pool.getHikariPoolMXBean().softEvictConnections();
    }
    return new StoreUnavailableException(Credentials.redact("PostgreSQL store " + shown + ": "
        + operation + " failed (SQLSTATE " + e.getSQLState() + "): " + e.getMessage()),
        Credentials.redact(e));
  }
}
