package io.bloomery.server.command;

/**
 * One family of commands (BF.*, CF.*, GUARD.*, ...): adds its {@link CommandSpec}s to the table a
 * {@link Dispatcher} answers from. The dispatcher knows no family; the server's wiring lists them.
 */
@FunctionalInterface
public interface CommandFamily {
  /** Adds this family's commands to {@code table}. */
  void register(CommandTable table);
}
