package io.bloomery.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The server as a real child process: the Ready line with the actual port, a client, SIGTERM, exit 0. */
class MainProcessTest {
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
      assertThat(out.readLine()).startsWith("Connect with: redis-cli -p " + port);
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
