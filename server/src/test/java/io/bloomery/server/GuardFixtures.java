package io.bloomery.server;

import io.bloomery.guard.PostgresCluster;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Shared pieces of the GUARD.* tests: a server with declared stores, psql as a foreign writer. */
final class GuardFixtures {
  private GuardFixtures() {}

  /** A server on ephemeral ports with {@code extra} options (e.g. --store NAME=URL). */
  static BloomeryServer server(String... extra) {
    return TestServer.start(extra);
  }

  /** Runs {@code sql} with the real psql client against a {@link PostgresCluster#createDatabase()} URL. */
  static String psql(String jdbcUrl, String sql) {
    String rest = jdbcUrl.substring("jdbc:postgresql://127.0.0.1:".length());
    String port = rest.substring(0, rest.indexOf('/'));
    String database = rest.substring(rest.indexOf('/') + 1, rest.indexOf('?'));
    List<String> cmd = new ArrayList<>(List.of(Path.of("/usr/lib/postgresql/15/bin/psql").toString(), "-X", "-q",
        "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-p", port, "-U", "postgres", "-d", database, "-At", "-c", sql));
    return run(cmd, null);
  }

  /** Runs a process to completion (60 s at most) and returns its stdout; fails on a non-zero exit. */
  static String run(List<String> cmd, Path stdin) {
    try {
      Path out = Files.createTempFile("bloomery-guard-proc-", ".out");
      ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(out.toFile());
      if (stdin != null) {
        pb.redirectInput(stdin.toFile());
      }
      Process p = pb.start();
      if (!p.waitFor(120, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        throw new AssertionError(cmd.get(0) + " did not finish within 120 s");
      }
      String text = Files.readString(out, StandardCharsets.UTF_8);
      Files.deleteIfExists(out);
      if (p.exitValue() != 0) {
        throw new AssertionError(String.join(" ", cmd.subList(0, Math.min(3, cmd.size()))) + " exited "
            + p.exitValue() + ": " + text);
      }
      return text;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError("interrupted", e);
    }
  }
}
