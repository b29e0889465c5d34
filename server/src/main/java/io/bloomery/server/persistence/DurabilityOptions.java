package io.bloomery.server.persistence;

import java.nio.file.Path;
import java.util.Objects;

/**
 * How the server persists its keyspace.
 *
 * @param dir the data directory ({@code --dir})
 * @param appendOnly whether every mutating command is journaled ({@code --appendonly}); without it
 *     only snapshots (SAVE, BGSAVE, shutdown) persist the keyspace
 * @param fsync when the journal is forced ({@code --appendfsync})
 * @param autoRewritePercentage rewrite when the journal since the last snapshot has grown to this
 *     percentage of the snapshot's size ({@code auto-aof-rewrite-percentage}); 0 turns automatic rewrites
 *     off
 * @param autoRewriteMinBytes and only once the journal holds at least this many bytes
 *     ({@code auto-aof-rewrite-min-size})
 */
public record DurabilityOptions(Path dir, boolean appendOnly, FsyncPolicy fsync, int autoRewritePercentage,
    long autoRewriteMinBytes) {

  /** Redis's defaults: 100 % growth, 64 MiB. */
  public static final int DEFAULT_REWRITE_PERCENTAGE = 100;
  public static final long DEFAULT_REWRITE_MIN_BYTES = 64L << 20;

  public DurabilityOptions {
    Objects.requireNonNull(dir, "dir");
    Objects.requireNonNull(fsync, "fsync");
    if (autoRewritePercentage < 0) {
      throw new IllegalArgumentException("auto-aof-rewrite-percentage must be >= 0, found " + autoRewritePercentage);
    }
    if (autoRewriteMinBytes < 0) {
      throw new IllegalArgumentException("auto-aof-rewrite-min-size must be >= 0, found " + autoRewriteMinBytes);
    }
  }

  /** The given directory, journal and policy, with Redis's automatic-rewrite defaults. */
  public static DurabilityOptions of(Path dir, boolean appendOnly, FsyncPolicy fsync) {
    return new DurabilityOptions(dir, appendOnly, fsync, DEFAULT_REWRITE_PERCENTAGE, DEFAULT_REWRITE_MIN_BYTES);
  }

  /** These options with another automatic-rewrite threshold. */
  public DurabilityOptions withAutoRewrite(int percentage, long minBytes) {
    return new DurabilityOptions(dir, appendOnly, fsync, percentage, minBytes);
  }
}
