package io.bloomery.cli;

import io.bloomery.server.Main;
import java.io.InputStream;
import java.io.PrintWriter;
import java.util.Objects;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ScopeType;
import picocli.CommandLine.Spec;

/**
 * The {@code bloomery} command: plan, build, query, inspect and merge filter files, deduplicate a stream
 * against an exact store, and run the crawler demo.
 *
 * <p>Exit codes: {@value #EXIT_OK} success, {@value #EXIT_FAILURE} failure (bad data, unreadable or
 * corrupt files, incompatible filters, a false negative), {@value #EXIT_USAGE} usage (unknown options,
 * bad numbers, contradictory options, no command), {@value #EXIT_BROKEN_PIPE} standard output closed by its
 * reader ({@code | head}: the command stops quietly, as a tool ended by SIGPIPE). Errors are one line on
 * stderr; {@code --verbose} adds the stack trace.
 */
@Command(
    name = "bloomery",
    mixinStandardHelpOptions = true,
    versionProvider = BloomeryCommand.Version.class,
    description = {
      "Approximate-membership filters that are honest about what a \"maybe\" means:",
      "'absent' is definite, 'maybe' means: go and check the authoritative store."
    },
    subcommands = {
      PlanCommand.class,
      BuildCommand.class,
      QueryCommand.class,
      InfoCommand.class,
      MergeCommand.class,
      ShrinkCommand.class,
      DemoCommand.class,
      DedupCommand.class,
      BenchCommand.class,
      ServeCommand.class,
      LoadCommand.class,
      ImportCommand.class,
      CheckLogCommand.class,
      TopCommand.class,
      ClusterCommand.class,
      CommandLine.HelpCommand.class
    },
    exitCodeListHeading = "%nExit codes:%n",
    exitCodeList = {
      "0:success",
      "1:failure (bad data, unreadable or corrupt file, incompatible filters, a false negative)",
      "2:usage (unknown option, bad number, contradictory options, no command)",
      "141:standard output closed by its reader (e.g. | head -1): stopped quietly, as on SIGPIPE"
    })
public final class BloomeryCommand implements Callable<Integer> {
  public static final int EXIT_OK = 0;
  public static final int EXIT_FAILURE = 1;
  public static final int EXIT_USAGE = 2;
  /** 128 + SIGPIPE (13): what a shell reports for a tool that the kernel ended on a closed pipe. */
  public static final int EXIT_BROKEN_PIPE = 141;

  @Spec CommandSpec spec;

  @Option(
      names = "--verbose",
      scope = ScopeType.INHERIT,
      description = "On errors, print the stack trace as well as the one-line message.")
  boolean verbose;

  private final InputStream stdin;
  private final boolean terminal;

  /** A command reading the process's stdin; progress bars only when stderr is a terminal. */
  public BloomeryCommand() {
    this(System.in, Terminal.isInteractive());
  }

  /**
   * A command with its own standard input, for embedding and tests.
   *
   * @param terminal whether progress bars may be drawn on stderr
   */
  public BloomeryCommand(InputStream stdin, boolean terminal) {
    this.stdin = Objects.requireNonNull(stdin, "stdin");
    this.terminal = terminal;
  }

  public static void main(String[] args) {
    String[] serverArgs = ServeCommand.direct(args);
    if (serverArgs != null) {
      System.exit(Main.run(serverArgs, StandardOutput.ofProcess(), new PrintWriter(System.err, true)));
    }
    CommandLine commandLine = newCommandLine(new BloomeryCommand());
    commandLine.setOut(StandardOutput.ofProcess());
    System.exit(commandLine.execute(args));
  }

  /** Wires exit codes and the one-line error handlers around {@code command}. */
  public static CommandLine newCommandLine(BloomeryCommand command) {
    CommandLine commandLine = new CommandLine(command);
    commandLine.setCaseInsensitiveEnumValuesAllowed(true);
    commandLine.setExitCodeExceptionMapper(CliErrors::exitCode);
    commandLine.setExecutionExceptionHandler(CliErrors::handleExecutionException);
    commandLine.setParameterExceptionHandler(CliErrors::handleParameterException);
    commandLine.setExecutionStrategy(CliErrors::runCheckingOutput);
    // wide enough that no option's description (at most 110 characters, indented 8) is wrapped
    commandLine.getSubcommands().get("serve").getCommandSpec().usageMessage().width(120)
        .footer(ServeCommand.optionsHelp());
    return commandLine;
  }

  /** Standard input, as given to this command ("-" for {@code --input}). */
  InputStream stdin() {
    return stdin;
  }

  /** Whether stderr is an interactive terminal (progress bars are drawn only then). */
  boolean terminal() {
    return terminal;
  }

  boolean verbose() {
    return verbose;
  }

  PrintWriter out() {
    return spec.commandLine().getOut();
  }

  PrintWriter err() {
    return spec.commandLine().getErr();
  }

  /** No command given: the usage goes to stderr and the exit code says it was a usage error. */
  @Override
  public Integer call() {
    PrintWriter err = err();
    err.println("bloomery: a command is required ("
        + String.join(", ", spec.commandLine().getSubcommands().keySet()) + ")");
    spec.commandLine().usage(err);
    err.flush();
    return EXIT_USAGE;
  }

  /** The version from the jar manifest, else "development build". */
  static final class Version implements CommandLine.IVersionProvider {
    @Override
    public String[] getVersion() {
      String version = BloomeryCommand.class.getPackage().getImplementationVersion();
      return new String[] {
        "bloomery " + (version == null ? "(development build)" : version),
        "Java " + Runtime.version() + " (" + System.getProperty("java.vm.name") + ")"
      };
    }
  }
}
