package io.bloomery.filter;

/**
 * Thrown when two filters cannot be merged or compared because they place bits differently; the
 * message names the mismatching parameter and both values.
 */
public class IncompatibleFilterException extends IllegalArgumentException {
  private static final long serialVersionUID = 1L;

  public IncompatibleFilterException(String message) {
    super(message);
  }
}
