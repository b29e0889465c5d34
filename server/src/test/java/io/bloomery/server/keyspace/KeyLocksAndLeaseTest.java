package io.bloomery.server.keyspace;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * The per-key locks exclude each other, are dropped when nobody holds or waits for them, and a connection's lease
 * keeps one key's lock between commands until it is released, the connection writes another key, or another thread
 * waits for that key at the end of a command.
 */
class KeyLocksAndLeaseTest {

  /** A counter that would lose increments if two holders of the same key's lock overlapped. */
  private static final class Unsafe {
    long value;
  }

  @Test
  void locksExcludeEachOtherAndAreDroppedWhenUnused() throws Exception {
    KeyLocks locks = new KeyLocks();
    Key[] keys = {Key.of("a"), Key.of("b"), Key.of("c")};
    Unsafe[] counters = {new Unsafe(), new Unsafe(), new Unsafe()};
    int threads = 6;
    int rounds = 20_000;
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      List<Future<?>> done = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        int seed = t;
        done.add(pool.submit(() -> {
          for (int i = 0; i < rounds; i++) {
            int k = (seed + i) % keys.length;
            locks.lock(keys[k]);
            try {
              counters[k].value++;
              if (i % 97 == 0) {
                locks.lock(keys[k]); // reentrant
                counters[k].value++;
                locks.unlock(keys[k]);
              }
            } finally {
              locks.unlock(keys[k]);
            }
          }
        }));
      }
      for (Future<?> f : done) {
        f.get(60, TimeUnit.SECONDS);
      }
    } finally {
      pool.shutdownNow();
    }
    long expected = 0;
    for (int t = 0; t < threads; t++) {
      for (int i = 0; i < rounds; i++) {
        expected += i % 97 == 0 ? 2 : 1;
      }
    }
    assertThat(counters[0].value + counters[1].value + counters[2].value).isEqualTo(expected);
    assertThat(locks.size()).isZero();
  }

  @Test
  void aLeaseHoldsItsKeyAcrossWritesUntilReleased() throws Exception {
    Keyspace ks = new Keyspace(System::currentTimeMillis);
    Key a = Key.of("a");
    Key b = Key.of("b");
    Keyspace.Lease lease = ks.lease();
    try (Keyspace.Write w = ks.write(a, lease)) {
      assertThat(w.holds(a)).isTrue();
      assertThat(w.holds(b)).isFalse();
    }
    assertThat(lease.held()).isTrue();

    AtomicBoolean otherWrote = new AtomicBoolean();
    CountDownLatch started = new CountDownLatch(1);
    Thread other = new Thread(() -> {
      started.countDown();
      try (Keyspace.Write w = ks.write(a)) {
        otherWrote.set(true);
      }
    });
    other.start();
    started.await();
    while (ks.locks().users(a) < 2) { // the other writer has counted itself in: it spins or parks on the lock
      Thread.onSpinWait();
    }
    // the other writer of "a" cannot get in while the lease holds it, also during a further command on the lease;
    // at that command's end the lease sees the waiter and lets go, so the waiter gets in before the next command
    try (Keyspace.Write w = ks.write(a, lease)) {
      assertThat(lease.held()).isTrue();
      assertThat(otherWrote).isFalse();
    }
    assertThat(lease.held()).isFalse();
    other.join(60_000);
    assertThat(otherWrote).isTrue();
    lease.release(); // idempotent once let go

    // a write of another key lets go of the first one: a writer of "a" then gets in while the lease holds "b"
    try (Keyspace.Write w = ks.write(a, lease)) {
      assertThat(w.holds(a)).isTrue();
    }
    try (Keyspace.Write w = ks.write(b, lease)) {
      assertThat(w.holds(b)).isTrue();
    }
    Thread third = new Thread(() -> {
      try (Keyspace.Write w = ks.write(a)) {
        otherWrote.set(false);
      }
    });
    third.start();
    third.join(60_000);
    assertThat(otherWrote).isFalse();
    lease.release();
    lease.release(); // idempotent

    // nothing is left locked: a whole-keyspace write (which waits for every shared holder) goes through
    cut(ks).run();
    assertThat(ks.locks().size()).isZero();
  }

  @Test
  void aLeaseMovesToAFreeKeyKeepingTheSharedSide() throws Exception {
    Keyspace ks = new Keyspace(System::currentTimeMillis);
    Key a = Key.of("a");
    Key b = Key.of("b");
    Keyspace.Lease lease = ks.lease();
    try (Keyspace.Write w = ks.write(a, lease)) {
      assertThat(w.holds(a)).isTrue();
    }
    try (Keyspace.Write w = ks.write(b, lease)) {
      assertThat(w.holds(b)).isTrue();
      assertThat(w.holds(a)).isFalse();
    }
    assertThat(ks.locks().isHeldByCurrentThread(b)).isTrue();
    assertThat(ks.locks().isHeldByCurrentThread(a)).isFalse();
    ExecutorService pool = Executors.newFixedThreadPool(2);
    try {
      // "a" was let go: another writer of it gets in while the lease holds "b"
      assertThat(writeOn(pool, ks, a, null)).isTrue();
      // the shared side was kept: a cut (which waits for every shared holder) waits until the lease lets go
      Future<?> cut = startParked(pool, cut(ks));
      lease.release();
      cut.get(60, TimeUnit.SECONDS);
    } finally {
      pool.shutdownNow();
    }
    assertThat(ks.locks().size()).isZero();
  }

  /**
   * The order that could deadlock: the lease holds the shared side, a cut waits for it, and another writer holds key
   * "c" while it waits for the shared side behind that cut. The lease's next write of "c" must let go of the shared
   * side instead of waiting for "c" with it, so all three finish.
   */
  @Test
  void aLeaseNeverWaitsForAKeyWhileHoldingTheSharedSide() throws Exception {
    Keyspace ks = new Keyspace(System::currentTimeMillis);
    Key a = Key.of("a");
    Key c = Key.of("c");
    ExecutorService pool = Executors.newFixedThreadPool(2);
    ExecutorService leaseThread = Executors.newSingleThreadExecutor(); // a lease's locks belong to one thread
    try {
      Keyspace.Lease lease = ks.lease();
      assertThat(writeOn(leaseThread, ks, a, lease)).isTrue();
      Future<?> cut = startParked(pool, cut(ks));
      Future<?> writer = startParked(pool, () -> {
        try (Keyspace.Write w = ks.write(c)) { // takes "c", then waits for the shared side behind the cut
          w.put(c, io.bloomery.scalable.ScalableBloomFilter.create(100, 0.01));
        }
      });
      assertThat(ks.locks().users(c)).isEqualTo(1);
      assertThat(writeOn(leaseThread, ks, c, lease)).isTrue();
      cut.get(60, TimeUnit.SECONDS);
      writer.get(60, TimeUnit.SECONDS);
      assertThat(ks.peek(c)).isNotNull();
      leaseThread.submit(lease::release).get(60, TimeUnit.SECONDS);
    } finally {
      pool.shutdownNow();
      leaseThread.shutdownNow();
    }
    assertThat(ks.locks().size()).isZero();
  }

  /** Writes {@code key} on {@code thread}, under {@code lease} unless null; whether the write held the key. */
  private static boolean writeOn(ExecutorService thread, Keyspace ks, Key key, Keyspace.Lease lease)
      throws Exception {
    return thread.submit(() -> {
      try (Keyspace.Write w = lease == null ? ks.write(key) : ks.write(key, lease)) {
        return w.holds(key);
      }
    }).get(60, TimeUnit.SECONDS);
  }

  /** A snapshot's cut, as far as locks go: the exclusive side of the cut lock. */
  private static Runnable cut(Keyspace ks) {
    return () -> {
      try (Keyspace.Write all = ks.writeAll()) {
        all.clear();
      }
    };
  }

  /** Starts {@code body} on {@code pool}; returns once its thread is parked (waiting for a lock). */
  private static Future<?> startParked(ExecutorService pool, Runnable body) throws InterruptedException {
    AtomicReference<Thread> thread = new AtomicReference<>();
    Future<?> task = pool.submit(() -> {
      thread.set(Thread.currentThread());
      body.run();
    });
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (thread.get() == null || thread.get().getState() != Thread.State.WAITING) {
      assertThat(task.isDone()).as("the task ended instead of waiting for a lock").isFalse();
      assertThat(System.nanoTime()).as("the task's thread never parked").isLessThan(deadline);
      Thread.sleep(1);
    }
    return task;
  }
}
