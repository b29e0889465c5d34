package io.bloomery.internal;

/**
 * Allocation guard: a filter or layer that cannot fit is refused with a clear error instead of an
 * {@link OutOfMemoryError} that takes the process down. RedisBloom gets this from {@code RedisModule_TryCalloc}; on a
 * JVM the allocation itself is the try-allocate: before the JVM throws {@code OutOfMemoryError} for a heap request it
 * runs a full collection, so an {@code OutOfMemoryError} caught around one allocation means the request really cannot
 * be satisfied, and nothing of it is kept.
 *
 * <p>A refusal therefore means the allocation cannot succeed, never that the heap happens to hold garbage. There is
 * deliberately no estimate of the free heap: {@code totalMemory() - freeMemory()} counts dead objects as used until
 * the next collection, so comparing a request with it refused a few kilobytes on a heap full of garbage (a model-fuzz
 * test in a busy test JVM hit exactly that). The only up-front check, {@link #couldEverFit}, refuses what could not
 * fit in the whole maximum heap, so such requests fail at once without forcing a full collection.
 *
 * <p>Caveat: a JVM started with {@code -XX:+ExitOnOutOfMemoryError}, {@code -XX:+CrashOnOutOfMemoryError} or
 * {@code -XX:+HeapDumpOnOutOfMemoryError} acts on the caught error too; such a JVM exits (or dumps) where this class
 * would have refused.
 */
public final class HeapBudget {
  /** The largest {@code long[]} the JVM hands out, in bytes. */
  public static final long MAX_LONG_ARRAY_BYTES = (long) (Integer.MAX_VALUE - 8) * Long.BYTES;
  /** The largest {@code byte[]} the JVM hands out. */
  public static final int MAX_BYTE_ARRAY = Integer.MAX_VALUE - 8;

  private HeapBudget() {}

  /**
   * Whether {@code bytes} (unsigned) could fit in the maximum heap at all ({@link Runtime#maxMemory()}). {@code false}
   * is a certain refusal; {@code true} promises nothing: the allocation that follows must still catch
   * {@link OutOfMemoryError}, as every allocation through this class does.
   */
  public static boolean couldEverFit(long bytes) {
    return bytes >= 0 && bytes <= Runtime.getRuntime().maxMemory();
  }

  /** A zeroed {@code long[]} for {@code bytes} bytes (rounded up to whole words), or {@code null} if refused. */
  public static long[] zeroedWords(long bytes) {
    if (bytes < 0 || bytes > MAX_LONG_ARRAY_BYTES || !couldEverFit(bytes)) {
      return null;
    }
    try {
      return new long[(int) ((bytes + 7) >>> 3)];
    } catch (OutOfMemoryError cannotFit) {
      return null; // thrown only after a full collection: the heap really cannot hold it
    }
  }

  /** A zeroed {@code byte[]}, or {@code null} if refused. */
  public static byte[] zeroedBytes(long bytes) {
    if (bytes < 0 || bytes > MAX_BYTE_ARRAY || !couldEverFit(bytes)) {
      return null;
    }
    try {
      return new byte[(int) bytes];
    } catch (OutOfMemoryError cannotFit) {
      return null; // thrown only after a full collection: the heap really cannot hold it
    }
  }
}
