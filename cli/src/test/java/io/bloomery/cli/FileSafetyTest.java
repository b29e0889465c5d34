package io.bloomery.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Files are never destroyed or misread: one appended byte is refused by every reader, an output that
 * is the input is refused, a filter is not merged with itself, and outputs get the permissions an
 * ordinary write would give.
 */
class FileSafetyTest {
  @TempDir Path dir;
  private String items;
  private Path filter;

  @BeforeEach
  void setUp() throws IOException {
    items = Cli.lines(dir.resolve("items.txt"), List.of("a", "b", "c"));
    filter = Path.of(Cli.build(items, dir.resolve("f.blmf"), "--bits", "256", "--hashes", "3"));
  }

  @Test
  void oneAppendedByte_isRefusedByInfoQueryAndMerge() throws IOException {
    Path padded = dir.resolve("padded.blmf");
    Files.write(padded, concat(Files.readAllBytes(filter), new byte[] {0}));
    String expected = padded + ": not a valid Bloomery filter file: trailing bytes: 1 byte after the end of the filter's checksum";
    for (Cli.Result result : List.of(
        Cli.run("info", padded.toString()),
        Cli.run("info", padded.toString(), "--json"),
        Cli.run("query", padded.toString(), "--input", items),
        Cli.run("merge", filter.toString(), padded.toString(), "--output", dir.resolve("m.blmf").toString()))) {
      assertThat(result.exitCode()).as(result.toString()).isEqualTo(1);
      assertThat(result.err()).as(result.toString()).contains(expected).doesNotContain("--format guava");
      assertThat(result.out()).isEmpty();
    }
    assertThat(dir.resolve("m.blmf")).doesNotExist();
  }

  @Test
  void oneAppendedByte_isRefusedInGuavaFormatToo() throws IOException {
    Path guava = dir.resolve("g.bin");
    Cli.Result built = Cli.run("build", "--input", items, "--output", guava.toString(), "--expected", "100", "--fpp", "0.01",
        "--output-format", "guava");
    assertThat(built.exitCode()).as(built.toString()).isZero();
    Files.write(guava, new byte[] {7}, java.nio.file.StandardOpenOption.APPEND);
    Cli.Result result = Cli.run("info", guava.toString(), "--format", "guava");
    assertThat(result.exitCode()).isEqualTo(1);
    assertThat(result.err()).contains("trailing bytes: 1 byte after the end of the Guava filter's last word");
  }

  @Test
  void buildOutputThatIsTheInput_isRefused_byPath_symlink_andHardLink() throws IOException {
    Path input = Path.of(items);
    Path symlink = Files.createSymbolicLink(dir.resolve("link.txt"), input);
    Path hardLink = Files.createLink(dir.resolve("hard.txt"), input);
    for (String[] paths : new String[][] {
        {items, items}, {symlink.toString(), items}, {items, symlink.toString()}, {hardLink.toString(), items}}) {
      Cli.Result result = Cli.run("build", "--input", paths[0], "--output", paths[1], "--bits", "64", "--hashes", "2");
      assertThat(result.exitCode()).as(result.toString()).isEqualTo(2);
      assertThat(result.err()).contains("--output " + paths[1] + " is the input file; writing the filter there would destroy the items");
    }
    assertThat(Files.readString(input)).isEqualTo("a\nb\nc\n");
  }

  @Test
  void mergeOfAFileWithItself_isRefused_andTheCountIsNotDoubled() throws IOException {
    String out = dir.resolve("m.blmf").toString();
    Path symlink = Files.createSymbolicLink(dir.resolve("link.blmf"), filter);
    Path hardLink = Files.createLink(dir.resolve("hard.blmf"), filter);
    for (Path other : List.of(filter, symlink, hardLink)) {
      Cli.Result result = Cli.run("merge", filter.toString(), other.toString(), "--output", out);
      assertThat(result.exitCode()).as(result.toString()).isEqualTo(2);
      assertThat(result.err()).contains(filter + " and " + other + " are the same file");
    }
    Path copy = Files.copy(filter, dir.resolve("copy.blmf"));
    Cli.Result copied = Cli.run("merge", filter.toString(), copy.toString(), "--output", out);
    assertThat(copied.exitCode()).as(copied.toString()).isEqualTo(1);
    assertThat(copied.err()).contains("are byte-identical copies of one filter");
    assertThat(Path.of(out)).doesNotExist();

    String more = Cli.lines(dir.resolve("more.txt"), List.of("c", "d"));
    Path other = dir.resolve("other.blmf");
    assertThat(Cli.run("build", "--input", more, "--output", other.toString(), "--bits", "256", "--hashes", "3").exitCode()).isZero();
    Cli.Result merged = Cli.run("merge", filter.toString(), other.toString(), "--output", filter.toString());
    assertThat(merged.exitCode()).as("merging into one of the inputs stays allowed: " + merged).isZero();
    JsonNode info = Cli.run("info", filter.toString(), "--json").json();
    assertThat(info.get("inserted").asLong()).isEqualTo(5);
  }

  @Test
  void newOutput_getsTheModeOfAnOrdinaryNewFile_notAlways0600() throws IOException {
    Path ordinary = Files.createFile(dir.resolve("ordinary"));
    Path made = dir.resolve("new.blmf");
    assertThat(Cli.run("build", "--input", items, "--output", made.toString(), "--bits", "64", "--hashes", "2").exitCode()).isZero();
    assertThat(Files.getPosixFilePermissions(made)).isEqualTo(Files.getPosixFilePermissions(ordinary));
  }

  @Test
  void replacedOutput_keepsItsPermissions() throws IOException {
    for (String mode : List.of("rw-r--r--", "rw-r-----", "rw-rw-rw-", "r--------")) {
      Files.setPosixFilePermissions(filter, PosixFilePermissions.fromString("rw-------"));
      Files.setPosixFilePermissions(filter, PosixFilePermissions.fromString(mode));
      Cli.Result result = Cli.run("build", "--input", items, "--output", filter.toString(), "--bits", "128", "--hashes", "2");
      assertThat(result.exitCode()).as(result.toString()).isZero();
      assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(filter))).isEqualTo(mode);
    }
  }

  @Test
  void outputThatIsNotARegularFile_isRefused_andLeftAlone() throws Exception {
    Path fifo = dir.resolve("fifo");
    Process mkfifo = new ProcessBuilder("mkfifo", fifo.toString()).inheritIO().start();
    assertThat(mkfifo.waitFor()).isZero();
    Cli.Result result = Cli.run("build", "--input", items, "--output", fifo.toString(), "--bits", "64", "--hashes", "2");
    assertThat(result.exitCode()).as(result.toString()).isEqualTo(1);
    assertThat(result.err()).contains("cannot write " + fifo + ": it is not a regular file");
    assertThat(Files.isRegularFile(fifo)).isFalse();
    assertThat(Files.exists(fifo)).isTrue();
  }

  private static byte[] concat(byte[] a, byte[] b) {
    byte[] joined = java.util.Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, joined, a.length, b.length);
    return joined;
  }
}
