package io.bloomery.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code bloomery serve} in its own process, with the product's logging configuration. */
class ServeLogIT {
  /**
   * {@code --verbose} makes the server log at the verbose level: a client closed for idling (a verbose-level event)
   * shows in the log, which it does not at the default level.
   */
  @Test
  void verboseServeLogsVerboseEvents(@TempDir Path dir) throws Exception {
    assertThat(idleClientLog(dir.resolve("quiet"), false)).doesNotContain("closing idle client");
    assertThat(idleClientLog(dir.resolve("verbose"), true)).contains("closing idle client id=1");
  }

  /** Runs a server with {@code --timeout 1}, lets one client idle out, stops it and returns its log. */
  private static String idleClientLog(Path dir, boolean verbose) throws Exception {
    Files.createDirectories(dir);
    Path log = dir.resolve("log");
    java.util.List<String> args = new java.util.ArrayList<>();
    if (verbose) {
      args.add("--verbose");
    }
    args.addAll(java.util.List.of("serve", "--port", "0", "--http-port", "0", "--appendonly", "no", "--dir",
        dir.resolve("data").toString(), "--timeout", "1"));
    Process server = new ProcessBuilder(DedupChild.command(args.toArray(String[]::new)))
        .redirectError(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
    try {
      int port = ServerReady.port(server, log, 60, TimeUnit.SECONDS);
      try (Socket idle = new Socket("127.0.0.1", port)) {
        idle.setSoTimeout(30_000);
        assertThat(idle.getInputStream().read()).as("closed by the server after a second idle").isEqualTo(-1);
      }
    } finally {
      server.destroy();
      if (!server.waitFor(30, TimeUnit.SECONDS)) {
        server.destroyForcibly().waitFor();
      }
    }
    return Files.readString(log);
  }
}
