package io.bloomery.cli;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Random;
import java.util.SequencedSet;

/**
 * The real {@code bloomery} CLI in a child JVM (this test class path, main class {@link
 * BloomeryCommand}), so that tests can kill it, close its descriptors and fill its disk; and the
 * exact expectation of a dedup run ({@code awk '!seen[$0]++'} over the input).
 */
final class DedupChild {
  private DedupChild() {}

  /** The command line that runs {@code bloomery ARGS...} in a fresh JVM. */
  static List<String> command(String... args) {
    List<String> command = new ArrayList<>(List.of(
        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        // The product's logging (LogConfigurator), which ranks above the guard test-jar's logback-test.xml.
        "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
        "-cp", System.getProperty("java.class.path"), BloomeryCommand.class.getName()));
    command.addAll(List.of(args));
    return command;
  }

  /** {@link #command} as one shell word list, each argument single-quoted for bash. */
  static String shellCommand(String... args) {
    StringBuilder line = new StringBuilder();
    for (String word : command(args)) {
      line.append(line.isEmpty() ? "" : " ").append('\'').append(word.replace("'", "'\\''"))
          .append('\'');
    }
    return line.toString();
  }

  /**
   * Writes {@code lines} URL-like items drawn with repeats from a pool of {@code pool} (seeded), one
   * per line, and returns the distinct ones in first-occurrence order.
   */
  static SequencedSet<String> writeInput(Path file, int lines, int pool, long seed) throws IOException {
    Random random = new Random(seed);
    StringBuilder text = new StringBuilder(lines * 40);
    SequencedSet<String> distinct = new LinkedHashSet<>();
    for (int i = 0; i < lines; i++) {
      String item = "https://example.org/crawl/" + random.nextInt(pool) + "?s=" + (seed % 97);
      text.append(item).append('\n');
      distinct.add(item);
    }
    Files.writeString(file, text, StandardCharsets.UTF_8);
    return distinct;
  }

  /** The complete lines of an output; an unterminated last fragment (a cut write) is dropped. */
  static List<String> completeLines(byte[] output) {
    String text = new String(output, StandardCharsets.UTF_8);
    int end = text.lastIndexOf('\n');
    return end < 0 ? List.of() : List.of(text.substring(0, end).split("\n", -1));
  }

  /** Counts the newlines of a file that may still be growing (0 if it does not exist yet). */
  static long lineCount(Path file) throws IOException {
    if (!Files.exists(file)) {
      return 0;
    }
    long lines = 0;
    for (byte b : Files.readAllBytes(file)) {
      if (b == '\n') {
        lines++;
      }
    }
    return lines;
  }
}
