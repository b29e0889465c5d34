package io.bloomery.cluster.shard;

import io.bloomery.cluster.slot.HashSlot;
import io.bloomery.server.keyspace.Key;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Payloads larger than one log entry may be (Ratis's leader refuses an entry over 4 MiB), received in parts, each its
 * own entry, the last one completing the payload: the copies of large keys a reshard is sending to this shard
 * ({@link ShardStateMachine#STAGE}, named by key, stamped with the key's expiry), or a client's large write
 * ({@link ShardStateMachine#PART}, named by the sending node's id for it, stamped with the time its first part was
 * sent). The parts received so far are replicated state like the keys: every replica holds the same, and a snapshot
 * keeps them as metadata entries of the snapshot format, one per part of at most {@link #SNAPSHOT_PART} bytes, so a
 * replica started from a snapshot taken between two parts takes the next one as the others do.
 *
 * <p>Changed and written to a snapshot only on the thread that applies entries.
 */
final class StagedCopies {
  /** The snapshot metadata entries' name for a reshard's copies of keys. */
  static final String COPIES = "cluster-staged";
  /** The snapshot metadata entries' name for clients' large writes. */
  static final String WRITES = "cluster-staged-writes";
  /** The bytes of a key's payload in one snapshot metadata entry, below the format's 1 MiB per entry. */
  static final int SNAPSHOT_PART = 1000 * 1000;
  /** The largest payload staged: what a Java array holds. */
  static final long MAX_TOTAL = Integer.MAX_VALUE - 8;

  /** One payload: its stamp (a key's absolute expiry, -1 for none; a write's start), and the bytes received so far. */
  private static final class Staged {
    final long expireAt;
    final byte[] payload;
    int received;

    Staged(long expireAt, int total) {
      this.expireAt = expireAt;
      this.payload = new byte[total];
    }
  }

  private final String metadata;
  private final Map<Key, Staged> staged = new LinkedHashMap<>();

  /** @param metadata the snapshot metadata entries' name: {@link #COPIES} or {@link #WRITES} */
  StagedCopies(String metadata) {
    this.metadata = metadata;
  }

  /** The snapshot metadata entries' name of these payloads. */
  String metadata() {
    return metadata;
  }

  /**
   * Takes bytes {@code offset ..} of {@code key}'s payload of {@code total} bytes: a part at offset 0 starts the copy
   * again (a reshard run again), any other must follow the last one received.
   *
   * @return the whole payload once its last byte came (the copy is then forgotten), else {@code null}
   * @throws IllegalArgumentException for a part that does not follow, or sizes that do not add up (the copy is
   *     forgotten: the reshard sends it again from offset 0)
   */
  byte[] part(Key key, long expireAt, long total, long offset, byte[] bytes) {
    if (total <= 0 || total > MAX_TOTAL) {
      staged.remove(key);
      throw new IllegalArgumentException("a staged payload of " + total + " bytes");
    }
    Staged s = offset == 0 ? new Staged(expireAt, (int) total) : staged.get(key);
    if (s == null || s.received != offset || s.payload.length != total || s.expireAt != expireAt) {
      staged.remove(key);
      throw new IllegalArgumentException("part at " + offset + " of " + key + " does not follow "
          + (s == null ? "any part" : "the " + s.received + " bytes received of " + s.payload.length));
    }
    if (bytes.length > total - offset) {
      staged.remove(key);
      throw new IllegalArgumentException("part at " + offset + " of " + bytes.length + " bytes passes the payload's "
          + total);
    }
    System.arraycopy(bytes, 0, s.payload, (int) offset, bytes.length);
    s.received += bytes.length;
    if (s.received == total) {
      staged.remove(key);
      return s.payload;
    }
    staged.put(key, s);
    return null;
  }

  /** Forgets the copies of keys in {@code slots} (those slots are being imported again: a new copy begins). */
  void forget(BitSet slots) {
    staged.keySet().removeIf(k -> slots.get(HashSlot.of(k.bytes())));
  }

  /** Forgets the payloads stamped before {@code stamp} (writes whose sender stopped sending their parts). */
  void forgetStampedBefore(long stamp) {
    staged.values().removeIf(s -> s.expireAt < stamp);
  }

  boolean isEmpty() {
    return staged.isEmpty();
  }

  void clear() {
    staged.clear();
  }

  /** The bytes held by copies not finished. */
  long bytes() {
    return staged.values().stream().mapToLong(s -> s.payload.length).sum();
  }

  /**
   * The copies as snapshot metadata entries, in order: for each key its received bytes in parts of at most
   * {@link #SNAPSHOT_PART}, each {@code int keyLength, key, long expireAt, long total, long offset, bytes}.
   */
  List<byte[]> encode() {
    List<byte[]> out = new ArrayList<>();
    for (Map.Entry<Key, Staged> e : staged.entrySet()) {
      byte[] key = e.getKey().bytes();
      Staged s = e.getValue();
      for (int at = 0; at < s.received; at += SNAPSHOT_PART) {
        int n = Math.min(SNAPSHOT_PART, s.received - at);
        ByteBuffer b = ByteBuffer.allocate(4 + key.length + 24 + n);
        b.putInt(key.length).put(key).putLong(s.expireAt).putLong(s.payload.length).putLong(at)
            .put(s.payload, at, n);
        out.add(b.array());
      }
    }
    return out;
  }

  /**
   * Takes one of {@link #encode}'s entries, in order.
   *
   * @throws IllegalArgumentException if {@code bytes} is not such an entry or does not follow the one before
   */
  void decode(byte[] bytes) {
    ByteBuffer b = ByteBuffer.wrap(bytes);
    try {
      int keyLength = b.getInt();
      if (keyLength < 0 || keyLength > b.remaining() - 24) {
        throw new IllegalArgumentException("a staged copy's key of " + keyLength + " bytes");
      }
      byte[] key = new byte[keyLength];
      b.get(key);
      long expireAt = b.getLong();
      long total = b.getLong();
      long offset = b.getLong();
      byte[] part = new byte[b.remaining()];
      b.get(part);
      if (part(Key.of(key), expireAt, total, offset, part) != null) {
        throw new IllegalArgumentException("a snapshot holds a staged copy that is complete");
      }
    } catch (java.nio.BufferUnderflowException e) {
      throw new IllegalArgumentException("a staged copy's entry of " + bytes.length + " bytes is cut short", e);
    }
  }
}
