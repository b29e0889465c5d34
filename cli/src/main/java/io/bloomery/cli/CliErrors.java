package io.bloomery.cli;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileSystemException;
import java.nio.file.NoSuchFileException;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParseResult;
import picocli.CommandLine.UnmatchedArgumentException;

/**
 * Turns exceptions into the CLI's promise: one clear line on stderr, exit 1 for failures and 2 for
 * usage errors, and a stack trace only with {@code --verbose}. The line is words for a user: Java class
 * names (which library messages often carry, {@code "…: java.lang.IllegalArgumentException: …"}) are
 * left out unless {@code --verbose}.
 */
final class CliErrors {
  /** A qualified Throwable class name, with the ": " that usually follows it. */
  private static final Pattern THROWABLE_NAME =
      Pattern.compile("\\b(?:[a-z_$][\\w$]*\\.)+([A-Z][\\w$]*(?:Exception|Error))\\b(?::\\s*)?");

  private CliErrors() {}

  static int exitCode(Throwable exception) {
    if (exception instanceof CliException cli) {
      return cli.exitCode();
    }
    if (exception instanceof ParameterException) {
      return BloomeryCommand.EXIT_USAGE;
    }
    return BloomeryCommand.EXIT_FAILURE;
  }

  static int handleExecutionException(
      Exception exception, CommandLine commandLine, ParseResult parseResult) {
    PrintWriter err = commandLine.getErr();
    boolean verbose = isVerbose(parseResult);
    if (exception instanceof CliException cli && cli.quiet() && !verbose) {
      return cli.exitCode();
    }
    err.println(prefix(commandLine) + (verbose ? describe(exception) : inWords(describe(exception))));
    if (verbose) {
      exception.printStackTrace(err);
    } else if (!(exception instanceof CliException) && !isExpected(exception)) {
      err.println("(run with --verbose for the stack trace)");
    }
    err.flush();
    return exitCode(exception);
  }

  /**
   * Runs the parsed command, then makes sure its standard output really got everything
   * ({@link StandardOutput#requireWritten}): a failed write is a failure, never exit 0. An {@link
   * OutOfMemoryError} (a filter or input larger than the heap) becomes a one-line failure saying how to
   * give the JVM more memory, not a stack trace.
   */
  static int runCheckingOutput(ParseResult parseResult) {
    List<CommandLine> commands = parseResult.asCommandLineList();
    CommandLine command = commands.get(commands.size() - 1);
    int exitCode;
    try {
      exitCode = new CommandLine.RunLast().execute(parseResult);
    } catch (OutOfMemoryError e) {
      throw new CommandLine.ExecutionException(command, "out of memory",
          CliException.failure(outOfMemoryAdvice(Runtime.getRuntime().maxMemory()), e));
    }
    try {
      StandardOutput.requireWritten(command.getOut());
    } catch (CliException e) {
      throw new CommandLine.ExecutionException(command, e.getMessage(), e);
    }
    return exitCode;
  }

  /**
   * What to say when the heap ran out: the current maximum was not enough, so the advice is a larger
   * one (twice the current, in whole GiB), never the value already in force.
   */
  static String outOfMemoryAdvice(long maxHeapBytes) {
    return "out of memory: the JVM's maximum heap of " + Units.bytesShort(maxHeapBytes)
        + " is not enough for this; rerun with more, e.g. BLOOMERY_JAVA_OPTS=" + heapOption(2 * maxHeapBytes);
  }

  /**
   * Fails before allocating when {@code bytes} cannot fit the JVM's maximum heap at all, saying how
   * much heap to give it (a quarter more than the need, for everything else the run holds).
   *
   * @param what what needs the memory, as the start of the message ("a filter of 95,850,584 bits")
   */
  static void requireHeap(String what, long bytes) {
    long maxHeap = Runtime.getRuntime().maxMemory();
    if (bytes > maxHeap) {
      throw CliException.failure(what + " needs at least " + Units.bytesShort(bytes) + " of heap; the JVM's maximum is "
          + Units.bytesShort(maxHeap) + ": rerun with BLOOMERY_JAVA_OPTS=" + heapOption(bytes + bytes / 4));
    }
  }

  /** {@code -Xmx<n>g} for at least {@code bytes} (whole GiB, rounded up, at least 1). */
  static String heapOption(long bytes) {
    long gib = Math.max(1, Math.ceilDiv(Math.max(bytes, 1), 1L << 30));
    return "-Xmx" + gib + "g";
  }

  static int handleParameterException(ParameterException exception, String[] args) {
    CommandLine commandLine = exception.getCommandLine();
    PrintWriter err = commandLine.getErr();
    err.println(prefix(commandLine) + exception.getMessage());
    UnmatchedArgumentException.printSuggestions(exception, err);
    err.println("Try '" + commandLine.getCommandSpec().qualifiedName() + " --help'.");
    err.flush();
    return BloomeryCommand.EXIT_USAGE;
  }

  /** A one-line description of {@code exception} for a user, naming files where there are any. */
  static String describe(Throwable exception) {
    Throwable e = exception instanceof UncheckedIOException unchecked ? unchecked.getCause() : exception;
    if (e instanceof CliException) {
      return e.getMessage();
    }
    if (e instanceof NoSuchFileException missing) {
      return "no such file: " + missing.getFile();
    }
    if (e instanceof AccessDeniedException denied) {
      return "permission denied: " + denied.getFile();
    }
    if (e instanceof FileSystemException fs) {
      return fs.getFile() + ": " + (fs.getReason() == null ? words(e.getClass().getSimpleName()) : fs.getReason());
    }
    String message = e.getMessage();
    if (e instanceof IOException || e instanceof IllegalArgumentException) {
      return message == null || message.isBlank() ? words(e.getClass().getSimpleName()) : message;
    }
    return "unexpected error (" + words(e.getClass().getSimpleName()) + ")"
        + (message == null || message.isBlank() ? "" : ": " + message);
  }

  /**
   * {@code line} without the Java class names that library messages embed: {@code "malformed filter:
   * java.lang.IllegalArgumentException: bits must be positive"} reads {@code "malformed filter: bits must
   * be positive"}; a name with no message after it becomes words ({@code java.io.EOFException} → "end
   * of file").
   */
  static String inWords(String line) {
    Matcher matcher = THROWABLE_NAME.matcher(line);
    StringBuilder result = new StringBuilder();
    while (matcher.find()) {
      boolean messageFollows = matcher.group().contains(":") && matcher.end() < line.length();
      matcher.appendReplacement(result, messageFollows ? "" : Matcher.quoteReplacement(words(matcher.group(1))));
    }
    matcher.appendTail(result);
    return result.toString().strip();
  }

  /** "NoSuchFileException" → "no such file", "EOFException" → "end of file". */
  static String words(String simpleName) {
    if (simpleName.equals("EOFException")) {
      return "end of file";
    }
    String stem = simpleName.replaceFirst("(Exception|Error)$", "");
    String spaced = stem.replaceAll("(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", " ").toLowerCase(Locale.ROOT);
    return spaced.isBlank() ? "error" : spaced;
  }

  private static boolean isExpected(Throwable exception) {
    return exception instanceof IOException
        || exception instanceof UncheckedIOException
        || exception instanceof IllegalArgumentException;
  }

  private static String prefix(CommandLine commandLine) {
    return commandLine.getCommandSpec().qualifiedName() + ": ";
  }

  private static boolean isVerbose(ParseResult parseResult) {
    return parseResult != null && parseResult.originalArgs().contains("--verbose");
  }
}
