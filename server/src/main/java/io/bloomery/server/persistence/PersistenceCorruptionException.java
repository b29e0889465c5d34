package io.bloomery.server.persistence;

import java.io.IOException;
import java.nio.file.Path;

/**
 * A persistence file that cannot be trusted: a journal record damaged before the journal's last record,
 * a damaged snapshot, a manifest that does not parse, or a record recovery could not apply. The message
 * names the file and the byte offset; the server refuses to start rather than serve a partial state.
 */
public final class PersistenceCorruptionException extends IOException {
  private static final long serialVersionUID = 1L;

  private final transient Path file;
  private final long offset;
  private final String problem;

  PersistenceCorruptionException(Path file, long offset, String problem) {
    this(file, offset, problem, null);
  }

  PersistenceCorruptionException(Path file, long offset, String problem, Throwable cause) {
    super(file + " at offset " + offset + ": " + problem, cause);
    this.file = file;
    this.offset = offset;
    this.problem = problem;
  }

  /** The damaged file. */
  public Path file() {
    return file;
  }

  /** What is wrong, without the file and offset. */
  public String problem() {
    return problem;
  }

  /** Where in {@link #file()} the damage begins. */
  public long offset() {
    return offset;
  }
}
