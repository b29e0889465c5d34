package io.bloomery.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomery.guard.PostgresCluster;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code bloomery dedup} end to end on SQLite and a real PostgreSQL, across runs. */
class DedupCommandIT {
  @TempDir Path dir;

  private static List<String> urls(int from, int to) {
    List<String> urls = new ArrayList<>();
    for (int i = from; i < to; i++) {
      urls.add("https://example.org/page/" + i);
    }
    return urls;
  }

  private Cli.Result dedup(String store, List<String> items, String name) throws IOException {
    Path in = dir.resolve(name + ".in");
    Cli.lines(in, items);
    Cli.Result result = Cli.run("dedup", "--store", store, "--expected", "10000", "--batch", "64",
        "--input", in.toString(), "--output", dir.resolve(name + ".out").toString());
    assertThat(result.exitCode()).as(result.toString()).isZero();
    return result;
  }

  private List<String> output(String name) throws IOException {
    return Files.readAllLines(dir.resolve(name + ".out"), StandardCharsets.UTF_8);
  }

  private void runsContinueWhereTheLastStopped(String store) throws IOException {
    // Run 1: 0..999 each twice, interleaved → 1000 new in first-occurrence order.
    List<String> first = new ArrayList<>();
    for (String url : urls(0, 1000)) {
      first.add(url);
      first.add(urls(0, 1000).get(first.size() / 4));
    }
    Cli.Result run1 = dedup(store, first, "run1");
    assertThat(output("run1")).containsExactlyElementsOf(new LinkedHashSet<>(first));
    assertThat(run1.err()).contains("dedup: 2,000 items, 1,000 new, 1,000 duplicates")
        .contains("\"never seen\"").contains("\"maybe\": ")
        .contains("false positives").contains("vs model").contains("items/s");

    // Run 2: 500..1499 → only 1000..1499 are new; the store remembers run 1.
    Cli.Result run2 = dedup(store, urls(500, 1500), "run2");
    assertThat(output("run2")).containsExactlyElementsOf(urls(1000, 1500));
    assertThat(run2.err()).contains("dedup: 1,000 items, 500 new, 500 duplicates");
  }

  @Test
  void sqliteRunsContinueWhereTheLastStopped() throws IOException {
    String store = "sqlite:" + dir.resolve("seen.db");
    runsContinueWhereTheLastStopped(store);
    assertThat(Files.exists(dir.resolve("seen.db.guard"))).isTrue();
    Cli.Result run3 = dedup(store, urls(0, 10), "run3");
    assertThat(output("run3")).isEmpty();
    assertThat(run3.err()).contains("replayed 0 rows after watermark").contains("clean stop");
  }

  @Test
  void postgresRunsContinueWhereTheLastStopped() throws IOException {
    String url = PostgresCluster.shared().createDatabase();
    runsContinueWhereTheLastStopped(url);
    Cli.Result run3 = dedup(url, urls(1400, 1600), "run3");
    assertThat(output("run3")).containsExactlyElementsOf(urls(1500, 1600));
    assertThat(run3.err()).contains("rebuilt from store: no snapshot file configured");
  }

  /** A row written behind the guard's back under the SHA-256 digest of {@code item}. */
  private static void plantForeignRow(String jdbcUrl, String item) throws Exception {
    byte[] digest = java.security.MessageDigest.getInstance("SHA-256")
        .digest(item.getBytes(StandardCharsets.UTF_8));
    try (java.sql.Connection c = java.sql.DriverManager.getConnection(jdbcUrl);
        java.sql.PreparedStatement ps = c.prepareStatement(
            "INSERT INTO bloomery_seen (digest, item) VALUES (?, ?)")) {
      ps.setBytes(1, digest);
      ps.setBytes(2, "a foreign row".getBytes(StandardCharsets.UTF_8));
      ps.executeUpdate();
    }
  }

