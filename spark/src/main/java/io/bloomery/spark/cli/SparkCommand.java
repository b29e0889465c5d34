package io.bloomery.spark.cli;

import io.bloomery.filter.FilterKind;
import io.bloomery.filter.MembershipFilter;
import io.bloomery.spark.BloomerySpark;
import io.bloomery.spark.BloomerySparkException;
import io.bloomery.spark.FilterSpec;
import io.bloomery.spark.ShardedBuild;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.function.Function;
import org.apache.spark.sql.DataFrameReader;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import picocli.CommandLine;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;

/**
 * {@code bloomery spark}: build and apply filters with Spark, local mode by default. Launched by the
 * {@code ./bloomery} script with Spark's classpath when its first argument is {@code spark}; see the
 * README. Exit codes as {@code bloomery}'s: 0 success, 1 failure, 2 usage.
 */
@Command(
    name = "bloomery spark",
    mixinStandardHelpOptions = true,
    subcommands = {SparkCommand.Build.class, SparkCommand.Dedup.class},
    description = "Build filters over, and apply them to, data too large for one machine (Apache Spark).")
public final class SparkCommand implements Runnable {
  static final int EXIT_OK = 0;
  static final int EXIT_FAILURE = 1;
  static final int EXIT_USAGE = 2;

  private final Function<String, SparkSession> sessions;

  @picocli.CommandLine.Spec CommandLine.Model.CommandSpec spec;

  /** A command that starts sessions with {@code sessions.apply(masterUrl)}. */
  public SparkCommand(Function<String, SparkSession> sessions) {
    this.sessions = sessions;
  }

  /** Starts a session on {@code master}, Spark's console progress bar on when {@link #showProgress}. */
  static SparkSession startSession(String master) {
    return SparkSession.builder()
        .master(master)
        .appName("bloomery")
        .config("spark.ui.showConsoleProgress", String.valueOf(showProgress()))
        .getOrCreate();
  }

  /**
   * Whether to draw Spark's progress bar (on standard error): as the launcher script says, which
   * passes {@code -Dbloomery.spark.progress=true} exactly when standard error is a terminal; without
   * it, when the JVM has a console (standard input and output on a terminal). Without a terminal it
   * stays off, so logs and pipes get no carriage-return redraws.
   */
  static boolean showProgress() {
    String told = System.getProperty("bloomery.spark.progress");
    return told != null ? Boolean.parseBoolean(told) : System.console() != null;
  }

  public static void main(String[] args) {
    SparkSession[] started = {null};
    int code = commandLine(new SparkCommand(master -> started[0] = startSession(master))).execute(args);
    if (started[0] != null) {
      started[0].stop();
    }
    System.exit(code);
  }

  /** The command line with bloomery's exit codes and one-line errors. */
  public static CommandLine commandLine(SparkCommand command) {
    CommandLine line = new CommandLine(command);
    line.setCaseInsensitiveEnumValuesAllowed(true);
    line.setExecutionExceptionHandler((e, cmd, parsed) -> {
      Throwable shown = e instanceof UncheckedIOException && e.getCause() != null ? e.getCause() : e;
      cmd.getErr().println("bloomery spark: " + (shown instanceof BloomerySparkException || shown instanceof IllegalArgumentException
          || shown instanceof java.io.IOException ? shown.getMessage() : shown.toString()));
      cmd.getErr().flush();
      return shown instanceof IllegalArgumentException && !(shown instanceof BloomerySparkException) ? EXIT_USAGE : EXIT_FAILURE;
    });
    line.setParameterExceptionHandler((e, args) -> {
      e.getCommandLine().getErr().println("bloomery spark: " + e.getMessage());
      e.getCommandLine().getErr().println("Try 'bloomery spark " + e.getCommandLine().getCommandName().replace("bloomery spark", "").trim()
          + " --help' for more information.");
      e.getCommandLine().getErr().flush();
      return EXIT_USAGE;
    });
    return line;
  }

  @Override
  public void run() {
    spec.commandLine().usage(spec.commandLine().getOut());
  }

