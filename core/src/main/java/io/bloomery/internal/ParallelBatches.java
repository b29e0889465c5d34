package io.bloomery.internal;

import java.util.Arrays;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.RecursiveTask;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.locks.LockSupport;

/*
 * Two ways to split a batch. Lookups split the keys: each thread claims slices of keys until none is
 * left, and nothing is written but the caller's answer array. A key-split insert would have every thread write
 * anywhere in the filter, so its bit sets must be atomic and the lines they dirty bounce between cores;
 * measured on the 2-vCPU VM that capped two threads at 1.42x (classic) and 1.61x (blocked) of one
 * (docs/BENCHMARKS.md, run F). So inserts split what is written instead (scatterInsert), in rounds.
 *
 * Each of the P parts owns a contiguous range of the filter's 64-byte lines (line l belongs to part
 * (l * scale) >>> 32, scale = floor(P * 2^32 / lines): monotone, so the ranges are contiguous and cut at
 * line boundaries). In round r, part p (a) hashes its own 1/P of chunk r of the keys, once, and appends
 * one record per bit or per key (what the kind needs to set it, and the key's index) to the buffer of
 * the part that owns the record's line, and (b) applies the records of chunk r - 1 that the P parts
 * appended for its own range, source by source. The buffers are double-buffered by round parity, so (a)
 * and (b) never touch the same buffer, and one barrier per round separates them. No key is hashed twice,
 * no thread reads another's hashes beyond the records meant for it, and every write lands in the
 * writer's own lines.
 *
 * Exactness: source p's slice precedes source p + 1's and chunk r precedes chunk r + 1, so an owner
 * applies the records of its range in key order; for every bit the first key that sets it is the one a
 * sequential add would have credited, and a key "changed the filter" exactly when one owner says so:
 * each owner marks its keys in its own bitset, and the bitsets are ORed at the end.
 *
 * The barrier: round r's units (one per part) are claimed by CAS, each thread trying its own part first
 * and then any unclaimed one, and a thread that finds none left waits (spins, yields, then parks until
 * the thread that finishes the round wakes it) until all of round r's units are done. A thread only ever waits for a unit another thread has claimed and is
 * running, so the call finishes even when the pool lends no worker at all (the caller then runs every
 * unit itself) or lends one late. The done counter's increments and reads order every unit's writes
 * (including plain stores) before the next round and before the call returns.
 */
/**
 * Splits batch work over the common {@link ForkJoinPool}: the shared engine of the filters' {@code
 * addAll(items, parallelism)} and {@code mightContainAll(items, out, parallelism)}.
 */
public final class ParallelBatches {

  /** Smallest part worth a task of its own. */
  static final int MIN_PART = 4096;

  /** Slices per thread of a {@link #sum} split: fine enough to even out, coarse enough to be free. */
  static final int SLICES_PER_PART = 8;

  /** Smallest slice of a {@link #sum} split. */
  static final int MIN_SLICE = 1024;

  /**
   * Keys each part hashes per round of {@link #scatterInsert}: with the classic kind's k = 7 about
   * 450 KiB of records per part and round, double-buffered, so a round's records stay within L2 and L3.
   */
  static final int SCATTER_SLICE = 8192;

  private ParallelBatches() {}

  /** Work over {@code [from, to)} returning a count. */
  @FunctionalInterface
  public interface RangeCount {
    int apply(int from, int to);
  }

  /** The work of part {@code part} of a split, returning a count. */
  @FunctionalInterface
  public interface PartCount {
    int apply(int part);
  }

  /**
   * How many parts a batch of {@code size} keys is split into: {@code parallelism}, but at least
   * {@value #MIN_PART} keys each and at least one part.
   *
   * @throws IllegalArgumentException if parallelism &lt; 1
   */
  public static int parts(int size, int parallelism) {
    if (parallelism < 1) {
      throw new IllegalArgumentException("parallelism must be >= 1, was " + parallelism);
    }
    return (int) Math.max(1, Math.min(parallelism, (long) size / MIN_PART));
  }

