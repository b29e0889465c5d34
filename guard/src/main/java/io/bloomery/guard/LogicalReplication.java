package io.bloomery.guard;

import java.time.Duration;
import java.util.Objects;

/**
 * How a {@link Guard} in front of a {@link PostgresStore} follows the table through PostgreSQL
 * logical replication, so that rows other programs write (psql, another service, a bulk {@code
 * COPY}) become "maybe" within a bounded lag. Pass it to {@link Guard.Builder#replication}.
 *
 * <pre>{@code
 * Guard guard = Guard.builder(PostgresStore.open(url))
 *     .snapshotFile(Path.of("seen.guard"))
 *     .replication(LogicalReplication.slot("crawler_seen"))
 *     .open();
 * }</pre>
 *
 * <p>The guard uses a publication for the table (created if absent, named like the slot unless
 * {@link #publication(String) given}) and a logical replication slot with the {@code pgoutput}
 * plugin. The server must run with {@code wal_level = logical} and the role needs the {@code
 * REPLICATION} attribute (and ownership of the table to create the publication). One slot serves
 * one guard: guards in several processes need distinct slot names. A slot retains WAL until the
 * guard confirms it, so a guard that is retired for good must be closed with {@link
 * Guard#closeAndDropSlot()}.
 *
 * <p>Immutable; every {@code with…} method returns a copy.
 */
public final class LogicalReplication {
  private final String slot;
  private final String publication;
  private final boolean publicationGiven;
  private final Duration fenceInterval;
  private final Duration checkpointInterval;
  private final Duration fallbackRebuildInterval;

  private LogicalReplication(String slot, String publication, boolean publicationGiven,
      Duration fenceInterval, Duration checkpointInterval, Duration fallbackRebuildInterval) {
    this.slot = slot;
    this.publication = publication;
    this.publicationGiven = publicationGiven;
    this.fenceInterval = fenceInterval;
    this.checkpointInterval = checkpointInterval;
    this.fallbackRebuildInterval = fallbackRebuildInterval;
  }

  /**
   * Follows the table with the replication slot {@code slotName} (lower-case letters, digits and
   * {@code _}, at most 63 characters, as PostgreSQL requires).
   */
  public static LogicalReplication slot(String slotName) {
    Objects.requireNonNull(slotName, "slotName");
    if (!slotName.matches("[a-z0-9_]{1,63}")) {
      throw new IllegalArgumentException("replication slot name must match [a-z0-9_]{1,63}, got '"
          + slotName + "'");
    }
    return new LogicalReplication(slotName, slotName, false, Duration.ofSeconds(1),
        Duration.ofSeconds(60), Duration.ofMinutes(15));
  }

  /**
   * Uses an existing publication (or creates one of this name) instead of the one named like the
   * slot. A publication given here is never dropped by {@link Guard#closeAndDropSlot()}.
   */
  public LogicalReplication publication(String publicationName) {
    Objects.requireNonNull(publicationName, "publicationName");
    if (!publicationName.matches("[a-z_][a-z0-9_]{0,62}")) {
      throw new IllegalArgumentException("publication name must match [a-z_][a-z0-9_]{0,62}, got '"
          + publicationName + "'");
    }
    return new LogicalReplication(slot, publicationName, true, fenceInterval, checkpointInterval,
        fallbackRebuildInterval);
  }

  /**
   * How often a freshness fence (a one-row logical message) is sent through the stream to measure
   * {@link ReplicationStatus#freshnessLagMillis()} (default 1 s; zero: only on {@link
   * Guard#awaitFresh} and after each (re)connect).
   */
  public LogicalReplication fenceInterval(Duration interval) {
    return new LogicalReplication(slot, publication, publicationGiven, nonNegative(interval, "fenceInterval"),
        checkpointInterval, fallbackRebuildInterval);
  }

  /**
   * How often a guard with a snapshot file checkpoints while streaming, which is when it confirms
   * the stream's position to the server and lets it recycle WAL (default 60 s; zero: only on
   * {@link Guard#checkpoint()} and close).
   */
  public LogicalReplication checkpointInterval(Duration interval) {
    return new LogicalReplication(slot, publication, publicationGiven, fenceInterval,
        nonNegative(interval, "checkpointInterval"), fallbackRebuildInterval);
  }

  /**
   * When logical replication is unavailable, rebuild the filter this often (default 15 min; zero:
   * never, the caller schedules {@link Guard#rebuild()}).
   */
  public LogicalReplication fallbackRebuildInterval(Duration interval) {
    return new LogicalReplication(slot, publication, publicationGiven, fenceInterval, checkpointInterval,
        nonNegative(interval, "fallbackRebuildInterval"));
  }

  public String slotName() {
    return slot;
  }

  public String publicationName() {
    return publication;
  }

  boolean ownsPublication() {
    return !publicationGiven;
  }

  Duration fenceEvery() {
    return fenceInterval;
  }

  Duration checkpointEvery() {
    return checkpointInterval;
  }

  Duration fallbackRebuildEvery() {
    return fallbackRebuildInterval;
  }

  private static Duration nonNegative(Duration interval, String what) {
    Objects.requireNonNull(interval, what);
    if (interval.isNegative()) {
      throw new IllegalArgumentException(what + " must not be negative, got " + interval);
    }
    return interval;
  }
}
