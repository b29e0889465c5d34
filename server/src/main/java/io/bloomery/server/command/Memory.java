package io.bloomery.server.command;

import io.bloomery.server.keyspace.HeapAdmission;
import io.bloomery.server.persistence.load.FileLoads;
import io.bloomery.server.state.ServerContext;

/**
 * The {@code maxmemory} budget, counted in filter bytes ({@link ServerContext#usedMemory()}: the keyspace's and the
 * guarded keys') plus the memory promised to unfinished file loads ({@link FileLoads#reservedBytes()}), and the heap
 * rule every new value's allocation follows ({@link HeapAdmission}).
 */
public final class Memory {
  private Memory() {}

  /** Refuses, before anything is allocated, a value of {@code bytes} that would take the server past the budget. */
  public static void admit(Invocation inv, long bytes) {
    long max = inv.settings().maxmemory();
    if (max > 0 && (bytes < 0 || held(inv) + bytes > max)) {
      inv.server().stats().oomRejections.increment();
      throw new CommandException(Errors.OOM);
    }
  }

  /**
   * The bytes the server's values are counted for: the keyspace's and the guarded keys' filters and the reservations
   * of unfinished file loads. What the heap rule ({@link HeapAdmission}) takes as live.
   */
  public static long held(Invocation inv) {
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
   * unless the heap rule ({@link HeapAdmission}) admits it beside what the server already holds.
   */
  public static void admitFilter(Invocation inv, long bytes, long largestArray) {
    admit(inv, bytes);
    admitHeap(inv, held(inv), bytes, largestArray);
  }

  /**
   * {@link #admitFilter} of an allocation of {@code bytes} for a value whose {@code reserved} bytes are already
   * counted in {@link #held} (a file load's or a guarded key's promise): the budget must not be exceeded now, and the
   * heap rule must admit the allocation beside everything else the server holds.
   */
  public static void admitReserved(Invocation inv, long reserved, long bytes, long largestArray) {
    admit(inv, 0);
    admitHeap(inv, Math.max(0, held(inv) - reserved), bytes, largestArray);
  }

  private static void admitHeap(Invocation inv, long held, long bytes, long largestArray) {
    if (!HeapAdmission.admits(held, bytes, largestArray)) {
      inv.server().stats().oomRejections.increment();
      throw new CommandException(Errors.OOM);
    }
  }
}
