package io.bloomery.server.command;

import io.bloomery.server.persistence.load.FileLoads;
import io.bloomery.server.state.ServerContext;

/**
 * The {@code maxmemory} budget, counted in filter bytes ({@link ServerContext#usedMemory()}: the keyspace's and the
 * guarded keys') plus the memory promised to unfinished file loads ({@link FileLoads#reservedBytes()}).
 */
public final class Memory {
  private Memory() {}

  /** Refuses, before anything is allocated, a value of {@code bytes} that would take the server past the budget. */
  public static void admit(Invocation inv, long bytes) {
    long max = inv.settings().maxmemory;
    if (max > 0 && (bytes < 0 || used(inv) + bytes > max)) {
      inv.server().stats().oomRejections.increment();
      throw new CommandException(Errors.OOM);
    }
  }

  private static long used(Invocation inv) {
    return inv.server().usedMemory() + inv.server().fileLoads().reservedBytes();
  }

  /**
   * {@link #admit}, and also refuses a single allocation of {@code bytes} that the JVM heap could not take twice over
   * (a fixed filter is allocated at once), so it answers OOM instead of dying of {@code OutOfMemoryError} when no
   * {@code maxmemory} is set.
   */
  public static void admitWithHeap(Invocation inv, long bytes) {
    admitFilter(inv, bytes, bytes);
  }

  /**
   * {@link #admit}, and refuses a filter of {@code bytes} whose largest single array is {@code largestArray} bytes
   * unless the heap's free space holds the filter plus one more such array (room for the collector to place the
   * last, possibly humongous, array): a blocked filter is one array and needs twice its size free, a classic one is
   * allocated in 1 GiB segments and needs its size plus 1 GiB.
   */
  public static void admitFilter(Invocation inv, long bytes, long largestArray) {
    admit(inv, bytes);
    admitHeap(inv, bytes, largestArray);
  }

  /**
   * {@link #admitFilter} of a filter whose {@code bytes} are already reserved (counted in {@link #used}): the budget
   * must not be exceeded now, and the heap must take the filter.
   */
  public static void admitReserved(Invocation inv, long bytes, long largestArray) {
    admit(inv, 0);
    admitHeap(inv, bytes, largestArray);
  }

  private static void admitHeap(Invocation inv, long bytes, long largestArray) {
    Runtime rt = Runtime.getRuntime();
    long free = rt.maxMemory() - (rt.totalMemory() - rt.freeMemory());
    if (bytes > free - largestArray) {
      inv.server().stats().oomRejections.increment();
      throw new CommandException(Errors.OOM);
    }
  }
}
