package io.bloomery.guard;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The logical replication slots of one PostgreSQL database, for an operator who must find and drop the slots that
 * guards left behind (a slot retains WAL until it is dropped, see {@link LogicalReplication}). Each call opens one
 * short connection with the URL's credentials; listing needs no privilege, dropping needs the {@code REPLICATION}
 * attribute (or superuser), as creating the slot did.
 */
public final class ReplicationSlots {
  private static final Logger LOG = LoggerFactory.getLogger(ReplicationSlots.class);

  private ReplicationSlots() {}

  /**
   * One replication slot of the database.
   *
   * @param name the slot's name
   * @param active whether a connection streams from it now
   * @param activePid the server process that holds it, or 0 when inactive
   * @param retainedWalBytes the WAL the server keeps for it (current WAL position minus its restart position), or
   *     -1 when it has no restart position (invalidated)
   */
  public record Slot(String name, boolean active, int activePid, long retainedWalBytes) {}

  /**
   * The slots of the URL's database whose names start with {@code prefix}, by name.
   *
   * @throws StoreUnavailableException if the database cannot be reached or read
   */
  public static List<Slot> list(String jdbcUrl, String prefix) {
    Objects.requireNonNull(prefix, "prefix");
    String sql = "SELECT slot_name, active, coalesce(active_pid, 0), CASE WHEN restart_lsn IS NULL THEN -1"
        + " ELSE pg_wal_lsn_diff(pg_current_wal_lsn(), restart_lsn)::bigint END FROM pg_replication_slots"
        + " WHERE database = current_database() AND left(slot_name, length(?)) = ? ORDER BY slot_name";
    try (Connection c = ReplicationFollower.connect(jdbcUrl); PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setString(1, prefix);
      ps.setString(2, prefix);
      List<Slot> out = new ArrayList<>();
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          out.add(new Slot(rs.getString(1), rs.getBoolean(2), rs.getInt(3), rs.getLong(4)));
        }
      }
      return out;
    } catch (SQLException e) {
      throw new StoreUnavailableException("cannot list the replication slots: " + ReplicationFollower.oneLine(e), e);
    }
  }

  /**
   * Drops the inactive slot {@code name} of the URL's database and the publication of the same name (the one a
   * guard whose {@link LogicalReplication} named none created); a publication that cannot be dropped is logged and
   * left, since it retains no WAL.
   *
   * @return {@code false} if the database has no slot of that name
   * @throws IllegalArgumentException if {@code name} is not a slot name ({@code [a-z0-9_]{1,63}})
   * @throws IllegalStateException if a connection streams from the slot (it is in use)
   * @throws StoreUnavailableException if the database cannot be reached or refuses the drop
   */
  public static boolean drop(String jdbcUrl, String name) {
    LogicalReplication.slot(name); // validates the name, which is then safe to write into DROP PUBLICATION
    try (Connection c = ReplicationFollower.connect(jdbcUrl)) {
      try (PreparedStatement ps = c.prepareStatement("SELECT active, coalesce(active_pid, 0) FROM"
          + " pg_replication_slots WHERE slot_name = ? AND database = current_database()")) {
        ps.setString(1, name);
        try (ResultSet rs = ps.executeQuery()) {
          if (!rs.next()) {
            return false;
          }
          if (rs.getBoolean(1)) {
            throw inUse(name, rs.getInt(2));
          }
        }
      }
      try (PreparedStatement ps = c.prepareStatement("SELECT pg_drop_replication_slot(?)")) {
        ps.setString(1, name);
        ps.executeQuery().close();
      } catch (SQLException e) {
        if ("55006".equals(e.getSQLState())) {
          throw inUse(name, 0); // became active since the check
        }
        if ("42704".equals(e.getSQLState())) {
          return false; // dropped by someone else since the check
        }
        throw e;
      }
      try (Statement st = c.createStatement()) {
        st.execute("DROP PUBLICATION IF EXISTS " + name);
      } catch (SQLException e) {
        LOG.warn("dropped replication slot {}; its publication stays: {}", name, ReplicationFollower.oneLine(e));
      }
      LOG.info("dropped replication slot {}", name);
      return true;
    } catch (SQLException e) {
      throw new StoreUnavailableException("cannot drop replication slot " + name + ": "
          + ReplicationFollower.oneLine(e), e);
    }
  }

  private static IllegalStateException inUse(String name, int pid) {
    return new IllegalStateException("replication slot " + name + " is in use"
        + (pid > 0 ? " by server process " + pid : "") + " (a connection streams from it)");
  }
}
