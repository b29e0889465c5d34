package io.bloomery.cli;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileSystemException;
import java.nio.file.NoSuchFileException;
import java.util.List;
import picocli.CommandLine;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParseResult;
import picocli.CommandLine.UnmatchedArgumentException;

/**
 * Turns exceptions into the CLI's promise: one clear line on stderr, exit 1 for failures and 2 for
 * usage errors, and a stack trace only with {@code --verbose}.
 */
final class CliErrors {
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
    err.println(prefix(commandLine) + describe(exception));
    if (isVerbose(parseResult)) {
      exception.printStackTrace(err);
    } else if (!(exception instanceof CliException) && !isExpected(exception)) {
      err.println("(run with --verbose for the stack trace)");
    }
    err.flush();
    return exitCode(exception);
  }

  /**
   * Runs the parsed command; an {@link OutOfMemoryError} (a filter or input larger than the heap)
   * becomes a one-line failure saying how to give the JVM more memory, not a stack trace.
   */
  static int runReportingOutOfMemory(ParseResult parseResult) {
    try {
      return new CommandLine.RunLast().execute(parseResult);
    } catch (OutOfMemoryError e) {
      List<CommandLine> commands = parseResult.asCommandLineList();
      throw new CommandLine.ExecutionException(commands.get(commands.size() - 1), "out of memory",
          CliException.failure("out of memory (max heap " + Units.bytesShort(Runtime.getRuntime().maxMemory())
              + "); give the JVM more, e.g. BLOOMERY_JAVA_OPTS=-Xmx6g ./bloomery …", e));
    }
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
      return fs.getFile() + ": " + (fs.getReason() == null ? e.getClass().getSimpleName() : fs.getReason());
    }
    String message = e.getMessage();
    if (e instanceof IOException || e instanceof IllegalArgumentException) {
      return message == null ? e.getClass().getSimpleName() : message;
    }
    return e.getClass().getName() + (message == null ? "" : ": " + message);
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
