package io.bloomery.server.conformance;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Runs a client program that no one here wrote (redis-py, node-redis, redis-cli) as a child process,
 * feeding stdin and collecting stdout+stderr, and always reaps it: on timeout it is killed, then
 * waited for.
 */
final class ExternalClient {

  private ExternalClient() {}

  /** Exit status and combined output of one run. */
  record Result(int exitCode, String output, boolean timedOut) {
    String describe(List<String> command) {
      return String.join(" ", command) + (timedOut ? " timed out" : " exited " + exitCode) + "; its output:\n" + output;
    }
  }

  static Result run(List<String> command, Path dir, byte[] stdin, Duration timeout) throws IOException, InterruptedException {
    ProcessBuilder builder = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true);
    builder.environment().put("NO_COLOR", "1");
    Process process = builder.start();
    CompletableFuture<byte[]> output = CompletableFuture.supplyAsync(() -> drain(process.getInputStream()));
    try (OutputStream in = process.getOutputStream()) {
      if (stdin != null) {
        in.write(stdin);
      }
    } catch (IOException e) {
      // the client exited before reading all of stdin; its exit status and output tell why
    }
    boolean finished = process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
    if (!finished) {
      process.descendants().forEach(ProcessHandle::destroyForcibly);
      process.destroyForcibly();
      process.waitFor();
    }
    String text = new String(output.join(), StandardCharsets.UTF_8);
    return new Result(finished ? process.exitValue() : -1, text, !finished);
  }

  private static byte[] drain(InputStream in) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try (in) {
      in.transferTo(out);
    } catch (IOException e) {
      out.writeBytes(("\n(reading the client's output failed: " + e.getMessage() + ")").getBytes(StandardCharsets.UTF_8));
    }
    return out.toByteArray();
  }

  /** Whether {@code program} is an executable on PATH (or an absolute path to one). */
  static boolean installed(String program) {
    if (program.startsWith("/")) {
      return Files.isExecutable(Path.of(program));
    }
    String path = System.getenv("PATH");
    if (path == null) {
      return false;
    }
    for (String dir : path.split(java.io.File.pathSeparator)) {
      if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, program))) {
        return true;
      }
    }
    return false;
  }

  /** The client suites' directory, {@code server/src/test/clients}, from the module's directory. */
  static Path clientsDir() {
    Path fromModule = Path.of("src", "test", "clients");
    if (Files.isDirectory(fromModule)) {
      return fromModule.toAbsolutePath();
    }
    return Path.of("server", "src", "test", "clients").toAbsolutePath();
  }
}
