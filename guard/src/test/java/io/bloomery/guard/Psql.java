package io.bloomery.guard;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The real {@code psql} client as a foreign writer: a program the guard never saw. One-shot
 * commands, {@code COPY … FROM STDIN} from a file, and an interactive session whose transaction
 * stays open while other sessions commit.
 */
final class Psql {
  private static final Path PSQL = PostgresCluster.BIN.resolve("psql");

  private Psql() {}

  /** The database name and port of a {@link PostgresCluster#createDatabase()} URL. */
  private static List<String> command(String jdbcUrl) {
    String rest = jdbcUrl.substring("jdbc:postgresql://127.0.0.1:".length());
    String port = rest.substring(0, rest.indexOf('/'));
    String database = rest.substring(rest.indexOf('/') + 1, rest.indexOf('?'));
    return new ArrayList<>(List.of(PSQL.toString(), "-X", "-q", "-v", "ON_ERROR_STOP=1",
        "-h", "127.0.0.1", "-p", port, "-U", "postgres", "-d", database));
  }

  /** Runs {@code sql} (one or more statements) and returns psql's output. */
  static String run(String jdbcUrl, String sql) throws IOException, InterruptedException {
    List<String> command = command(jdbcUrl);
    command.addAll(List.of("-At", "-c", sql));
    return exec(new ProcessBuilder(command), "psql -c " + sql);
  }

  /** Runs the statements in {@code file} (a COPY … FROM STDIN with its data, for instance). */
  static String runFile(String jdbcUrl, Path file) throws IOException, InterruptedException {
    List<String> command = command(jdbcUrl);
    command.addAll(List.of("-At", "-f", file.toString()));
    return exec(new ProcessBuilder(command), "psql -f " + file);
  }

  private static String exec(ProcessBuilder builder, String what)
      throws IOException, InterruptedException {
    Path output = Files.createTempFile("bloomery-psql-", ".log");
    try {
      Process process = builder.redirectErrorStream(true).redirectOutput(output.toFile()).start();
      if (!process.waitFor(300, TimeUnit.SECONDS)) {
        process.destroyForcibly().waitFor();
        throw new IOException("timed out: " + what);
      }
      String text = Files.readString(output, StandardCharsets.UTF_8);
      if (process.exitValue() != 0) {
        throw new IOException("exit " + process.exitValue() + ": " + what + "\n" + text);
      }
      return text;
    } finally {
      Files.deleteIfExists(output);
    }
  }

  /** An interactive psql session: statements run as they are sent; {@link #sync} waits for them. */
  static final class Session implements AutoCloseable {
    private final Process process;
    private final Writer in;
    private final BufferedReader out;
    private int markers;

    Session(String jdbcUrl) throws IOException {
      List<String> command = command(jdbcUrl);
      command.add("-At");
      process = new ProcessBuilder(command).redirectErrorStream(true).start();
      in = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
      out = new BufferedReader(
          new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
    }

    /** Sends {@code sql} and waits until psql has executed it. */
    void sync(String sql) throws IOException {
      String marker = "-- done " + (++markers);
      in.write(sql + "\n\\echo '" + marker + "'\n");
      in.flush();
      String line;
      while ((line = out.readLine()) != null) {
        if (line.equals(marker)) {
          return;
        }
        if (line.contains("ERROR")) {
          throw new IOException("psql session: " + line);
        }
      }
      throw new IOException("psql session ended before " + marker);
    }

    @Override
    public void close() throws IOException, InterruptedException {
      try {
        in.write("\\q\n");
        in.flush();
      } catch (IOException alreadyGone) {
        // the process has exited
      }
      if (!process.waitFor(30, TimeUnit.SECONDS)) {
        process.destroyForcibly().waitFor();
      }
    }
  }
}
