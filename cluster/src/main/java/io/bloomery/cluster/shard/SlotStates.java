package io.bloomery.cluster.shard;

import io.bloomery.cluster.slot.HashSlot;
import java.util.BitSet;

/**
 * What a shard's replica knows of the slots a reshard moves: which are <em>frozen</em> (their keys are being copied
 * to another shard: writes to them are refused, reads are served) and which are <em>gone</em> (their keys were
 * copied and dropped here: every command for them is refused, and the node redirects it). Changed only by the
 * entries of the shard's log that a reshard sends ({@link ShardStateMachine#FREEZE}, {@link ShardStateMachine#DROP},
 * {@link ShardStateMachine#IMPORT}, {@link ShardStateMachine#THAW}), so every replica holds the same; kept in the replica's snapshot as metadata, so
 * a replica that starts from a snapshot refuses what the others refuse.
 *
 * <p>Read by the node's request threads and written by the thread that applies entries: guarded by {@code this}.
 */
final class SlotStates {
  /** The snapshot metadata entry's name. */
  static final String METADATA = "cluster-slots";
  private static final int BYTES = HashSlot.SLOTS / 8;

  private final BitSet frozen = new BitSet(HashSlot.SLOTS);
  private final BitSet gone = new BitSet(HashSlot.SLOTS);
  /** Whether any slot is frozen or gone: the common case, none, costs one volatile read per command. */
  private volatile boolean any;

  boolean any() {
    return any;
  }

  synchronized boolean frozen(int slot) {
    return frozen.get(slot);
  }

  synchronized boolean gone(int slot) {
    return gone.get(slot);
  }

  synchronized void freeze(int slot) {
    frozen.set(slot);
    any = true;
  }

  /** A frozen slot's keys were dropped: it is gone. */
  synchronized void drop(int slot) {
    frozen.clear(slot);
    gone.set(slot);
    any = true;
  }

  /** The slot is being moved to this shard: neither frozen nor gone here. */
  synchronized void arrive(int slot) {
    frozen.clear(slot);
    gone.clear(slot);
    any = !frozen.isEmpty() || !gone.isEmpty();
  }

  /** A frozen slot takes writes again (a gone one stays gone). */
  synchronized void thaw(int slot) {
    frozen.clear(slot);
    any = !frozen.isEmpty() || !gone.isEmpty();
  }

  synchronized void clear() {
    frozen.clear();
    gone.clear();
    any = false;
  }

  /** The state as the snapshot's metadata holds it (the frozen then the gone bitmap), or {@code null} if empty. */
  synchronized byte[] encode() {
    if (!any) {
      return null;
    }
    byte[] out = new byte[2 * BYTES];
    byte[] f = frozen.toByteArray();
    byte[] g = gone.toByteArray();
    System.arraycopy(f, 0, out, 0, f.length);
    System.arraycopy(g, 0, out, BYTES, g.length);
    return out;
  }

  /**
   * Replaces the state with {@link #encode}'s.
   *
   * @throws IllegalArgumentException if {@code bytes} is not such a state
   */
  synchronized void decode(byte[] bytes) {
    if (bytes.length != 2 * BYTES) {
      throw new IllegalArgumentException("slot state of " + bytes.length + " bytes, not " + 2 * BYTES);
    }
    BitSet f = BitSet.valueOf(java.util.Arrays.copyOfRange(bytes, 0, BYTES));
    BitSet g = BitSet.valueOf(java.util.Arrays.copyOfRange(bytes, BYTES, 2 * BYTES));
    if (f.intersects(g)) {
      throw new IllegalArgumentException("a slot is both frozen and gone");
    }
    frozen.clear();
    frozen.or(f);
    gone.clear();
    gone.or(g);
    any = !frozen.isEmpty() || !gone.isEmpty();
  }
}
