package io.bloomery.server.keyspace;

import io.bloomery.scalable.ScalableBloomFilter;
import io.bloomery.server.persistence.CommandJournal;
import io.bloomery.server.persistence.SnapshotSink;
import io.bloomery.server.persistence.SnapshotSource;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.BiConsumer;
import java.util.function.LongSupplier;

/*
 * Concurrency design.
 *
 * The map is a ConcurrentHashMap from key to an immutable-reference Entry (value object + expiry). Reads take no
 * lock: they get the entry and call the value's own thread-safe lookup (the BF/CF/counting/aging kinds are safe for
 * concurrent readers and writers; CMS and TopK are not, and the command layer reads those under the key's lock).
 *
 * A write takes, in order: the lock of every key it touches (KeyLocks: one lock per key, created on demand, sorted
 * to avoid deadlock), then the shared side of the cut lock. It applies, journals (while still holding both, so the
 * journal's order is the apply order per key), and releases. Commands that touch every key (FLUSHALL) take the
 * exclusive side of the cut lock instead, which waits for writers in flight and holds new ones back.
 *
 * A connection's Lease lets a run of one-key writes that arrived in one read (a pipeline) take the key's lock and
 * the shared side once: the lease keeps both between those commands and the connection releases it at the end of
 * the read, before it waits for anything and before any other kind of command. When the next command writes another
 * key, the lease keeps the shared side and swaps the key's lock if the new one is free at once (a tryLock: waiting
 * for a key while holding the shared side would reverse the order above); else it lets go of both and takes them
 * again in order. A lease also lets go at the end of
 * a command when another thread waits for its key, so that writers of one hot key on several event loops take
 * turns command by command instead of one loop waiting (parked) for another's whole pipelined read. A lease holds
 * one key at most and never waits for a key while it holds the shared side, so leases add no lock-order cycle. Every
 * command still applies and journals inside the locks, in order; only the release-and-retake between them is
 * skipped.
 *
 * A snapshot takes the exclusive side only for the cut itself: it runs the journal's segment switch, records which
 * entries exist, and publishes a Walk. Any writer that touches a key the walk has not handed over yet first moves
 * that key's entry-at-the-cut into the walk (ValueType#freeze when the value will live on and change: a copy-on-write
 * view of a scalable Bloom filter, which copies only the 64 KiB pages later writes change, a deep copy of the other
 * kinds; the reference when it is being dropped). The walker hands each key over under the key's lock, serialized
 * straight from the live value or from what a writer kept, so a writer of that key waits at most for that one key's
 * serialization, and a writer of any other key not at all. (A frozen view reads the pages nobody copied from the live
 * layers, which the key's writers change without any lock of the filter's own: hence the key's lock there too.)
 */

/**
 * The server's keys: values are core's filter and sketch objects, with an optional expiry. Thread-safe; see the
 * block comment for the locking scheme. Implements {@link SnapshotSource} with a copy-on-write cut.
 */
public final class Keyspace implements SnapshotSource {

  /**
   * A key's value with its expiry ({@code -1}: none), the bytes it counts against {@code maxmemory}, and its last
   * access on the {@linkplain #lruClock LRU clock}.
   */
  static final class Entry {
    final Object value;
    volatile long expireAt;
    long bytes;
    /** Written only when the clock moved on since, so that readers of a hot key do not share a written line. */
    volatile int lru;

    Entry(Object value, long expireAt, int lru) {
      this.value = value;
      this.expireAt = expireAt;
      this.bytes = ValueType.of(value).memoryUsage(value);
      this.lru = lru;
    }

    void touch(int now) {
      if (lru != now) {
        lru = now;
      }
    }

    boolean expired(long now) {
      long at = expireAt;
      return at >= 0 && at <= now;
    }

    /** {@link #expired(long)} at the keyspace's time, read only for a key that has an expiry. */
    boolean expired(Keyspace keyspace) {
      long at = expireAt;
      return at >= 0 && at <= keyspace.expiryNow();
    }
  }

  /** A key's value and expiry as of a snapshot's cut. */
  private record Frozen(Object value, long expireAt) {}

  /** One snapshot walk in progress. */
  private static final class Walk {
    final ConcurrentHashMap<Key, Frozen> pending = new ConcurrentHashMap<>();
    final ConcurrentHashMap<Key, Frozen> preserved = new ConcurrentHashMap<>();
  }

