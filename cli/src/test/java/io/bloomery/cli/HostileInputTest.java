package io.bloomery.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Bad input gets one clear line on stderr, the right exit code, no stack trace, and loses nothing: no
 * half-written output, an existing output left as it was.
 */
class HostileInputTest {
  @TempDir Path dir;
  private String items;
  private String filter;

  @BeforeEach
  void setUp() throws IOException {
    items = Cli.lines(dir.resolve("items.txt"), List.of("a", "b", "c"));
    filter = Cli.build(items, dir.resolve("good.blmf"), "--bits", "256", "--hashes", "3");
  }

  @Test
  void missingInputFile_exit1_namesIt() {
    Cli.Result result = build("--input", dir.resolve("nope.txt").toString(), "--output", out(), "--bits", "64", "--hashes", "2");
    assertFailure(result, 1, "no such file: " + dir.resolve("nope.txt"));
    assertThat(Path.of(out())).doesNotExist();
  }

  @Test
  void inputIsADirectory_exit1() {
    assertFailure(build("--input", dir.toString(), "--output", out(), "--bits", "64", "--hashes", "2"), 1, "is a directory");
  }

  /**
   * {@code bloomery build --input - < somedir} (and dedup, query) printed only "Is a directory": the system
   * message without saying what could not be read.
   */
  @Test
  void standardInputFromADirectory_exit1_namesStandardInput() throws IOException {
    Path stdinDir = Files.createDirectory(dir.resolve("a-directory"));
    List<String[]> commands = List.of(
        new String[] {"build", "--input", "-", "--output", out(), "--bits", "64", "--hashes", "2"},
        new String[] {"query", filter, "--input", "-"},
        new String[] {"dedup", "--store", "sqlite:" + dir.resolve("seen.db")});
    for (String[] args : commands) {
      try (InputStream directory = Files.newInputStream(stdinDir)) {
        assertFailure(Cli.run(directory, args), 1, "stdin: cannot read: Is a directory");
      }
    }
    assertThat(Path.of(out())).doesNotExist();
  }

  @Test
  void outputIntoNonexistentDirectory_exit1_andNothingCreated() {
    Path target = dir.resolve("no/such/dir/f.blmf");
    assertFailure(build("--input", items, "--output", target.toString(), "--bits", "64", "--hashes", "2"), 1,
        "does not exist");
    assertThat(dir.resolve("no")).doesNotExist();
  }

  @Test
  void badHexOnLine3_exit1_namesTheLine_andLeavesAnExistingOutputUntouched() throws IOException {
    Path hexItems = dir.resolve("hex.txt");
    Files.writeString(hexItems, "00ff\nABCD\n12zz\n");
    byte[] before = Files.readAllBytes(Path.of(filter));
    Cli.Result result = build("--input", hexItems.toString(), "--hex", "--output", filter, "--bits", "256", "--hashes", "3");
    assertFailure(result, 1, hexItems + " line 3: not hex: 'z' at column 3");
    assertThat(Files.readAllBytes(Path.of(filter))).isEqualTo(before);
    assertThat(leftovers()).isEmpty();
  }

  @Test
  void oddHexDigits_exit1() throws IOException {
    Files.writeString(dir.resolve("odd.txt"), "abc\n");
    assertFailure(build("--input", dir.resolve("odd.txt").toString(), "--hex", "--output", out(), "--bits", "64",
        "--hashes", "2"), 1, "line 1: not hex: an odd number of digits");
  }

  @ParameterizedTest
  @ValueSource(strings = {"0", "1", "NaN", "-0.5", "2", "abc", "Infinity", "0%", "100%"})
  void fppOutsideZeroOne_isAUsageError(String fpp) {
    assertFailure(Cli.run("plan", "--expected", "1000", "--fpp", fpp), 2, "--fpp");
    assertFailure(build("--input", items, "--output", out(), "--expected", "1000", "--fpp", fpp), 2, "--fpp");
  }

  @ParameterizedTest
  @ValueSource(strings = {"0", "-5", "ten", "1.5", "99999999999999999999", ""})
  void badCounts_areUsageErrors(String count) {
    assertFailure(Cli.run("plan", "--expected", count, "--fpp", "0.01"), 2, "--expected");
    assertFailure(build("--input", items, "--output", out(), "--bits", count, "--hashes", "3"), 2, "--bits");
  }

  @Test
  void expectedTogetherWithBits_isRefused() {
    Cli.Result result = build("--input", items, "--output", out(), "--expected", "100", "--fpp", "0.01", "--bits", "64",
        "--hashes", "2");
    assertFailure(result, 2, "mutually exclusive");
    assertThat(Path.of(out())).doesNotExist();
  }

