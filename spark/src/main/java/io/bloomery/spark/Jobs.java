package io.bloomery.spark;

import java.util.function.Supplier;

/**
 * Runs a Spark action and turns a task failure caused by one of our own checks back into that
 * check's one-line {@link BloomerySparkException}, instead of Spark's multi-line stage-failure text.
 */
final class Jobs {
  private Jobs() {}

  static <T> T run(Supplier<T> action) {
    try {
      return action.get();
    } catch (BloomerySparkException e) {
      throw e;
    } catch (RuntimeException e) {
      BloomerySparkException ours = find(e);
      if (ours != null) {
        throw new BloomerySparkException(ours.getMessage(), e);
      }
      throw e;
    }
  }

  private static BloomerySparkException find(Throwable failure) {
    for (Throwable t = failure; t != null; t = t.getCause()) {
      if (t instanceof BloomerySparkException ours) {
        return ours;
      }
      if (t.getCause() == t) {
        break;
      }
    }
    return null;
  }
}
