package io.bloomery.server.command;

/** The {@code maxmemory} budget, counted in filter bytes by the keyspace's own accounting. */
final class Memory {
  private Memory() {}

  /** Refuses, before anything is allocated, a value of {@code bytes} that would take the server past the budget. */
  static void admit(Invocation inv, long bytes) {
    long max = inv.settings().maxmemory;
    if (max > 0 && (bytes < 0 || inv.keyspace().usedBytes() + bytes > max)) {
      inv.server().stats().oomRejections.increment();
      throw new CommandException(Errors.OOM);
    }
  }

  /**
   * {@link #admit}, and also refuses a single allocation of {@code bytes} that the JVM heap could not take twice over
   * (a fixed filter or a file load is one array, allocated at once), so it answers OOM instead of dying of
   * {@code OutOfMemoryError} when no {@code maxmemory} is set.
   */
  static void admitWithHeap(Invocation inv, long bytes) {
    admit(inv, bytes);
    Runtime rt = Runtime.getRuntime();
    long free = rt.maxMemory() - (rt.totalMemory() - rt.freeMemory());
    if (bytes > free / 2) {
      inv.server().stats().oomRejections.increment();
      throw new CommandException(Errors.OOM);
    }
  }
}
