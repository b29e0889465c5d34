package io.bloomery.server.command;

/** Ends a command with an error reply, sent verbatim (the text carries its own code: {@code ERR}, {@code Bad}...). */
public final class CommandException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public CommandException(String reply) {
    super(reply, null, false, false);
  }

  /** The error line's text. */
  public String reply() {
    return getMessage();
  }
}