  @Test
  void expectedWithoutFpp_andNoSizeAtAll_areUsageErrors() {
    assertFailure(build("--input", items, "--output", out(), "--expected", "100"), 2, "--fpp");
    assertFailure(build("--input", items, "--output", out()), 2, "Missing required");
  }

  @Test
  void unknownProtocol_andParametersTheProtocolCannotExpress_areUsageErrors() {
    assertFailure(build("--input", items, "--output", out(), "--bits", "64", "--hashes", "2", "--protocol", "md5"), 2,
        "--protocol");
    assertFailure(build("--input", items, "--output", out(), "--bits", "70000", "--hashes", "2", "--protocol",
        "sha256-doc-v1"), 2, "65535");
    assertFailure(build("--input", items, "--output", out(), "--bits", "64", "--hashes", "2", "--seed-hex", "zz"), 2,
        "--seed-hex");
    assertFailure(build("--input", items, "--output", out(), "--bits", "64", "--hashes", "2", "--seed", "a",
        "--seed-hex", "00"), 2, "mutually exclusive");
  }

  @Test
  void corruptFilterFile_everyCommandFailsCleanly() throws IOException {
    byte[] good = Files.readAllBytes(Path.of(filter));
    byte[] flipped = good.clone();
    flipped[flipped.length / 2] ^= 0x40;
    Path corrupt = Files.write(dir.resolve("corrupt.blmf"), flipped);
    Path truncated = Files.write(dir.resolve("truncated.blmf"), Arrays.copyOf(good, good.length - 3));
    Path empty = Files.write(dir.resolve("empty.blmf"), new byte[0]);
    Path text = Files.writeString(dir.resolve("text.blmf"), "this is not a filter\n");
    for (Path bad : List.of(corrupt, truncated, empty, text)) {
      assertFailure(Cli.run("info", bad.toString()), 1, bad + ": not a valid Bloomery filter file");
      assertFailure(Cli.run("info", bad.toString(), "--json"), 1, "not a valid Bloomery filter file");
      assertFailure(Cli.run("query", bad.toString(), "--input", items), 1, "not a valid Bloomery filter file");
      assertFailure(Cli.run("merge", filter, bad.toString(), "--output", out()), 1, "not a valid Bloomery filter file");
      assertFailure(Cli.run("info", bad.toString(), "--format", "guava"), 1, "not a valid Guava filter file");
    }
    assertThat(Path.of(out())).doesNotExist();
  }

  @Test
  void everySingleByteFlipOfAFilterFile_isRejectedOrStillValid_neverACrash() throws IOException {
    byte[] good = Files.readAllBytes(Path.of(filter));
    Path mutated = dir.resolve("mutated.blmf");
    for (int i = 0; i < good.length; i++) {
      byte[] bytes = good.clone();
      bytes[i] ^= (byte) 0xff;
      Files.write(mutated, bytes);
      Cli.Result result = Cli.run("info", mutated.toString(), "--json");
      assertThat(result.exitCode()).as("byte %d flipped: %s", i, result).isEqualTo(1);
      assertThat(result.err()).as("byte %d", i).doesNotContain("\tat ").contains("not a valid Bloomery filter file");
    }
  }

  @Test
  void missingFilter_andUnknownOption_andUnknownCommand() {
    assertFailure(Cli.run("info", dir.resolve("missing.blmf").toString()), 1, "no such file");
    assertFailure(Cli.run("info", filter, "--colour"), 2, "Unknown option");
    assertFailure(Cli.run("frobnicate"), 2, "Unmatched argument");
  }

  @Test
  void verbose_addsTheStackTrace() {
    Cli.Result result = Cli.run("info", dir.resolve("missing.blmf").toString(), "--verbose");
    assertThat(result.exitCode()).isEqualTo(1);
    assertThat(result.err()).contains("no such file").contains("\tat ");
  }

  @Test
  void guavaOutput_needsGuavasProtocol() {
    assertFailure(build("--input", items, "--output", out(), "--bits", "64", "--hashes", "2", "--protocol",
        "sha256-index8", "--output-format", "guava"), 2, "guava-murmur128-mitz64");
  }

  private Cli.Result build(String... args) {
    String[] all = new String[args.length + 1];
    all[0] = "build";
    System.arraycopy(args, 0, all, 1, args.length);
    return Cli.run(all);
  }

  private String out() {
    return dir.resolve("out.blmf").toString();
  }

  private List<Path> leftovers() throws IOException {
    try (var files = Files.list(dir)) {
      return files.filter(p -> p.getFileName().toString().endsWith(".tmp")).toList();
    }
  }

  private static void assertFailure(Cli.Result result, int exitCode, String messagePart) {
    assertThat(result.exitCode()).as(result.toString()).isEqualTo(exitCode);
    assertThat(result.err()).as(result.toString()).contains(messagePart).doesNotContain("\tat ");
    assertThat(result.out()).as("nothing on stdout for a failure").isEmpty();
  }
}