  /**
   * Runs {@code work} over {@code [0, size)} on {@link #parts(int, int)} threads and returns the sum of
   * the counts. The range is cut into about {@value #SLICES_PER_PART} slices per thread (at least
   * {@value #MIN_SLICE} indexes each), and each thread, the caller among them ({@link #sumParts}), takes
   * the next unclaimed slice until none is left: a thread that starts late or runs slower (a busy core,
   * a part of mostly members) leaves its share to the others instead of making them wait.
   *
   * @throws IllegalArgumentException if parallelism &lt; 1
   */
  public static int sum(int size, int parallelism, RangeCount work) {
    int parts = parts(size, parallelism);
    if (parts == 1) {
      return work.apply(0, size);
    }
    int slice = Math.max(MIN_SLICE, size / (parts * SLICES_PER_PART));
    AtomicInteger next = new AtomicInteger();
    return sumParts(parts, p -> {
      int total = 0;
      for (int from = next.getAndAdd(slice); from >= 0 && from < size; from = next.getAndAdd(slice)) {
        total += work.apply(from, Math.min(size, from + slice));
      }
      return total;
    });
  }

  /**
   * Runs parts {@code 0 .. parts - 1} of {@code work} and returns the sum of their counts. The first
   * parts are forked to the common pool and the calling thread runs the last one itself (on two
   * cores, one worker and the caller: no thread sits idle waiting); then it joins the forked parts in
   * order, so everything a part wrote happens-before this method returns. If a part throws, every
   * other part is still waited for before the first exception is rethrown, so no part is left writing
   * into the caller's arrays.
   */
  public static int sumParts(int parts, PartCount work) {
    if (parts == 1) {
      return work.apply(0);
    }
    Part[] forked = new Part[parts - 1];
    for (int p = 0; p < forked.length; p++) {
      forked[p] = new Part(work, p);
      forked[p].fork();
    }
    RuntimeException failure = null;
    int total = 0;
    try {
      total = work.apply(parts - 1);
    } catch (RuntimeException e) {
      failure = e;
    }
    for (Part part : forked) {
      try {
        total += part.join();
      } catch (RuntimeException e) {
        if (failure == null) {
          failure = e;
        }
      }
    }
    if (failure != null) {
      throw failure;
    }
    return total;
  }

  /**
   * A line-partitioned insert of the {@code size} keys of a batch over {@code parts} threads (see the
   * block comment above).
   *
   * @param lines the number of 64-byte lines the filter's storage spans (line indexes in {@code [0,
   *     lines)} are what {@link Scatter} hands to {@link Records#owner}); at least 1
   * @param longsPerKey at most how many longs {@link Scatter} appends per key, summed over owners
   * @param changed if not null, {@code changed[i]} is set to whether key i changed the filter (what
   *     {@code add} in index order would have returned)
   * @param extra if not null, receives at index 0 the sum of {@code apply}'s counts
   * @return the number of keys that changed the filter
   */
  public static int scatterInsert(int size, int parts, long lines, int longsPerKey, Scatter scatter, Apply apply,
      boolean[] changed, long[] extra) {
    if (size == 0) {
      if (extra != null) {
        extra[0] = 0;
      }
      return 0;
    }
    ScatterRun run = new ScatterRun(size, parts, lines, longsPerKey, scatter, apply);
    sumParts(parts, run::work);
    run.rethrow();
    long[] any = run.marks[0];
    for (int p = 1; p < parts; p++) {
      long[] marks = run.marks[p];
      for (int w = 0; w < any.length; w++) {
        any[w] |= marks[w];
      }
    }
    int changedKeys = 0;
    for (int w = 0; w < any.length; w++) {
      long word = any[w];
      changedKeys += Long.bitCount(word);
      if (changed != null) {
        for (int j = w << 6, end = Math.min(size, j + 64); j < end; j++, word >>>= 1) {
          changed[j] = (word & 1) != 0;
        }
      }
    }
    if (extra != null) {
      long sum = 0;
      for (long count : run.counts) {
        sum += count;
      }
      extra[0] = sum;
    }
    return changedKeys;
  }

