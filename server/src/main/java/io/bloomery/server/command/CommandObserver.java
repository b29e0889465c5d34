package io.bloomery.server.command;

/** Told about every executed command, for per-command metrics. Called on the connection's thread; must be fast. */
@FunctionalInterface
public interface CommandObserver {
  CommandObserver NONE = (command, nanos, error) -> {};

  /**
   * @param command the command's table name (lower case), or {@code "unknown"}
   * @param nanos time spent executing, excluding the wait for the journal
   * @param error whether the reply was an error
   */
  void executed(String command, long nanos, boolean error);
}
