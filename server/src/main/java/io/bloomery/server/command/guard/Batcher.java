package io.bloomery.server.command.guard;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.Predicate;

/**
 * Runs the work any number of threads queue in batches on an executor: at most {@code maxInFlight} batches run at
 * a time, each takes (from its owner's queue) what is queued when it starts, and one that ends starts the next if
 * work is left. While batches run, new work gathers for the next one, as an append-only log's shared fsync does.
 * With a delay, a batch starts that long after it was kicked and takes what arrived meanwhile.
 *
 * <p>The owner keeps the queue: {@code hasWork} says whether anything waits, the batch body takes it. {@link #kick}
 * after every enqueue; a kick while {@code maxInFlight} batches run does nothing (the next one to end kicks again).
 *
 * @param <C> what a kick hands to the batch it starts (the guard the batch runs against)
 */
final class Batcher<C> {
  private final Executor executor;
  private final int maxInFlight;
  private final BooleanSupplier hasWork;
  private final Predicate<C> batch;
  private final Consumer<RuntimeException> rejected;
  private final AtomicInteger inFlight = new AtomicInteger();
  /** Kicked after each kick of this one (its {@code hasWork} may depend on this one's {@link #inFlight()}). */
  private volatile Batcher<C> next;

  /**
   * @param io where batches run
   * @param maxInFlight how many batches run at once
   * @param delayMillis how long a batch waits before it starts (0: at once)
   * @param hasWork whether work waits (and may be started now)
   * @param batch runs one batch (blocking, on {@code io}): takes what is queued and does it; returns whether the
   *     next may start at once if work waits ({@code false}: it failed, and the work waits for the next kick)
   * @param rejected fails what is queued when {@code io} refuses a batch (the server is shutting down)
   */
  Batcher(Executor io, int maxInFlight, long delayMillis, BooleanSupplier hasWork, Predicate<C> batch,
      Consumer<RuntimeException> rejected) {
    this.executor = delayMillis > 0 ? CompletableFuture.delayedExecutor(delayMillis, TimeUnit.MILLISECONDS, io) : io;
    this.maxInFlight = maxInFlight;
    this.hasWork = hasWork;
    this.batch = batch;
    this.rejected = rejected;
  }

  /** Makes every kick of this batcher, including the one after a batch ends, also kick {@code then}. */
  void followedBy(Batcher<C> then) {
    next = then;
  }

  /** Starts a batch if work waits and fewer than {@code maxInFlight} run; then kicks {@link #followedBy}'s. */
  void kick(C context) {
    start(context);
    Batcher<C> then = next;
    if (then != null) {
      then.kick(context);
    }
  }

  private void start(C context) {
    while (hasWork.getAsBoolean()) {
      int n = inFlight.get();
      if (n >= maxInFlight) {
        return; // a running batch kicks again when it ends
      }
      if (inFlight.compareAndSet(n, n + 1)) {
        try {
          executor.execute(() -> run(context));
        } catch (RuntimeException e) {
          inFlight.decrementAndGet();
          rejected.accept(e);
        }
        return;
      }
    }
  }

  /** How many batches are scheduled or running. */
  int inFlight() {
    return inFlight.get();
  }

  private void run(C context) {
    boolean again = true;
    try {
      again = batch.test(context);
    } finally {
      inFlight.decrementAndGet();
      if (again) {
        kick(context);
      }
    }
  }
}