  /** The input file formats; each maps to a Spark data source. */
  enum Format { TEXT, CSV, PARQUET, JSON }

  /** Options every subcommand reading an input shares. */
  static final class InputOptions {
    @Option(names = "--input", required = true, paramLabel = "PATH",
        description = "Input file or directory (any Hadoop path: file:, hdfs:, s3a:).")
    String input;

    @Option(names = "--format", paramLabel = "FORMAT", defaultValue = "text",
        description = "text (one item per line, column 'value'), csv (with a header line), parquet or json. Default: text.")
    Format format;

    @Option(names = "--column", paramLabel = "C",
        description = "The column holding the items (string, binary or bigint). Default: 'value' for text, else the first column.")
    String column;

    @Option(names = "--master", paramLabel = "URL", defaultValue = "local[*]",
        description = "Spark master URL. Default: local[*], this machine.")
    String master;

    @Option(names = "--skip-nulls", description = "Leave rows with a null item out instead of failing.")
    boolean skipNulls;

    Dataset<Row> read(SparkSession session) {
      DataFrameReader reader = session.read();
      switch (format) {
        case TEXT:
          return reader.text(input);
        case CSV:
          return reader.option("header", "true").csv(input);
        case PARQUET:
          return reader.parquet(input);
        default:
          return reader.json(input);
      }
    }

    String column(Dataset<Row> data) {
      if (column != null) {
        return column;
      }
      String[] columns = data.columns();
      if (columns.length == 0) {
        throw new BloomerySparkException(input + " has no columns");
      }
      return columns[0];
    }

    FilterSpec.Nulls nulls() {
      return skipNulls ? FilterSpec.Nulls.SKIP : FilterSpec.Nulls.REFUSE;
    }
  }

  /** Exactly one of: N and P, or M and K. */
  /** {@code --kind}: a Bloom kind by its format name, {@code classic} or {@code blocked} (any case). */
  static final class BloomKindConverter implements CommandLine.ITypeConverter<FilterKind> {
    @Override
    public FilterKind convert(String value) {
      return switch (value.toLowerCase(Locale.ROOT)) {
        case "classic" -> FilterKind.CLASSIC_BLOOM;
        case "blocked" -> FilterKind.BLOCKED_BLOOM;
        default -> throw new CommandLine.TypeConversionException("expected classic or blocked, was '" + value + "'");
      };
    }
  }

  static final class Size {
    @ArgGroup(exclusive = false)
    Planned planned;

    @ArgGroup(exclusive = false)
    Explicit explicit;
  }

  static final class Planned {
    @Option(names = "--expected", required = true, paramLabel = "N", description = "Distinct items to size for.")
    long expected;

    @Option(names = "--fpp", required = true, paramLabel = "P", description = "Target false-positive rate in (0, 1).")
    double fpp;
  }

  static final class Explicit {
    @Option(names = "--bits", required = true, paramLabel = "M", description = "Exactly M bits (with --hashes).")
    long bits;

    @Option(names = "--hashes", required = true, paramLabel = "K", description = "Exactly K hashes per item.")
    int hashes;
  }

  /** {@code bloomery spark build}. */
  @Command(name = "build", mixinStandardHelpOptions = true, sortOptions = false,
      description = {
        "Build a filter file from a column of a dataset, in the format bloomery build writes.",
        "Items are the column's values: UTF-8 bytes of strings (never normalised), binary as is,",
        "bigint as 8 little-endian bytes. OUTPUT is replaced only once complete."
      })
  static final class Build implements Callable<Integer> {
    @ParentCommand SparkCommand root;

    @Mixin InputOptions inputs;

    @Option(names = "--output", required = true, paramLabel = "F", description = "The filter file to write (any Hadoop path).")
    String output;

    @ArgGroup(exclusive = true, multiplicity = "1", heading = "Size (one of):%n")
    Size size;

    @Option(names = "--kind", paramLabel = "KIND", defaultValue = "classic", converter = BloomKindConverter.class,
        description = "classic (default) or blocked.")
    FilterKind kind;

