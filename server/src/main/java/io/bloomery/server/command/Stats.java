package io.bloomery.server.command;

/** Keyspace hit/miss counting for INFO stats. */
final class Stats {
  private Stats() {}

  static void lookup(Invocation inv, Object value) {
    if (value == null) {
      inv.server().stats().keyspaceMisses.increment();
    } else {
      inv.server().stats().keyspaceHits.increment();
    }
  }
}
