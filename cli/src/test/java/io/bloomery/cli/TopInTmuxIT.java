package io.bloomery.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.bloomery.server.BloomeryServer;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.RedisClient;
import redis.clients.jedis.UnifiedJedis;

/**
 * {@code bloomery top} on a real terminal: tmux runs it in a detached session of its own server (its own socket,
 * so nothing else's sessions are touched), {@code capture-pane} reads the screen and {@code send-keys} presses q
 * or Ctrl-C. Skipped, saying why, when tmux is not installed ({@code ./run-tests} installs it).
 */
class TopInTmuxIT {
  /** How long a screen may take to show what is awaited: a hang guard, not a timing claim. */
  private static final long PATIENCE_MILLIS = 90_000;

  private final String socket = "bloomery-top-test-" + ProcessHandle.current().pid() + "-" + System.nanoTime();
  private BloomeryServer server;

  @BeforeEach
  void start() throws Exception {
    assumeTrue(installed("tmux"), "tmux is not installed (Debian package 'tmux'; ./run-tests installs it): skipping the terminal test of bloomery top");
    server = TopCommandTest.startServer();
    TopCommandTest.populate(server.port());
  }

  @AfterEach
  void stop() throws Exception {
    if (server != null) {
      tmux("kill-server");
      server.close();
    }
  }

  @Test
  void refreshesInPlace_andQuitsOnQ_restoringTheScreen() throws Exception {
    openTop();
    String screen = awaitScreen(s -> s.contains("urls") && s.contains("90%!"));
    assertThat(screen).contains("bloomery top", "(q quits)", "carts", "cuckoo", "counts");
    assertThat(screen.lines().filter(l -> l.startsWith("bloomery top")).count()).as("drawn in place, once").isEqualTo(1);
    try (UnifiedJedis j = RedisClient.builder().hostAndPort(new HostAndPort("127.0.0.1", server.port())).build()) {
      String[] more = new String[50];
      for (int i = 0; i < more.length; i++) {
        more[i] = "more-" + i;
      }
      j.bfMAdd("urls", more);
    }
    awaitScreen(s -> s.contains("95%!"));
    // Steady traffic from another client: its command shows in the per-command section with a rate.
    java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
    Thread traffic = new Thread(() -> {
      try (UnifiedJedis j = RedisClient.builder().hostAndPort(new HostAndPort("127.0.0.1", server.port())).build()) {
        while (!stop.get()) {
          j.cfExists("carts", "a");
          Thread.sleep(5);
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }, "top-test-traffic");
    traffic.start();
    try {
      String busy = awaitScreen(s -> s.lines().anyMatch(l -> l.matches("cf\\.exists +[\\d,]+\\.\\d *")));
      assertThat(busy).contains("COMMAND", "OPS/S");
    } finally {
      stop.set(true);
      traffic.join();
    }
    tmux("send-keys", "-t", "top", "q");
    String after = awaitScreen(s -> s.contains("top exited with 0"));
    assertThat(after).as("the alternate screen is gone").doesNotContain("(q quits)");
  }

  @Test
  void ctrlC_endsItAndRestoresTheTerminal() throws Exception {
    openTop();
    awaitScreen(s -> s.contains("urls"));
    tmux("send-keys", "-t", "top", "C-c");
    String after = awaitScreen(s -> s.contains("top exited with"));
    assertThat(after).doesNotContain("(q quits)");
    // The keyboard is cooked again: what is typed now is echoed by the shell's terminal.
    tmux("send-keys", "-t", "top", "echo typed-$((6*7))", "Enter");
    awaitScreen(s -> s.contains("typed-42"));
  }

  private void openTop() throws Exception {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    String top = String.join(" ", java, "-Xmx128m", "-cp", "'" + System.getProperty("java.class.path") + "'",
        BloomeryCommand.class.getName(), "top", "--port", Integer.toString(server.port()), "--interval", "0.3");
    tmux("new-session", "-d", "-s", "top", "-x", "120", "-y", "30",
        "bash --norc -c \"" + top + "; echo top exited with \\$?; exec bash --norc\"");
  }

  private String awaitScreen(Predicate<String> shown) throws Exception {
    long deadline = System.currentTimeMillis() + PATIENCE_MILLIS;
    String screen = "";
    while (System.currentTimeMillis() < deadline) {
      screen = tmux("capture-pane", "-p", "-t", "top");
      if (shown.test(screen)) {
        return screen;
      }
      Thread.sleep(200);
    }
    throw new AssertionError("the screen never showed what was awaited; last screen:\n" + screen);
  }

  private String tmux(String... args) throws IOException, InterruptedException {
    List<String> command = new ArrayList<>(List.of("tmux", "-L", socket, "-f", "/dev/null"));
    command.addAll(List.of(args));
    Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
    String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    process.waitFor();
    return output;
  }

  private static boolean installed(String tool) {
    try {
      return new ProcessBuilder("sh", "-c", "command -v " + tool).start().waitFor() == 0;
    } catch (IOException e) {
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }
}
