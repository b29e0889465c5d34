package io.bloomery.server.keyspace;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One lock per key that is being written, created on demand and dropped when no thread holds or waits for it, so
 * writers of different keys never contend (no striping: two keys never share a lock).
 *
 * <p>The common case takes no map lock: a thread finds the key's slot and counts itself in with a CAS; only the
 * first user of a key inserts a slot and the last one removes it. A slot whose count reached zero is dead (nobody
 * can count in again) and is replaced. A contended lock is retried briefly before the thread parks, because the
 * sections it guards last well under a microsecond and parking costs a context switch each way.
 */
final class KeyLocks {
  /** tryLock attempts (with a spin-wait hint between them) before parking. */
  private static final int SPINS = 128;

  private static final class Slot {
    final ReentrantLock lock = new ReentrantLock();
    /** Threads holding or waiting for the lock; 0 means dead (removed or about to be). */
    final AtomicInteger users = new AtomicInteger(1);
  }

  /**
   * Sized for thousands of bins although it holds only the keys being written now (a few per event loop): a map
   * sized for its contents keeps its bins in one or two cache lines, so every writer's insert and removal, on any
   * core, would change the same lines (KeyspaceWriteBenchmark: 2 threads, a key per command, 612-636 ns a write with
   * the default size, 154-282 ns with this one).
   */
  private final ConcurrentHashMap<Key, Slot> slots = new ConcurrentHashMap<>(4096);

  void lock(Key key) {
    ReentrantLock lock = join(key).lock;
    if (lock.tryLock()) {
      return;
    }
    for (int i = 0; i < SPINS; i++) {
      Thread.onSpinWait();
      if (!lock.isLocked() && lock.tryLock()) {
        return;
      }
    }
    lock.lock();
  }

  /** Takes the key's lock if no other thread holds it now; never waits. */
  boolean tryLock(Key key) {
    Slot slot = join(key);
    if (slot.lock.tryLock()) {
      return true;
    }
    if (slot.users.decrementAndGet() == 0) {
      slots.remove(key, slot);
    }
    return false;
  }

  /** The key's live slot with this thread counted in. */
  private Slot join(Key key) {
    while (true) {
      Slot slot = slots.get(key);
      if (slot == null) {
        Slot fresh = new Slot();
        slot = slots.putIfAbsent(key, fresh);
        if (slot == null) {
          return fresh;
        }
      }
      for (int u = slot.users.get(); u > 0; u = slot.users.get()) {
        if (slot.users.compareAndSet(u, u + 1)) {
          return slot;
        }
      }
      slots.remove(key, slot); // dead: its last user is removing it; help, then retry with a fresh one
    }
  }

  void unlock(Key key) {
    Slot slot = slots.get(key); // present: this thread's count keeps it alive
    slot.lock.unlock();
    if (slot.users.decrementAndGet() == 0) {
      slots.remove(key, slot);
    }
  }

  /**
   * Whether a thread other than the holder waits for (or is about to take) the key's lock. Called by the holder, so
   * the slot is live; a racy answer only delays or hastens a lease's release.
   */
  boolean contended(Key key) {
    Slot slot = slots.get(key);
    return slot != null && slot.users.get() > 1;
  }

  /** Threads holding or waiting for the key's lock (0 when it has no slot), for tests. */
  int users(Key key) {
    Slot slot = slots.get(key);
    return slot == null ? 0 : slot.users.get();
  }

  boolean isHeldByCurrentThread(Key key) {
    Slot slot = slots.get(key);
    return slot != null && slot.lock.isHeldByCurrentThread();
  }

  /** Slots in the map (locks held or awaited), for tests. */
  int size() {
    return slots.size();
  }
}
