package io.bloomery.guard;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Locale;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.postgresql.PGConnection;
import org.postgresql.PGProperty;
import org.postgresql.replication.LogSequenceNumber;
import org.postgresql.replication.PGReplicationStream;
import org.postgresql.replication.ReplicationSlotInfo;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The engine behind {@link LogicalReplication}: one thread that reads the slot's {@code pgoutput}
 * stream and adds every inserted (or updated-to) item to the guard's filter.
 *
 * <p><b>No gap, no overlap.</b> A new slot is created with an exported snapshot; the filter is
 * built from that snapshot on a second connection ({@code SET TRANSACTION SNAPSHOT}) and the
 * stream starts at the slot's consistent point, so every committed row is either in the snapshot
 * or in the stream, and none in both. After a restart the stream resumes from the slot's confirmed
 * position, which is never beyond the LSN persisted with the filter snapshot.
 *
 * <p><b>Freshness fences.</b> A transactional logical message with this follower's prefix and a
 * session token is emitted on a normal connection; it reaches the stream after every transaction
 * that committed before it, so its round trip bounds the lag, and its return after a (re)connect
 * is the moment negatives may again skip the store.
 *
 * <p><b>Failures.</b> A broken stream (server stopped, network) is retried with back-off; while it
 * is down, negatives are confirmed in the store. A lost slot (dropped, or invalidated because its
 * WAL was removed) is recreated and its snapshot is scanned into the current filter (adds are
 * idempotent), which again leaves no gap. When logical replication cannot be used at all
 * ({@code wal_level}, privilege, publication), {@link #prepare()} says so in one line and the guard
 * falls back to its documented behaviour with scheduled rebuilds.
 */
final class ReplicationFollower {
  private static final Logger LOG = LoggerFactory.getLogger(ReplicationFollower.class);
  private static final int FETCH_SIZE = 10_000;
  /** How often the ticker looks whether a fence or a checkpoint is due. */
  private static final long TICK_MILLIS = 50;
  /** Status updates forced to the server at most this often (the driver adds its own every second). */
  private static final long FORCED_STATUS_EVERY_NANOS = 100_000_000L;
  private static final long MAX_BACKOFF_MILLIS = 5_000;

  /** What the follower needs from its guard. */
  interface Host {
    /** Adds a committed item to the filter (and to a rebuild's target). */
    void add(byte[] item);

    /** Writes a checkpoint; it calls {@link #confirm(long)} with the LSN it persisted. */
    void checkpoint();

    /** Rebuilds the filter from the store (the fallback's schedule). */
    void rebuild();

    /** Number of items in the current filter (for the rebuild advice). */
    long filterItems();
  }

  /** Logical replication cannot be used for this table; the message says why, in one line. */
  static final class UnavailableException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    UnavailableException(String message) {
      super(message);
    }
  }

  /** The slot is gone or invalidated: its WAL cannot be read any more. */
  private static final class SlotLostException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    SlotLostException(String message, Throwable cause) {
      super(message, cause);
    }
  }

  private enum State {
    STARTING, CATCHING_UP, STREAMING, RECONNECTING, RESYNCING, UNAVAILABLE, CLOSED;

    String label() {
      return name().toLowerCase(Locale.ROOT).replace('_', '-');
    }
  }

  private final LogicalReplication options;
  private final String jdbcUrl;
  private final String table;
  private final String column;
  private final boolean textColumn;
  private final String identity;
  private final boolean persistent;
  private final String sessionToken = UUID.randomUUID().toString();
  private final String fencePrefix;
  private Host host;

  private volatile State state = State.STARTING;
  private volatile String detail = "";
  private volatile int tableOid;
  private volatile boolean deletesPublished;
  /** PostgreSQL 14 or later: pgoutput sends columns in binary ({@code bytea} raw instead of hex text). */
  private volatile boolean binaryColumns;

  // Stream position and figures (written by the follower thread, read by any).
  private volatile long appliedLsn;
  private volatile long confirmedLsn;
  private volatile long toConfirm;
  private volatile long fenceSentNanos = -1;
  private volatile long fenceReturnedEmitNanos = -1;
  private volatile long lastCommitLagMillis = -1;
  private volatile long maxCommitLagMillis = -1;
  private volatile long transactions;
  private volatile long rowsApplied;
  private volatile long updates;
  private volatile long deletes;
  private volatile long truncates;
  private volatile long reconnects;
  private volatile long resyncs;
  private final Object fenceMonitor = new Object();
  private final Object fenceEmitLock = new Object();
  private Connection fenceConnection;

  // Owned by the follower thread (the connection and stream volatile: stop() may abort a blocked read).
  private volatile Connection replicationConnection;
  private volatile PGReplicationStream stream;
  private int columnIndex = -1;
  private boolean transactionHadRows;
  private long lastForcedStatusNanos;
  private ReplicationSlotInfo pendingSlot;
  private volatile boolean createdSlot;
  private volatile Thread thread;
  private volatile boolean stopping;

  // Owned by the ticker thread (fences, periodic checkpoints), read by stop().
  private volatile long lastFenceEmitMillis;
  private long lastCheckpointMillis = System.currentTimeMillis();
  private Thread ticker;
  /** A position to confirm is waiting: the ticker emits a fence so that an idle follower wakes and sends it. */
  private volatile boolean wakeRequested;

  ReplicationFollower(LogicalReplication options, PostgresStore store, boolean persistent) {
    this.options = options;
    this.jdbcUrl = store.jdbcUrl();
    this.table = store.tableName();
    this.column = store.columnName();
    this.textColumn = store.isTextColumn();
    this.identity = store.identity();
    this.persistent = persistent;
    this.fencePrefix = "bloomery-fence:" + options.slotName();
  }

  String slotName() {
    return options.slotName();
  }

  // ---------------------------------------------------------------- preparation

  /**
   * Checks that logical replication can follow the table and creates the publication if absent.
   *
   * @throws UnavailableException with a one-line reason if it cannot
   */
  void prepare(Host guardHost) {
    this.host = guardHost;
    try (Connection c = connect()) {
      String walLevel = queryString(c, "SHOW wal_level");
      binaryColumns = Integer.parseInt(queryString(c, "SHOW server_version_num")) >= 140_000;
      if (!"logical".equals(walLevel)) {
        throw new UnavailableException("wal_level is " + walLevel + ", logical replication needs"
            + " wal_level = logical (set it in postgresql.conf and restart the server)");
      }
      try (PreparedStatement ps = c.prepareStatement(
          "SELECT rolsuper OR rolreplication FROM pg_roles WHERE rolname = current_user")) {
        try (ResultSet rs = ps.executeQuery()) {
          if (!rs.next() || !rs.getBoolean(1)) {
            throw new UnavailableException("role " + queryString(c, "SELECT current_user")
                + " lacks the REPLICATION attribute (ALTER ROLE … REPLICATION)");
          }
        }
      }
      tableOid = (int) queryLongParam(c, "SELECT coalesce(to_regclass(?)::oid::bigint, 0)", table);
      if (tableOid == 0) {
        throw new UnavailableException("table " + table + " does not exist");
      }
      ensurePublication(c);
    } catch (SQLException e) {
      throw new UnavailableException("cannot prepare logical replication: " + oneLine(e));
    }
  }

  private void ensurePublication(Connection c) throws SQLException {
    String publication = options.publicationName();
    if (queryLongParam(c, "SELECT count(*) FROM pg_publication WHERE pubname = ?",
        publication) == 0) {
      // A publication that publishes deletes makes PostgreSQL refuse deletes on a table without a
      // replica identity; never break someone else's writers: publish only inserts then.
      boolean hasIdentity = queryLongParam(c, "SELECT count(*) FROM pg_class c WHERE c.oid = ?::oid"
          + " AND (c.relreplident = 'f' OR (c.relreplident = 'i' AND EXISTS (SELECT 1 FROM"
          + " pg_index i WHERE i.indrelid = c.oid AND i.indisreplident)) OR (c.relreplident = 'd'"
          + " AND EXISTS (SELECT 1 FROM pg_index i WHERE i.indrelid = c.oid AND i.indisprimary)))",
          Integer.toString(tableOid)) == 1;
      String sql = "CREATE PUBLICATION " + publication + " FOR TABLE " + table
          + (hasIdentity ? "" : " WITH (publish = 'insert, truncate')");
      try (Statement st = c.createStatement()) {
        st.execute(sql);
        LOG.info("guard {}: created publication {} for {}{}", identity, publication, table,
            hasIdentity ? "" : " (inserts and truncates only: the table has no replica identity,"
                + " so updates and deletes cannot be seen)");
      } catch (SQLException e) {
        if (!"42710".equals(e.getSQLState())) { // 42710: created concurrently by another guard
          throw new UnavailableException("cannot create publication " + publication + " for "
              + table + " (" + oneLine(e) + "); as the table's owner run: " + sql);
        }
      }
    }
    try (PreparedStatement ps = c.prepareStatement("SELECT p.pubinsert, p.pubupdate AND"
        + " p.pubdelete, EXISTS (SELECT 1 FROM pg_publication_tables t JOIN pg_class k ON"
        + " k.relname = t.tablename JOIN pg_namespace n ON n.oid = k.relnamespace AND n.nspname ="
        + " t.schemaname WHERE t.pubname = p.pubname AND k.oid = ?::oid) FROM pg_publication p"
        + " WHERE p.pubname = ?")) {
      ps.setString(1, Integer.toString(tableOid));
      ps.setString(2, publication);
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next() || !rs.getBoolean(1) || !rs.getBoolean(3)) {
          throw new UnavailableException("publication " + publication + " does not publish"
              + " inserts into " + table);
        }
        deletesPublished = rs.getBoolean(2);
      }
    }
  }

  /**
   * Why the persisted filter cannot be resumed with the slot, or null if it can: the slot must
   * exist, be a pgoutput slot of this database, and be confirmed no further than the LSN persisted
   * with the filter (else rows between the two would be missing).
   */
  String resumeRefusal(long snapshotLsn) {
    if (snapshotLsn == 0) {
      return "the snapshot holds no replication position";
    }
    try (Connection c = connect();
        PreparedStatement ps = c.prepareStatement("SELECT plugin, confirmed_flush_lsn::text,"
            + " coalesce(wal_status, '') FROM pg_replication_slots WHERE slot_name = ? AND"
            + " database = current_database()")) {
      ps.setString(1, slotName());
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          return "replication slot " + slotName() + " does not exist";
        }
        if (!"pgoutput".equals(rs.getString(1))) {
          return "replication slot " + slotName() + " uses plugin " + rs.getString(1);
        }
        if ("lost".equals(rs.getString(3))) {
          return "replication slot " + slotName() + " was invalidated (its WAL was removed)";
        }
        long confirmed = rs.getString(2) == null ? 0
            : LogSequenceNumber.valueOf(rs.getString(2)).asLong();
        if (confirmed > snapshotLsn) {
          return "replication slot " + slotName() + " is confirmed to "
              + LogSequenceNumber.valueOf(confirmed) + ", beyond the snapshot's "
              + LogSequenceNumber.valueOf(snapshotLsn) + " (an older snapshot file?)";
        }
        appliedLsn = snapshotLsn;
        confirmedLsn = confirmed;
        return null;
      }
    } catch (SQLException e) {
      return "cannot read replication slot " + slotName() + " (" + oneLine(e) + ")";
    }
  }

  /**
   * Drops any slot of this name, creates a new one with an exported snapshot and streams the
   * snapshot's rows into {@code sink}. The stream then starts at the slot's consistent point. If
   * anything fails once the slot exists, the slot is dropped before the failure propagates: a
   * failed call leaves no slot retaining WAL.
   *
   * @return rows read from the snapshot
   */
  long createSlotAndScan(ExactStore.ItemSink sink) throws SQLException {
    closeStream();
    dropSlotIfExists();
    replicationConnection = connectReplication();
    ReplicationSlotInfo slot = replicationConnection.unwrap(PGConnection.class).getReplicationAPI()
        .createReplicationSlot().logical().withSlotName(slotName()).withOutputPlugin("pgoutput")
        .make();
    long rows;
    try {
      rows = scanSnapshot(slot, sink);
    } catch (SQLException | RuntimeException | Error e) {
      discardCreatedSlot(e);
      throw e;
    }
    appliedLsn = slot.getConsistentPoint().asLong();
    toConfirm = persistent ? 0 : appliedLsn;
    pendingSlot = slot;
    createdSlot = true;
    return rows;
  }

  /** Streams the rows of the snapshot the new slot exported into {@code sink}; how many. */
  private long scanSnapshot(ReplicationSlotInfo slot, ExactStore.ItemSink sink) throws SQLException {
    String snapshotName = slot.getSnapshotName();
    if (snapshotName == null || !snapshotName.matches("[0-9A-Fa-f-]{1,64}")) {
      throw new SQLException("CREATE_REPLICATION_SLOT returned no usable snapshot name: "
          + snapshotName, "55000");
    }
    long rows = 0;
    try (Connection c = connect()) {
      c.setAutoCommit(false);
      try (Statement st = c.createStatement()) {
        st.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY");
        st.execute("SET TRANSACTION SNAPSHOT '" + snapshotName + "'");
        st.setFetchSize(FETCH_SIZE);
        try (ResultSet rs = st.executeQuery("SELECT " + column + " FROM " + table + " WHERE "
            + column + " IS NOT NULL")) {
          while (rs.next()) {
            sink.accept(textColumn ? rs.getString(1).getBytes(StandardCharsets.UTF_8)
                : rs.getBytes(1));
            rows++;
          }
        }
        c.commit();
      }
    }
    return rows;
  }

  /**
   * Whether {@link #createSlotAndScan} created this follower's slot (it then exists unless dropped since): what a
   * failed open must drop so that it leaves nothing retaining WAL.
   */
  boolean createdSlot() {
    return createdSlot;
  }

  /**
   * Drops the slot this follower created after {@code cause} ended its use (closing the replication connection
   * first, which holds it); a failure to drop is added to {@code cause} as suppressed and logged, since the slot
   * then retains WAL until someone drops it.
   */
  void discardCreatedSlot(Throwable cause) {
    closeStream();
    try {
      dropSlotIfExists();
      createdSlot = false;
      LOG.info("guard {}: dropped replication slot {}, created by an attempt that failed: {}", identity,
          slotName(), oneLine(cause));
    } catch (SQLException | RuntimeException e) {
      cause.addSuppressed(e);
      LOG.error("guard {}: cannot drop replication slot {} after a failure ({}); it retains WAL until"
          + " dropped: {}", identity, slotName(), oneLine(cause), oneLine(e));
    }
  }

  /** The LSN the new slot's stream starts at, as PostgreSQL writes it ({@code 0/19275E8}). */
  String consistentPoint() {
    return LogSequenceNumber.valueOf(appliedLsn).asString();
  }

  // ---------------------------------------------------------------- lifecycle

  /**
   * Starts the follower thread, which streams from the slot (or resumes it), and its ticker, which emits the periodic
   * fences and checkpoints.
   */
  void start() {
    state = State.CATCHING_UP;
    Thread follower = new Thread(this::run, "bloomery-replication-" + slotName());
    follower.setDaemon(true);
    thread = follower;
    ticker = new Thread(this::tick, "bloomery-replication-tick-" + slotName());
    ticker.setDaemon(true);
    follower.start();
    ticker.start();
  }

  /** Starts the fallback: no stream, a scheduled rebuild; {@code reason} is logged once. */
  void startFallback(String reason) {
    state = State.UNAVAILABLE;
    detail = reason;
    long everyMillis = options.fallbackRebuildEvery().toMillis();
    LOG.warn("guard {}: logical replication unavailable: {}; falling back to through-the-guard"
            + " writes plus {}", identity, reason, everyMillis == 0
            ? "rebuilds scheduled by the caller" : "a rebuild every " + options.fallbackRebuildEvery());
    if (everyMillis == 0) {
      return;
    }
    thread = new Thread(() -> {
      while (!stopping) {
        if (!sleep(everyMillis)) {
          return;
        }
        try {
          host.rebuild();
        } catch (RuntimeException e) {
          LOG.warn("guard {}: scheduled rebuild failed: {}", identity, e.toString());
        }
      }
    }, "bloomery-rebuild-" + slotName());
    thread.setDaemon(true);
    thread.start();
  }

  /** Asks the thread to confirm {@code lsn} to the server (after a checkpoint persisted it). */
  void confirm(long lsn) {
    if (lsn > toConfirm) {
      toConfirm = lsn;
      wakeRequested = true; // the ticker's next fence wakes a follower blocked in its read
    }
  }

  long appliedLsn() {
    return appliedLsn;
  }

  /**
   * Whether a filter negative must be confirmed in the store: the stream is not known fresh, or
   * (with periodic fences) the newest fence back is older than max(5 s, 5 fence intervals), i.e.
   * the stream is stuck or far behind before the follower has noticed an error.
   */
  boolean negativesNeedConfirmation() {
    State s = state;
    if (s == State.STARTING || s == State.CATCHING_UP || s == State.RECONNECTING
        || s == State.RESYNCING) {
      return true;
    }
    long fenceEvery = options.fenceEvery().toNanos();
    return s == State.STREAMING && fenceEvery > 0
        && System.nanoTime() - fenceReturnedEmitNanos > Math.max(5_000_000_000L, 5 * fenceEvery);
  }

  /**
   * Stops the threads, confirming the last requested position first; the slot stays. A follower blocked in the
   * stream's read is woken by a fence; if none can be emitted (the server is gone) its connection is aborted.
   */
  void stop() {
    stopping = true;
    Thread tk = ticker;
    if (tk != null) {
      tk.interrupt();
      join(tk, 10_000);
    }
    Thread t = thread;
    if (t != null) {
      t.interrupt(); // ends a back-off sleep or the fallback's schedule
      if (!join(t, 200) && stream != null) {
        emitFenceQuietly(); // wakes the blocking read, which then sends the final confirmation
        if (!join(t, 2_000)) {
          abortReplicationConnection();
        }
      }
      join(t, 10_000);
    }
    if (t != null && t.isAlive()) {
      // Still reading a large snapshot: it closes its own connections when it sees stopping.
      LOG.warn("guard {}: replication thread still busy after 10 s; it stops on its own", identity);
    } else {
      closeStream();
    }
    synchronized (fenceEmitLock) {
      closeQuietly(fenceConnection);
      fenceConnection = null;
    }
    state = State.CLOSED;
  }

  /** Waits up to {@code millis} for {@code t} to end; whether it has. */
  private static boolean join(Thread t, long millis) {
    try {
      t.join(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    return !t.isAlive();
  }

  /** Closes the replication connection's socket under a read that does not return (another thread may call it). */
  private void abortReplicationConnection() {
    Connection c = replicationConnection;
    if (c != null) {
      try {
        c.abort(Runnable::run);
      } catch (SQLException | RuntimeException e) {
        LOG.debug("guard {}: aborting the replication connection: {}", identity, e.toString());
      }
    }
  }

  /** Drops the slot (and the publication, if the guard named it after the slot). */
  void dropSlot() {
    try {
      dropSlotIfExists();
      if (options.ownsPublication()) {
        try (Connection c = connect(); Statement st = c.createStatement()) {
          st.execute("DROP PUBLICATION IF EXISTS " + options.publicationName());
        }
      }
      LOG.info("guard {}: dropped replication slot {}", identity, slotName());
    } catch (SQLException e) {
      throw new StoreUnavailableException("guard " + identity + ": cannot drop replication slot "
          + slotName() + ": " + oneLine(e), e);
    }
  }

  private void dropSlotIfExists() throws SQLException {
    long deadline = System.currentTimeMillis() + 15_000;
    try (Connection c = connect();
        PreparedStatement ps = c.prepareStatement("SELECT pg_drop_replication_slot(slot_name)"
            + " FROM pg_replication_slots WHERE slot_name = ? AND database = current_database()")) {
      ps.setString(1, slotName());
      while (true) {
        try {
          ps.executeQuery().close();
          return;
        } catch (SQLException e) {
          // 55006: still active; our own walsender takes a moment to exit after a disconnect.
          if (!"55006".equals(e.getSQLState()) || System.currentTimeMillis() > deadline) {
            throw e;
          }
          sleep(100);
        }
      }
    }
  }

  // ---------------------------------------------------------------- figures and fences

  ReplicationStatus status() {
    long returned = fenceReturnedEmitNanos;
    long lag = returned < 0 ? -1 : TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - returned);
    long removed = updates + deletes;
    boolean advised = truncates > 0 || removed > 0.1 * Math.max(1, host == null ? 1
        : host.filterItems());
    String why = detail;
    if (state == State.STREAMING && !deletesPublished) {
      why = "updates and deletes are not published for " + table + " (no replica identity);"
          + " schedule rebuilds if rows are removed";
    }
    return new ReplicationStatus(state.label(), slotName(), why,
        LogSequenceNumber.valueOf(appliedLsn).asString(),
        LogSequenceNumber.valueOf(confirmedLsn).asString(), lag, lastCommitLagMillis,
        maxCommitLagMillis, transactions, rowsApplied, updates, deletes, truncates, reconnects,
        resyncs, advised);
  }

  /**
   * Waits until every row committed before this call is in the filter (a fence emitted now has
   * come back through the stream).
   *
   * @return false if the stream is unavailable or the timeout passed first
   */
  boolean awaitFresh(long timeoutMillis) throws InterruptedException {
    if (state == State.UNAVAILABLE || state == State.CLOSED) {
      return false;
    }
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
    long emitted = -1;
    while (true) {
      if (emitted < 0) {
        try {
          emitted = emitFence();
        } catch (SQLException e) {
          emitted = -1; // the server is down: retry until the deadline
        }
      }
      synchronized (fenceMonitor) {
        if (emitted >= 0 && fenceReturnedEmitNanos >= emitted && state == State.STREAMING) {
          return true;
        }
        long left = deadline - System.nanoTime();
        if (left <= 0 || state == State.UNAVAILABLE || state == State.CLOSED) {
          return false;
        }
        fenceMonitor.wait(Math.max(1, Math.min(TimeUnit.NANOSECONDS.toMillis(left), 100)));
      }
    }
  }

  /** Emits a fence; returns its emission time (nanoTime). */
  private long emitFence() throws SQLException {
    synchronized (fenceEmitLock) {
      long nanos = System.nanoTime();
      try {
        if (fenceConnection == null || !fenceConnection.isValid(2)) {
          closeQuietly(fenceConnection);
          fenceConnection = connect();
        }
        try (PreparedStatement ps = fenceConnection.prepareStatement(
            "SELECT pg_logical_emit_message(true, ?, ?)")) {
          ps.setString(1, fencePrefix);
          ps.setString(2, sessionToken + ":" + nanos);
          ps.executeQuery().close();
        }
      } catch (SQLException e) {
        closeQuietly(fenceConnection);
        fenceConnection = null;
        throw e;
      }
      fenceSentNanos = nanos;
      return nanos;
    }
  }

  // ---------------------------------------------------------------- the stream

  private void run() {
    long backoff = 100;
    boolean resync = false;
    while (!stopping) {
      try {
        if (resync) {
          resync();
          resync = false;
        }
        openStream();
        backoff = 100;
        pump();
      } catch (SlotLostException e) {
        if (stopping) {
          break;
        }
        resync = true;
        resyncs++;
        state = State.RESYNCING;
        detail = e.getMessage();
        LOG.warn("guard {}: {}; recreating it and reading its snapshot into the filter (negatives"
            + " are confirmed in the store until the stream is back)", identity, e.getMessage());
      } catch (UnavailableException e) {
        closeStream();
        startFallback(e.getMessage());
        return;
      } catch (SQLException | RuntimeException e) {
        if (stopping) {
          break;
        }
        if (state != State.RECONNECTING) {
          LOG.warn("guard {}: replication stream from slot {} broke ({}); reconnecting, negatives"
              + " are confirmed in the store meanwhile", identity, slotName(), oneLine(e));
        }
        state = resync ? State.RESYNCING : State.RECONNECTING;
        detail = oneLine(e);
        closeStream();
        if (!sleep(backoff)) {
          break;
        }
        backoff = Math.min(MAX_BACKOFF_MILLIS, backoff * 2);
        reconnects++;
      }
    }
    sendConfirmation(); // the position the closing checkpoint persisted
    closeStream();
  }

  private void resync() throws SQLException {
    long started = System.nanoTime();
    long rows;
    try {
      rows = createSlotAndScan(host::add);
    } catch (SQLException e) {
      if ("42501".equals(e.getSQLState())) {
        throw new UnavailableException("cannot recreate replication slot " + slotName() + ": "
            + oneLine(e));
      }
      throw e;
    }
    LOG.info("guard {}: recreated replication slot {} at {}; {} rows of its snapshot added in {}"
        + " ms", identity, slotName(), consistentPoint(), rows,
        TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started));
    if (persistent) {
      host.checkpoint(); // the persisted position must move to the new slot's
    }
  }

  private void openStream() throws SQLException {
    if (replicationConnection == null) {
      replicationConnection = connectReplication();
    }
    LogSequenceNumber start = pendingSlot != null ? pendingSlot.getConsistentPoint()
        : LogSequenceNumber.INVALID_LSN; // 0/0: the slot's confirmed position
    pendingSlot = null;
    try {
      var builder = replicationConnection.unwrap(PGConnection.class).getReplicationAPI()
          .replicationStream().logical().withSlotName(slotName()).withStartPosition(start)
          .withSlotOption("proto_version", "1")
          .withSlotOption("publication_names", options.publicationName())
          .withSlotOption("messages", "true");
      if (binaryColumns) {
        // Each column in its type's binary form where it has one (PostgreSQL sends the rest as text): a bytea item
        // as its bytes instead of twice as many hex digits, which the server no longer encodes nor we decode.
        builder = builder.withSlotOption("binary", "true");
      }
      stream = builder.withStatusInterval(1, TimeUnit.SECONDS)
          .withAutomaticFlush(false)
          .start();
    } catch (SQLException e) {
      String sqlState = e.getSQLState();
      if ("42704".equals(sqlState)) {
        throw new SlotLostException("replication slot " + slotName() + " does not exist", e);
      }
      if ("55000".equals(sqlState) && e.getMessage() != null
          && e.getMessage().contains("can no longer get changes")) {
        throw new SlotLostException("replication slot " + slotName()
            + " was invalidated (its WAL was removed)", e);
      }
      throw e;
    }
    columnIndex = -1;
    state = State.CATCHING_UP;
    detail = "";
    emitFenceQuietly();
    if (!persistent) {
      toConfirm = Math.max(toConfirm, appliedLsn);
    }
  }

  /*
   * Reading: the follower thread blocks in the stream's read until the server sends something, so it wakes once per
   * message and never while idle (polling readPending() instead would cost the driver, per empty poll, a timed
   * socket read that ends in a SocketTimeoutException with its stack trace). The stream is not thread-safe, so only this thread reads it and
   * forces status updates; the positions to confirm are handed over in volatile fields. Fences (on their own
   * connection) and periodic checkpoints are the ticker's; a fence's return is also what wakes an idle follower, e.g.
   * to send a checkpoint's confirmation or to stop. The server's keepalives, and the driver's status every second
   * while messages arrive, carry the latest confirmed position too.
   */

  /** Applies the stream's messages as they come, blocking in between. */
  private void pump() throws SQLException {
    while (!stopping) {
      ByteBuffer buffer = stream.read();
      if (buffer == null) {
        throw new SQLException("the replication stream ended", "08006");
      }
      PgOutput.Message message = PgOutput.decode(buffer);
      apply(message);
      confirmRequested(message instanceof PgOutput.LogicalMessage);
    }
  }

  /**
   * The ticker: a fence every {@link LogicalReplication#fenceEvery()} and, with a snapshot file, a checkpoint every
   * {@link LogicalReplication#checkpointEvery()} while the stream is fresh; after any checkpoint ({@link #confirm}) a
   * fence that wakes the follower to send its position.
   */
  private void tick() {
    while (!stopping) {
      try {
        Thread.sleep(TICK_MILLIS);
      } catch (InterruptedException e) {
        return;
      }
      State s = state;
      if (stopping || s == State.UNAVAILABLE || s == State.CLOSED) {
        continue;
      }
      long now = System.currentTimeMillis();
      long checkpointEvery = options.checkpointEvery().toMillis();
      // Only while fresh: a checkpoint against a server that is going away would wait for the pool's
      // connection timeout.
      if (persistent && checkpointEvery > 0 && now - lastCheckpointMillis >= checkpointEvery
          && s == State.STREAMING) {
        lastCheckpointMillis = now;
        try {
          host.checkpoint(); // confirm() asks for a wake-up
        } catch (RuntimeException e) {
          LOG.warn("guard {}: periodic checkpoint failed: {}", identity, e.toString());
        }
      }
      long fenceEvery = options.fenceEvery().toMillis();
      boolean wake = wakeRequested;
      if (wake || (fenceEvery > 0 && now - lastFenceEmitMillis >= fenceEvery)) {
        wakeRequested = false;
        emitFenceQuietly();
      }
    }
  }

  /**
   * Hands the position to confirm to the stream (the driver's next status update carries it) and forces a status
   * update, at most every {@link #FORCED_STATUS_EVERY_NANOS} unless {@code now} (a fence came back: the ticker or
   * stop() may be waiting for it).
   */
  private void confirmRequested(boolean now) throws SQLException {
    long confirm = toConfirm;
    PGReplicationStream s = stream;
    if (s == null || confirm <= confirmedLsn) {
      return;
    }
    LogSequenceNumber lsn = LogSequenceNumber.valueOf(confirm);
    s.setFlushedLSN(lsn);
    s.setAppliedLSN(lsn);
    long nanos = System.nanoTime();
    if (now || nanos - lastForcedStatusNanos >= FORCED_STATUS_EVERY_NANOS) {
      s.forceUpdateStatus();
      lastForcedStatusNanos = nanos;
      confirmedLsn = confirm;
    }
  }

  private void sendConfirmation() {
    try {
      confirmRequested(true);
    } catch (SQLException | RuntimeException e) {
      LOG.debug("guard {}: final confirmation not sent: {}", identity, e.toString());
    }
  }

  private void emitFenceQuietly() {
    lastFenceEmitMillis = System.currentTimeMillis();
    try {
      emitFence();
    } catch (SQLException e) {
      LOG.debug("guard {}: freshness fence not emitted: {}", identity, oneLine(e));
    }
  }

  private void apply(PgOutput.Message message) {
    switch (message) {
      case PgOutput.Relation r -> {
        if (r.oid() == tableOid) {
          columnIndex = r.columns().indexOf(column.toLowerCase(Locale.ROOT));
          if (columnIndex < 0) {
            throw new UnavailableException("table " + table + " no longer has column " + column);
          }
        }
      }
      case PgOutput.Begin b -> transactionHadRows = false;
      case PgOutput.Insert i -> addRow(i.relation(), i.tuple());
      case PgOutput.Update u -> {
        if (u.relation() == tableOid) {
          updates++;
          addRow(u.relation(), u.tuple());
        }
      }
      case PgOutput.Delete d -> {
        if (d.relation() == tableOid) {
          deletes++;
          transactionHadRows = true;
        }
      }
      case PgOutput.Truncate t -> {
        for (int oid : t.relations()) {
          if (oid == tableOid) {
            truncates++;
            transactionHadRows = true;
            LOG.warn("guard {}: {} was truncated; its old items stay \"maybe\" (a Bloom filter"
                + " cannot forget) until a rebuild", identity, table);
          }
        }
      }
      case PgOutput.Commit c -> {
        appliedLsn = Math.max(appliedLsn, c.endLsn()); // a resumed stream may replay older ones
        transactions++;
        if (transactionHadRows) {
          long lag = System.currentTimeMillis()
              - (c.commitTimeMicros() + PgOutput.PG_EPOCH_MICROS) / 1000;
          lastCommitLagMillis = Math.max(0, lag);
          maxCommitLagMillis = Math.max(maxCommitLagMillis, lastCommitLagMillis);
        }
        if (!persistent) {
          toConfirm = c.endLsn();
        }
      }
      case PgOutput.LogicalMessage m -> fenceReturned(m);
      case PgOutput.Ignored ignored -> { }
    }
  }

  private void addRow(int relation, java.util.List<PgOutput.Value> tuple) {
    if (relation != tableOid) {
      return;
    }
    if (columnIndex < 0 || columnIndex >= tuple.size()) {
      throw new PgOutput.MalformedMessageException("pgoutput: a row of " + table
          + " arrived before its relation message or without column " + column);
    }
    PgOutput.Value value = tuple.get(columnIndex);
    transactionHadRows = true;
    if (!value.hasData()) {
      return; // NULL (never an item) or an unchanged TOASTed value (already in the filter)
    }
    byte[] item = textColumn || value.kind() == 'b' ? value.data()
        : PgOutput.byteaFromText(value.data());
    host.add(item);
    rowsApplied++;
  }

  private void fenceReturned(PgOutput.LogicalMessage m) {
    if (!m.prefix().equals(fencePrefix)) {
      return;
    }
    String content = new String(m.content(), StandardCharsets.UTF_8);
    int colon = content.lastIndexOf(':');
    if (colon < 0 || !content.substring(0, colon).equals(sessionToken)) {
      return; // a fence of an earlier process: it proves nothing about this session's fences
    }
    long emitted;
    try {
      emitted = Long.parseLong(content.substring(colon + 1));
    } catch (NumberFormatException e) {
      return;
    }
    synchronized (fenceMonitor) {
      if (emitted > fenceReturnedEmitNanos) {
        fenceReturnedEmitNanos = emitted;
      }
      if (state == State.CATCHING_UP) {
        state = State.STREAMING;
        LOG.info("guard {}: streaming from replication slot {} (caught up at {})", identity,
            slotName(), LogSequenceNumber.valueOf(m.lsn()).asString());
      }
      fenceMonitor.notifyAll();
    }
  }

  // ---------------------------------------------------------------- connections

  private Connection connect() throws SQLException {
    return connect(jdbcUrl);
  }

  /** A plain (not replication) connection to the database of {@code jdbcUrl}, with the guard's timeouts. */
  static Connection connect(String jdbcUrl) throws SQLException {
    Properties props = new Properties();
    PGProperty.CONNECT_TIMEOUT.set(props, 5);
    PGProperty.SOCKET_TIMEOUT.set(props, 60);
    PGProperty.APPLICATION_NAME.set(props, "bloomery-guard");
    return DriverManager.getConnection(jdbcUrl, props);
  }

  private Connection connectReplication() throws SQLException {
    Properties props = new Properties();
    PGProperty.REPLICATION.set(props, "database");
    PGProperty.ASSUME_MIN_SERVER_VERSION.set(props, "10");
    PGProperty.PREFER_QUERY_MODE.set(props, "simple");
    PGProperty.CONNECT_TIMEOUT.set(props, 5);
    PGProperty.APPLICATION_NAME.set(props, "bloomery-guard-" + slotName());
    try {
      return DriverManager.getConnection(jdbcUrl, props);
    } catch (SQLException e) {
      String sqlState = e.getSQLState();
      if ("42501".equals(sqlState) || "28000".equals(sqlState)) {
        throw new UnavailableException("cannot open a replication connection: " + oneLine(e));
      }
      throw e;
    }
  }

  private void closeStream() {
    if (stream != null) {
      try {
        stream.close();
      } catch (SQLException | RuntimeException e) {
        LOG.debug("guard {}: closing the replication stream: {}", identity, e.toString());
      }
      stream = null;
    }
    closeQuietly(replicationConnection);
    replicationConnection = null;
  }

  private static void closeQuietly(Connection c) {
    if (c != null) {
      try {
        c.close();
      } catch (SQLException e) {
        // already broken
      }
    }
  }

  private boolean sleep(long millis) {
    try {
      Thread.sleep(millis);
      return !stopping;
    } catch (InterruptedException e) {
      return false;
    }
  }

  private static String queryString(Connection c, String sql) throws SQLException {
    try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(sql)) {
      rs.next();
      return rs.getString(1);
    }
  }

  private static long queryLongParam(Connection c, String sql, String parameter)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setString(1, parameter);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }

  /** The first line of an exception's message (PostgreSQL adds a detail and a position). */
  static String oneLine(Throwable e) {
    String message = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
    int newline = message.indexOf('\n');
    String line = newline < 0 ? message : message.substring(0, newline);
    return e instanceof SQLException sql && sql.getSQLState() != null
        ? line + " [SQLSTATE " + sql.getSQLState() + "]" : line;
  }
}