  private static final byte[] DEL = "DEL".getBytes(StandardCharsets.US_ASCII);
  /** The journal stage of a write with nothing to wait for. */
  private static final CompletionStage<Void> DURABLE = CompletableFuture.completedFuture(null);

  private final ConcurrentHashMap<Key, Entry> map = new ConcurrentHashMap<>();
  private final Set<Key> expiring = ConcurrentHashMap.newKeySet();
  private final KeyLocks locks = new KeyLocks();
  private final ReentrantReadWriteLock cut = new ReentrantReadWriteLock();
  private final Object snapshotMonitor = new Object();
  private final AtomicLong usedBytes = new AtomicLong();
  private final LongSupplier clock;
  private volatile CommandJournal journal = CommandJournal.NONE;
  private volatile Walk walk;
  private volatile boolean expirySuspended;
  private final Watches watches = new Watches(this);

  /** @param clock Unix milliseconds, for expiry */
  public Keyspace(LongSupplier clock) {
    this.clock = clock;
  }

  /** Redis's {@code LRU_CLOCK_MAX}: the LRU clock counts seconds in 24 bits and wraps. */
  static final int LRU_CLOCK_MAX = (1 << 24) - 1;

  /** Redis's LRU clock at {@code millis}: whole seconds ({@code LRU_CLOCK_RESOLUTION} 1000 ms), 24 bits. */
  static int lruClock(long millis) {
    return (int) ((millis / 1000) & LRU_CLOCK_MAX);
  }

  private int lruNow() {
    return lruClock(clock.getAsLong());
  }

  /** Set on a thread while it runs a command of a CLIENT NO-TOUCH connection ({@link #withoutTouching}). */
  private static final ThreadLocal<boolean[]> NOT_TOUCHING = ThreadLocal.withInitial(() -> new boolean[1]);
  /** Threads inside {@link #withoutTouching} now: while 0, no access needs to look at the thread-local. */
  private final AtomicInteger notTouching = new AtomicInteger();

  /**
   * Runs {@code body} (one command of a {@code CLIENT NO-TOUCH} connection) on this thread without any of its
   * reads or writes counting as an access of a key ({@link #idleSeconds} unchanged), as Redis's {@code
   * CLIENT_NO_TOUCH}.
   */
  public <T> T withoutTouching(java.util.function.Supplier<T> body) {
    boolean[] flag = NOT_TOUCHING.get();
    if (flag[0]) {
      return body.get();
    }
    notTouching.incrementAndGet();
    flag[0] = true;
    try {
      return body.get();
    } finally {
      flag[0] = false;
      notTouching.decrementAndGet();
    }
  }

  /** Counts an access of {@code e} now, unless this thread runs a NO-TOUCH command. */
  private void accessed(Entry e) {
    if (notTouching.get() == 0 || !NOT_TOUCHING.get()[0]) {
      e.touch(lruNow());
    }
  }

  /** The clients' {@code WATCH}ed keys, which every change of a key here touches. */
  public Watches watches() {
    return watches;
  }

  /** Where expiry deletions and every command's records go. */
  public void journal(CommandJournal journal) {
    this.journal = journal;
  }

  /** The journal in use. */
  public CommandJournal journal() {
    return journal;
  }

  /**
   * While suspended (recovery), no key expires: replayed records see the keyspace as it was when they were
   * written, and the journal's own {@code DEL} records remove what expired back then.
   */
  public void suspendExpiry(boolean suspended) {
    this.expirySuspended = suspended;
  }

  /** Unix milliseconds now, as the keyspace sees it. */
  public long now() {
    return clock.getAsLong();
  }

  private long expiryNow() {
    return expirySuspended ? Long.MIN_VALUE : clock.getAsLong();
  }

  // ------------------------------------------------------------------------------------------------ reads

  /**
   * The value of a live key, or {@code null}; takes no lock. Counts as an access of the key (its idle time starts
   * again), as Redis's {@code lookupKeyRead} does.
   */
  public Object read(Key key) {
    Entry e = map.get(key);
    if (e == null || e.expired(this)) {
      return null;
    }
    accessed(e);
    return e.value;
  }

  /**
   * {@link #read} without counting as an access ({@code LOOKUP_NOTOUCH}): for EXISTS, TYPE, OBJECT, MEMORY USAGE
   * and what is not a client's command.
   */
  public Object peek(Key key) {
    Entry e = map.get(key);
    return e == null || e.expired(this) ? null : e.value;
  }

