package io.bloomery.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What the commands say is right in number, names what the user can act on, and is words, not Java. */
class MessagesTest {
  /** A count of exactly one before a noun: not the end of 11 or of a rate such as "3.1 items/s". */
  private static final String ONE = "(?<![\\d.,])1 ";

  @TempDir Path dir;

  @Test
  void singularAndPlural() throws IOException {
    String one = Cli.lines(dir.resolve("one.txt"), List.of("only"));
    Cli.Result result = Cli.run("build", "--input", one, "--output", dir.resolve("f.blmf").toString(), "--bits", "1", "--hashes", "1");
    assertThat(result.exitCode()).as(result.toString()).isZero();
    assertThat(result.out()).contains("classic Bloom filter, 1 bit, 1 hash,").contains("  1 item read, 1 changed the filter")
        .doesNotContainPattern(ONE + "bits").doesNotContainPattern(ONE + "items")
        .doesNotContainPattern(ONE + "hashes");
    assertThat(Units.count(2, "item", "items")).isEqualTo("2 items");
    assertThat(Units.count(0, "item", "items")).isEqualTo("0 items");
    assertThat(Units.bytes(1)).isEqualTo("1 byte");
  }

  /** dedup's summary said "1 duplicates" and "(1 items)": every count it prints now takes its noun's number. */
  @Test
  void dedupSummary_singularAndPlural() throws IOException {
    String one = Cli.lines(dir.resolve("one.txt"), List.of("only"));
    String store = "sqlite:" + dir.resolve("seen.db");
    Cli.Result first = Cli.run("dedup", "--store", store, "--input", one, "--output", dir.resolve("1.out").toString());
    assertThat(first.exitCode()).as(first.toString()).isZero();
    assertThat(first.err()).contains("dedup: 1 item, 1 new, 0 duplicates in ")
        .contains("\"maybe\": 0 duplicates, 0 false positives (new after all)").contains("of 1 non-member)");
    Cli.Result again = Cli.run("dedup", "--store", store, "--input", one, "--output", dir.resolve("2.out").toString());
    assertThat(again.exitCode()).as(again.toString()).isZero();
    assertThat(again.err()).contains("dedup: 1 item, 0 new, 1 duplicate in ")
        .contains("\"maybe\": 1 duplicate, 0 false positives (new after all)").contains("of 0 non-members)")
        .doesNotContainPattern(ONE + "items").doesNotContainPattern(ONE + "duplicates").doesNotContain("1 non-members");
  }

  @Test
  void aCountTooLargeForALong_saysSo_andGivesTheMaximum() {
    for (String count : List.of("9223372036854775808", "1e19", "10000000000G")) {
      Cli.Result result = Cli.run("plan", "--expected", count, "--fpp", "0.01");
      assertThat(result.exitCode()).isEqualTo(2);
      assertThat(result.err()).contains("'" + count + "' is too large: the largest count is 9,223,372,036,854,775,807")
          .doesNotContain("not a whole number");
    }
    assertThat(Cli.run("plan", "--expected", "1.5", "--fpp", "0.01").err()).contains("is not a whole number");
    assertThat(new CountConverter().convert("9223372036854775807")).isEqualTo(Long.MAX_VALUE);
  }

  @Test
  void theGuavaHint_isGivenOnlyForGuavaLookingFiles() throws IOException {
    String items = Cli.lines(dir.resolve("items.txt"), List.of("a", "b"));
    Path bloomery = dir.resolve("f.blmf");
    Path guava = dir.resolve("g.bin");
    assertThat(Cli.run("build", "--input", items, "--output", bloomery.toString(), "--bits", "64", "--hashes", "2").exitCode()).isZero();
    assertThat(Cli.run("build", "--input", items, "--output", guava.toString(), "--expected", "100", "--fpp", "0.01",
        "--output-format", "guava").exitCode()).isZero();
    byte[] bytes = Files.readAllBytes(bloomery);
    bytes[bytes.length - 1] ^= 1; // a checksum error in a Bloomery file
    Files.write(bloomery, bytes);
    Cli.Result corrupt = Cli.run("info", bloomery.toString());
    assertThat(corrupt.exitCode()).isEqualTo(1);
    assertThat(corrupt.err()).contains("not a valid Bloomery filter file").doesNotContain("guava");

    Cli.Result guavaAsBloomery = Cli.run("info", guava.toString());
    assertThat(guavaAsBloomery.exitCode()).isEqualTo(1);
    assertThat(guavaAsBloomery.err()).contains("it looks like a Guava BloomFilter.writeTo file: add --format guava");

    Path text = Files.writeString(dir.resolve("notes.txt"), "hello, world\n");
    assertThat(Cli.run("info", text.toString()).err()).contains("not a Bloomery filter").doesNotContain("guava");
  }

