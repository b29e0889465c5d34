package io.bloomery.cli;

import io.bloomery.guard.ExactStore;
import io.bloomery.guard.Guard;
import io.bloomery.guard.GuardStats;
import io.bloomery.guard.PostgresStore;
import io.bloomery.guard.SqliteStore;
import io.bloomery.guard.StoreUnavailableException;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
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
      "SQLite), so concurrent runs against one store print each item exactly once",
      "between them. A Bloom filter in front of the store skips the lookup of",
      "items it has definitely never seen.",
      "",
      "Stores:",
      "  sqlite:FILE             embedded, one file (WAL, synchronous=FULL); the",
      "                          default is sqlite:bloomery-dedup.db in the",
      "                          current directory",
      "  jdbc:postgresql://...   PostgreSQL (table bloomery_seen, created if absent)",
      "",
      "The filter is persisted next to a SQLite store (FILE.guard) with the store",
      "watermark it covers, and replayed or rebuilt on the next run; with",
      "PostgreSQL it is rebuilt from the table (streamed) unless --snapshot names",
      "a file.",
      "",
      "On stderr: a progress bar on a terminal, then the report: items, new,",
      "duplicates, store lookups avoided (%%), store lookups made, realized",
      "false-positive rate vs the model's, throughput. If the store fails, the",
      "items printed so far are committed, the run stops with exit code 1, and",
      "re-running the same input is safe.",
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
    ExactStore exactStore = openStore();
    Path snapshotFile = snapshot != null ? snapshot
        : store.startsWith("sqlite:") ? Path.of(store.substring("sqlite:".length()) + ".guard") : null;
    long started = System.nanoTime();
    Guard guard;
    try {
      guard = Guard.builder(exactStore).expectedInsertions(expected).fpp(fpp)
          .snapshotFile(snapshotFile).open();
    } catch (StoreUnavailableException e) {
      throw CliException.failure("cannot open the store: " + e.getMessage(), e);
    }
    long[] items = {0};
    long[] fresh = {0};
    List<byte[]> pending = new ArrayList<>(batch);
    StoreUnavailableException failure = null;
    PrintWriter err = root.err();
    // The input is opened before the output, so a missing input file never truncates --output.
    try (guard;
        ItemInput in = ItemInput.open(input, root.stdin());
        OutputStream out = openOutput();
        ProgressBar progress = new ProgressBar(err, root.terminal(), "dedup", -1, "items")) {
      in.forEach(hex, (line, bytes, offset, length) -> {
        pending.add(Arrays.copyOfRange(bytes, offset, offset + length));
        if (pending.size() == batch) {
          flush(guard, pending, out, items, fresh);
        }
        progress.update(items[0] + pending.size());
      });
      if (!pending.isEmpty()) {
        flush(guard, pending, out, items, fresh);
      }
      progress.update(items[0]);
    } catch (StoreUnavailableException e) {
      failure = e; // the output written so far was flushed by closing it: those items are committed
    }
    report(err, guard.stats(), items[0], fresh[0], started);
    if (failure != null) {
      throw CliException.failure("store unavailable after " + items[0] + " items; the "
          + pending.size() + " items of the failed batch have an unknown outcome. Every new item"
          + " printed so far is committed; re-running the same input is safe (each item is"
          + " printed at most once across runs). Cause: " + failure.getMessage(), failure);
    }
    return BloomeryCommand.EXIT_OK;
  }

  /** One store round trip for the pending items; writes the new ones in input order. */
  private void flush(Guard guard, List<byte[]> pending, OutputStream out, long[] items, long[] fresh)
      throws IOException {
    boolean[] isNew = guard.addIfAbsent(pending);
    for (int i = 0; i < isNew.length; i++) {
      if (isNew[i]) {
        writeItem(out, pending.get(i));
        fresh[0]++;
      }
    }
    items[0] += pending.size();
    pending.clear();
  }

  private ExactStore openStore() {
    try {
      if (store.startsWith("sqlite:")) {
        String file = store.substring("sqlite:".length());
        if (file.isEmpty()) {
          throw CliException.usage("--store sqlite:FILE needs a file name");
        }
        return SqliteStore.open(Path.of(file), table);
      }
      if (store.startsWith("jdbc:postgresql:")) {
        return PostgresStore.open(store, table);
      }
    } catch (StoreUnavailableException e) {
      throw CliException.failure("cannot open the store: " + e.getMessage(), e);
    } catch (IllegalArgumentException | IllegalStateException e) {
      throw CliException.usage(e.getMessage(), e);
    }
    throw CliException.usage("--store must be sqlite:FILE or jdbc:postgresql://..., got '" + store + "'");
  }

  private OutputStream openOutput() throws IOException {
    if ("-".equals(output)) {
      // Items are bytes: they go to the process's stdout as bytes, not through a character writer.
      return new BufferedOutputStream(new NonClosingOutputStream(System.out), 1 << 16);
    }
    return new BufferedOutputStream(Files.newOutputStream(Path.of(output)), 1 << 16);
  }

  private void writeItem(OutputStream out, byte[] item) throws IOException {
    out.write(hex ? Hex.encode(item).getBytes(StandardCharsets.US_ASCII) : item);
    out.write('\n');
  }

  private void report(PrintWriter err, GuardStats stats, long items, long fresh, long startedNanos) {
    double seconds = Math.max(1e-9, (System.nanoTime() - startedNanos) / 1e9);
    long duplicates = items - fresh;
    long avoided = stats.storeLookupsAvoided();
    long made = stats.storeLookupsMade();
    err.printf(Locale.ROOT, "dedup: %s items, %s new, %s duplicates in %.2f s (%s items/s)%n",
        Units.grouped(items), Units.grouped(fresh), Units.grouped(duplicates), seconds,
        Units.count(items / seconds));
    err.printf(Locale.ROOT, "  store lookups avoided: %s (%s of all items; %s of new items)%n",
        Units.grouped(avoided), percent(avoided, avoided + made), percent(avoided, fresh));
    err.printf(Locale.ROOT, "  store lookups made:    %s (filter said maybe: duplicates confirmed"
        + " and false positives)%n", Units.grouped(made));
    double realized = stats.realizedFalsePositiveRate();
    err.printf(Locale.ROOT, "  false positives:       %s realized (%s of non-members) vs model %s"
        + " at the current fill%n", Units.grouped(stats.realizedFalsePositives()),
        Double.isNaN(realized) ? "n/a" : String.format(Locale.ROOT, "%.4f%%", realized * 100),
        String.format(Locale.ROOT, "%.4f%%", stats.modelFalsePositiveRate() * 100));
    err.printf(Locale.ROOT, "  filter: generation %d, m=%s bits, k=%d, capacity %s, fill %.1f%%%s%n",
        stats.generation(), Units.grouped(stats.bits()), stats.hashes(),
        Units.grouped(stats.capacity()), stats.fillRatio() * 100,
        stats.nearCapacity() ? ", NEAR CAPACITY (>= 80%): raise --expected" : "");
    err.printf(Locale.ROOT, "  store: %s; %s%n", store.startsWith("sqlite:") ? store : "PostgreSQL",
        stats.recovery());
    if (stats.insertFailures() > 0 || stats.staleNegatives() > 0) {
      err.printf(Locale.ROOT, "  insert failures: %d; stale negatives (another writer): %d%n",
          stats.insertFailures(), stats.staleNegatives());
    }
    err.flush();
  }

  private static String percent(long part, long whole) {
    return whole == 0 ? "n/a" : String.format(Locale.ROOT, "%.2f%%", 100.0 * part / whole);
  }

  /** Lets a try-with-resources close the buffer without closing the process's stdout. */
  private static final class NonClosingOutputStream extends java.io.FilterOutputStream {
    NonClosingOutputStream(OutputStream out) {
      super(out);
    }

    @Override
    public void write(byte[] b, int off, int len) throws IOException {
      out.write(b, off, len);
    }

    @Override
    public void close() throws IOException {
      flush();
    }
  }
}