  private static void removeForeignRow(String jdbcUrl) throws Exception {
    try (java.sql.Connection c = java.sql.DriverManager.getConnection(jdbcUrl);
        java.sql.Statement st = c.createStatement()) {
      st.executeUpdate("DELETE FROM bloomery_seen WHERE item = 'a foreign row'::bytea"
          .replace("::bytea", jdbcUrl.startsWith("jdbc:sqlite:") ? "" : "::bytea")
          .replace("'a foreign row'", jdbcUrl.startsWith("jdbc:sqlite:")
              ? "CAST('a foreign row' AS BLOB)" : "'a foreign row'"));
    }
  }

  private void aCollidingForeignRowFailsTheBatchAndCommitsNoneOfIt(String store, String jdbcUrl)
      throws Exception {
    assertThat(dedup(store, List.of(), "create").exitCode()).isZero(); // creates the table
    plantForeignRow(jdbcUrl, "https://example.org/later");
    Path in = dir.resolve("collide.in");
    Cli.lines(in, List.of("https://example.org/fresh", "https://example.org/later"));
    Path out = dir.resolve("collide.out");
    Cli.Result failed = Cli.run("dedup", "--store", store, "--input", in.toString(), "--output",
        out.toString());
    assertThat(failed.exitCode()).as(failed.toString()).isEqualTo(BloomeryCommand.EXIT_FAILURE);
    String last = failed.err().strip().substring(failed.err().strip().lastIndexOf('\n') + 1);
    assertThat(last).startsWith("bloomery dedup: the store holds a different item under the"
        + " SHA-256 digest").contains("rolled back").doesNotContain("Exception")
        .doesNotContain("io.bloomery");
    assertThat(Files.readString(out)).isEmpty();
    removeForeignRow(jdbcUrl);
    Cli.Result rerun = Cli.run("dedup", "--store", store, "--input", in.toString(), "--output",
        out.toString());
    assertThat(rerun.exitCode()).as(rerun.toString()).isZero();
    assertThat(Files.readAllLines(out)).as("the other item of the failed batch was not committed")
        .containsExactly("https://example.org/fresh", "https://example.org/later");
  }

  @Test
  void sqliteCollisionCommitsNothingOfTheBatch() throws Exception {
    Path db = dir.resolve("collide.db");
    aCollidingForeignRowFailsTheBatchAndCommitsNoneOfIt("sqlite:" + db, "jdbc:sqlite:" + db);
  }

  @Test
  void postgresCollisionCommitsNothingOfTheBatch() throws Exception {
    String url = PostgresCluster.shared().createDatabase();
    aCollidingForeignRowFailsTheBatchAndCommitsNoneOfIt(url, url);
  }

  @Test
  void summaryFiguresMeanWhatTheirLabelsSayWithAnotherWriter() throws Exception {
    Path db = dir.resolve("shared.db");
    // Another writer stores 300 items while this run's guard is open; the run then offers them
    // with 100 new ones. Its filter said "never seen" for all 400: 300 are stale negatives.
    try (io.bloomery.guard.Guard guard = io.bloomery.guard.Guard.builder(
            io.bloomery.guard.SqliteStore.open(db)).expectedInsertions(10_000).open();
        io.bloomery.guard.SqliteStore other = io.bloomery.guard.SqliteStore.open(db)) {
      List<byte[]> batch = new ArrayList<>();
      for (String url : urls(0, 300)) {
        other.insertIfAbsent(url.getBytes(StandardCharsets.UTF_8));
        batch.add(url.getBytes(StandardCharsets.UTF_8));
      }
      for (String url : urls(300, 400)) {
        batch.add(url.getBytes(StandardCharsets.UTF_8));
      }
      guard.addIfAbsent(batch, inserted -> { });
      List<String> lines = DedupCommand.summary(guard.stats(), "sqlite:shared.db", false);
      assertThat(lines).containsExactly(
          "filter answers: 400 \"never seen\" (100.00% of items, new without a store read),"
              + " 0 \"maybe\" (0.00%, confirmed by the store)",
          "  \"maybe\": 0 duplicates, 0 false positives (new after all)",
          "  \"never seen\" but already stored by another writer: 300 (stale negatives)",
          "false-positive rate: 0 realized (0.0000% of 100 non-members) vs model 0.0000% at the"
              + " current fill",
          lines.get(4), // the filter's shape, checked below
          "store: sqlite:shared.db; rebuilt from store: no snapshot file configured");
      assertThat(lines.get(4)).startsWith("filter: built from the store at open (no snapshot file,"
          + " so no generations), m=");
      for (String line : lines) {
        for (String percent : line.split(" ")) {
          if (percent.matches("\\(?\\d+\\.\\d+%.*")) {
            assertThat(Double.parseDouble(percent.replaceAll("[^0-9.]", "")))
                .as(line).isBetween(0.0, 100.0);
          }
        }
      }
    }
  }

