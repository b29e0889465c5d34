package io.bloomery.internal;

import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.RecursiveTask;
import java.util.concurrent.atomic.AtomicInteger;

/*
 * Two ways to split a batch. Lookups split the keys: each thread claims slices of keys until none is
 * left, and nothing is written but the caller's answer array. A key-split insert would have every thread write
 * anywhere in the filter, so its bit sets must be atomic and the lines they dirty bounce between cores;
 * measured on the 2-vCPU VM that capped two threads at 1.42x (classic) and 1.61x (blocked) of one
 * (docs/BENCHMARKS.md, run F). So inserts split what is written instead (insertOwned): the keys go in
 * chunks; each chunk is hashed once, split by keys, and then every part walks all of the chunk's
 * hashes and sets only the bits that fall in its own contiguous range of the filter's words or blocks,
 * cut at multiples of 64 bytes (whole lines where the storage is line-aligned, as the blocked kinds
 * arrange; otherwise at most the line at each cut is shared). A part sees the chunk's keys in index order, so
 * for every bit the first key that sets it is the one a sequential add would have credited, and a key
 * "changed the filter" exactly when one of the parts says so: each part marks its keys in its own
 * bitset, and the bitsets are ORed after the join.
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

  /** Keys hashed and inserted per round of {@link #insertOwned}: 256 KiB of hashes, within a core's L2. */
  static final int CHUNK = 1 << 15;

  /** 64-byte lines, in 64-bit words. */
  public static final int LINE_WORDS = 8;

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
   * Hashes the keys {@code [start + from, start + to)} of the batch, key {@code start + j} into {@code
   * hashes[j * stride, (j + 1) * stride)}.
   */
  @FunctionalInterface
  public interface ChunkHasher {
    void hash(long[] hashes, int start, int from, int to);
  }

  /**
   * Inserts the bits of the chunk's {@code count} hashed keys that fall in part {@code part}'s share of the
   * filter, in index order, and sets bit {@code j & 63} of {@code changed[j >>> 6]} for each key j that
   * changed a bit there. Returns a count the caller sums (the classic kind's newly set bits).
   */
  @FunctionalInterface
  public interface OwnedInsert {
    int insert(long[] hashes, int count, int part, int parts, long[] changed);
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
   * A partitioned insert of {@code size} keys over {@code parts} threads (see the block comment above):
   * per chunk of keys, {@code hasher} runs split by keys, then {@code insert} runs once per part.
   *
   * @param stride longs per hashed key
   * @param changed if not null, {@code changed[i]} is set to whether key i changed the filter (what
   *     {@code add} in index order would have returned)
   * @param extra if not null, receives at index 0 the sum of {@code insert}'s counts
   * @return the number of keys that changed the filter
   */
  public static int insertOwned(int size, int parts, int stride, ChunkHasher hasher, OwnedInsert insert,
      boolean[] changed, long[] extra) {
    int chunk = Math.max(1, Math.min(Math.max(64, CHUNK / stride), size));
    long[] hashes = new long[chunk * stride];
    long[][] marks = new long[parts][(chunk + 63) >>> 6];
    int changedKeys = 0;
    long extraSum = 0;
    for (int start = 0; start < size; start += chunk) {
      int count = Math.min(chunk, size - start);
      int first = start;
      int hashParts = Math.max(1, Math.min(parts, count / MIN_PART));
      sumParts(hashParts, p -> {
        hasher.hash(hashes, first, bound(count, hashParts, p), bound(count, hashParts, p + 1));
        return 0;
      });
      extraSum += sumParts(parts, p -> insert.insert(hashes, count, p, parts, marks[p]));
      for (int w = 0, words = (count + 63) >>> 6; w < words; w++) {
        long any = 0;
        for (long[] mark : marks) {
          any |= mark[w];
          mark[w] = 0;
        }
        changedKeys += Long.bitCount(any);
        if (changed != null) {
          for (int j = w << 6, end = Math.min(count, j + 64); j < end; j++, any >>>= 1) {
            changed[start + j] = (any & 1) != 0;
          }
        }
      }
    }
    if (extra != null) {
      extra[0] = extraSum;
    }
    return changedKeys;
  }

  /**
   * The first of part {@code p}'s {@code total} units (words or blocks) when they are split in {@code
   * parts} contiguous ranges whose starts are multiples of {@code align}; part {@code parts} ends at
   * {@code total}. Ranges may be empty when {@code total} is small.
   */
  public static long alignedBound(long total, int parts, int p, int align) {
    if (p >= parts) {
      return total;
    }
    long start = total * p / parts;
    return start - start % align;
  }

  /** Start of part {@code p} of {@code parts} over {@code [0, size)}. */
  private static int bound(int size, int parts, int p) {
    return (int) ((long) size * p / parts);
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
