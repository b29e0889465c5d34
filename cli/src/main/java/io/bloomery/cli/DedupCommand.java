package io.bloomery.cli;

import io.bloomery.guard.Credentials;
import io.bloomery.guard.DigestCollisionException;
import io.bloomery.guard.ExactStore;
import io.bloomery.guard.Guard;
import io.bloomery.guard.GuardStats;
import io.bloomery.guard.PostgresStore;
import io.bloomery.guard.SqliteStore;
import io.bloomery.guard.StoreUnavailableException;
import java.io.FileDescriptor;
import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.nio.channels.Channels;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;

/**
 * {@code bloomery dedup}: streams items through a {@link Guard} and prints only the ones never seen
 * before. The store is the memory, so runs continue where the last one stopped; the filter in front
 * of it skips the store lookup for (almost) every new item.
 */
@Command(
    name = "dedup",
    mixinStandardHelpOptions = true,
    sortOptions = false,
    header = "Print only the items never seen before; the exact store remembers across runs.",
    description = {
      "Read items (one per line; same line rules as build) and print, in input",
      "order, only those never seen before, in this run or any earlier run: the",
      "exact store is the memory. 'Never seen' is decided atomically by the store",
      "(INSERT ... ON CONFLICT DO NOTHING on PostgreSQL, INSERT OR IGNORE on",
      "SQLite), so concurrent runs against one store print each item once between",
      "them (a crash can repeat one batch: see Delivery). A Bloom filter in front",
      "of the store answers \"never seen\" for almost every new item; a single-item",
      "lookup then skips the store (a batch is one round trip either way).",
      "",
      "Stores:",
      "  sqlite:FILE             embedded, one file (WAL, synchronous=NORMAL: the",
      "                          output is durable before each commit, so a",
      "                          commit lost to power loss only repeats items);",
      "                          the default is sqlite:bloomery-dedup.db in the",
      "                          current directory",
      "  jdbc:postgresql://...   PostgreSQL (table bloomery_seen, created if absent)",
      "",
      "Speed (measured): 200,000 new URLs of 49 bytes into a new SQLite store ran",
      "at 8,900-10,200 items/s on 2 shared vCPUs (load average 19); the file",
      "held 138 bytes per item. The snapshot FILE.guard holds the filter, sized",
      "by --expected, not by the items: 12 MB at the default 10M. Use",
      "PostgreSQL when several machines write one store, or when the set",
      "outgrows the page cache (each insert then reads the index from disk):",
      "tens of millions of items. --batch trades the repeat after a kill -9",
      "for fewer commits.",
      "",
      "The filter is persisted next to a SQLite store (FILE.guard) with the store",
      "watermark it covers, and replayed or rebuilt on the next run; with",
      "PostgreSQL it is rebuilt from the table (streamed) unless --snapshot names",
      "a file.",
      "",
      "On stderr: a progress bar on a terminal, then the report: items, new,",
      "duplicates, the filter's answers (\"never seen\" vs \"maybe\", false",
      "positives, stale negatives from other writers), realized false-positive",
      "rate vs the model's, throughput.",
      "",
      "Delivery: at least once. No item is ever lost; only after a crash can the",
      "last unconfirmed batch repeat. Each batch's new items are written, flushed",
      "(and fsynced when the output is a regular file) BEFORE the store commits",
      "them as seen:",
      "  kill -9, OOM           the next run may print the new items of the one",
      "                         batch written but not committed (<= --batch); a",
      "                         file may end in a cut line without its newline",
      "  power loss, OS crash   as kill -9, and with SQLite also the batches",
      "                         committed since its last checkpoint (of 1,000",
      "                         pages of WAL); PostgreSQL: one batch",
      "  SIGTERM / SIGINT       finishes the batch in hand, commits, exits 143 /",
      "                         130; nothing repeats",
      "  failed write           (disk full, /dev/full, broken pipe): the batch is",
      "                         rolled back, a file cut back to its last whole",
      "                         batch, exit 1 with one line; nothing repeats",
      "  store failure          exit 1; re-running the same input is safe",
      "A pipe counts as delivered once write() returned: what the reader then",
      "discards (| head -1) is not printed again. Closed stdin/stdout (<&-, >&-)",
      "are refused, and so is an --output that is the input, the SQLite store or",
      "the snapshot. To continue after a stop, feed the same input again: the",
      "store skips what was delivered. Errors are one line; --verbose adds stack",
      "traces and the connection pool's warnings. Details: docs/GUARD.md.",
      ""
    })
final class DedupCommand implements Callable<Integer> {
  static final String DEFAULT_STORE = "sqlite:bloomery-dedup.db";

  @ParentCommand BloomeryCommand root;

  @Option(names = "--store", paramLabel = "STORE", defaultValue = DEFAULT_STORE,
      description = "sqlite:FILE or jdbc:postgresql://HOST:PORT/DB?user=... (default: ${DEFAULT-VALUE}).")
  String store;

