package io.bloomery.server.keyspace;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The keys clients {@code WATCH}, and which of those clients a write has touched since, so their {@code EXEC} aborts
 * (Redis's {@code watched_keys} and {@code CLIENT_DIRTY_CAS}). The keyspace touches a key whenever it changes: a
 * value handed out for change, stored, removed (by a command, by expiry or by {@code FLUSHALL}, which touches only the
 * keys it removes) or its expiry set. Redis also aborts when a watched key that was live at {@code WATCH} has expired
 * by {@code EXEC} without anyone removing it: {@link Watcher#expiredSince} tells that.
 *
 * <p>Thread-safe: a key is registered before its state is read, so a write racing with {@code WATCH} marks the
 * watcher rather than being missed.
 */
public final class Watches {
  private final Map<Key, Set<Watcher>> byKey = new ConcurrentHashMap<>();
  private final Keyspace keyspace;

  Watches(Keyspace keyspace) {
    this.keyspace = keyspace;
  }

  /** One client's watched keys. Not shared between threads except through the keyspace's touches. */
  public final class Watcher {
    private final Map<Key, Boolean> liveAtWatch = new ConcurrentHashMap<>();
    private volatile boolean touched;

    private Watcher() {}

    /** {@code WATCH key}: from now on a change of {@code key} marks this watcher. */
    public void watch(Key key) {
      if (liveAtWatch.containsKey(key)) {
        return;
      }
      byKey.computeIfAbsent(key, k -> ConcurrentHashMap.newKeySet()).add(this);
      liveAtWatch.put(key, keyspace.peek(key) != null);
    }

    /** Whether it watches any key. */
    public boolean watching() {
      return !liveAtWatch.isEmpty();
    }

    /**
     * Whether {@code EXEC} must abort: a watched key was changed since it was watched, or was live then and has
     * expired since.
     */
    public boolean touchedOrExpired() {
      if (touched) {
        return true;
      }
      for (Map.Entry<Key, Boolean> e : liveAtWatch.entrySet()) {
        if (e.getValue() && keyspace.peek(e.getKey()) == null) {
          return true;
        }
      }
      return false;
    }

    /** {@code UNWATCH} (and what EXEC, DISCARD, RESET and a closed connection do): forgets every key. */
    public void unwatchAll() {
      for (Key key : liveAtWatch.keySet()) {
        byKey.computeIfPresent(key, (k, watchers) -> {
          watchers.remove(this);
          return watchers.isEmpty() ? null : watchers;
        });
      }
      liveAtWatch.clear();
      touched = false;
    }
  }

  /** A watcher for one client, watching nothing yet. */
  public Watcher newWatcher() {
    return new Watcher();
  }

  /** Marks every watcher of {@code key}. */
  void touch(Key key) {
    if (byKey.isEmpty()) {
      return;
    }
    Set<Watcher> watchers = byKey.get(key);
    if (watchers != null) {
      for (Watcher w : watchers) {
        w.touched = true;
      }
    }
  }
}