  @Test
  void hexItemsAreBytesEvenWithNewlinesInside() throws IOException {
    Path in = dir.resolve("hex.in");
    Files.writeString(in, "0a0d00ff\n\n0A0D00FF\n41\n");
    Cli.Result result = Cli.run("dedup", "--store", "sqlite:" + dir.resolve("hex.db"), "--hex",
        "--input", in.toString(), "--output", dir.resolve("hex.out").toString());
    assertThat(result.exitCode()).as(result.toString()).isZero();
    assertThat(Files.readAllLines(dir.resolve("hex.out"))).containsExactly("0a0d00ff", "", "41");
  }

  /**
   * A bad line after good ones said only "line 4: ..." and left the user guessing whether the items before it were
   * printed and recorded. The message now says the batch in hand was rolled back (a re-run prints its new items) and
   * how many new items earlier batches wrote and committed; and it is so: the re-run prints them.
   */
  @Test
  void aBadLineRollsBackTheBatchInHandAndSaysSo() throws IOException {
    Path in = dir.resolve("bad.in");
    Files.writeString(in, "61\n62\n63\n6\n64\n");
    String store = "sqlite:" + dir.resolve("bad.db");
    Cli.Result failed = Cli.run("dedup", "--store", store, "--hex", "--batch", "2", "--input", in.toString(),
        "--output", dir.resolve("bad.out").toString());
    assertThat(failed.exitCode()).as(failed.toString()).isEqualTo(BloomeryCommand.EXIT_FAILURE);
    assertThat(failed.err()).as(failed.toString()).contains(in + " line 4: ")
        .contains("the batch in progress (1 item) was rolled back: none of it is recorded as seen, so a re-run prints"
            + " its new items (2 new items were written and committed before it)")
        .doesNotContain("\tat ");
    assertThat(Files.readAllLines(dir.resolve("bad.out"))).containsExactly("61", "62");
    Files.writeString(in, "61\n62\n63\n64\n");
    Cli.Result rerun = Cli.run("dedup", "--store", store, "--hex", "--input", in.toString(), "--output",
        dir.resolve("rerun.out").toString());
    assertThat(rerun.exitCode()).as(rerun.toString()).isZero();
    assertThat(Files.readAllLines(dir.resolve("rerun.out"))).containsExactly("63", "64");
  }