  /**
   * One part's share of a round: hashes keys {@code [from, to)} of the batch (all within the round's
   * chunk, which starts at key {@code chunkStart}) and appends their records to {@code out}, each to
   * the buffer of the part that owns the line it writes ({@link Records#owner}), keys in index order.
   */
  @FunctionalInterface
  public interface Scatter {
    void scatter(int from, int to, int chunkStart, Records out);
  }

  /**
   * Applies {@code records[0, length)}, appended by one source part for the range of part {@code owner},
   * in order; for each key that changes a bit there, sets bit {@code key & 63} of {@code marks[key >>>
   * 6]} (key = {@code chunkStart} + the index recorded). Returns a count the caller sums.
   */
  @FunctionalInterface
  public interface Apply {
    long apply(int owner, long[] records, int length, int chunkStart, long[] marks);
  }

  /** One source part's records of one round, one growable buffer per owning part. */
  public static final class Records {
    /** {@code buffers[owner][0, lengths[owner])}: what has been appended for each owner. */
    public final long[][] buffers;
    public final int[] lengths;
    private final long scale;

    Records(int parts, int capacity, long scale) {
      this.buffers = new long[parts][capacity];
      this.lengths = new int[parts];
      this.scale = scale;
    }

    /** The part that owns line {@code line} (in {@code [0, lines)}). */
    public int owner(long line) {
      return (int) ((line * scale) >>> 32);
    }

    /** Makes room for {@code longs} more longs in every owner's buffer. */
    void ensure(int longs) {
      for (int p = 0; p < buffers.length; p++) {
        if (buffers[p].length - lengths[p] < longs) {
          buffers[p] = Arrays.copyOf(buffers[p], Math.max(2 * buffers[p].length, lengths[p] + longs));
        }
      }
    }

    void clear() {
      Arrays.fill(lengths, 0);
    }
  }

  /** The shared state of one {@link #scatterInsert} call. */
  private static final class ScatterRun {
    /** Keys per {@link Records#ensure} step of a scatter. */
    private static final int STEP = 64;
    /** Busy-wait rounds of the barrier before it yields. */
    private static final int SPINS = 256;
    /** Yields of the barrier before it parks until the round ends. */
    private static final int YIELDS = 32;

    private final int size;
    private final int parts;
    private final int longsPerKey;
    private final Scatter scatter;
    private final Apply apply;
    private final int chunk;
    private final int rounds;
    /** {@code records[round & 1][source]}. */
    private final Records[][] records;
    /** {@code marks[owner]}: the keys that changed a bit in the owner's range. */
    final long[][] marks;
    /** {@code counts[owner]}: the sum of the owner's {@link Apply} counts. */
    final long[] counts;
    /** {@code claimed[p]}: how many rounds' unit p has been claimed. */
    private final AtomicIntegerArray claimed;
    private final AtomicInteger done = new AtomicInteger();
    /** {@code waiters[home]}: the thread of that home part while it is parked in {@link #awaitRound}. */
    private final AtomicReferenceArray<Thread> waiters;
    private volatile Throwable failure;

    ScatterRun(int size, int parts, long lines, int longsPerKey, Scatter scatter, Apply apply) {
      this.size = size;
      this.parts = parts;
      this.longsPerKey = longsPerKey;
      this.scatter = scatter;
      this.apply = apply;
      // Key indexes within a chunk must fit the records' fields (the classic kind keeps 24 bits).
      int slice = Math.max(1, Math.min(SCATTER_SLICE, (1 << 24) / parts));
      this.chunk = (int) Math.min((long) slice * parts, size);
      this.rounds = (size + chunk - 1) / chunk + 1;
      long lineScale = (((long) parts) << 32) / Math.max(1, lines);
      int sliceKeys = (chunk + parts - 1) / parts;
      int capacity = (int) Math.min(Integer.MAX_VALUE - 8,
          (long) sliceKeys * longsPerKey / parts * 5 / 4 + (long) STEP * longsPerKey);
      this.records = new Records[2][parts];
      for (int b = 0; b < 2; b++) {
        for (int p = 0; p < parts; p++) {
          records[b][p] = new Records(parts, capacity, lineScale);
        }
      }
      this.marks = new long[parts][(size + 63) >>> 6];
      this.counts = new long[parts];
      this.claimed = new AtomicIntegerArray(parts);
      this.waiters = new AtomicReferenceArray<>(parts);
    }

