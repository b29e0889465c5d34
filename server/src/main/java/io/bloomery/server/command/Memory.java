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
}
