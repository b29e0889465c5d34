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
 * anywhere in the filter, so its bit sets must be atomic and the lines they dirty bounce between cores.
 * So inserts split what is written instead (scatterInsert).
 *
 * Each of the P parts owns a contiguous range of the filter's 64-byte lines (line l belongs to part
 * (l * scale) >>> 32, scale = floor(P * 2^32 / lines): monotone, so the ranges are contiguous and cut at
 * line boundaries). The keys go in chunks of P slices. Each part has two task sequences, run in chunk
 * order: scatter(p, c) hashes part p's slice of chunk c, once, and appends one record per bit or per key
 * (what the kind needs to set it, and the key's index) to the buffer of the part that owns the record's
 * line; insert(p, c) applies the records of chunk c that the P parts appended for p's range, source by
 * source. No key is hashed twice, no thread reads another's hashes beyond the records meant for it, and
 * every write lands in the writer's own lines.
 *
 * Exactness: source p's slice precedes source p + 1's and chunk c precedes chunk c + 1, so an owner
 * applies the records of its range in key order; for every bit the first key that sets it is the one a
 * sequential add would have credited, and a key "changed the filter" exactly when one owner says so:
 * each owner marks its keys in its own bitset, and the bitsets are ORed at the end.
 *
 * Scheduling is by dataflow, not a barrier per chunk: insert(p, c) is ready once every part has scattered
 * chunk c; scatter(p, c) once every owner has inserted chunk c - BUFFERS, whose buffers it reuses. So a part
 * may scatter a few chunks ahead, and a thread that loses its core for a moment, or a chunk that gives one
 * owner more records, stalls the other thread only once the buffers run out (a barrier per chunk would stall
 * it after every chunk; docs/BENCHMARKS.md has the two-thread figures). A sequence's next task is claimed by CAS on its
 * state (done count, running bit); each thread tries its own part's insert, then its scatter, then the other
 * parts', and with nothing ready it spins, yields, then parks until a task ends. A thread only waits while
 * another runs a task it needs, so the call finishes even when the pool lends no worker at all (the caller
 * then runs every task itself) or lends one late. The sequences' volatile states order every task's writes
 * (including plain stores) before the tasks that depend on them and before the call returns.
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
   * Keys each part hashes per chunk of {@link #scatterInsert}: with the classic kind's k = 7 about
   * 450 KiB of records per part and chunk, {@code BUFFERS} chunks at a time, so the records stay within L3.
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
   * One part's share of a chunk: hashes keys {@code [from, to)} of the batch (all within the
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

  /** One source part's records of one chunk, one growable buffer per owning part. */
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
    /**
     * Chunks whose records can be held at once: a part may scatter up to {@code BUFFERS - 1} chunks ahead of
     * the slowest owner's inserts, so a thread that loses its core for a moment (or a chunk that happens to
     * give one part more keys) does not stall the other at once, as a lockstep barrier per chunk would.
     */
    private static final int BUFFERS = 4;
    /** Busy-wait rounds of a thread with nothing ready before it yields. */
    private static final int SPINS = 256;
    /** Yields of a thread with nothing ready before it parks until a task ends. */
    private static final int YIELDS = 32;
    /** What {@link #runReadyTask} did: ran a task, found none ready, or found every insert done. */
    private static final int RAN = 0;
    private static final int NOTHING_READY = 1;
    private static final int DONE = 2;

    private final int size;
    private final int parts;
    private final int longsPerKey;
    private final Scatter scatter;
    private final Apply apply;
    private final int chunk;
    private final int chunks;
    /** {@code records[chunk % BUFFERS][source]}. */
    private final Records[][] records;
    /** {@code marks[owner]}: the keys that changed a bit in the owner's range. */
    final long[][] marks;
    /** {@code counts[owner]}: the sum of the owner's {@link Apply} counts. */
    final long[] counts;
    /**
     * Per part, its two task sequences, each run in order by whichever thread claims its next task: {@code
     * scattered[p]} and {@code applied[p]} hold {@code 2 * c} when chunks {@code 0 .. c - 1} are done and none
     * is running, {@code 2 * c + 1} while chunk c runs.
     */
    private final AtomicIntegerArray scattered;
    private final AtomicIntegerArray applied;
    /** {@code waiters[home]}: the thread of that home part while it is parked in {@link #await}. */
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
      this.chunks = (size + chunk - 1) / chunk;
      long lineScale = (((long) parts) << 32) / Math.max(1, lines);
      int sliceKeys = (chunk + parts - 1) / parts;
      int capacity = (int) Math.min(Integer.MAX_VALUE - 8,
          (long) sliceKeys * longsPerKey / parts * 5 / 4 + (long) STEP * longsPerKey);
      int buffers = Math.min(BUFFERS, chunks);
      this.records = new Records[buffers][parts];
      for (int b = 0; b < buffers; b++) {
        for (int p = 0; p < parts; p++) {
          records[b][p] = new Records(parts, capacity, lineScale);
        }
      }
      this.marks = new long[parts][(size + 63) >>> 6];
      this.counts = new long[parts];
      this.scattered = new AtomicIntegerArray(parts);
      this.applied = new AtomicIntegerArray(parts);
      this.waiters = new AtomicReferenceArray<>(parts);
    }

    /**
     * The loop of the thread whose own part is {@code home}: run a ready task (its own part's first, the
     * inserts before the scatters, then any other part's), or wait for one; until every owner has inserted
     * every chunk or a task failed.
     */
    int work(int home) {
      for (int idle = 0; failure == null; ) {
        int state = runReadyTask(home);
        if (state == DONE) {
          return 0;
        }
        if (state == RAN) {
          idle = 0;
        } else if (idle < SPINS) {
          idle++;
          Thread.onSpinWait();
        } else if (idle < SPINS + YIELDS) {
          idle++;
          Thread.yield();
        } else {
          await(home);
          idle = 0;
        }
      }
      return 0;
    }

    /** Claims and runs one ready task, if there is one; says whether it did, or that all are done. */
    private int runReadyTask(int home) {
      boolean finished = true;
      for (int i = 0; i < parts; i++) {
        int p = (home + i) % parts;
        int a = applied.get(p);
        if (a != 2 * chunks) {
          finished = false;
          if ((a & 1) == 0 && allScattered(a >>> 1) && applied.compareAndSet(p, a, a + 1)) {
            run(p, a >>> 1, false);
            return RAN;
          }
        }
        int s = scattered.get(p);
        if ((s & 1) == 0 && (s >>> 1) < chunks && allApplied((s >>> 1) - records.length)
            && scattered.compareAndSet(p, s, s + 1)) {
          run(p, s >>> 1, true);
          return RAN;
        }
      }
      return finished ? DONE : NOTHING_READY;
    }

    /** Whether every source has scattered chunk {@code c}. */
    private boolean allScattered(int c) {
      for (int s = 0; s < parts; s++) {
        if (scattered.get(s) < 2 * (c + 1)) {
          return false;
        }
      }
      return true;
    }

    /** Whether every owner has inserted chunk {@code c} (true for c &lt; 0). */
    private boolean allApplied(int c) {
      for (int o = 0; o < parts && c >= 0; o++) {
        if (applied.get(o) < 2 * (c + 1)) {
          return false;
        }
      }
      return true;
    }

    /** Runs a claimed task, marks it done (or records the failure) and wakes the parked threads. */
    private void run(int p, int c, boolean isScatter) {
      try {
        if (isScatter) {
          scatterChunk(p, c);
        } else {
          applyChunk(p, c);
        }
      } catch (Throwable e) {
        if (failure == null) {
          failure = e;
        }
      } finally {
        (isScatter ? scattered : applied).set(p, 2 * (c + 1));
        for (int w = 0; w < parts; w++) {
          Thread waiter = waiters.get(w);
          if (waiter != null) {
            LockSupport.unpark(waiter);
          }
        }
      }
    }

    /**
     * Parks until a task ends (or one failed): a thread registers before it looks for a ready task once more,
     * and a task's end is published before it looks for waiters, so one of the two always sees the other.
     */
    private void await(int home) {
      waiters.set(home, Thread.currentThread());
      try {
        while (failure == null) {
          int state = runReadyTask(home);
          if (state != NOTHING_READY) {
            return;
          }
          LockSupport.park(this); // the task it waits for runs on a thread that lost its core: stop competing for one
        }
      } finally {
        waiters.set(home, null);
      }
    }

    /** Part p's share of chunk c: hashes it and appends the records to each owner's buffer. */
    private void scatterChunk(int p, int c) {
      int chunkStart = c * chunk;
      int length = Math.min(chunk, size - chunkStart);
      int from = chunkStart + (int) ((long) length * p / parts);
      int to = chunkStart + (int) ((long) length * (p + 1) / parts);
      Records out = records[c % records.length][p];
      out.clear();
      for (int start = from; start < to; start += STEP) {
        out.ensure(STEP * longsPerKey);
        scatter.scatter(start, Math.min(to, start + STEP), chunkStart, out);
      }
    }

    /** Owner p's share of chunk c: the records every source appended for its range, source by source. */
    private void applyChunk(int p, int c) {
      int chunkStart = c * chunk;
      long count = 0;
      for (Records source : records[c % records.length]) {
        count += apply.apply(p, source.buffers[p], source.lengths[p], chunkStart, marks[p]);
      }
      counts[p] += count;
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