  /** {@code dedup --input f --output f} truncated f before reading it: the items were gone and it said "0 items". */
  @Test
  void anOutputThatIsTheInputTheStoreOrItsSnapshotIsRefusedAndDestroysNothing() throws IOException {
    Path in = dir.resolve("same.in");
    Files.writeString(in, "a\nb\nc");
    Path db = dir.resolve("same.db");
    String store = "sqlite:" + db;
    Path link = Files.createSymbolicLink(dir.resolve("link-to-input"), in);
    for (String output : List.of(in.toString(), link.toString(), dir.resolve(".").resolve("same.in").toString())) {
      Cli.Result refused = Cli.run("dedup", "--store", store, "--input", in.toString(), "--output", output);
      assertThat(refused.exitCode()).as(refused.toString()).isEqualTo(BloomeryCommand.EXIT_USAGE);
      assertThat(refused.err()).contains("--output " + output + " is the input file");
    }
    assertThat(Files.readString(in)).isEqualTo("a\nb\nc");
    assertThat(db).as("nothing opened before the refusal").doesNotExist();

    Cli.Result first = Cli.run("dedup", "--store", store, "--input", in.toString(), "--output",
        dir.resolve("first.out").toString());
    assertThat(first.exitCode()).as(first.toString()).isZero();
    byte[] storeBytes = Files.readAllBytes(db);
    Cli.Result overStore = Cli.run("dedup", "--store", store, "--input", in.toString(), "--output", db.toString());
    assertThat(overStore.exitCode()).as(overStore.toString()).isEqualTo(BloomeryCommand.EXIT_USAGE);
    assertThat(overStore.err()).contains("is the SQLite store's file");
    Cli.Result overSnapshot = Cli.run("dedup", "--store", store, "--input", in.toString(), "--output", db + ".guard");
    assertThat(overSnapshot.exitCode()).as(overSnapshot.toString()).isEqualTo(BloomeryCommand.EXIT_USAGE);
    assertThat(overSnapshot.err()).contains("is the filter's snapshot file");
    assertThat(Files.readAllBytes(db)).isEqualTo(storeBytes);
    Cli.Result again = Cli.run("dedup", "--store", store, "--input", in.toString(), "--output",
        dir.resolve("again.out").toString());
    assertThat(again.exitCode()).as(again.toString()).isZero();
    assertThat(again.err()).contains("3 items, 0 new, 3 duplicates");
  }

  @Test
  void badStoreIsAUsageError() {
    Cli.Result result = Cli.run("dedup", "--store", "redis://nope");
    assertThat(result.exitCode()).isEqualTo(BloomeryCommand.EXIT_USAGE);
    assertThat(result.err()).contains("--store must be sqlite:FILE or jdbc:postgresql://");
  }

  @Test
  void missingInputLeavesTheOutputFileUntouched() throws IOException {
    Path out = dir.resolve("kept.out");
    Files.writeString(out, "earlier run\n");
    Cli.Result result = Cli.run("dedup", "--store", "sqlite:" + dir.resolve("m.db"),
        "--input", dir.resolve("missing.in").toString(), "--output", out.toString());
    assertThat(result.exitCode()).as(result.toString()).isEqualTo(BloomeryCommand.EXIT_FAILURE);
    assertThat(result.err()).contains("no such file").contains("missing.in");
    assertThat(Files.readString(out)).isEqualTo("earlier run\n");
  }

  @Test
  void helpNamesTheDefaultStore() {
    Cli.Result result = Cli.run("dedup", "--help");
    assertThat(result.out()).contains("sqlite:bloomery-dedup.db")
        .contains("Delivery: at least once. No item is ever lost")
        .contains("BEFORE the store commits").contains("exits 143");
  }

  @Test
  void unixPipeStdinToStdoutInASeparateProcess() throws Exception {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    Process process = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"),
        BloomeryCommand.class.getName(), "dedup", "--store", "sqlite:" + dir.resolve("p.db"))
        .redirectError(dir.resolve("stderr.txt").toFile())
        .redirectOutput(dir.resolve("stdout.txt").toFile())
        .start();
    try {
      try (OutputStream stdin = process.getOutputStream()) {
        stdin.write("b\na\nb\nc\u00e9\na\n".getBytes(StandardCharsets.UTF_8));
      }
      assertThat(process.waitFor(120, TimeUnit.SECONDS)).isTrue();
    } finally {
      process.destroyForcibly(); // a no-op once it exited; never leaves a child behind
    }
    String stderr = Files.readString(dir.resolve("stderr.txt"));
    assertThat(process.exitValue()).as(stderr).isZero();
    assertThat(Files.readAllBytes(dir.resolve("stdout.txt")))
        .isEqualTo("b\na\nc\u00e9\n".getBytes(StandardCharsets.UTF_8));
    assertThat(stderr).contains("dedup: 5 items, 3 new, 2 duplicates");
  }
}
