package io.bloomery.format;

import java.io.IOException;

/**
 * Thrown when bytes claimed to be a serialized filter are not one: wrong magic, unknown version,
 * kind or protocol, truncation, trailing bytes, checksum mismatch, or sizes no valid filter has. The
 * message says what was expected and what was found. Nothing was allocated for the rejected input
 * beyond what its validated header allowed.
 */
public final class FilterFormatException extends IOException {
  private static final long serialVersionUID = 1L;

  public FilterFormatException(String message) {
    super(message);
  }

  public FilterFormatException(String message, Throwable cause) {
    super(message, cause);
  }
}
