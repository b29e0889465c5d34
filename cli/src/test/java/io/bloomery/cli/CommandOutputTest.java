package io.bloomery.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * No command reports success after its output was lost: standard output that fails like a full disk
 * ({@code ENOSPC}) is exit 1 with one line, and a closed pipe ({@code EPIPE}) is a quiet exit 141 that
 * stops the command at once. The writer fails the way {@code FileOutputStream} does on fd 1; the real
 * {@code /dev/full} and {@code | head -1} are in {@link JarInAShellIT}.
 */
class CommandOutputTest {
  @TempDir Path dir;
  private String items;
  private String filter;

  @BeforeEach
  void setUp() throws IOException {
    items = Cli.lines(dir.resolve("items.txt"), List.of("a", "b", "c"));
    filter = Cli.build(items, dir.resolve("f.blmf"), "--bits", "256", "--hashes", "3");
  }

  /** Not bench: without the bench artifact's harness it prints nothing (BenchWithoutHarnessTest). */
  @ParameterizedTest
  @ValueSource(strings = {"plan", "info", "info --json", "query", "query --json", "build", "merge", "demo",
      "--version", "--help", "plan --help"})
  void diskFullOnStdout_isExit1_withOneLine(String command) {
    Cli.Result result = Cli.runWithStdout(new FailingWriter("No space left on device", 0), InputStream.nullInputStream(), args(command));
    assertThat(result.exitCode()).as(result.toString()).isEqualTo(BloomeryCommand.EXIT_FAILURE);
    assertThat(result.err().strip()).as(result.toString())
        .endsWith("cannot write standard output: No space left on device")
        .doesNotContain("\n");
  }

  @ParameterizedTest
  @ValueSource(strings = {"plan", "info --json", "query", "build"})
  void brokenPipeOnStdout_isAQuietExit141(String command) {
    Cli.Result result = Cli.runWithStdout(new FailingWriter("Broken pipe", 0), InputStream.nullInputStream(), args(command));
    assertThat(result.exitCode()).as(result.toString()).isEqualTo(BloomeryCommand.EXIT_BROKEN_PIPE);
    assertThat(result.err()).as("nothing on stderr, as for a tool ended by SIGPIPE").isEmpty();
  }

  @Test
  void brokenPipe_withVerbose_saysWhyItStopped() {
    Cli.Result result = Cli.runWithStdout(new FailingWriter("Broken pipe", 0), InputStream.nullInputStream(), "plan", "--expected", "10", "--fpp", "0.1", "--verbose");
    assertThat(result.exitCode()).isEqualTo(BloomeryCommand.EXIT_BROKEN_PIPE);
    assertThat(result.err()).contains("bloomery plan: stopped: standard output was closed by its reader (broken pipe)");
  }

  /**
   * An endless stdin: the query must end when its reader goes away, not when the input does (before
   * the fix this never returned; with the fix it stops within one output buffer).
   */
  @ParameterizedTest
  @ValueSource(strings = {"", "--json"})
  void query_stopsOnABrokenPipe_evenWithEndlessInput(String json) {
    EndlessLines stdin = new EndlessLines();
    FailingWriter reader = new FailingWriter("Broken pipe", 100);
    Cli.Result result = json.isEmpty()
        ? Cli.runWithStdout(reader, stdin, "query", filter, "--input", "-")
        : Cli.runWithStdout(reader, stdin, "query", filter, "--input", "-", json);
    assertThat(result.exitCode()).as(result.toString()).isEqualTo(BloomeryCommand.EXIT_BROKEN_PIPE);
    assertThat(result.err()).isEmpty();
    assertThat(stdin.bytesRead).as("stopped within a few buffers of input").isLessThan(1 << 20);
  }

  @Test
  void query_stopsOnDiskFull_withOneLine() {
    EndlessLines stdin = new EndlessLines();
    Cli.Result result = Cli.runWithStdout(new FailingWriter("No space left on device", 100), stdin, "query", filter, "--input", "-");
    assertThat(result.exitCode()).isEqualTo(BloomeryCommand.EXIT_FAILURE);
    assertThat(result.err().strip()).isEqualTo("bloomery query: cannot write standard output: No space left on device");
    assertThat(stdin.bytesRead).isLessThan(1 << 20);
  }

  private String[] args(String command) {
    String out = dir.resolve("out.blmf").toString();
    return switch (command) {
      case "plan" -> new String[] {"plan", "--expected", "1000", "--fpp", "0.01"};
      case "info" -> new String[] {"info", filter};
      case "info --json" -> new String[] {"info", filter, "--json"};
      case "query" -> new String[] {"query", filter, "--input", items};
      case "query --json" -> new String[] {"query", filter, "--input", items, "--json"};
      case "build" -> new String[] {"build", "--input", items, "--output", out, "--bits", "64", "--hashes", "2"};
      case "merge" -> new String[] {"merge", filter, copyOfFilterWithOneMoreItem(), "--output", out};
      case "demo" -> new String[] {"demo", "--urls", "1000"};
      default -> command.split(" ");
    };
  }

  private String copyOfFilterWithOneMoreItem() {
    String other = dir.resolve("other.blmf").toString();
    try {
      String more = Cli.lines(dir.resolve("more.txt"), List.of("a", "b", "c", "d"));
      Cli.build(more, Path.of(other), "--bits", "256", "--hashes", "3");
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
    return other;
  }

  /** Accepts {@code accepted} characters, then fails every write and flush with {@code reason}. */
  static final class FailingWriter extends Writer {
    private final String reason;
    private long room;

    FailingWriter(String reason, long accepted) {
      this.reason = reason;
      this.room = accepted;
    }

    @Override
    public void write(char[] buffer, int offset, int length) throws IOException {
      if (length > room) {
        room = 0;
        throw new IOException(reason);
      }
      room -= length;
    }

    @Override
    public void flush() throws IOException {
      if (room == 0) {
        throw new IOException(reason);
      }
    }

    @Override
    public void close() {}
  }

  /** "item-0\nitem-1\n…" for ever, counting what was read. */
  static final class EndlessLines extends InputStream {
    long bytesRead;
    private byte[] line = new byte[0];
    private int position;
    private long next;

    @Override
    public int read() {
      if (position == line.length) {
        line = ("item-" + next++ + "\n").getBytes(StandardCharsets.US_ASCII);
        position = 0;
      }
      bytesRead++;
      return line[position++];
    }
  }
}
