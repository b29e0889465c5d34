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
   * Runs {@code work} over {@code [0, size)} in up to {@code parallelism} parts, at least
   * {@value #MIN_PART} indexes each, and returns the sum of their counts. One part runs on the calling
   * thread.
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
    return ForkJoinPool.commonPool().invoke(new Part(work, 0, size, parts));
  }

  private static final class Part extends RecursiveTask<Integer> {
    private final RangeCount work;
    private final int from;
    private final int to;
    private final int parts;

    Part(RangeCount work, int from, int to, int parts) {
      this.work = work;
      this.from = from;
      this.to = to;
      this.parts = parts;
    }

    @Override
    protected Integer compute() {
      if (parts == 1) {
        return work.apply(from, to);
      }
      int leftParts = parts / 2;
      int middle = (int) (from + (long) (to - from) * leftParts / parts);
      Part left = new Part(work, from, middle, leftParts);
      left.fork();
      int right = new Part(work, middle, to, parts - leftParts).compute();
      return left.join() + right;
    }
  }
}
