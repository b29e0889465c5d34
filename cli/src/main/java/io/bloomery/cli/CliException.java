package io.bloomery.cli;

/**
 * A failure the user can act on, reported as one line on stderr without a stack trace. Carries the
 * exit code: {@link BloomeryCommand#EXIT_FAILURE} for bad data or files, {@link
 * BloomeryCommand#EXIT_USAGE} for option values that cannot work.
 */
final class CliException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final int exitCode;
  private final boolean quiet;

  private CliException(String message, int exitCode, Throwable cause) {
    this(message, exitCode, cause, false);
  }

  private CliException(String message, int exitCode, Throwable cause, boolean quiet) {
    super(message, cause);
    this.exitCode = exitCode;
    this.quiet = quiet;
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

  /**
   * Standard output's reader went away (EPIPE): exit {@link BloomeryCommand#EXIT_BROKEN_PIPE} and print
   * nothing, as a tool ended by SIGPIPE does (the message shows only with {@code --verbose}).
   */
  static CliException brokenPipe(Throwable cause) {
    return new CliException("stopped: standard output was closed by its reader (broken pipe)",
        BloomeryCommand.EXIT_BROKEN_PIPE, cause, true);
  }

  int exitCode() {
    return exitCode;
  }

  /** Whether the failure is reported by its exit status alone (no line on stderr unless --verbose). */
  boolean quiet() {
    return quiet;
  }
}