  /**
   * Seconds since a live key was last accessed, as Redis's {@code OBJECT IDLETIME} estimates them on its wrapping
   * LRU clock; {@code -1} if the key does not exist.
   */
  public long idleSeconds(Key key) {
    Entry e = map.get(key);
    if (e == null || e.expired(this)) {
      return -1;
    }
    int now = lruNow();
    int lru = e.lru;
    return now >= lru ? now - lru : now + (LRU_CLOCK_MAX - (long) lru);
  }

  /** The absolute expiry of a live key in Unix ms, {@code -1} for none, {@code -2} if the key does not exist. */
  public long expireAt(Key key) {
    Entry e = map.get(key);
    if (e == null || e.expired(this)) {
      return -2;
    }
    return e.expireAt;
  }

  /** Number of keys, including ones expired but not yet removed (as Redis's DBSIZE). */
  public int size() {
    return map.size();
  }

  /** Keys with an expiry. */
  public int expiringCount() {
    return expiring.size();
  }

  /** Bytes held by values, by the server's own accounting ({@link ValueType#memoryUsage}). */
  public long usedBytes() {
    return usedBytes.get();
  }

  /** Visits every live key with its value, weakly consistent with concurrent writes. */
  public void forEach(BiConsumer<Key, Object> visitor) {
    long now = expiryNow();
    map.forEach((k, e) -> {
      if (!e.expired(now)) {
        visitor.accept(k, e.value);
      }
    });
  }

  /** A point-in-time list of live keys (weakly consistent). */
  public List<Key> keys() {
    List<Key> out = new ArrayList<>(map.size());
    forEach((k, v) -> out.add(k));
    return out;
  }

  /** Runs {@code reader} on the value under the key's lock: for the kinds that are not safe for concurrent reads. */
  public <T> T readLocked(Key key, java.util.function.Function<Object, T> reader) {
    locks.lock(key);
    try {
      return reader.apply(read(key));
    } finally {
      locks.unlock(key);
    }
  }

  // ------------------------------------------------------------------------------------------------ writes

  /** Starts a write on {@code keys}: takes their locks (sorted) and the shared side of the cut lock. */
  public Write write(Collection<Key> keys) {
    if (keys.size() == 1) {
      return write(keys.iterator().next());
    }
    TreeSet<Key> sorted = new TreeSet<>(keys);
    for (Key k : sorted) {
      locks.lock(k);
    }
    Lock shared = cut.readLock();
    shared.lock();
    return new Write(null, sorted, shared, null);
  }

  /** {@link #write(Collection)} of one key. */
  public Write write(Key key) {
    locks.lock(key);
    Lock shared = cut.readLock();
    shared.lock();
    return new Write(key, null, shared, null);
  }

  /**
   * A write of one key under {@code lease}: if the lease already holds that key's lock (and the shared side of the
   * cut lock) from an earlier command of the same connection, they are reused; otherwise the lease lets go of what
   * it holds and takes this key's. Closing the write keeps them in the lease; {@link Lease#release} lets them go.
   */
  public Write write(Key key, Lease lease) {
    lease.take(key);
    return new Write(key, null, null, lease);
  }

  /** The per-key locks (for tests). */
  KeyLocks locks() {
    return locks;
  }

  /** A new, empty lease for one connection. */
  public Lease lease() {
    return new Lease();
  }

  /**
   * One connection's standing hold on the lock of the key it last wrote and on the shared side of the cut lock, so
   * that a run of pipelined writes of one key, read in one go, takes and releases them once instead of once per
   * command, and a run of writes of different keys takes the shared side once. The holder must release it before it
   * does anything else (before its event loop serves another connection, before it waits for anything, before any
   * command that is not a one-key write); it holds at most one key, and while it holds the shared side it takes
   * another key's lock only if that lock is free at once, so it cannot deadlock with another lease or a cut. Each
   * command still runs, journals and is counted alone. It lets go by itself at the end of a command if another thread
   * is waiting for the key ({@link #yieldIfContended}). Used by one thread at a time.
   */
  public final class Lease {
    /**
     * Commands one hold may serve before it is released and taken again: a snapshot's cut waiting for the shared
     * side then goes first (the cut lock holds new readers back while a writer waits), so a long pipelined burst
     * delays it by at most this many commands.
     */
    static final int MAX_USES = 256;
    private Key key;
    private Lock shared;
    private int uses;

