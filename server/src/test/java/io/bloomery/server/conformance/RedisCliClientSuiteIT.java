package io.bloomery.server.conformance;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * redis-cli (Debian's redis-tools) against Bloomery: a session of commands fed on stdin, whose
 * formatted output must equal what redis-cli printed against real Redis + RedisBloom
 * ({@code src/test/clients/redis-cli/session.resp2.expected} and {@code .resp3.expected}, RESP3 with
 * {@code -3}); mass insertion with {@code --pipe}; and one-shot commands. Skipped, with the reason,
 * only when redis-cli is not installed ({@code ./run-tests} installs redis-tools).
 */
class RedisCliClientSuiteIT {

  private static ReplayTarget target;

  @BeforeAll
  static void start() throws Exception {
    Assumptions.assumeTrue(ExternalClient.installed("redis-cli"),
        "redis-cli is not installed: apt-get install redis-tools (./run-tests does)");
    target = ReplayTarget.open();
  }

  @AfterAll
  static void stop() throws Exception {
    ReplayTarget.closeIfOpen(target);
  }

  private static List<String> cli(String... args) {
    List<String> command = new ArrayList<>(List.of("redis-cli", "-h", target.address().getHostString(),
        "-p", Integer.toString(target.address().getPort())));
    command.addAll(List.of(args));
    return command;
  }

  private static ExternalClient.Result run(List<String> command, byte[] stdin) throws Exception {
    ExternalClient.Result result = ExternalClient.run(command, ExternalClient.clientsDir(), stdin, Duration.ofMinutes(2));
    assertThat(result.timedOut()).as(result.describe(command)).isFalse();
    assertThat(result.exitCode()).as(result.describe(command)).isZero();
    return result;
  }

  @ParameterizedTest(name = "RESP{0}")
  @ValueSource(ints = {2, 3})
  void sessionOnStdinPrintsWhatItPrintsAgainstRedisBloom(int resp) throws Exception {
    Path dir = ExternalClient.clientsDir().resolve("redis-cli");
    byte[] session = Files.readAllBytes(dir.resolve("session.txt"));
    String expected = Files.readString(dir.resolve("session.resp" + resp + ".expected"), StandardCharsets.UTF_8);
    run(cli("FLUSHALL"), null);
    List<String> command = resp == 3 ? cli("-3", "--no-raw") : cli("--no-raw");
    ExternalClient.Result result = run(command, session);
    assertThat(result.output()).as("redis-cli output for session.txt over RESP" + resp).isEqualTo(expected);
  }

  @Test
  void pipeModeInsertsAThousandItems() throws Exception {
    run(cli("FLUSHALL"), null);
    ByteArrayOutputStream protocol = new ByteArrayOutputStream();
    protocol.writeBytes(Recording.encodeCommand(List.of(bytes("BF.RESERVE"), bytes("pipe"), bytes("0.001"), bytes("5000"))));
    for (int i = 0; i < 1000; i++) {
      protocol.writeBytes(Recording.encodeCommand(List.of(bytes("BF.ADD"), bytes("pipe"), bytes("https://example.com/" + i))));
    }
    ExternalClient.Result result = run(cli("--pipe"), protocol.toByteArray());
    assertThat(result.output()).contains("errors: 0, replies: 1001");
    assertThat(run(cli("BF.CARD", "pipe"), null).output()).isEqualTo("1000\n");
    assertThat(run(cli("BF.EXISTS", "pipe", "https://example.com/999"), null).output()).isEqualTo("1\n");
  }

  @Test
  void oneShotCommandsInRawAndResp3Output() throws Exception {
    run(cli("FLUSHALL"), null);
    assertThat(run(cli("BF.ADD", "k", "x"), null).output()).isEqualTo("1\n");
    assertThat(run(cli("-3", "BF.EXISTS", "k", "x"), null).output()).isEqualTo("(true)\n");
    assertThat(run(cli("-3", "--no-raw", "BF.MEXISTS", "k", "x", "y"), null).output()).isEqualTo("1) (true)\n2) (false)\n");
    assertThat(run(cli("BF.INFO", "k"), null).output()).isEqualTo(
        "Capacity\n100\nSize\n240\nNumber of filters\n1\nNumber of items inserted\n1\nExpansion rate\n2\n");
    assertThat(run(cli("-3", "BF.INFO", "k"), null).output()).isEqualTo(
        "Capacity 100\nSize 240\nNumber of filters 1\nNumber of items inserted 1\nExpansion rate 2\n");
    assertThat(run(cli("BF.ADD", "k"), null).output()).isEqualTo("ERR wrong number of arguments for 'bf.add' command\n\n");
  }

  /** A scaling blocked key (a Bloomery extension, so no RedisBloom transcript): one-shot commands, RESP2 and RESP3. */
  @Test
  void aScalingBlockedKeyThroughOneShotCommands() throws Exception {
    run(cli("FLUSHALL"), null);
    assertThat(run(cli("BF.RESERVE", "sb", "0.01", "10", "LAYOUT", "BLOCKED", "EXPANSION", "3"), null).output())
        .isEqualTo("OK\n");
    assertThat(run(cli("TYPE", "sb"), null).output()).isEqualTo("BLbloom\n");
    List<String> madd = new ArrayList<>(List.of("BF.MADD", "sb"));
    for (int i = 0; i < 30; i++) {
      madd.add("item-" + i);
    }
    assertThat(run(cli(madd.toArray(String[]::new)), null).output()).doesNotContain("ERR");
    assertThat(run(cli("BF.ADD", "sb", "item-0"), null).output()).isEqualTo("0\n");
    assertThat(run(cli("-3", "BF.EXISTS", "sb", "item-29"), null).output()).isEqualTo("(true)\n");
    assertThat(run(cli("BF.INFO", "sb", "FILTERS"), null).output()).isEqualTo("2\n"); // 10 + 30
    assertThat(run(cli("-3", "BF.INFO", "sb"), null).output()).startsWith("Capacity 40\nSize ")
        .contains("\nNumber of filters 2\n").endsWith("\nExpansion rate 3\n");
    assertThat(run(cli("BF.DEBUG", "sb"), null).output()).startsWith("layout:blocked-scaling size:");
  }

  /**
   * redis-cli asks for COMMAND DOCS before a session on stdin (for its hints) and asserts that every
   * command name and every key of a doc map is a bulk string, as Redis sends them; a simple string
   * there aborts redis-cli ("cliCountCommands: Assertion ... REDIS_REPLY_STRING"). The docs' content
   * legitimately differs between servers, so only this shape is checked.
   */
  @ParameterizedTest(name = "RESP{0}")
  @ValueSource(ints = {2, 3})
  void commandDocsHasTheShapeRedisCliRequires(int resp) throws Exception {
    try (java.net.Socket socket = new java.net.Socket(target.address().getAddress(), target.address().getPort())) {
      socket.setSoTimeout(10_000);
      var out = socket.getOutputStream();
      var in = new java.io.BufferedInputStream(socket.getInputStream());
      if (resp == 3) {
        out.write(Recording.encodeCommand(List.of(bytes("HELLO"), bytes("3"))));
        RespReply.read(in);
      }
      out.write(Recording.encodeCommand(List.of(bytes("COMMAND"), bytes("DOCS"))));
      out.flush();
      RespReply docs = RespReply.read(in);
      assertThat((char) docs.type()).as("COMMAND DOCS reply type").isEqualTo(resp == 3 ? '%' : '*');
      assertThat(docs.elements()).as("COMMAND DOCS lists commands").isNotEmpty();
      for (int i = 0; i + 1 < docs.elements().size(); i += 2) {
        RespReply name = docs.elements().get(i);
        RespReply doc = docs.elements().get(i + 1);
        assertThat((char) name.type()).as("type of command name %s", Escaped.of(name.raw())).isEqualTo('$');
        assertThat((char) doc.type()).as("type of the doc of %s", Escaped.of(name.raw())).isEqualTo(resp == 3 ? '%' : '*');
        for (int k = 0; k + 1 < doc.elements().size(); k += 2) {
          assertThat((char) doc.elements().get(k).type())
              .as("type of key %s in the doc of %s", Escaped.of(doc.elements().get(k).raw()), Escaped.of(name.raw()))
              .isEqualTo('$');
        }
      }
    }
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }
}
