package io.bloomery.server.persistence;

import java.io.IOException;

/** Receives the keys of a point-in-time view, one at a time. */
public interface SnapshotSink {

  /**
   * One key of the view.
   *
   * @param key the key's bytes
   * @param value the key's value as of the cut: one of core's filter or sketch objects, or a frozen view of a
   *     scalable Bloom filter ({@code ScalableBloomFilter.Frozen}), all of which {@code FilterFormat} writes; the
   *     sink must not mutate it, and may read it only during this call
   * @param expireAtMillis the key's absolute expiry in Unix milliseconds, or {@code -1} for none
   */
  void accept(byte[] key, Object value, long expireAtMillis) throws IOException;

  /**
   * A named record of its owner's state beside the keys (not a key; the server's own snapshots write none): a
   * cluster shard's replica records its slots' migration state so. Once per name, after every key.
   *
   * @throws UnsupportedOperationException if this sink keeps no metadata
   */
  default void metadata(byte[] name, byte[] bytes) throws IOException {
    throw new UnsupportedOperationException("this snapshot keeps no metadata");
  }
}
