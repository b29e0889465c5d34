package io.bloomery.server.command.guard;

import io.bloomery.guard.ExactStore;
import io.bloomery.guard.Guard;
import io.bloomery.guard.Verdict;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.concurrent.atomic.LongAdder;

/**
 * One guarded key: its {@link Guard} (once built) and the group commit of single adds.
 *
 * <p>Group commit: single GUARD.ADDs from any number of clients go into one queue; at most {@link #MAX_IN_FLIGHT}
 * store transactions run at a time, each taking everything queued (up to {@link #MAX_BATCH} rows) as one multi-row
 * statement. While one commits, the next batch gathers, as an append-only log's shared fsync does. Each client's
 * future completes with its own row's outcome only after that transaction committed.
 *
 * <p>Stored but never acknowledged: an item this process inserted whose {@code 1} reached nobody (its reply had
 * already answered STOREDOWN on timeout, or the connection was lost during the commit, so the commit's outcome is
 * unknown) is remembered in memory; the next GUARD.ADD/MADD of it that the store answers "duplicate" answers
 * {@code 1} instead, once, and forgets it. The mark is taken before the commit is sent, so a retry that waited on
 * the row's unique index always finds it. Only this process remembers: another process, or this one after a
 * restart, answers {@code 0} for such an item.
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

  private final ConcurrentHashMap<ByteBuffer, CompletableFuture<Boolean>> unacknowledged = new ConcurrentHashMap<>();
  private static final long MARK_WAIT_MILLIS = 10_000;

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

  /** How many items this process stored whose {@code 1} was never delivered (see the class comment). */
  int unacknowledged() {
    return unacknowledged.size();
  }

  /**
   * Single add through the group commit; completes (on a store thread) with new or duplicate, or with a
   * {@link TimeoutException} after {@code timeoutMillis} (then a late commit is remembered as unacknowledged).
   */
  CompletableFuture<Boolean> add(Guard g, byte[] item, long timeoutMillis) {
    Pending p = new Pending(item, new CompletableFuture<Boolean>().orTimeout(timeoutMillis, TimeUnit.MILLISECONDS));
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
      store(g, items, answers -> { // one transaction; a repeat inside the batch is new only once
        groupCommits.increment();
        groupCommitRows.add(batch.size());
        boolean[] delivered = new boolean[answers.length];
        for (int i = 0; i < answers.length; i++) {
          delivered[i] = batch.get(i).result().complete(answers[i]);
        }
        return delivered;
      }, e -> {
        for (Pending each : batch) {
          each.result().completeExceptionally(e);
        }
      });
    } finally {
      inFlight.decrementAndGet();
      kick(g);
    }
  }

  /**
   * One store transaction for {@code items}. {@code deliver} gets the answers (a duplicate that this process
   * stored but never acknowledged answers new) and says for each whether it reached its client; {@code fail} gets
   * a store failure. Blocking, on a store thread.
   */
  void store(Guard g, List<byte[]> items, Function<boolean[], boolean[]> deliver, Consumer<RuntimeException> fail) {
    Map<ByteBuffer, CompletableFuture<Boolean>> mine = new HashMap<>();
    ExactStore.BeforeCommit remember = inserted -> { // before the commit is sent: a retry blocked on it sees this
      for (int i = 0; i < inserted.length; i++) {
        if (inserted[i]) {
          CompletableFuture<Boolean> mark = new CompletableFuture<>();
          mine.put(ByteBuffer.wrap(items.get(i)), mark);
          unacknowledged.put(ByteBuffer.wrap(items.get(i)), mark);
        }
      }
    };
    boolean[] inserted;
    try {
      inserted = g.addIfAbsent(items, remember);
    } catch (IOException e) {
      throw new UncheckedIOException(e); // remember throws nothing
    } catch (RuntimeException e) {
      // if the marks were taken, only the commit's outcome is unknown: stored or not, nobody was told 1
      mine.values().forEach(m -> m.complete(true));
      fail.accept(e);
      return;
    }
    boolean[] answers = inserted.clone();
    Map<Integer, CompletableFuture<Boolean>> claimed = new HashMap<>();
    for (int i = 0; i < items.size(); i++) {
      ByteBuffer k = ByteBuffer.wrap(items.get(i));
      CompletableFuture<Boolean> m = inserted[i] ? null : unacknowledged.get(k);
      if (m != null && mine.get(k) != m && awaitMark(m) && unacknowledged.remove(k, m)) {
        answers[i] = true;
        claimed.put(i, m);
      }
    }
    boolean[] delivered = deliver.apply(answers);
    for (int i = 0; i < items.size(); i++) {
      ByteBuffer k = ByteBuffer.wrap(items.get(i));
      if (inserted[i]) {
        CompletableFuture<Boolean> m = mine.get(k);
        m.complete(!delivered[i]);
        if (delivered[i]) {
          unacknowledged.remove(k, m);
        }
      } else if (claimed.containsKey(i) && !delivered[i]) {
        unacknowledged.putIfAbsent(k, claimed.get(i)); // its 1 reached nobody this time either
      }
    }
  }

  /** Whether a mark's batch left its item unacknowledged; the batch already committed, so it settles soon. */
  private static boolean awaitMark(CompletableFuture<Boolean> mark) {
    try {
      return mark.get(MARK_WAIT_MILLIS, TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    } catch (ExecutionException | TimeoutException e) {
      return false;
    }
  }

  /** Lookups of several items: filter negatives never reach the store, the "maybe"s go in one round trip. */
  static List<Verdict> lookupAll(Guard g, List<byte[]> items) {
    return g.lookup(items);
  }
}
