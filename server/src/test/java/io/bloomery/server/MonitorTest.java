package io.bloomery.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.JedisMonitor;

/**
 * MONITOR over real sockets: Redis's line format in RESP2 and RESP3, every client's commands after the MONITOR,
 * passwords redacted, administrative and refused commands not shown, RESET and QUIT ending it, and a monitor that
 * does not read disconnected at the output limit without holding anyone else up.
 */
class MonitorTest extends SharedServerTest {
  private static final String STAMP = "\\+\\d{10}\\.\\d{6} \\[0 127\\.0\\.0\\.1:";

  private static String line(RawClient from, String args) {
    return STAMP + from.localPort() + "\\] " + Pattern.quote(args) + "\r\n";
  }

  @ParameterizedTest
  @ValueSource(ints = {2, 3})
  void showsEveryClientsCommandsInRedisFormat(int protocol) {
    try (RawClient monitor = new RawClient(server.port()); RawClient c = new RawClient(server.port())) {
      if (protocol == 3) {
        assertThat(monitor.call("HELLO", "3")).startsWith("%");
      }
      assertThat(monitor.call("MONITOR")).isEqualTo("+OK\r\n");
      c.call("BF.ADD", "k", "v");
      c.call("AUTH", "secret");
      c.call("HELLO", "2", "AUTH", "default", "secret", "SETNAME", "me");
      c.call("CONFIG", "GET", "hz"); // administrative: not shown
      c.call("NOSUCH", "x"); // refused before it ran: not shown
      c.call("BF.ADD"); // likewise
      c.call("MULTI");
      c.call("BF.ADD", "k", "w");
      c.call("EXEC");
      c.call("ECHO", "a b\"\\\n\t\u0001");
      c.call("MIGRATE", "127.0.0.1", "1", "nokey", "0", "10", "COPY", "AUTH2", "u", "p");
      assertThat(monitor.reply()).matches(line(c, "\"BF.ADD\" \"k\" \"v\""));
      assertThat(monitor.reply()).matches(line(c, "\"AUTH\" \"(redacted)\""));
      assertThat(monitor.reply()).matches(line(c,
          "\"HELLO\" \"2\" \"AUTH\" \"(redacted)\" \"(redacted)\" \"SETNAME\" \"me\""));
      assertThat(monitor.reply()).matches(line(c, "\"MULTI\""));
      assertThat(monitor.reply()).matches(line(c, "\"BF.ADD\" \"k\" \"w\""));
      assertThat(monitor.reply()).matches(line(c, "\"EXEC\""));
      assertThat(monitor.reply()).matches(line(c, "\"ECHO\" \"a b\\\"\\\\\\n\\t\\x01\""));
      assertThat(monitor.reply()).matches(line(c, "\"MIGRATE\" \"127.0.0.1\" \"1\" \"nokey\" \"0\" \"10\" \"COPY\" "
          + "\"AUTH2\" \"(redacted)\" \"(redacted)\""));
      // the monitor's own commands still run, and are shown after their reply
      assertThat(monitor.call("PING")).isEqualTo("+PONG\r\n");
      assertThat(monitor.reply()).matches(line(monitor, "\"PING\""));
    }
  }

  @Test
  void resetAndQuitEndIt() {
    try (RawClient monitor = new RawClient(server.port()); RawClient c = new RawClient(server.port())) {
      assertThat(monitor.call("MONITOR")).isEqualTo("+OK\r\n");
      c.call("PING");
      assertThat(monitor.reply()).matches(line(c, "\"PING\""));
      assertThat(c.call("CLIENT", "LIST")).containsPattern(":" + monitor.localPort() + " .* flags=O .* cmd=monitor ");
      assertThat(monitor.call("RESET")).isEqualTo("+RESET\r\n");
      c.call("BF.ADD", "after", "reset");
      assertThat(monitor.call("DBSIZE")).startsWith(":"); // no monitor line before its reply any more
      assertThat(monitor.call("MONITOR")).isEqualTo("+OK\r\n");
      assertThat(monitor.call("QUIT")).isEqualTo("+OK\r\n");
      assertThat(monitor.closedByServer()).isTrue();
      assertThat(c.call("PING")).isEqualTo("+PONG\r\n");
    }
  }

  @Test
  void isRefusedInsideATransaction() {
    try (RawClient c = new RawClient(server.port())) {
      c.call("MULTI");
      assertThat(c.call("MONITOR")).isEqualTo("+QUEUED\r\n");
      assertThat(c.call("EXEC")).isEqualTo("*1\r\n-ERR MONITOR isn't allowed for DENY BLOCKING client\r\n");
      c.call("BF.ADD", "k", "v");
      assertThat(c.call("PING")).isEqualTo("+PONG\r\n");
    }
  }

  @Test
  void jedisMonitorReadsTheLines() throws Exception {
    BlockingQueue<String> lines = new LinkedBlockingQueue<>();
    Jedis jedis = new Jedis("127.0.0.1", server.port());
    Thread t = Thread.ofVirtual().start(() -> {
      try {
        jedis.monitor(new JedisMonitor() {
          @Override
          public void onCommand(String command) {
            lines.add(command);
          }
        });
      } catch (RuntimeException closed) {
        // the test closed the connection
      }
    });
    try (RawClient c = new RawClient(server.port())) {
      String seen = null;
      for (int i = 0; i < 100 && seen == null; i++) { // until the MONITOR is in place
        c.call("CF.ADD", "jedis", "x" + i);
        seen = lines.poll(100, TimeUnit.MILLISECONDS);
      }
      assertThat(seen).matches("\\d{10}\\.\\d{6} \\[0 127\\.0\\.0\\.1:" + c.localPort() + "\\] \"CF.ADD\" \"jedis\" "
          + "\"x\\d+\"");
    } finally {
      jedis.disconnect();
      t.join(5000);
    }
  }

  @Test
  void aMonitorThatDoesNotReadIsDisconnectedAtTheOutputLimit() throws Exception {
    BloomeryServer small = TestServer.start("--client-output-buffer-limit", "normal 1mb 256kb 0");
    try (Socket monitor = new Socket("127.0.0.1", small.port()); RawClient c = new RawClient(small.port())) {
      monitor.getOutputStream().write(RawClient.encode("MONITOR"));
      String big = "x".repeat(16 * 1024);
      for (int i = 0; i < 2000; i++) { // 32 MB of lines for a monitor that reads none of them
        c.send(RawClient.encode("BF.ADD", "big", big + i)); // small replies: the sender is never held back
      }
      for (int i = 0; i < 2000; i++) {
        assertThat(c.reply()).startsWith(":");
      }
      assertThat(c.call("PING")).isEqualTo("+PONG\r\n");
      monitor.setSoTimeout(30_000);
      InputStream in = monitor.getInputStream();
      long read = 0;
      byte[] buf = new byte[65536];
      try {
        for (int n; (n = in.read(buf)) >= 0; ) {
          read += n;
        }
      } catch (IOException reset) {
        // closed with lines unread: a reset is an end too
      }
      assertThat(read).isLessThan(16L * 1024 * 1024);
      assertThat(c.call("INFO", "stats")).contains("client_output_buffer_limit_disconnections:1");
    } finally {
      small.close();
    }
  }
}
