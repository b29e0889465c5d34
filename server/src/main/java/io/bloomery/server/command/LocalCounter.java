package io.bloomery.server.command;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A counter that the event loops bump on every command without an atomic read-modify-write: each thread adds to a
 * cell of its own with a plain read and a release store (one writer per cell), and {@link #sum} adds up the cells.
 * On x86 a {@link java.util.concurrent.atomic.LongAdder}'s CAS is a lock-prefixed instruction, a full fence that
 * waits for the stores before it, among them the bit stores a BF.ADD just made into a filter far larger than the
 * cache, to leave the store buffer; a release store does not wait.
 *
 * <p>A sum taken while threads add is, as {@link java.util.concurrent.atomic.LongAdder#sum}'s, not an atomic snapshot;
 * once the adding threads have handed their work on (a reply sent), it holds every add they made.
 */
public final class LocalCounter {
  /** A thread's cell; once {@code owner} has ended, nothing writes {@code value} any more. */
  private record Cell(Thread owner, AtomicLong value) {}

  /** Read and changed under its own lock (readers and new threads only, never the adds). */
  private final List<Cell> cells = new ArrayList<>();
  /** What the cells of threads that have ended held. */
  private long retired;
  private final ThreadLocal<AtomicLong> mine = ThreadLocal.withInitial(() -> {
    AtomicLong value = new AtomicLong();
    synchronized (cells) {
      retireEnded();
      cells.add(new Cell(Thread.currentThread(), value));
    }
    return value;
  });

  /** Adds one for the calling thread. */
  public void increment() {
    add(1);
  }

  /** Adds {@code n} for the calling thread. */
  public void add(long n) {
    bump(mine.get(), n);
  }

  /** The total over every thread. */
  public long sum() {
    synchronized (cells) {
      retireEnded();
      long total = retired;
      for (Cell cell : cells) {
        total += cell.value.getAcquire();
      }
      return total;
    }
  }

  /**
   * Folds the cells of threads that have ended into {@link #retired} (their last add happens-before
   * {@link Thread#isAlive} answering false), so that threads that come and go (a pool's, after their keep-alive) do not
   * pile up cells.
   */
  private void retireEnded() {
    for (Iterator<Cell> i = cells.iterator(); i.hasNext(); ) {
      Cell cell = i.next();
      if (!cell.owner.isAlive()) {
        retired += cell.value.getAcquire();
        i.remove();
      }
    }
  }

  /** Adds {@code n} to a cell only the calling thread writes. */
  static void bump(AtomicLong cell, long n) {
    cell.setRelease(cell.getPlain() + n);
  }

  @Override
  public String toString() {
    return Long.toString(sum());
  }
}