  @Option(names = "--table", paramLabel = "NAME", defaultValue = "bloomery_seen",
      description = "Table of seen items, created if absent (default: ${DEFAULT-VALUE}).")
  String table;

  @Option(names = "--expected", paramLabel = "N", converter = CountConverter.class, defaultValue = "10M",
      description = "Distinct items the filter is sized for (default: ${DEFAULT-VALUE}); grown on rebuild"
          + " when the store already holds 80%% of it.")
  long expected;

  @Option(names = "--fpp", paramLabel = "P", converter = ProbabilityConverter.class, defaultValue = "0.01",
      description = "Target false-positive rate of the filter (default: ${DEFAULT-VALUE}).")
  double fpp;

  @Option(names = "--hex", description = "Input and output lines are the items' bytes in hex.")
  boolean hex;

  @Option(names = "--input", paramLabel = "FILE|-", defaultValue = "-",
      description = "Items to deduplicate (default: - = standard input).")
  String input;

  @Option(names = "--output", paramLabel = "FILE|-", defaultValue = "-",
      description = "Where the new items go (default: - = standard output).")
  String output;

  @Option(names = "--snapshot", paramLabel = "FILE",
      description = "Filter snapshot file (default: FILE.guard for sqlite:FILE, none for PostgreSQL).")
  Path snapshot;

  @Option(names = "--batch", paramLabel = "N", defaultValue = "1000",
      description = "Items per store round trip (default: ${DEFAULT-VALUE}).")
  int batch;

  @Override
  public Integer call() throws IOException {
    if (batch < 1 || batch > 100_000) {
      throw CliException.usage("--batch must be in 1..100000, got " + batch);
    }
    LogRedaction.configure(root.verbose());
    boolean processStdin = "-".equals(input) && root.stdin() == System.in;
    if (processStdin) {
      StandardStreams.requireOpenForReading(0, "standard input");
    }
    if ("-".equals(output)) {
      StandardStreams.requireOpenForWriting(1, "standard output");
    }
    Path snapshotFile = snapshot != null ? snapshot
        : store.startsWith("sqlite:") ? Path.of(store.substring("sqlite:".length()) + ".guard") : null;
    refuseOutputOverInputOrStore(snapshotFile);
    ExactStore exactStore = openStore();
    long started = System.nanoTime();
    Guard guard;
    try {
      guard = Guard.builder(exactStore).expectedInsertions(expected).fpp(fpp)
          .snapshotFile(snapshotFile).open();
    } catch (StoreUnavailableException e) {
      throw CliException.failure("cannot open the store: " + e.getMessage(), Credentials.redact(e));
    }
    Run run = new Run(batch);
    String problem = null;
    Throwable cause = null;
    PrintWriter err = root.err();
    GracefulStop stop = GracefulStop.install();
    // The input is opened before the output, so a missing input file never truncates --output.
    try (stop;
        guard;
        ItemInput in = ItemInput.open(input, processStdin ? stop.input(interruptibleStdin())
            : root.stdin());
        CheckedOutput out = openOutput();
        ProgressBar progress = new ProgressBar(err, root.terminal(), "dedup", -1, "items")) {
      try {
        in.forEach(hex, (line, bytes, offset, length) -> {
          run.pending.add(Arrays.copyOfRange(bytes, offset, offset + length));
          if (run.pending.size() == batch) {
            flush(guard, run, out);
            if (stop.requested() && !processStdin) {
              // A file can be fed again: stop after this batch. Standard input may be a pipe that
              // cannot, so there the lines already read are finished first; its reader stops at
              // the next read (GracefulStop.input).
              throw new GracefulStop.Stopped();
            }
          }
          progress.update(run.items + run.pending.size());
        });
      } catch (GracefulStop.Stopped e) {
        run.stopped = true; // items read so far are finished below; the rest stays unread
      }
      if (!run.pending.isEmpty()) {
        flush(guard, run, out);
      }
      progress.update(run.items);
    } catch (CheckedOutput.Failure e) {
      problem = e.getMessage() + "; " + run.unrecordedBatch() + " " + run.soFar();
      cause = e;
    } catch (CliException e) { // a bad input line (hex, over-long) or a failed read: say what became of the rest
      problem = e.getMessage() + "; " + run.unrecordedBatch() + " " + run.soFar();
      cause = e;
    } catch (StoreUnavailableException e) {
      problem = "the store failed after " + run.items + " " + Units.noun(run.items, "item", "items") + ": "
          + e.getMessage() + "; " + (run.writtenUnconfirmed > 0
              ? "the last batch's " + (run.writtenUnconfirmed == 1
                  ? "1 new item was written but its commit was not confirmed, so a re-run may print it again"
                  : Units.grouped(run.writtenUnconfirmed) + " new items were written but their commit was not"
                      + " confirmed, so a re-run may print them again")
              : run.unrecordedBatch())
          + " " + run.soFar();
      cause = e;
    } catch (DigestCollisionException e) {
      problem = "the store holds a different item under the SHA-256 digest of an item of the"
          + " batch (a foreign or tampered row, not a real collision: " + e.getMessage() + "); "
          + run.unrecordedBatch() + " " + run.soFar();
      cause = e;
    }
    report(err, guard.stats(), run.items, run.fresh, started, snapshotFile != null);
    if (problem != null) {
      throw CliException.failure(Credentials.redact(problem), Credentials.redact(cause));
    }
    if (run.stopped) {
      err.println("bloomery dedup: stopped by " + stop.signalName() + " after " + run.items + " "
          + Units.noun(run.items, "item", "items") + ", whose "
          + Units.count(run.fresh, "new item was", "new items were") + " written and committed;"
          + " the rest of the input was not read: feed it (or all of it again) to continue");
      err.flush();
      return stop.exitCode();
    }
    return BloomeryCommand.EXIT_OK;
  }

