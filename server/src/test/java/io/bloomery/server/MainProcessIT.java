package io.bloomery.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomery.server.persistence.LogCheck;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The server as a real child process: the Ready line with the actual port, the line linking the dashboard, a client,
 * SIGTERM, exit 0; SIGHUP, which reloads the loglevel; check-log on the directory it holds.
 */
class MainProcessIT {
  @TempDir Path dir;

  @Test
  void printsTheReadyLineServesAndExitsZeroOnSigterm() throws Exception {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    List<String> command = new ArrayList<>(List.of(java, "-cp", System.getProperty("java.class.path"),
        "io.bloomery.server.Main", "--port", "0", "--http-port", "0", "--appendonly", "no",
        "--dir", dir.toString()));
    Process process = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.DISCARD).start();
    try {
      BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
      String ready = out.readLine();
      Matcher m = Pattern.compile("Ready to accept connections tcp on 127\\.0\\.0\\.1:(\\d+)").matcher(ready);
      assertThat(m.matches()).as(ready).isTrue();
      int port = Integer.parseInt(m.group(1));
      String connect = out.readLine();
      Matcher links = Pattern.compile("Connect with: redis-cli -p " + port
          + " {3}\\(dashboard: (http://127\\.0\\.0\\.1:\\d+/), metrics: \\1metrics\\)").matcher(connect);
      assertThat(links.matches()).as(connect).isTrue();
      try (HttpClient http = HttpClient.newHttpClient()) {
        HttpResponse<String> dashboard = http.send(HttpRequest.newBuilder(URI.create(links.group(1))).build(),
            HttpResponse.BodyHandlers.ofString());
        assertThat(dashboard.statusCode()).isEqualTo(200);
        assertThat(dashboard.body()).startsWith("<!DOCTYPE html>");
      }
      try (RawClient c = new RawClient(port)) {
        assertThat(c.call("BF.ADD", "k", "x")).isEqualTo(":1\r\n");
        assertThat(c.call("BF.EXISTS", "k", "x")).isEqualTo(":1\r\n");
      }
      process.destroy(); // SIGTERM
      assertThat(process.waitFor(30, TimeUnit.SECONDS)).isTrue();
      assertThat(process.exitValue()).isZero();
    } finally {
      process.destroyForcibly();
    }
  }

  @Test
  void sighupReloadsTheLoglevelAndTheServerKeepsServing() throws Exception {
    Path conf = Files.writeString(dir.resolve("bloomery.conf"), "loglevel notice\nappendonly no\n");
    Path log = dir.resolve("stderr.log");
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    Process process = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"), "io.bloomery.server.Main",
        conf.toString(), "--port", "0", "--http-port", "0", "--dir", dir.resolve("data").toString())
        .redirectError(log.toFile()).start();
    try {
      BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
      Matcher m = Pattern.compile("Ready to accept connections tcp on 127\\.0\\.0\\.1:(\\d+)").matcher(out.readLine());
      assertThat(m.matches()).isTrue();
      int port = Integer.parseInt(m.group(1));
      Files.writeString(conf, "loglevel debug\nappendonly no\n");
      assertThat(new ProcessBuilder("kill", "-HUP", Long.toString(process.pid())).start().waitFor()).isZero();
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      while (!Files.readString(log).contains("SIGHUP: loglevel is now debug") && process.isAlive()
          && System.nanoTime() < deadline) {
        Thread.sleep(50);
      }
      assertThat(Files.readString(log)).contains("SIGHUP: loglevel is now debug");
      assertThat(process.isAlive()).isTrue();
      try (RawClient c = new RawClient(port)) {
        assertThat(c.call("PING")).isEqualTo("+PONG\r\n");
      }
      process.destroy(); // SIGTERM
      assertThat(process.waitFor(30, TimeUnit.SECONDS)).isTrue();
      assertThat(process.exitValue()).isZero();
    } finally {
      process.destroyForcibly();
    }
  }

  /**
   * A signal while the server starts (sent as the log says the data is loaded, before it binds its ports): SIGTERM
   * ends it with status 0, not the JVM's 143; SIGHUP is ignored, not the JVM's exit 129, and the server comes up.
   * Either way the key written before is there afterwards.
   */
  @Test
  void aSignalWhileStartingStopsWithZeroOrIsIgnoredAndLosesNothing() throws Exception {
    int[] port = new int[1];
    Process first = serve(List.of("--appendonly", "yes", "--dir", dir.toString()), port);
    try (RawClient c = new RawClient(port[0])) {
      assertThat(c.call("BF.ADD", "k", "x")).isEqualTo(":1\r\n");
    } finally {
      first.destroy();
      assertThat(first.waitFor(30, TimeUnit.SECONDS)).isTrue();
    }
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    for (String signal : List.of("TERM", "HUP")) {
      Process process = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"),
          "io.bloomery.server.Main", "--port", "0", "--http-port", "0", "--appendonly", "yes", "--dir",
          dir.toString()).start();
      try {
        BufferedReader err = new BufferedReader(new InputStreamReader(process.getErrorStream(),
            StandardCharsets.UTF_8));
        String line;
        while ((line = err.readLine()) != null && !line.contains("DB loaded from disk")) {
          // the JVM's warnings, then the server's log up to the end of recovery
        }
        assertThat(line).as("the server logs its recovery").isNotNull();
        if (signal.equals("TERM")) {
          process.destroy();
        } else {
          assertThat(new ProcessBuilder("kill", "-HUP", Long.toString(process.pid())).start().waitFor()).isZero();
        }
        Thread.ofPlatform().daemon().start(() -> err.lines().forEach(l -> { })); // keep draining its log
        if (signal.equals("TERM")) {
          assertThat(process.waitFor(30, TimeUnit.SECONDS)).isTrue();
          assertThat(process.exitValue()).as("exit status after SIGTERM while starting").isZero();
          continue;
        }
        BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(),
            StandardCharsets.UTF_8));
        Matcher m = Pattern.compile("Ready to accept connections tcp on 127\\.0\\.0\\.1:(\\d+)")
            .matcher(String.valueOf(out.readLine()));
        assertThat(m.matches()).as("the server came up after SIGHUP while starting").isTrue();
        try (RawClient c = new RawClient(Integer.parseInt(m.group(1)))) {
          assertThat(c.call("BF.EXISTS", "k", "x")).isEqualTo(":1\r\n");
        }
        process.destroy();
        assertThat(process.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(process.exitValue()).isZero();
      } finally {
        process.destroyForcibly();
      }
    }
    Process last = serve(List.of("--appendonly", "yes", "--dir", dir.toString()), port);
    try (RawClient c = new RawClient(port[0])) {
      assertThat(c.call("BF.EXISTS", "k", "x")).isEqualTo(":1\r\n");
    } finally {
      last.destroy();
      assertThat(last.waitFor(30, TimeUnit.SECONDS)).isTrue();
    }
  }

  /** Starts {@code bloomery serve} with {@code args} and returns it with its port (from the Ready line). */
  private static Process serve(List<String> args, int[] port) throws Exception {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    List<String> command = new ArrayList<>(List.of(java, "-cp", System.getProperty("java.class.path"),
        "io.bloomery.server.Main", "--port", "0", "--http-port", "0"));
    command.addAll(args);
    Process process = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.DISCARD).start();
    BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
    String ready = out.readLine();
    Matcher m = Pattern.compile("Ready to accept connections tcp on 127\\.0\\.0\\.1:(\\d+)").matcher(String.valueOf(ready));
    assertThat(m.matches()).as(ready).isTrue();
    port[0] = Integer.parseInt(m.group(1));
    return process;
  }

  @Test
  void checkLogSaysTheDirectoryOfARunningServerIsInUseAndFixIsRefused() throws Exception {
    int[] port = new int[1];
    Process process = serve(List.of("--appendonly", "yes", "--dir", dir.toString()), port);
    try {
      try (RawClient c = new RawClient(port[0])) {
        assertThat(c.call("BF.ADD", "k", "x")).isEqualTo(":1\r\n");
      }
      LogCheck.Report held = LogCheck.check(dir);
      assertThat(held.startable()).isFalse();
      assertThat(held.lines().getLast()).startsWith("in use: a running server holds " + dir);
      assertThatThrownBy(() -> LogCheck.fix(dir)).hasMessageContaining("in use by a running server");
      process.destroy(); // SIGTERM
      assertThat(process.waitFor(30, TimeUnit.SECONDS)).isTrue();
      assertThat(process.exitValue()).isZero();
    } finally {
      process.destroyForcibly();
    }
    LogCheck.Report stopped = LogCheck.check(dir);
    assertThat(stopped.startable()).isTrue();
    assertThat(stopped.lines().getLast()).isEqualTo("ok: the server starts on this directory");
  }

  @Test
  void shutdownSnapshotsAndExitsZeroAndIsRefusedBeforeAuth() throws Exception {
    int[] port = new int[1];
    List<String> args = List.of("--appendonly", "no", "--save", "3600 1", "--requirepass", "pw", "--dir",
        dir.toString());
    Process process = serve(args, port);
    try {
      try (RawClient c = new RawClient(port[0])) {
        assertThat(c.call("SHUTDOWN")).isEqualTo("-NOAUTH Authentication required.\r\n");
        assertThat(c.call("AUTH", "pw")).isEqualTo("+OK\r\n");
        assertThat(c.call("BF.ADD", "k", "x")).isEqualTo(":1\r\n");
        assertThat(c.call("SHUTDOWN", "SAVE", "NOSAVE")).isEqualTo("-ERR syntax error\r\n");
        assertThat(c.call("SHUTDOWN", "ABORT")).isEqualTo("-ERR No shutdown in progress.\r\n");
        assertThat(c.call("MULTI")).isEqualTo("+OK\r\n");
        assertThat(c.call("SHUTDOWN")).isEqualTo("-ERR Command not allowed inside a transaction\r\n");
        assertThat(c.call("DISCARD")).isEqualTo("+OK\r\n");
        c.send(RawClient.encode("SHUTDOWN"));
        assertThat(c.closedByServer()).isTrue(); // no reply: the connection closes with the server
      }
      assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
      assertThat(process.exitValue()).isZero();
    } finally {
      process.destroyForcibly();
    }
    // the snapshot written at SHUTDOWN holds the write (no journal: --appendonly no); NOSAVE then drops the next
    restartCheckAndShutdown(args, List.of("x"), List.of(), "lost", "NOSAVE");
    // NOSAVE without a journal: the last write was not kept, the earlier snapshot was
    restartCheckAndShutdown(args, List.of("x"), List.of("lost"), null, "NOSAVE", "NOW");
  }

  /**
   * Starts the server again, checks which items BF key k holds, optionally adds one, then sends SHUTDOWN with
   * {@code shutdownArgs} and expects the connection to close and the process to exit 0.
   */
  private static void restartCheckAndShutdown(List<String> args, List<String> present, List<String> absent,
      String add, String... shutdownArgs) throws Exception {
    int[] port = new int[1];
    Process process = serve(args, port);
    try (RawClient c = new RawClient(port[0])) {
      assertThat(c.call("AUTH", "pw")).isEqualTo("+OK\r\n");
      for (String item : present) {
        assertThat(c.call("BF.EXISTS", "k", item)).as(item).isEqualTo(":1\r\n");
      }
      for (String item : absent) {
        assertThat(c.call("BF.EXISTS", "k", item)).as(item).isEqualTo(":0\r\n");
      }
      if (add != null) {
        assertThat(c.call("BF.ADD", "k", add)).isEqualTo(":1\r\n");
      }
      List<String> shutdown = new ArrayList<>(List.of("SHUTDOWN"));
      shutdown.addAll(List.of(shutdownArgs));
      c.send(RawClient.encode(shutdown.toArray(String[]::new)));
      assertThat(c.closedByServer()).isTrue();
      assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
      assertThat(process.exitValue()).isZero();
    } finally {
      process.destroyForcibly();
    }
  }

  @Test
  void aBadOptionExitsTwoWithOneLine() throws Exception {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    Process process = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"),
        "io.bloomery.server.Main", "--port", "nope").redirectErrorStream(true).start();
    try {
      String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      assertThat(process.waitFor(30, TimeUnit.SECONDS)).isTrue();
      assertThat(process.exitValue()).isEqualTo(2);
      assertThat(output.strip()).isEqualTo("bloomery serve: port must be an integer, not 'nope'");
    } finally {
      process.destroyForcibly();
    }
  }
}
