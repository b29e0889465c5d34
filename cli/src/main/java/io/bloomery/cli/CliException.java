package io.bloomery.cli;

/**
 * A failure the user can act on, reported as one line on stderr without a stack trace. Carries the
 * exit code: {@link BloomeryCommand#EXIT_FAILURE} for bad data or files, {@link
 * BloomeryCommand#EXIT_USAGE} for option values that cannot work.
 */
final class CliException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final int exitCode;

  private CliException(String message, int exitCode, Throwable cause) {
    super(message, cause);
    this.exitCode = exitCode;
  }

  /** Bad data, an unreadable or corrupt file, an operation the library refused: exit 1. */
  static CliException failure(String message) {
    return new CliException(message, BloomeryCommand.EXIT_FAILURE, null);
  }

  /** As {@link #failure(String)}, keeping the cause for {@code --verbose}. */
  static CliException failure(String message, Throwable cause) {
    return new CliException(message, BloomeryCommand.EXIT_FAILURE, cause);
  }

  /** Option values that cannot work together or are out of range: exit 2. */
  static CliException usage(String message) {
    return new CliException(message, BloomeryCommand.EXIT_USAGE, null);
  }

  /** As {@link #usage(String)}, keeping the cause for {@code --verbose}. */
  static CliException usage(String message, Throwable cause) {
    return new CliException(message, BloomeryCommand.EXIT_USAGE, cause);
  }

  int exitCode() {
    return exitCode;
  }
}