  /** Counters and the batch in hand of one run. */
  private static final class Run {
    final List<byte[]> pending;
    long items;
    long fresh;
    long writtenUnconfirmed;
    boolean stopped;

    Run(int batch) {
      pending = new ArrayList<>(batch);
    }

    String unrecordedBatch() {
      return "the batch in progress (" + Units.count(pending.size(), "item", "items") + ") was rolled back:"
          + " none of it is recorded as seen, so a re-run prints its new items";
    }

    String soFar() {
      return "(" + Units.count(fresh, "new item was", "new items were") + " written and committed before it)";
    }
  }

  /**
   * One store transaction for the pending items. The new ones are written to the output, flushed
   * (and fsynced for a file) before the commit that records them as seen; a failed write rolls
   * the batch back. A crash can therefore repeat the last batch, never lose an item.
   */
  private void flush(Guard guard, Run run, CheckedOutput out) throws IOException {
    run.writtenUnconfirmed = 0;
    List<byte[]> pending = run.pending;
    guard.addIfAbsent(pending, inserted -> {
      long written = 0;
      for (int i = 0; i < inserted.length; i++) {
        if (inserted[i]) {
          writeItem(out, pending.get(i));
          written++;
        }
      }
      out.deliver();
      run.writtenUnconfirmed = written; // delivered; the commit follows
    });
    run.fresh += run.writtenUnconfirmed;
    run.writtenUnconfirmed = 0;
    run.items += pending.size();
    pending.clear();
  }

  /**
   * The output file is truncated when it opens, so an {@code --output} that is the input (also through a link, or
   * the file standard input reads), the SQLite store file or the filter snapshot would destroy the items or what
   * the store remembers: refused before anything is opened. {@code dedup --input f --output f} once emptied f and
   * reported "0 items".
   */
  private void refuseOutputOverInputOrStore(Path snapshotFile) throws IOException {
    if ("-".equals(output)) {
      return;
    }
    Path target = Path.of(output);
    Path source = "-".equals(input) ? StandardStreams.fileOfStdin(root.stdin()) : Path.of(input);
    if (source != null && sameTarget(source, target)) {
      throw CliException.usage("--output " + output + " is the input file" + ("-".equals(input) ? " (standard input)"
          : "") + "; writing the new items there would destroy the items. Choose another --output.");
    }
    if (store.startsWith("sqlite:") && !store.equals("sqlite:")
        && sameTarget(Path.of(store.substring("sqlite:".length())), target)) {
      throw CliException.usage("--output " + output + " is the SQLite store's file; writing the new items there"
          + " would destroy what the store remembers. Choose another --output.");
    }
    if (snapshotFile != null && sameTarget(snapshotFile, target)) {
      throw CliException.usage("--output " + output + " is the filter's snapshot file; choose another --output.");
    }
  }

  /** The same file (links followed), or, when either does not exist yet, the same absolute path. */
  private static boolean sameTarget(Path a, Path b) throws IOException {
    return FilterFiles.sameFile(a, b) || a.toAbsolutePath().normalize().equals(b.toAbsolutePath().normalize());
  }

  /** File descriptor 0 over an interruptible channel, so a stop request wakes a blocked read. */
  private static InputStream interruptibleStdin() {
    return Channels.newInputStream(new FileInputStream(FileDescriptor.in).getChannel());
  }

