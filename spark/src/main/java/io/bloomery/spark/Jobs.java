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
    } catch (Exception e) { // SparkException is checked, yet thrown from Scala without a declaration
      String ours = find(e);
      if (ours != null) {
        throw new BloomerySparkException(ours, e);
      }
      throw Jobs.<RuntimeException>rethrow(e);
    }
  }

  @SuppressWarnings("unchecked")
  private static <E extends Exception> E rethrow(Exception e) throws E {
    throw (E) e;
  }

  /**
   * Our message, from the cause chain where Spark kept the task's exception, else from the text of
   * Spark's stage-failure message, which quotes the task's exception as "class: message".
   */
  private static String find(Throwable failure) {
    for (Throwable t = failure; t != null; t = t.getCause()) {
      if (t instanceof BloomerySparkException ours) {
        return ours.getMessage();
      }
      String text = t.getMessage();
      int at = text == null ? -1 : text.indexOf(MARKER);
      if (at >= 0) {
        int end = text.indexOf('\n', at);
        return text.substring(at + MARKER.length(), end < 0 ? text.length() : end).strip();
      }
      if (t.getCause() == t) {
        break;
      }
    }
    return null;
  }

  private static final String MARKER = BloomerySparkException.class.getName() + ": ";
}
