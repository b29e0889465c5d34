package io.bloomery.server.persistence;

/**
 * Receives the keys of a snapshot during recovery, before any journal record is replayed and before any
 * client connects. Implemented by the command layer's keyspace.
 */
public interface KeyLoader {

  /**
   * Puts one key into the keyspace.
   *
   * @param key the key's bytes
   * @param value the value as {@code io.bloomery.format.FilterFormat} read it (one of core's filter or
   *     sketch objects); the keyspace owns it from now on
   * @param expireAtMillis absolute expiry in Unix milliseconds, or {@code -1} for none; a key whose expiry
   *     has passed is handed over as well, and the keyspace treats it as it treats any expired key
   * @throws IllegalStateException if the key cannot be loaded (for example it is already present);
   *     recovery stops and names the snapshot file and the key's offset
   */
  void load(byte[] key, Object value, long expireAtMillis);

  /**
   * A metadata record the snapshot holds beside its keys ({@link SnapshotSink#metadata}); ignored unless the loader
   * keeps such state.
   *
   * @throws IllegalArgumentException if the record is not what its name says
   */
  default void metadata(byte[] name, byte[] bytes) {}
}
