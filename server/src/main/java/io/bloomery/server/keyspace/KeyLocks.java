package io.bloomery.server.keyspace;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One lock per key that is being written, created on demand and dropped when no thread holds or waits for it, so
 * writers of different keys never contend (no striping: two keys never share a lock).
 */
final class KeyLocks {
  private static final class Slot {
    final ReentrantLock lock = new ReentrantLock();
    int users; // guarded by the map's bin lock (compute)
  }

  private final ConcurrentHashMap<Key, Slot> slots = new ConcurrentHashMap<>();

  void lock(Key key) {
    Slot slot = slots.compute(key, (k, s) -> {
      Slot v = s == null ? new Slot() : s;
      v.users++;
      return v;
    });
    slot.lock.lock();
  }

  void unlock(Key key) {
    Slot slot = slots.get(key);
    slot.lock.unlock();
    slots.computeIfPresent(key, (k, s) -> --s.users == 0 ? null : s);
  }

  boolean isHeldByCurrentThread(Key key) {
    Slot slot = slots.get(key);
    return slot != null && slot.lock.isHeldByCurrentThread();
  }
}
