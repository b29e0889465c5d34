package io.bloomery.guard;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * Exact catch-up with rows that other connections (other processes, other programs) commit to a
 * SQLite store's table, for {@link SqliteStore#openFollowingOtherWriters}.
 *
 * <p>Two facts make it exact. {@code PRAGMA data_version} on a connection changes whenever any
 * <em>other</em> connection commits to the database file, and costs no I/O when nothing changed.
 * And SQLite has one writer at a time and the table is {@code AUTOINCREMENT}, so a row committed
 * later has a larger id: the rows committed since the last look are exactly those above the
 * largest id already covered. Each look reads {@code data_version} first and the rows second, so
 * a commit landing in between is read now and looked at again next time (adds are idempotent),
 * never missed.
 *
 * <p>The guarantee does not hold for a foreign writer that inserts explicit ids below the
 * covered maximum, or that deletes and reinserts rows under old ids; such rows are seen at the
 * next rebuild (documented in docs/GUARD.md).
 */
final class SqliteCatchUp implements AutoCloseable {
  private final Connection watch;
  private final String table;
  private long lastDataVersion = Long.MIN_VALUE;
  private long coveredId;

  SqliteCatchUp(Connection watch, String table) {
    this.watch = watch;
    this.table = table;
  }

  /** The current data_version of the watching connection (read before a scan begins). */
  synchronized long dataVersion() throws SQLException {
    try (Statement st = watch.createStatement();
        ResultSet rs = st.executeQuery("PRAGMA data_version")) {
      rs.next();
      return rs.getLong(1);
    }
  }

  /**
   * Records that a scan whose snapshot began after {@code dataVersionBefore} was read has covered
   * every row up to {@code id}.
   */
  synchronized void covered(long id, long dataVersionBefore) {
    if (id >= coveredId) {
      coveredId = id;
      lastDataVersion = dataVersionBefore;
    }
  }

  /**
   * Streams the rows committed by other connections since the last look.
   *
   * @return rows streamed (0 when nothing changed)
   */
  synchronized long catchUp(ExactStore.ItemSink sink) throws SQLException {
    long version = dataVersion();
    if (version == lastDataVersion) {
      return 0;
    }
    long rows = 0;
    long maxId = coveredId;
    try (PreparedStatement ps = watch.prepareStatement(
        "SELECT id, item FROM " + table + " WHERE id > ? ORDER BY id")) {
      ps.setLong(1, coveredId);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          maxId = rs.getLong(1);
          sink.accept(rs.getBytes(2));
          rows++;
        }
      }
    }
    coveredId = maxId;
    lastDataVersion = version;
    return rows;
  }

  @Override
  public synchronized void close() throws SQLException {
    watch.close();
  }
}