    @Option(names = "--sharded", description = "Build as slices, one task each, assembled into OUTPUT: for filters too large for one JVM.")
    boolean sharded;

    @Override
    public Integer call() {
      FilterSpec spec = spec().withNulls(inputs.nulls());
      SparkSession session = root.sessions.apply(inputs.master);
      Dataset<Row> data = inputs.read(session);
      String column = inputs.column(data);
      PrintWriter out = root.spec.commandLine().getOut();
      if (sharded) {
        ShardedBuild.Result result = BloomerySpark.buildSharded(data, column, spec, output);
        out.printf(Locale.ROOT, "wrote %s: %s filter, %d bits, %d hashes, %d slices, %d items offered, %d bits set, %d bytes%n",
            output, kind.kindName(), spec.bitSize(), spec.hashCount(), result.slices(), result.items(),
            result.bitCount(), result.fileBytes());
      } else {
        MembershipFilter filter = BloomerySpark.build(data, column, spec);
        BloomerySpark.writeFilter(session, filter, output);
        out.printf(Locale.ROOT, "wrote %s: %s filter, %d bits, %d hashes, protocol %s, column %s%n", output,
            kind.kindName(), spec.bitSize(), spec.hashCount(),
            kind == FilterKind.CLASSIC_BLOOM ? spec.protocol().name() : "xxh3-blocked-v1", column);
      }
      out.flush();
      return EXIT_OK;
    }

    private FilterSpec spec() {
      if (size.planned != null) {
        return kind == FilterKind.CLASSIC_BLOOM
            ? FilterSpec.classic(size.planned.expected, size.planned.fpp)
            : FilterSpec.blocked(size.planned.expected, size.planned.fpp);
      }
      return kind == FilterKind.CLASSIC_BLOOM
          ? FilterSpec.classicOfSize(size.explicit.bits, size.explicit.hashes)
          : FilterSpec.blockedOfSize(size.explicit.bits, size.explicit.hashes);
    }
  }

  /** {@code bloomery spark dedup}. */
  @Command(name = "dedup", mixinStandardHelpOptions = true, sortOptions = false,
      description = {
        "Write the rows whose item is definitely not in FILTER (new items) to DIR, in the input's format.",
        "Rows the filter calls 'maybe' are left out: check those against the authoritative store.",
        "DIR must not exist; Spark writes it as a directory of part files, complete or not at all."
      })
  static final class Dedup implements Callable<Integer> {
    @ParentCommand SparkCommand root;

    @Mixin InputOptions inputs;

    @Option(names = "--filter", required = true, paramLabel = "F", description = "A classic or blocked Bloomery filter file.")
    String filter;

    @Option(names = "--output", required = true, paramLabel = "DIR", description = "The directory to write the new rows to.")
    String output;

    @Override
    public Integer call() {
      SparkSession session = root.sessions.apply(inputs.master);
      MembershipFilter seen = BloomerySpark.readFilter(session, filter);
      Dataset<Row> data = inputs.read(session);
      String column = inputs.column(data);
      Dataset<Row> fresh = BloomerySpark.keepAbsent(data, column, seen, inputs.nulls());
      try {
        switch (inputs.format) {
          case TEXT -> fresh.write().text(output);
          case CSV -> fresh.write().option("header", "true").csv(output);
          case PARQUET -> fresh.write().parquet(output);
          default -> fresh.write().json(output);
        }
      } catch (Exception e) { // Spark's AnalysisException (DIR exists) and task failures are checked in Java's eyes
        String message = e.getMessage() == null ? e.toString() : e.getMessage().lines().findFirst().orElse("");
        int ours = message.indexOf(BloomerySparkException.class.getName() + ": ");
        throw new BloomerySparkException(ours >= 0 ? message.substring(ours + BloomerySparkException.class.getName().length() + 2)
            : output + ": " + message, e);
      }
      root.spec.commandLine().getOut().printf(Locale.ROOT, "wrote the rows absent from %s to %s%n", filter, output);
      root.spec.commandLine().getOut().flush();
      return EXIT_OK;
    }
  }
}
