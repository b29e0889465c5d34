package io.bloomery.server.keyspace;

/**
 * The one rule for letting a new value's allocation into the JVM heap, the server's form of core's allocation guard:
 * the heap is never estimated from {@code totalMemory() - freeMemory()}, which counts dead objects as used until the
 * next collection and so refuses a value that a collection would make room for. What the server knows to be live is
 * the bytes its values are counted for ({@code held}: the keys' filters, the guarded keys', the reservations of
 * unfinished file loads). A value of {@code bytes}, whose largest single array is {@code largestArray} bytes, is
 * admitted while {@code held + bytes + largestArray} fits in the maximum heap: the value, plus room for the collector
 * to place its last, possibly humongous, array (a blocked filter is one array and needs twice its size, a classic one
 * its size plus one 1 GiB segment).
 *
 * <p>Admitting promises nothing: the heap also holds what is not counted (connections, pending commands), so the
 * allocation that follows may still fail with {@link OutOfMemoryError} (thrown only after a full collection, when the
 * heap really cannot hold it), and every caller turns that into an OOM reply or a clear refusal.
 */
public final class HeapAdmission {
  private HeapAdmission() {}

  /** {@link #admits(long, long, long, long)} against this JVM's maximum heap ({@link Runtime#maxMemory()}). */
  public static boolean admits(long held, long bytes, long largestArray) {
    return admits(Runtime.getRuntime().maxMemory(), held, bytes, largestArray);
  }

  /**
   * Whether a value of {@code bytes} whose largest array is {@code largestArray} bytes may be allocated in a heap of
   * at most {@code maxHeap} bytes that holds {@code held} counted bytes. Negative sizes are refused; the sum is
   * compared without overflow.
   */
  public static boolean admits(long maxHeap, long held, long bytes, long largestArray) {
    if (held < 0 || bytes < 0 || largestArray < 0) {
      return false;
    }
    long room = maxHeap - held;
    return room >= 0 && bytes <= room && largestArray <= room - bytes;
  }
}
