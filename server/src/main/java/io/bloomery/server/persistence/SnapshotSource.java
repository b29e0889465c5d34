package io.bloomery.server.persistence;

import java.io.IOException;

/**
 * A keyspace that can be walked as of one instant while writers keep running. Implemented by the
 * command layer's keyspace.
 *
 * <p>{@link #snapshot} first takes a cut: it waits for commands in flight to finish applying and
 * journaling (writers hold the shared side of a cut lock while they apply and append; the cut takes the
 * exclusive side for microseconds), runs {@code atCut} (the journal switches to a new segment there), and
 * releases writers again. It then hands every key that existed at the cut to the sink with its value as
 * of the cut, streamed from the live value: a writer that touches a key not yet handed over first keeps
 * the old state for the walk (copy on write, of as little as the write changes). So the snapshot plus
 * every journal record after the cut reproduces the keyspace exactly, with no record applied twice and
 * none missed.
 */
public interface SnapshotSource {

  /**
   * Walks the keyspace as of a cut.
   *
   * @param atCut run once, with every writer paused, at the instant the view describes
   * @param sink receives each key of the view
   */
  void snapshot(Runnable atCut, SnapshotSink sink) throws IOException;
}
