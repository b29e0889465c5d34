package io.bloomery.redisbloom;

/**
 * Allocation guard: a filter or layer that cannot fit is refused with a clear error before anything is allocated,
 * instead of an {@link OutOfMemoryError} that takes the process down. RedisBloom gets the same effect from
 * {@code RedisModule_TryCalloc}; a JVM has no try-allocate, so the request is compared with the Java array limit and
 * with the heap the JVM has left ({@link Runtime#maxMemory()} minus what is in use), and the one large allocation
 * that follows is still wrapped so that a lost race with another thread also ends as a refusal.
 */
final class HeapBudget {
  /** The largest {@code long[]} the JVM hands out, in bytes. */
  static final long MAX_LONG_ARRAY_BYTES = (long) (Integer.MAX_VALUE - 8) * Long.BYTES;
  /** The largest {@code byte[]} the JVM hands out. */
  static final int MAX_BYTE_ARRAY = Integer.MAX_VALUE - 8;

  private HeapBudget() {}

  /** Whether {@code bytes} (unsigned) more bytes of heap look obtainable now. */
  static boolean affordable(long bytes) {
    if (bytes < 0) {
      return false; // above 2^63 as an unsigned quantity
    }
    Runtime runtime = Runtime.getRuntime();
    long used = runtime.totalMemory() - runtime.freeMemory();
    long headroom = runtime.maxMemory() - used;
    return bytes <= headroom;
  }

  /** A zeroed {@code long[]} for {@code bytes} bytes (rounded up to whole words), or {@code null} if refused. */
  static long[] zeroedWords(long bytes) {
    if (bytes < 0 || bytes > MAX_LONG_ARRAY_BYTES || !affordable(bytes)) {
      return null;
    }
    try {
      return new long[(int) ((bytes + 7) >>> 3)];
    } catch (OutOfMemoryError lostRace) {
      return null;
    }
  }

  /** A zeroed {@code byte[]}, or {@code null} if refused. */
  static byte[] zeroedBytes(long bytes) {
    if (bytes < 0 || bytes > MAX_BYTE_ARRAY || !affordable(bytes)) {
      return null;
    }
    try {
      return new byte[(int) bytes];
    } catch (OutOfMemoryError lostRace) {
      return null;
    }
  }
}
