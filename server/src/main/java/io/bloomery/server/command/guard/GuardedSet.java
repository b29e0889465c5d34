package io.bloomery.server.command.guard;

import io.bloomery.guard.DeliveryLedger;
import io.bloomery.guard.ExactStore;
import io.bloomery.guard.Guard;
import io.bloomery.guard.LedgerStore;
import io.bloomery.guard.StoreUnavailableException;
import io.bloomery.guard.Verdict;
import io.bloomery.plan.FilterPlan;
import io.bloomery.plan.FilterPlanner;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One guarded key: its {@link Guard} (once built) and the group commit of its adds.
 *
 * <p>Three queues of this key run through one {@link Batcher} each: the group commit of adds, the coalesced
 * confirmation of lookups, and the clearing of delivered items' store marks.
 *
 * <p>Group commit: GUARD.ADD and GUARD.MADD requests from any number of clients go into one queue; up to
 * {@link #MAX_IN_FLIGHT} store transactions run at a time, each taking what is queued when it starts (up to
 * {@link #MAX_BATCH} items) as one multi-row statement. While it commits, the next batch gathers, as an
 * append-only log's shared fsync does. One in flight: two halve the batches (10-11 rows against 19-25 for 50
 * clients) and so double the transactions, which on two vCPUs cost more CPU per add than the overlap of one
 * commit with the next statement wins back; only at load averages above 13 did two do better (docs/BENCHMARKS.md,
 * the add path profiled). One in flight is also what the {@link DeliveryLedger} relies on: the in-memory marks a
 * batch finds before its transaction cannot change before it, and a batch's marks are made (right after its store
 * call returned, before any reply) before the next batch of the key starts. Each request completes with its own
 * items' outcomes only after its transaction committed. A request with a token runs in a transaction of its own
 * (its reply is stored under the token).
 *
 * <p>Acknowledgements (docs/GUARD.md, "Acknowledgements across a crash"): the transaction that answers an item
 * {@code 1} also marks it pending in the store under the owner of this key's {@link #ledger} (a fresh id per
 * process); the mark is cleared, in the next transaction or (after {@link #ACK_DELAY_MILLIS}) a short one of its
 * own, once the reply reached the client's socket. An item whose {@code 1} reached nobody keeps its mark, so a later
 * add of it answers {@code 1}: in this process through the in-memory mark (which also keeps two of this process's
 * clients from both being told 1; a batch waits for an earlier answer's delivery before its transaction opens), in
 * another process or after a restart through the store's mark of a foreign owner, which that add claims in its
 * transaction. With a token the answers are stored under it instead and a retry gets them back.
 */
final class GuardedSet {
  private static final Logger LOG = LoggerFactory.getLogger(GuardedSet.class);
  static final int MAX_BATCH = 1000;
  static final int MAX_IN_FLIGHT = 1;
  /** Confirmation queries of a key's lookups in flight at once. */
  static final int MAX_CONFIRMS_IN_FLIGHT = 2;
  private static final int MAX_ACKS_PER_TRANSACTION = 10_000;
  /** How long delivered items' marks wait for a batch to carry their deletion before a transaction of their own. */
  static final long ACK_DELAY_MILLIS = 50;
  /** Items one coalesced confirmation query asks for at most (a lookup is never split). */
  static final int MAX_CONFIRM_ITEMS = 10_000;

  final byte[] key;
  final String storeName;
  final double errorRate;
  final long capacity;
  final long reservedAtMillis;
  /** The filter the guard builds for a store holding fewer than 80% of the capacity: what RESERVE admits. */
  final FilterPlan plan;
  /** This key's delivery ledger in this process; its owner id is new on every start. */
  final DeliveryLedger ledger = new DeliveryLedger();
  private volatile Guard guard;
  private volatile String state = "building";
  /** Completes once the key's guard is built (never, if the key is dropped first: then exceptionally). */
  final CompletableFuture<Void> ready = new CompletableFuture<>();
  /**
   * On a cluster node: the guard and the leadership term for which a freshness fence came back through the guard's
   * replication stream (every row committed before this node led the shard is in that filter); {@code null} none.
   */
  volatile Fresh fresh;
  /** On a cluster node: the last rebuild the shard's log asked for, or {@code null}. */
  volatile CompletableFuture<Void> rebuild;

  /** A guard fenced fresh for a leadership term ({@link #fresh}). */
  record Fresh(Guard guard, long term) {}
  /** An open attempt (build or reopen) is running; guarded by this. */
  private boolean opening;
  /** The key was dropped (or its reserve failed): a guard opened now is closed at once; guarded by this. */
  private boolean discarded;
  /** The bytes this key counts against {@code maxmemory} now; guarded by this. */
  private long accounted;
  private final ConcurrentLinkedQueue<Request> queue = new ConcurrentLinkedQueue<>();
  /** The group commit: runs {@link #flush} for what is queued, {@link #MAX_IN_FLIGHT} at a time. */
  private final Batcher<Guard> commits;
  /** The requests each running flush took from the queue (at most {@link #MAX_IN_FLIGHT} lists). */
  private final ConcurrentLinkedQueue<List<Request>> running = new ConcurrentLinkedQueue<>();
  /** Whether a deadline sweep is scheduled; one at a time, for the oldest request still waiting. */
  private final AtomicBoolean sweepScheduled = new AtomicBoolean();
  final LongAdder groupCommits = new LongAdder();
  final LongAdder groupCommitRows = new LongAdder();
  /** Transactions that only cleared pending marks (no batch came along to carry them). */
  final LongAdder ackTransactions = new LongAdder();

  /** Clears delivered items' store marks in a transaction of their own, {@link #ACK_DELAY_MILLIS} after a kick. */
  private final Batcher<Guard> acks;

  /** Lookups whose "maybe"s wait for the store; one query confirms all that are queued when it starts. */
  private final ConcurrentLinkedQueue<Confirmation> confirmations = new ConcurrentLinkedQueue<>();
  /** Runs {@link #confirmQueued}, {@link #MAX_CONFIRMS_IN_FLIGHT} at a time. */
  private final Batcher<Guard> confirms;
  /** Confirmation queries run, and how many lookups (GUARD.EXISTS/MEXISTS calls) they answered. */
  final LongAdder confirmQueries = new LongAdder();
  final LongAdder confirmLookups = new LongAdder();
  /** Lookups waiting for the store now (queued or in a running query). */
  final AtomicInteger confirmWaiting = new AtomicInteger();

  /**
   * One GUARD.ADD or GUARD.MADD: its items, its token (or null), its answers once committed, or a {@link
   * TimeoutException} at its deadline.
   */
  final class Request {
    final List<byte[]> items;
    final byte[] token;
    final CompletableFuture<boolean[]> result = new CompletableFuture<>();
    /** {@link System#nanoTime()} when the result turns into a timeout if the commit has not answered it. */
    private final long deadlineNanos;
    private final List<DeliveryLedger.Mark> marks = new ArrayList<>(1);

    private Request(List<byte[]> items, byte[] token, long timeoutMillis) {
      this.items = items;
      this.token = token;
      this.deadlineNanos = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
    }

    /** The connection wrote the request's reply to its socket ({@code ok}) or could not. */
    void written(boolean ok) {
      if (result.isDone() && !result.isCompletedExceptionally()) {
        settle(this, ok); // else the reply was an error; the store thread settles the marks when it ends
      }
    }
  }

  /**
   * @throws IllegalArgumentException if no filter of the planned kind holds {@code capacity} at {@code errorRate}
   */
  GuardedSet(byte[] key, String storeName, double errorRate, long capacity, Executor io) {
    this.key = key;
    this.storeName = storeName;
    this.errorRate = errorRate;
    this.capacity = capacity;
    this.reservedAtMillis = System.currentTimeMillis();
    this.plan = FilterPlanner.plan(capacity, errorRate);
    this.commits = new Batcher<>(io, MAX_IN_FLIGHT, 0, () -> !queue.isEmpty(), g -> {
      flush(g);
      return true;
    }, this::failQueued);
    // Under load the next group commit carries the deletions at no extra cost: a transaction of their own is
    // started only while none runs, so an idle key gets its marks cleared shortly after its last reply.
    this.acks = new Batcher<>(io, 1, ACK_DELAY_MILLIS,
        () -> commits.inFlight() == 0 && ledger.hasAcknowledgements(), this::acknowledgeQueued, e -> {});
    this.commits.followedBy(acks);
    this.confirms = new Batcher<>(io, MAX_CONFIRMS_IN_FLIGHT, 0, () -> !confirmations.isEmpty(), g -> {
      confirmQueued(g);
      return true;
    }, e -> {
      Confirmation c;
      while ((c = confirmations.poll()) != null) {
        c.result.completeExceptionally(new StoreUnavailableException("the server is shutting down", e));
      }
    });
  }

  /** The built guard, or {@code null} while it is being built or reopened. */
  Guard guard() {
    return guard;
  }

  String state() {
    return state;
  }

  /** Starts an open attempt; {@code false} if the key was dropped (nothing is to be opened). */
  synchronized boolean startOpening() {
    opening = !discarded;
    return opening;
  }

  /** Ends an open attempt with its guard: {@code false} if the key was dropped meanwhile (the caller closes it). */
  synchronized boolean built(Guard g) {
    opening = false;
    if (discarded) {
      return false;
    }
    guard = g;
    state = "ready";
    ready.complete(null);
    return true;
  }

  /** Ends an open attempt that failed: whether the key was dropped meanwhile (its slot is the caller's to drop). */
  synchronized boolean openFailed() {
    opening = false;
    return discarded;
  }

  /** Marks the key dropped; its guard to close, or {@code null} if none is open. */
  synchronized Guard discard() {
    discarded = true;
    ready.completeExceptionally(new IllegalStateException("the guarded key was dropped"));
    return guard;
  }

  /** Whether an open attempt is running (it closes what it opens if the key was dropped). */
  synchronized boolean opening() {
    return opening;
  }

  /** The bytes counted against {@code maxmemory} for this key: its guard's filters, else its planned filter's. */
  synchronized long accountedBytes() {
    return accounted;
  }

  /**
   * Sets the bytes this key counts to what it holds now (its guard's {@link Guard#filterBytes()}, the planned
   * filter's while it is built, none once dropped) and returns the change.
   */
  synchronized long recount() {
    Guard g = guard;
    long now = discarded ? 0 : g != null ? g.filterBytes() : plan.bitmapBytes();
    long change = now - accounted;
    accounted = now;
    return change;
  }

  void state(String s) {
    state = s;
  }

  /** How many items this process answered 1 whose reply is not known to have been delivered. */
  int unacknowledged() {
    return ledger.unacknowledged();
  }

  /**
   * Adds {@code items} through the group commit; the request's result completes (on a store thread) with new or
   * duplicate per item, or with a {@link TimeoutException} after {@code timeoutMillis}.
   */
  Request add(Guard g, List<byte[]> items, byte[] token, long timeoutMillis) {
    Request r = new Request(items, token, timeoutMillis);
    queue.add(r);
    watchDeadlines();
    commits.kick(g);
    return r;
  }

  /*
   * Deadlines: every request has the same timeout, so the queue and the running transactions hold them oldest
   * first, and one delayed sweep at a time, due at the oldest deadline still open, bounds them all. A timer per
   * request (CompletableFuture.orTimeout) cost a hand-off to the JDK's delay-scheduler thread for every add and
   * again for its cancellation: with 50 clients sending single adds that thread took a third as much CPU as the
   * event loops that decoded the adds and wrote their replies.
   */

  /** Schedules a sweep for the oldest open deadline unless one is scheduled. */
  private void watchDeadlines() {
    if (sweepScheduled.get() || !sweepScheduled.compareAndSet(false, true)) {
      return;
    }
    long next = oldestOpenDeadline(System.nanoTime());
    if (next == Long.MAX_VALUE) {
      sweepScheduled.set(false);
      if (hasOpenRequest()) {
        watchDeadlines(); // one came in meanwhile
      }
      return;
    }
    try {
      CompletableFuture.delayedExecutor(Math.max(0, next - System.nanoTime()), TimeUnit.NANOSECONDS)
          .execute(this::sweepDeadlines);
    } catch (RuntimeException e) {
      sweepScheduled.set(false); // no scheduler (shutting down): the requests still end with their transaction
    }
  }

  /** Fails the requests past their deadline with a {@link TimeoutException} and schedules the next sweep. */
  private void sweepDeadlines() {
    oldestOpenDeadline(System.nanoTime());
    sweepScheduled.set(false);
    watchDeadlines();
  }

  /**
   * Times out the open requests past {@code now}; the deadline of the oldest one still open, or {@link
   * Long#MAX_VALUE} if none is.
   */
  private long oldestOpenDeadline(long now) {
    long next = Long.MAX_VALUE;
    for (List<Request> batch : running) {
      for (Request r : batch) {
        next = Math.min(next, timeOutIfDue(r, now));
      }
    }
    for (Request r : queue) {
      long d = timeOutIfDue(r, now);
      if (d != Long.MAX_VALUE) {
        next = Math.min(next, d);
        break; // the queue is in deadline order: the ones behind are later
      }
    }
    return next;
  }

  /** The request's deadline if it is still open and not due; otherwise (timed out now or answered) MAX_VALUE. */
  private static long timeOutIfDue(Request r, long now) {
    if (r.result.isDone()) {
      return Long.MAX_VALUE;
    }
    if (now - r.deadlineNanos >= 0) {
      r.result.completeExceptionally(new TimeoutException());
      return Long.MAX_VALUE;
    }
    return r.deadlineNanos;
  }

  private boolean hasOpenRequest() {
    for (List<Request> batch : running) {
      for (Request r : batch) {
        if (!r.result.isDone()) {
          return true;
        }
      }
    }
    for (Request r : queue) {
      if (!r.result.isDone()) {
        return true;
      }
    }
    return false;
  }

  private void failQueued(RuntimeException e) {
    Request r;
    while ((r = queue.poll()) != null) {
      r.result.completeExceptionally(e);
    }
  }

  private void flush(Guard g) {
    List<Request> taken = new ArrayList<>();
    try {
      List<Request> batch = new ArrayList<>();
      int items = 0;
      Request r;
      while (items < MAX_BATCH && taken.size() < MAX_BATCH && (r = queue.poll()) != null) {
        taken.add(r);
        if (r.token == null) {
          batch.add(r);
          items += r.items.size();
        }
      }
      // Published whole (never changed after): the deadline sweep reads it from other threads.
      taken = List.copyOf(taken);
      running.add(taken);
      watchDeadlines(); // a sweep that ran while they were taken from the queue may have missed them
      for (Request t : taken) {
        if (t.token != null) {
          run(g, List.of(t)); // its stored reply is its own
        }
      }
      if (!batch.isEmpty()) {
        run(g, batch);
      }
    } finally {
      running.remove(taken);
    }
  }

  /**
   * One store transaction for the requests' items (blocking, on a store thread). The ledger waits for its earlier
   * answers' delivery before the transaction opens; the transaction decides with what it found and calls nothing.
   */
  private void run(Guard g, List<Request> batch) {
    List<byte[]> items = new ArrayList<>();
    List<Request> requestOf = new ArrayList<>();
    for (Request r : batch) {
      for (byte[] item : r.items) {
        items.add(item);
        requestOf.add(r);
      }
    }
    byte[] token = batch.get(0).token;
    DeliveryLedger.Batch b = ledger.begin(items, token, token == null ? null : requestDigest(items),
        ledger.takeAcknowledgements(MAX_ACKS_PER_TRANSACTION));
    LedgerStore.Recorded recorded;
    try {
      recorded = g.addIfAbsent(items, b.ledger(), b.decide());
    } catch (RuntimeException e) {
      attach(b.failed(), requestOf);
      for (Request r : batch) {
        r.result.completeExceptionally(e);
        settle(r, false); // stored or not, nobody was told 1: the marks stay
      }
      return;
    }
    attach(b.committed(), requestOf);
    groupCommits.increment();
    groupCommitRows.add(items.size());
    int at = 0;
    for (Request r : batch) {
      boolean[] mine = Arrays.copyOfRange(recorded.answers(), at, at + r.items.size());
      at += r.items.size();
      if (!r.result.complete(mine)) {
        settle(r, false); // it had answered STOREDOWN on its timeout
      }
    }
  }

  /** Hands each item's mark to the request the item came from, which settles it once its reply is written. */
  private static void attach(DeliveryLedger.Mark[] marks, List<Request> requestOf) {
    for (int i = 0; i < marks.length; i++) {
      if (marks[i] != null) {
        requestOf.get(i).marks.add(marks[i]);
      }
    }
  }

  /** The request's 1s reached their client ({@code delivered}) or not; a delivered item's mark is cleared. */
  private void settle(Request r, boolean delivered) {
    for (DeliveryLedger.Mark m : r.marks) {
      m.settle(delivered);
    }
    Guard g = guard;
    if (delivered && g != null) {
      acks.kick(g);
    }
  }

  /**
   * Clears the store marks of delivered items in a short transaction of their own (no batch carried them); {@code
   * false} if that failed: the next batch or delivery tries again.
   */
  private boolean acknowledgeQueued(Guard g) {
    List<byte[]> taken = ledger.takeAcknowledgements(MAX_ACKS_PER_TRANSACTION);
    if (taken.isEmpty()) {
      return true;
    }
    try {
      g.acknowledge(ledger.owner(), taken);
      ackTransactions.increment();
      return true;
    } catch (RuntimeException e) {
      ledger.requeueAcknowledgements(taken); // the next batch carries them; meanwhile a crash answers them 1 again
      LOG.debug("clearing {} pending marks failed: {}", taken.size(), e.toString());
      return false;
    }
  }

  /**
   * On a clean shutdown, before the guard closes: clears the store marks of the delivered items still queued, so
   * that a restart does not answer them 1 again. Blocking.
   */
  void flushAcknowledgements() {
    Guard g = guard;
    List<byte[]> acks = ledger.takeAcknowledgements(Integer.MAX_VALUE);
    if (g == null || acks.isEmpty()) {
      return;
    }
    try {
      g.acknowledge(ledger.owner(), acks);
    } catch (RuntimeException e) {
      LOG.warn("clearing {} pending marks on shutdown failed (a retry after the restart answers them 1 again): {}",
          acks.size(), e.toString());
    }
  }

  /** What a token's stored reply is checked against: the SHA-256 of the items, each length-prefixed. */
  static byte[] requestDigest(List<byte[]> items) {
    try {
      MessageDigest md = MessageDigest.getInstance("SHA-256");
      md.update(Integer.toString(items.size()).getBytes(StandardCharsets.US_ASCII));
      for (byte[] item : items) {
        md.update(ByteBuffer.allocate(4).putInt(item.length).array());
        md.update(item);
      }
      return md.digest();
    } catch (NoSuchAlgorithmException e) {
      throw new AssertionError("every JDK ships SHA-256", e);
    }
  }

  // ------------------------------------------------------------------------- coalesced confirmations

  /**
   * Confirms in the store what {@code lookup}'s filter could not answer, together with the lookups of every other
   * connection queued meanwhile on this key: the result completes (on a store thread) with the verdicts, or with a
   * {@link TimeoutException} after {@code timeoutMillis}, or with the store's failure.
   */
  CompletableFuture<List<Verdict>> confirm(Guard g, Guard.Lookup lookup, long timeoutMillis) {
    Confirmation c = new Confirmation(lookup,
        new CompletableFuture<List<Verdict>>().orTimeout(timeoutMillis, TimeUnit.MILLISECONDS));
    confirmWaiting.incrementAndGet();
    // The caller's reply depends on the stage returned here, so the lookup has left the waiting count before its
    // client can see the answer (a dependent registered on c.result itself would run before this one: a future's
    // dependents run last-registered first).
    CompletableFuture<List<Verdict>> answered = c.result.whenComplete((v, e) -> confirmWaiting.decrementAndGet());
    confirmations.add(c);
    confirms.kick(g);
    return answered;
  }

  /** One lookup waiting for the store. */
  private record Confirmation(Guard.Lookup lookup, CompletableFuture<List<Verdict>> result) {}

  /**
   * Takes every queued lookup (up to {@link #MAX_CONFIRM_ITEMS} items) and confirms the union of their items in one
   * {@code = ANY} statement (an item asked by several lookups is sent once), then hands each lookup its answers.
   */
  private void confirmQueued(Guard g) {
    List<Confirmation> batch = new ArrayList<>();
    List<int[]> positions = new ArrayList<>();
    List<byte[]> union = new ArrayList<>();
    Map<ByteBuffer, Integer> index = new HashMap<>();
    Confirmation c;
    while (union.size() < MAX_CONFIRM_ITEMS && (c = confirmations.poll()) != null) {
      List<byte[]> asked;
      try {
        asked = c.lookup.toConfirm(); // a catch-up store reads other writers' rows first
      } catch (RuntimeException e) {
        c.result.completeExceptionally(e);
        continue;
      }
      int[] at = new int[asked.size()];
      for (int i = 0; i < at.length; i++) {
        byte[] item = asked.get(i);
        at[i] = index.computeIfAbsent(ByteBuffer.wrap(item), k -> {
          union.add(item);
          return union.size() - 1;
        });
      }
      batch.add(c);
      positions.add(at);
    }
    if (batch.isEmpty()) {
      return;
    }
    boolean[] present;
    try {
      present = union.isEmpty() ? new boolean[0] : g.confirm(union);
    } catch (RuntimeException e) {
      for (Confirmation f : batch) {
        f.result.completeExceptionally(e);
      }
      return;
    }
    confirmQueries.increment();
    confirmLookups.add(batch.size());
    for (int b = 0; b < batch.size(); b++) {
      int[] at = positions.get(b);
      boolean[] mine = new boolean[at.length];
      for (int i = 0; i < at.length; i++) {
        mine[i] = present[at[i]];
      }
      try {
        batch.get(b).result.complete(batch.get(b).lookup.verdicts(mine));
      } catch (RuntimeException e) {
        batch.get(b).result.completeExceptionally(e);
      }
    }
  }
}
