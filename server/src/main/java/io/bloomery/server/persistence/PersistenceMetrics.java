package io.bloomery.server.persistence;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.FunctionTimer;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.concurrent.TimeUnit;

/**
 * What the durability layer reports to {@code /metrics}: journal size, fsync latency and group-commit
 * size, persistence lag (how old the oldest acknowledged record not yet forced is) and the last
 * snapshot. Readable directly, or registered with Micrometer by {@link #bindTo(MeterRegistry)}.
 */
public final class PersistenceMetrics {
  private final Durability durability;

  PersistenceMetrics(Durability durability) {
    this.durability = durability;
  }

  /** Bytes of the journal since the last snapshot (every live segment, headers included). */
  public long journalBytes() {
    return durability.journalBytes();
  }

  /** Bytes of the snapshot in force, 0 if none. */
  public long snapshotBytes() {
    return durability.snapshotBytes();
  }

  /** Unix seconds of the last completed snapshot, 0 if none. */
  public long lastSnapshotUnixSeconds() {
    return durability.lastSaveMillis() / 1000;
  }

  /** Seconds since the oldest journal record not yet forced was written; 0 when all are forced. */
  public double persistenceLagSeconds() {
    JournalWriter writer = durability.writer();
    return writer == null ? 0 : writer.lagSeconds();
  }

  /** Journal fsyncs completed. */
  public long fsyncCount() {
    JournalWriter writer = durability.writer();
    return writer == null ? 0 : writer.fsyncStats().count();
  }

  /** Seconds spent in journal fsyncs, summed. */
  public double fsyncTotalSeconds() {
    JournalWriter writer = durability.writer();
    return writer == null ? 0 : writer.fsyncStats().totalNanos() / 1e9;
  }

  /** Acknowledgements released by fsyncs, summed (divided by {@link #fsyncCount()}: the group size). */
  public long fsyncCoveredAppends() {
    JournalWriter writer = durability.writer();
    return writer == null ? 0 : writer.fsyncStats().coveredAppends();
  }

  /** Mutating commands since the last snapshot's cut. */
  public long changesSinceLastSnapshot() {
    return durability.changesSinceLastSave();
  }

  /** Registers these figures as {@code bloomery_aof_*}, {@code bloomery_persistence_*} and {@code bloomery_snapshot_*}. */
  public void bindTo(MeterRegistry registry) {
    Gauge.builder("bloomery.aof.size", this, PersistenceMetrics::journalBytes).baseUnit("bytes")
        .description("Journal bytes since the last snapshot").register(registry);
    Gauge.builder("bloomery.snapshot.size", this, PersistenceMetrics::snapshotBytes).baseUnit("bytes")
        .description("Size of the snapshot in force").register(registry);
    Gauge.builder("bloomery.snapshot.last.time", this, PersistenceMetrics::lastSnapshotUnixSeconds).baseUnit("seconds")
        .description("Unix time of the last completed snapshot").register(registry);
    Gauge.builder("bloomery.persistence.lag", this, PersistenceMetrics::persistenceLagSeconds).baseUnit("seconds")
        .description("Age of the oldest journal record not yet forced to disk").register(registry);
    Gauge.builder("bloomery.persistence.changes", this, PersistenceMetrics::changesSinceLastSnapshot)
        .description("Mutating commands since the last snapshot").register(registry);
    FunctionTimer.builder("bloomery.aof.fsync", this, PersistenceMetrics::fsyncCount,
            PersistenceMetrics::fsyncTotalSeconds, TimeUnit.SECONDS)
        .description("Journal fsyncs and the time spent in them").register(registry);
    FunctionCounter.builder("bloomery.aof.fsync.acknowledged", this, PersistenceMetrics::fsyncCoveredAppends)
        .description("Acknowledgements released by journal fsyncs (group commit)").register(registry);
  }
}