    private Lease() {}

    private void take(Key k) {
      if (key != null && !key.equals(k) && uses < MAX_USES && locks.tryLock(k)) {
        // Another key while the shared side is held: keep that (one CAS less on the word every core's writers share)
        // and move to the new key's lock, but only without waiting for it. A thread that waited for a key while
        // holding the shared side could wait forever: the key's holder may wait for the shared side behind a cut
        // that waits for this thread.
        locks.unlock(key);
        key = k;
        uses++;
        return;
      }
      if (key != null && (!key.equals(k) || uses >= MAX_USES)) {
        release();
      }
      if (key == null) {
        locks.lock(k);
        Lock s = cut.readLock();
        try {
          s.lock();
        } catch (RuntimeException | Error e) {
          locks.unlock(k);
          throw e;
        }
        key = k;
        shared = s;
        uses = 0;
      }
      uses++;
    }

    /**
     * At the end of a command: lets go if another thread waits for the key, so it gets in before this connection's
     * next command instead of after the whole run (the waiter spins briefly before it parks, and a command holds the
     * lock for well under a microsecond of work, so writers of one key on several loops then alternate).
     */
    void yieldIfContended() {
      Key k = key;
      if (k != null && locks.contended(k)) {
        release();
      }
    }

    /** Whether it holds a key's lock now. */
    public boolean held() {
      return key != null;
    }

    /** Lets go of the locks it holds, if any. */
    public void release() {
      Key k = key;
      if (k == null) {
        return;
      }
      key = null;
      try {
        shared.unlock();
      } finally {
        shared = null;
        locks.unlock(k);
      }
    }
  }

  /**
   * Starts a write that may touch any key: takes the exclusive side of the cut lock, so no other write runs
   * meanwhile. For FLUSHALL/FLUSHDB and for transactions that contain them.
   */
  public Write writeAll() {
    Lock exclusive = cut.writeLock();
    exclusive.lock();
    return new Write(null, null, exclusive, null);
  }

  /**
   * Puts a key restored from a snapshot, before clients connect. Replaces any value; {@code expireAt} is absolute
   * Unix ms or {@code -1}.
   */
  public void restore(byte[] key, Object value, long expireAt) {
    try (Write w = write(Key.of(key.clone()))) {
      w.put(Key.of(key.clone()), adopt(value));
      if (expireAt >= 0) {
        w.expire(Key.of(key.clone()), expireAt);
      }
    }
  }

  /** A value as the keyspace keeps it ({@link ValueType#adopt}); refuses what is not a keyspace value. */
  private static Object adopt(Object value) {
    return ValueType.of(value).adopt(value);
  }

  /**
   * An open write: the keys it locked (or all, for {@link #writeAll}), the cut lock, and the journal records it made.
   * Not thread-safe; close it on the thread that opened it.
   */
  public final class Write implements AutoCloseable {
    private final Key one;
    private final TreeSet<Key> keys;
    private final Lock cutLock;
    private final Lease lease;
    private Key touchedOne;
    private List<Key> touched;
    private CompletionStage<Void> journaled = DURABLE;
    private boolean closed;
    private int depth = 1;

    /** One key ({@code one}), several ({@code keys}) or, with neither, all; a leased write owns no locks. */
    private Write(Key one, TreeSet<Key> keys, Lock cutLock, Lease lease) {
      this.one = one;
      this.keys = keys;
      this.cutLock = cutLock;
      this.lease = lease;
    }

    private void check(Key key) {
      if (closed || !holds(key)) {
        throw new IllegalStateException("key not locked by this write: " + key);
      }
    }

    private void touch(Key key) {
      if (touchedOne == null) {
        touchedOne = key;
      } else if (!touchedOne.equals(key)) {
        if (touched == null) {
          touched = new ArrayList<>(2);
        }
        touched.add(key);
      }
    }

    /**
     * The value of a live key, or {@code null}. An expired key is removed here (journaled as {@code DEL}). The
     * caller may mutate the value in place: during a snapshot the key's value at the cut is preserved first.
     */
    public Object get(Key key) {
      check(key);
      Entry e = liveEntry(key);
      if (e == null) {
        return null;
      }
      preserve(key, true);
      touch(key);
      watches.touch(key);
      return e.value;
    }

    /** Whether the key exists (live), without preparing it for mutation. */
    public boolean exists(Key key) {
      check(key);
      return liveEntry(key) != null;
    }