  private ExactStore openStore() {
    try {
      if (store.startsWith("sqlite:")) {
        String file = store.substring("sqlite:".length());
        if (file.isEmpty()) {
          throw CliException.usage("--store sqlite:FILE needs a file name");
        }
        // Lines are written (and fsynced, to a file) before their batch commits, so a commit lost to power loss
        // only repeats items: a commit need not survive more than the process (docs/GUARD.md).
        return SqliteStore.open(Path.of(file), table, SqliteStore.CommitDurability.PROCESS_CRASH);
      }
      if (store.startsWith("jdbc:postgresql:")) {
        return PostgresStore.open(store, table);
      }
    } catch (StoreUnavailableException e) {
      throw CliException.failure("cannot open the store: " + e.getMessage(), Credentials.redact(e));
    } catch (IllegalArgumentException | IllegalStateException e) {
      throw CliException.usage(Credentials.redact(e.getMessage()), Credentials.redact(e));
    }
    throw CliException.usage("--store must be sqlite:FILE or jdbc:postgresql://..., got '"
        + Credentials.redact(store) + "'");
  }

  private CheckedOutput openOutput() throws IOException {
    // Items are bytes: they go to the output as bytes, not through a character writer.
    return "-".equals(output) ? CheckedOutput.standardOutput() : CheckedOutput.file(Path.of(output));
  }

  private void writeItem(CheckedOutput out, byte[] item) {
    out.write(hex ? Hex.encode(item).getBytes(StandardCharsets.US_ASCII) : item);
    out.write('\n');
  }

  private void report(PrintWriter err, GuardStats stats, long items, long fresh, long startedNanos,
      boolean hasSnapshot) {
    double seconds = Math.max(1e-9, (System.nanoTime() - startedNanos) / 1e9);
    err.printf(Locale.ROOT, "dedup: %s, %s new, %s in %.2f s (%s items/s)%n",
        Units.count(items, "item", "items"), Units.grouped(fresh),
        Units.count(items - fresh, "duplicate", "duplicates"), seconds,
        Units.count(items / seconds));
    for (String line : summary(stats, store.startsWith("sqlite:") ? store : "PostgreSQL",
        hasSnapshot)) {
      err.println("  " + line);
    }
    err.flush();
  }

  /**
   * The figures under the first summary line, each meaning what its label says. Every item the
   * guard was offered is one filter answer: "never seen" (its bits were not all set) or "maybe".
   * A "never seen" item is new unless another writer stored it first (a stale negative); a
   * "maybe" is a duplicate unless the store did not hold it (a realized false positive).
   */
  static List<String> summary(GuardStats stats, String storeName, boolean hasSnapshot) {
    long negatives = stats.storeLookupsAvoided();
    long maybes = stats.storeLookupsMade();
    long stale = stats.staleNegatives();
    long falsePositives = stats.realizedFalsePositives();
    long offered = negatives + maybes;
    long nonMembers = negatives - stale + falsePositives;
    List<String> lines = new ArrayList<>();
    lines.add(String.format(Locale.ROOT, "filter answers: %s \"never seen\" (%s of items, new"
            + " without a store read), %s \"maybe\" (%s, confirmed by the store)",
        Units.grouped(negatives), percent(negatives, offered), Units.grouped(maybes),
        percent(maybes, offered)));
    lines.add(String.format(Locale.ROOT, "  \"maybe\": %s, %s (new after all)",
        Units.count(maybes - falsePositives, "duplicate", "duplicates"),
        Units.count(falsePositives, "false positive", "false positives")));
    if (stale > 0) {
      lines.add(String.format(Locale.ROOT, "  \"never seen\" but already stored by another"
          + " writer: %s (stale negatives)", Units.grouped(stale)));
    }
    double realized = stats.realizedFalsePositiveRate();
    lines.add(String.format(Locale.ROOT, "false-positive rate: %s realized (%s of %s)"
            + " vs model %s at the current fill", Units.grouped(falsePositives),
        Double.isNaN(realized) ? "n/a" : String.format(Locale.ROOT, "%.4f%%", realized * 100),
        Units.count(nonMembers, "non-member", "non-members"), String.format(Locale.ROOT, "%.4f%%",
            stats.modelFalsePositiveRate() * 100)));
    lines.add(String.format(Locale.ROOT, "filter: %s, m=%s bits, k=%d, capacity %s, fill %.1f%%%s",
        hasSnapshot ? "generation " + stats.generation() + " (filters built for this store, as its snapshot counts them)"
            : "built from the store at open (no snapshot file, so no generations)",
        Units.grouped(stats.bits()), stats.hashes(), Units.grouped(stats.capacity()),
        stats.fillRatio() * 100,
        stats.nearCapacity() ? ", NEAR CAPACITY (>= 80%): raise --expected" : ""));
    lines.add("store: " + storeName + "; " + stats.recovery());
    if (stats.insertFailures() > 0) {
      lines.add("items of failed store calls (outcome unknown): " + stats.insertFailures());
    }
    return lines;
  }

  private static String percent(long part, long whole) {
    return whole == 0 ? "n/a" : String.format(Locale.ROOT, "%.2f%%", 100.0 * part / whole);
  }
}