    /** The loop of the thread whose own part is {@code home}: claim, run, wait, next round. */
    int work(int home) {
      for (int r = 0; r < rounds && failure == null; r++) {
        for (int i = 0; i < parts; i++) {
          int p = (home + i) % parts;
          if (claimed.get(p) == r && claimed.compareAndSet(p, r, r + 1)) {
            try {
              unit(r, p);
            } catch (Throwable e) {
              if (failure == null) {
                failure = e;
              }
            } finally {
              finishUnit();
            }
          }
        }
        awaitRound((long) (r + 1) * parts, home);
      }
      return 0;
    }

    /** Counts a finished unit; the last of a round (or a failure) wakes the threads parked in {@link #awaitRound}. */
    private void finishUnit() {
      int finished = done.incrementAndGet();
      if (finished % parts == 0 || failure != null) {
        for (int p = 0; p < parts; p++) {
          Thread waiter = waiters.get(p);
          if (waiter != null) {
            LockSupport.unpark(waiter);
          }
        }
      }
    }

    /**
     * Waits until {@code target} units are done (or one failed): spins, then yields, then parks until the
     * unit that ends the round wakes it (a thread registers before its last check, and the finisher
     * counts before it looks for waiters, so one of the two always sees the other).
     */
    private void awaitRound(long target, int home) {
      for (int spins = 0; done.get() < target && failure == null; spins++) {
        if (spins < SPINS) {
          Thread.onSpinWait();
        } else if (spins < SPINS + YIELDS) {
          Thread.yield();
        } else {
          waiters.set(home, Thread.currentThread());
          while (done.get() < target && failure == null) {
            LockSupport.park(this); // the other unit's thread lost its core: stop competing for one
          }
          waiters.set(home, null);
        }
      }
    }

    /** Round {@code r}'s unit {@code p}: scatter part p of chunk r, apply part p's records of chunk r - 1. */
    private void unit(int r, int p) {
      if (r < rounds - 1) {
        int chunkStart = r * chunk;
        int length = Math.min(chunk, size - chunkStart);
        int from = chunkStart + (int) ((long) length * p / parts);
        int to = chunkStart + (int) ((long) length * (p + 1) / parts);
        Records out = records[r & 1][p];
        out.clear();
        for (int start = from; start < to; start += STEP) {
          out.ensure(STEP * longsPerKey);
          scatter.scatter(start, Math.min(to, start + STEP), chunkStart, out);
        }
      }
      if (r > 0) {
        int chunkStart = (r - 1) * chunk;
        long count = 0;
        for (Records source : records[(r - 1) & 1]) {
          count += apply.apply(p, source.buffers[p], source.lengths[p], chunkStart, marks[p]);
        }
        counts[p] += count;
      }
    }

    void rethrow() {
      Throwable e = failure;
      if (e instanceof RuntimeException) {
        throw (RuntimeException) e;
      }
      if (e instanceof Error) {
        throw (Error) e;
      }
      if (e != null) {
        throw new IllegalStateException(e);
      }
    }
  }

  private static final class Part extends RecursiveTask<Integer> {
    private final PartCount work;
    private final int part;

    Part(PartCount work, int part) {
      this.work = work;
      this.part = part;
    }

    @Override
    protected Integer compute() {
      return work.apply(part);
    }
  }
}