    /** The live value without preparing it for mutation: for commands that only read under the write. */
    public Object peek(Key key) {
      check(key);
      Entry e = liveEntry(key);
      return e == null ? null : e.value;
    }

    /** The live entry, touched as Redis's {@code lookupKeyWrite} touches it; an expired one is removed. */
    private Entry liveEntry(Key key) {
      Entry e = map.get(key);
      if (e != null && e.expired(Keyspace.this)) {
        removeEntry(key);
        journal(List.of(DEL, key.bytes()));
        return null;
      }
      if (e != null) {
        accessed(e);
      }
      return e;
    }

    /**
     * Sets a live key's last access {@code seconds} back ({@code RESTORE ... IDLETIME}), with the arithmetic of
     * Redis's {@code objectSetLRUOrLFU}, wrap included.
     */
    public void idle(Key key, long seconds) {
      check(key);
      Entry e = map.get(key);
      if (e == null) {
        throw new IllegalStateException("no such key: " + key);
      }
      long at = lruNow() - seconds;
      if (at < 0) {
        at += LRU_CLOCK_MAX;
      }
      e.lru = (int) (at & LRU_CLOCK_MAX);
    }

    /** Stores {@code value} at {@code key} with no expiry, replacing what was there. */
    public void put(Key key, Object value) {
      check(key);
      preserve(key, false);
      watches.touch(key);
      Entry old = map.put(key, new Entry(value, -1, lruNow()));
      expiring.remove(key);
      Entry now = map.get(key);
      usedBytes.addAndGet(now.bytes - (old == null ? 0 : old.bytes));
    }

    /** Removes the key; returns its value or {@code null}. */
    public Object remove(Key key) {
      check(key);
      Entry e = liveEntry(key);
      if (e == null) {
        return null;
      }
      removeEntry(key);
      return e.value;
    }

    private void removeEntry(Key key) {
      preserve(key, false);
      Entry old = map.remove(key);
      if (old != null) {
        watches.touch(key);
      }
      expiring.remove(key);
      if (old != null) {
        usedBytes.addAndGet(-old.bytes);
      }
    }

    /** Sets the absolute expiry (Unix ms), or removes it with {@code -1}. The key must exist. */
    public void expire(Key key, long expireAtMillis) {
      check(key);
      Entry e = liveEntry(key);
      if (e == null) {
        throw new IllegalStateException("no such key: " + key);
      }
      preserve(key, true);
      watches.touch(key);
      e.expireAt = expireAtMillis;
      if (expireAtMillis >= 0) {
        expiring.add(key);
      } else {
        expiring.remove(key);
      }
    }

    /** The expiry of a live key ({@code -1} none, {@code -2} missing). */
    public long expireAt(Key key) {
      check(key);
      Entry e = liveEntry(key);
      return e == null ? -2 : e.expireAt;
    }

    /** Appends a record to the journal now (under this write's locks); the reply waits for all of them. */
    public void journal(List<byte[]> argv) {
      CompletionStage<Void> stage;
      try {
        stage = journal.append(argv);
      } catch (RuntimeException e) {
        stage = CompletableFuture.failedFuture(e);
      }
      if (stage == DURABLE || isDurable(stage)) {
        return; // nothing to wait for (no journal, or already durable): the reply waits only for earlier records
      }
      CompletionStage<Void> before = journaled;
      journaled = before == DURABLE ? stage : before.thenCombine(stage, (a, b) -> null);
    }

    /** Completes when every record of this write is durable under the fsync policy. */
    public CompletionStage<Void> journaled() {
      return journaled;
    }

    /** Removes every key (FLUSHALL); only under {@link #writeAll}. */
    public void clear() {
      if (keys != null || one != null) {
        throw new IllegalStateException("not an exclusive write");
      }
      for (Key k : new ArrayList<>(map.keySet())) {
        removeEntry(k);
      }
    }

    /**
     * Enters this write again for a nested command (a transaction's commands run inside EXEC's write): the nested
     * close does not release anything. The nested command may only touch keys this write holds.
     */
    public Write reenter() {
      if (closed) {
        throw new IllegalStateException("write already closed");
      }
      depth++;
      return this;
    }

    /** Whether it has been closed. */
    public boolean closed() {
      return closed;
    }

    /** Whether this write may touch {@code key}. */
    public boolean holds(Key key) {
      return one != null ? one.equals(key) : keys == null || keys.contains(key);
    }

