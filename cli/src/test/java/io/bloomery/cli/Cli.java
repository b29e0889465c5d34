package io.bloomery.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import picocli.CommandLine;

/** Runs the {@code bloomery} command in-process with captured stdout and stderr. */
final class Cli {
  static final ObjectMapper JSON = new ObjectMapper();

  private Cli() {}

  /** What one run produced. */
  record Result(int exitCode, String out, String err) {
    JsonNode json() {
      try {
        return JSON.readTree(out);
      } catch (IOException e) {
        throw new UncheckedIOException("stdout is not JSON:\n" + out, e);
      }
    }

    List<String> outLines() {
      return out.isEmpty() ? List.of() : List.of(out.split("\n", -1)).subList(0, out.split("\n", -1).length - 1);
    }

    @Override
    public String toString() {
      return "exit " + exitCode + "\n--- stdout ---\n" + out + "--- stderr ---\n" + err;
    }
  }

  static Result run(String... args) {
    return run(InputStream.nullInputStream(), args);
  }

  static Result runWithStdin(String stdin, String... args) {
    return run(new ByteArrayInputStream(stdin.getBytes(StandardCharsets.UTF_8)), args);
  }

  static Result run(InputStream stdin, String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    CommandLine commandLine = BloomeryCommand.newCommandLine(new BloomeryCommand(stdin, false));
    commandLine.setOut(new PrintWriter(out, true));
    commandLine.setErr(new PrintWriter(err, true));
    int exitCode = commandLine.execute(args);
    return new Result(exitCode, out.toString(), err.toString());
  }

  /**
   * Runs with standard output going to {@code stdout} through the same checked writer as the real
   * process ({@link StandardOutput}), so a writer that fails like a full disk or a closed pipe is seen
   * as the command would see it; stderr is captured.
   */
  static Result runWithStdout(Writer stdout, InputStream stdin, String... args) {
    StringWriter err = new StringWriter();
    CommandLine commandLine = BloomeryCommand.newCommandLine(new BloomeryCommand(stdin, false));
    commandLine.setOut(StandardOutput.over(stdout));
    commandLine.setErr(new PrintWriter(err, true));
    int exitCode = commandLine.execute(args);
    return new Result(exitCode, "", err.toString());
  }

  /** Builds {@code output} from the {@code items} file with the given size options; the build must succeed. */
  static String build(String items, Path output, String... size) {
    String[] args = new String[5 + size.length];
    args[0] = "build";
    args[1] = "--input";
    args[2] = items;
    args[3] = "--output";
    args[4] = output.toString();
    System.arraycopy(size, 0, args, 5, size.length);
    Result built = run(args);
    if (built.exitCode() != 0) {
      throw new AssertionError("build failed: " + built);
    }
    return output.toString();
  }

  /** Writes lines, each followed by \n, and returns the path as a string. */
  static String lines(Path file, Iterable<String> lines) throws IOException {
    StringBuilder text = new StringBuilder();
    for (String line : lines) {
      text.append(line).append('\n');
    }
    Files.writeString(file, text, StandardCharsets.UTF_8);
    return file.toString();
  }

  /** A known-answer vector file from the classpath (core's test-jar carries them under /vectors). */
  static JsonNode vector(String name) throws IOException {
    try (InputStream in = Cli.class.getResourceAsStream("/vectors/" + name)) {
      if (in == null) {
        throw new IllegalStateException("/vectors/" + name + " is not on the test classpath (core's test resources)");
      }
      return JSON.readTree(in);
    }
  }
}
