package io.bloomery.internal;

import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.RecursiveTask;

/**
 * Splits an index range over the common {@link ForkJoinPool} and sums what each part returns; the
 * shared engine of the filters' {@code addAll(items, parallelism)} and {@code mightContainAll(items,
 * out, parallelism)}.
 */
public final class ParallelBatches {

  /** Smallest part worth a task of its own. */
  static final int MIN_PART = 4096;

  private ParallelBatches() {}

  /** Work over {@code [from, to)} returning a count. */
  @FunctionalInterface
  public interface RangeCount {
    int apply(int from, int to);
  }

  /**
   * Runs {@code work} over {@code [0, size)} in up to {@code parallelism} contiguous parts, at least
   * {@value #MIN_PART} indexes each, and returns the sum of their counts. The first parts are forked to
   * the common pool and the calling thread runs the last one itself (on two cores, one worker and the
   * caller: no thread sits idle waiting); then it joins the forked parts in order. If a part throws,
   * every other part is still waited for before the first exception is rethrown, so no part is left
   * writing into the caller's arrays.
   *
   * @throws IllegalArgumentException if parallelism &lt; 1
   */
  public static int sum(int size, int parallelism, RangeCount work) {
    if (parallelism < 1) {
      throw new IllegalArgumentException("parallelism must be >= 1, was " + parallelism);
    }
    int parts = (int) Math.max(1, Math.min(parallelism, (long) size / MIN_PART));
    if (parts == 1) {
      return work.apply(0, size);
    }
    Part[] forked = new Part[parts - 1];
    for (int p = 0; p < forked.length; p++) {
      forked[p] = new Part(work, bound(size, parts, p), bound(size, parts, p + 1));
      forked[p].fork();
    }
    RuntimeException failure = null;
    int total = 0;
    try {
      total = work.apply(bound(size, parts, parts - 1), size);
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

  /** Start of part {@code p} of {@code parts} over {@code [0, size)}. */
  private static int bound(int size, int parts, int p) {
    return (int) ((long) size * p / parts);
  }

  private static final class Part extends RecursiveTask<Integer> {
    private final RangeCount work;
    private final int from;
    private final int to;

    Part(RangeCount work, int from, int to) {
      this.work = work;
      this.from = from;
      this.to = to;
    }

    @Override
    protected Integer compute() {
      return work.apply(from, to);
    }
  }
}
