package io.bloomery.server.state;

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
  private final ThreadShards<AtomicLong> cells =
      new ThreadShards<>(AtomicLong::new, (ended, retired) -> bump(retired, ended.getAcquire()));

  /** Adds one for the calling thread. */
  public void increment() {
    add(1);
  }

  /** Adds {@code n} for the calling thread. */
  public void add(long n) {
    bump(cells.mine(), n);
  }

  /** The total over every thread. */
  public long sum() {
    long[] total = {0};
    cells.forEach(cell -> total[0] += cell.getAcquire());
    return total[0];
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
