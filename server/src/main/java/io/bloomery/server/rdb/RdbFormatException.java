package io.bloomery.server.rdb;

import java.io.IOException;

/** RDB bytes (a {@code DUMP} payload or an RDB file) that are malformed, truncated or of a kind this server refuses. */
public class RdbFormatException extends IOException {
  private static final long serialVersionUID = 1L;

  /** With a message saying what was expected and what was found. */
  public RdbFormatException(String message) {
    super(message);
  }

  /** With a message and the failure beneath it. */
  public RdbFormatException(String message, Throwable cause) {
    super(message, cause);
  }
}
