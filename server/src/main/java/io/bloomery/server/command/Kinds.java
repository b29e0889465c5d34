package io.bloomery.server.command;

/** The value at a key as the kind a command expects: WRONGTYPE for another kind, an error or null if missing. */
public final class Kinds {
  private Kinds() {}

  /** {@code null} if missing; WRONGTYPE if another kind. */
  public static <T> T orNull(Object value, Class<T> kind) {
    if (value == null) {
      return null;
    }
    if (!kind.isInstance(value)) {
      throw new CommandException(Errors.WRONGTYPE);
    }
    return kind.cast(value);
  }

  /** {@code missing} (the command's own error text) if missing; WRONGTYPE if another kind. */
  public static <T> T required(Object value, Class<T> kind, String missing) {
    T v = orNull(value, kind);
    if (v == null) {
      throw new CommandException(missing);
    }
    return v;
  }
}
