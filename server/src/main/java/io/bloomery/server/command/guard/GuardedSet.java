package io.bloomery.server.command.guard;

import io.bloomery.guard.Guard;
import io.bloomery.guard.Verdict;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * One guarded key: its {@link Guard} (once built) and the group commit of single adds.
 *
 * <p>Group commit: single GUARD.ADDs from any number of clients go into one queue; at most {@link #MAX_IN_FLIGHT}
 * store transactions run at a time, each taking everything queued (up to {@link #MAX_BATCH} rows) as one multi-row
 * statement. While one commits, the next batch gathers, as an append-only log's shared fsync does. Each client's
 * future completes with its own row's outcome only after that transaction committed.
 */
final class GuardedSet {
  static final int MAX_BATCH = 1000;
  static final int MAX_IN_FLIGHT = 2;

  final byte[] key;
  final String storeName;
  final double errorRate;
  final long capacity;
  final long reservedAtMillis;
  private final Executor io;
  private volatile Guard guard;
  private volatile String state = "building";
  private final ConcurrentLinkedQueue<Pending> queue = new ConcurrentLinkedQueue<>();
  private final AtomicInteger inFlight = new AtomicInteger();
  final LongAdder groupCommits = new LongAdder();
  final LongAdder groupCommitRows = new LongAdder();

  private record Pending(byte[] item, CompletableFuture<Boolean> result) {}

  GuardedSet(byte[] key, String storeName, double errorRate, long capacity, Executor io) {
    this.key = key;
    this.storeName = storeName;
    this.errorRate = errorRate;
    this.capacity = capacity;
    this.io = io;
    this.reservedAtMillis = System.currentTimeMillis();
  }

  /** The built guard, or {@code null} while it is being built or reopened. */
  Guard guard() {
    return guard;
  }

  String state() {
    return state;
  }

  void built(Guard g) {
    guard = g;
    state = "ready";
  }

  void state(String s) {
    state = s;
  }

  /** Single add through the group commit; completes (on a store thread) with new or duplicate. */
  CompletableFuture<Boolean> add(Guard g, byte[] item) {
    Pending p = new Pending(item, new CompletableFuture<>());
    queue.add(p);
    kick(g);
    return p.result();
  }

  private void kick(Guard g) {
    while (!queue.isEmpty()) {
      int n = inFlight.get();
      if (n >= MAX_IN_FLIGHT) {
        return; // a running flush takes the queue when it ends
      }
      if (inFlight.compareAndSet(n, n + 1)) {
        try {
          io.execute(() -> flush(g));
        } catch (RuntimeException e) {
          inFlight.decrementAndGet();
          failQueued(e);
        }
        return;
      }
    }
  }

  private void failQueued(RuntimeException e) {
    Pending p;
    while ((p = queue.poll()) != null) {
      p.result().completeExceptionally(e);
    }
  }

  private void flush(Guard g) {
    try {
      List<Pending> batch = new ArrayList<>();
      Pending p;
      while (batch.size() < MAX_BATCH && (p = queue.poll()) != null) {
        batch.add(p);
      }
      if (batch.isEmpty()) {
        return;
      }
      List<byte[]> items = new ArrayList<>(batch.size());
      for (Pending each : batch) {
        items.add(each.item());
      }
      boolean[] inserted;
      try {
        inserted = g.addIfAbsent(items); // one transaction; a repeat inside the batch is new only once
      } catch (RuntimeException e) {
        for (Pending each : batch) {
          each.result().completeExceptionally(e);
        }
        return;
      }
      groupCommits.increment();
      groupCommitRows.add(batch.size());
      for (int i = 0; i < batch.size(); i++) {
        batch.get(i).result().complete(inserted[i]);
      }
    } finally {
      inFlight.decrementAndGet();
      kick(g);
    }
  }

  /** Lookups of several items: filter negatives never reach the store, the "maybe"s go in one round trip. */
  static List<Verdict> lookupAll(Guard g, List<byte[]> items) {
    return g.lookup(items);
  }
}
