package io.bloomery.cli;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Waits for a server process's ready line on its stdout. */
final class ServerReady {
  private static final Pattern READY = Pattern.compile("Ready to accept connections tcp on 127\\.0\\.0\\.1:(\\d+)");

  private ServerReady() {}

  /**
   * The port the ready line of {@code process} announces; fails with the text of {@code log} (its stderr) if the
   * line does not come within {@code timeout}.
   */
  static int port(Process process, Path log, long timeout, TimeUnit unit) throws Exception {
    CompletableFuture<Integer> port = new CompletableFuture<>();
    Thread reader = new Thread(() -> {
      try (BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(),
          StandardCharsets.UTF_8))) {
        for (String line; (line = out.readLine()) != null; ) {
          Matcher m = READY.matcher(line);
          if (m.find()) {
            port.complete(Integer.parseInt(m.group(1)));
          }
        }
      } catch (IOException e) {
        // the process died; the future was completed already or fails below
      }
      port.completeExceptionally(new IllegalStateException("server exited before it was ready"));
    }, "server-stdout");
    reader.setDaemon(true);
    reader.start();
    try {
      return port.get(timeout, unit);
    } catch (Exception e) {
      throw new AssertionError("server did not start:\n" + Files.readString(log), e);
    }
  }
}