  @Test
  void theProtocolsListedForBuild_areExactlyThoseBuildAccepts() throws IOException {
    String items = Cli.lines(dir.resolve("items.txt"), List.of("a"));
    Cli.Result unknown = Cli.run("build", "--input", items, "--output", dir.resolve("x.blmf").toString(),
        "--protocol", "nope", "--bits", "64", "--hashes", "2");
    assertThat(unknown.exitCode()).isEqualTo(2);
    String listed = unknown.err().substring(unknown.err().indexOf("(it accepts: ") + "(it accepts: ".length(), unknown.err().indexOf(")"));
    for (String name : listed.split(", ")) {
      Cli.Result built = Cli.run("build", "--input", items, "--output", dir.resolve(name + ".blmf").toString(),
          "--protocol", name, "--bits", "64", "--hashes", "2");
      assertThat(built.exitCode()).as(name + ": " + built).isZero();
    }
    assertThat(listed).doesNotContain("parquet").doesNotContain("blocked");
    Cli.Result kindBound = Cli.run("build", "--input", items, "--output", dir.resolve("p.blmf").toString(),
        "--protocol", "parquet-xxh64", "--bits", "64", "--hashes", "2");
    assertThat(kindBound.exitCode()).isEqualTo(2);
    assertThat(kindBound.err()).contains("'parquet-xxh64' is not a protocol build can use");
    String help = Cli.run("build", "--help").out();
    for (String name : listed.split(", ")) {
      assertThat(help.replaceAll("\\s+", " ")).as("build --help names " + name).contains(name);
    }
  }

  @Test
  void noCommand_isAUsageError_withTheUsageOnStderr() {
    Cli.Result result = Cli.run();
    assertThat(result.exitCode()).isEqualTo(2);
    assertThat(result.out()).isEmpty();
    assertThat(result.err()).startsWith("bloomery: a command is required").contains("Usage: bloomery");
  }

  @Test
  void errorLines_areWords_notJavaClassNames() {
    assertThat(CliErrors.inWords("f.blmf: not a valid Bloomery filter file: malformed filter: "
        + "java.lang.IllegalArgumentException: bits must be positive"))
        .isEqualTo("f.blmf: not a valid Bloomery filter file: malformed filter: bits must be positive");
    assertThat(CliErrors.inWords("read failed: java.io.EOFException")).isEqualTo("read failed: end of file");
    assertThat(CliErrors.inWords("io.bloomery.guard.DigestCollisionException: two items share a digest"))
        .isEqualTo("two items share a digest");
    assertThat(CliErrors.inWords("see docs/FORMAT.md and io.bloomery.cli")).isEqualTo("see docs/FORMAT.md and io.bloomery.cli");
    assertThat(CliErrors.describe(new IllegalStateException("the store went away"))).doesNotContain("java.lang")
        .isEqualTo("unexpected error (illegal state): the store went away");
    assertThat(CliErrors.describe(new NullPointerException())).isEqualTo("unexpected error (null pointer)");
  }

  @Test
  void outOfMemoryAdvice_asksForMoreThanTheHeapInForce() {
    long sixGiB = 6L << 30;
    assertThat(CliErrors.outOfMemoryAdvice(sixGiB)).contains("maximum heap of 6.0 GiB").endsWith("BLOOMERY_JAVA_OPTS=-Xmx12g");
    assertThat(CliErrors.heapOption((1L << 30) + 1)).isEqualTo("-Xmx2g");
    assertThat(CliErrors.heapOption(1)).isEqualTo("-Xmx1g");
  }

  @Test
  void aFilterLargerThanTheHeap_isRefusedBeforeAllocating() throws IOException {
    String items = Cli.lines(dir.resolve("items.txt"), List.of("a"));
    long bits = Runtime.getRuntime().maxMemory() * 16;
    Cli.Result result = Cli.run("build", "--input", items, "--output", dir.resolve("huge.blmf").toString(),
        "--bits", String.valueOf(bits), "--hashes", "3");
    assertThat(result.exitCode()).as(result.toString()).isEqualTo(1);
    assertThat(result.err()).contains("a filter of " + Units.count(bits, "bit", "bits") + " needs at least")
        .contains("rerun with BLOOMERY_JAVA_OPTS=-Xmx").doesNotContain("out of memory");
  }

  @Test
  void demoHashSetEstimate_isAtLeastWhatTheSetRetains() {
    // The demo's 50k-URL run measures about 150 bytes per URL (DemoCommandTest); the estimate must not be below
    // the String, its 80-byte array and the node.
    assertThat(DemoCommand.hashSetBytesEstimate(60_000_000, 80)).isGreaterThan(60_000_000L * (24 + 96 + 32));
    assertThat(DemoCommand.hashSetBytesEstimate(Long.MAX_VALUE, 80)).isEqualTo(Long.MAX_VALUE);
  }

  @Test
  void benchKeysAboveWhatItsFiltersHold_isAUsageError_withOurMessage() {
    Cli.Result result = Cli.run("bench", "--keys", "9223372036854775807");
    assertThat(result.exitCode()).as(result.toString()).isEqualTo(2);
    assertThat(result.err()).contains("bloomery bench: --keys 9,223,372,036,854,775,807 is more than the benchmark's filters hold at --fpp 0.01")
        .doesNotContain("Could not create");
    Cli.Result heap = Cli.run("bench", "--keys", String.valueOf(BenchCommand.maxKeys(0.01)));
    assertThat(heap.exitCode()).as(heap.toString()).isEqualTo(1);
    assertThat(heap.err()).contains("of heap").contains("BLOOMERY_JAVA_OPTS=-Xmx");
  }
}