    /** Recounts the bytes of the values this write handed out for mutation, and releases the locks. */
    @Override
    public void close() {
      if (closed || --depth > 0) {
        return;
      }
      closed = true;
      try {
        if (touchedOne != null) {
          recount(touchedOne);
        }
        if (touched != null) {
          for (Key k : touched) {
            recount(k);
          }
        }
      } finally {
        if (lease != null) {
          lease.yieldIfContended();
        } else {
          cutLock.unlock();
          if (one != null) {
            locks.unlock(one);
          } else if (keys != null) {
            for (Key k : keys.descendingSet()) {
              locks.unlock(k);
            }
          }
        }
      }
    }

    private void recount(Key k) {
      Entry e = map.get(k);
      if (e != null) {
        long now = ValueType.of(e.value).memoryUsage(e.value);
        long delta = now - e.bytes;
        if (delta != 0) {
          e.bytes = now;
          usedBytes.addAndGet(delta);
        }
      }
    }
  }

  private static boolean isDurable(CompletionStage<Void> stage) {
    return stage instanceof CompletableFuture<Void> f && f.isDone() && !f.isCompletedExceptionally();
  }

  /** Before a write changes a key the running walk has not handed over, moves its value at the cut aside. */
  private void preserve(Key key, boolean copy) {
    Walk w = walk;
    if (w == null) {
      return;
    }
    Frozen atCut = w.pending.get(key);
    if (atCut != null) {
      // Freeze before un-listing: if that fails (no heap), the write fails and the walk still has the key.
      w.preserved.put(key, copy ? new Frozen(ValueType.of(atCut.value).freeze(atCut.value), atCut.expireAt) : atCut);
      w.pending.remove(key);
    }
  }

  /** Ends the copy on write of a value the walk kept ({@link ValueType#freeze}). */
  private static void release(Frozen kept) {
    if (kept.value() instanceof ScalableBloomFilter.Frozen view) {
      view.close();
    }
  }

  // ------------------------------------------------------------------------------------------------ expiry

  /**
   * One active-expiry pass: removes up to {@code budget} expired keys (each journaled as {@code DEL}).
   *
   * @return how many keys were removed
   */
  public int expireCycle(int budget) {
    if (expirySuspended) {
      return 0;
    }
    long now = clock.getAsLong();
    int removed = 0;
    for (Key k : expiring) {
      if (removed >= budget) {
        break;
      }
      Entry e = map.get(k);
      if (e == null) {
        expiring.remove(k);
        continue;
      }
      if (e.expired(now)) {
        try (Write w = write(k)) {
          if (w.peek(k) == null) {
            removed++;
          }
        }
      }
    }
    return removed;
  }

  // ------------------------------------------------------------------------------------------------ snapshot

  @Override
  public void snapshot(Runnable atCut, SnapshotSink sink) throws IOException {
    synchronized (snapshotMonitor) {
      Walk w = new Walk();
      List<Key> order;
      Lock exclusive = cut.writeLock();
      exclusive.lock();
      try {
        atCut.run();
        long now = expiryNow();
        map.forEach((k, e) -> {
          if (!e.expired(now)) {
            w.pending.put(k, new Frozen(e.value, e.expireAt));
          }
        });
        order = new ArrayList<>(w.pending.keySet());
        walk = w;
      } finally {
        exclusive.unlock();
      }
      try {
        for (Key k : order) {
          // Under the key's lock either way: the live value must not change while it is written, and a frozen view
          // reads the pages no write has copied from the live value, which the key's writers change.
          locks.lock(k);
          try {
            Frozen live = w.pending.remove(k);
            if (live != null) {
              sink.accept(k.bytes(), live.value(), live.expireAt());
            } else {
              Frozen saved = w.preserved.remove(k);
              if (saved != null) {
                try {
                  sink.accept(k.bytes(), saved.value(), saved.expireAt());
                } finally {
                  release(saved);
                }
              }
            }
          } finally {
            locks.unlock(k);
          }
        }
      } finally {
        // Ended under the exclusive side, so that no writer is still moving a key into the walk (after a failure
        // keys remain pending): every view the walk kept is closed here, none is left copying pages.
        exclusive.lock();
        try {
          walk = null;
        } finally {
          exclusive.unlock();
        }
        w.preserved.values().forEach(Keyspace::release);
      }
    }
  }
}
