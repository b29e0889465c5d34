package io.bloomery.server.persistence;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.function.LongSupplier;

/**
 * The server's snapshot file ({@link SnapshotFormat}: every key of one point-in-time view, streamed one key at a
 * time, every byte under a CRC) for a keyspace whose changes are kept by something other than this package's journal:
 * the cluster's Raft state machine, whose snapshots are these files. Such a file names no journal segment (its
 * header's first segment is 0); what follows the cut is wherever its owner keeps it.
 */
public final class SnapshotFiles {

  private SnapshotFiles() {}

  /**
   * Writes the view {@code source} gives as of its cut to {@code target}: a temporary file, forced, renamed into
   * place, the directory forced, then read back and checked (a file that does not check is deleted and the failure
   * thrown).
   *
   * @param clock Unix milliseconds, read at the cut for the header's cut time
   * @return the number of keys written
   */
  public static long write(SnapshotSource source, Path target, LongSupplier clock) throws IOException {
    long[] cut = new long[2];
    try (SnapshotFormat.Writer snapshot = new SnapshotFormat.Writer(target)) {
      Durability.HeaderFirst sink = new Durability.HeaderFirst(snapshot, cut, 0);
      source.snapshot(() -> cut[0] = clock.getAsLong(), sink);
      sink.begin();
      snapshot.publish();
      return snapshot.keys();
    } catch (UncheckedIOException e) {
      throw e.getCause();
    }
  }

  /**
   * Reads {@code file}, handing every key to {@code loader}; any damage (a CRC, a length, the key count) is a
   * {@link PersistenceCorruptionException} naming the file and the offset.
   *
   * @return the number of keys read
   */
  public static long read(Path file, KeyLoader loader) throws IOException {
    return SnapshotFormat.read(file, loader).keys();
  }
}
