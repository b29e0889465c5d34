package io.bloomery.guard;

/**
 * An insert was attempted on a store that is read-only for the guard: an existing table and
 * column named by the user, owned by someone else. The guard builds its filter from such a table
 * and confirms against it, but never writes to it (no rows, no DDL).
 */
public class ReadOnlyStoreException extends UnsupportedOperationException {
  private static final long serialVersionUID = 1L;

  public ReadOnlyStoreException(String message) {
    super(message);
  }
}
