package io.bloomery.guard;

/**
 * How a {@link Guard} follows writers it never saw (PostgreSQL logical replication, see {@link
 * LogicalReplication}), read at one moment.
 *
 * @param state {@code off} (not configured), {@code starting}, {@code catching-up} (connected, the
 *     first freshness fence not yet back), {@code streaming} (fresh: negatives may skip the store),
 *     {@code reconnecting} (the stream broke; negatives are confirmed in the store until it is
 *     back), {@code resyncing} (the slot was lost; a new slot's snapshot is being read, negatives
 *     are confirmed in the store), {@code unavailable} (logical replication cannot be used here:
 *     the documented fallback, through-the-guard writes plus scheduled rebuilds), {@code closed}
 * @param slot the replication slot's name, empty when off
 * @param detail why the state is what it is (the last error, the fallback reason), empty if none
 * @param appliedLsn the end LSN of the last transaction whose rows are in the filter
 * @param confirmedLsn the LSN last confirmed to the server (WAL before it may be recycled)
 * @param freshnessLagMillis how old the filter's freshness guarantee is: every row committed more
 *     than this long ago is in the filter; measured as now minus the emission time of the newest
 *     freshness fence that came back through the stream; -1 before the first fence
 * @param lastCommitLagMillis commit-to-filter delay of the last foreign transaction applied (its
 *     commit timestamp to the moment its rows were in the filter); -1 before the first
 * @param maxCommitLagMillis the largest commit-to-filter delay since the guard opened; -1 before
 *     the first
 * @param transactions transactions applied from the stream
 * @param rowsApplied inserted (and updated-to) rows added to the filter from the stream
 * @param updates updated rows seen (their new values are added; the old values stay in the filter)
 * @param deletes deleted rows seen (a Bloom filter cannot forget: they stay "maybe" until a rebuild)
 * @param truncates truncations of the table seen
 * @param reconnects times the stream was re-established after an error
 * @param resyncs times the slot was lost and recreated from a new snapshot
 * @param rebuildAdvised deletes, updates and truncates have left enough stale bits that a {@link
 *     Guard#rebuild()} would lower the false-positive rate (a truncate, or removed rows above 10%
 *     of the filter's items)
 */
public record ReplicationStatus(
    String state,
    String slot,
    String detail,
    String appliedLsn,
    String confirmedLsn,
    long freshnessLagMillis,
    long lastCommitLagMillis,
    long maxCommitLagMillis,
    long transactions,
    long rowsApplied,
    long updates,
    long deletes,
    long truncates,
    long reconnects,
    long resyncs,
    boolean rebuildAdvised) {

  /** The status of a guard that follows no replication stream. */
  public static final ReplicationStatus OFF = new ReplicationStatus("off", "", "", "", "", -1, -1,
      -1, 0, 0, 0, 0, 0, 0, 0, false);

  /** Whether the filter is known to hold every row committed more than the lag ago. */
  public boolean isStreaming() {
    return state.equals("streaming");
  }
}
