package io.bloomery.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.bloomery.server.net.Transport;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Every socket layer this machine can run ({@code --io-transport io_uring|epoll|nio}, one and two event loops)
 * carries the same protocol: pipelined writes of one key from many connections answered in order and applied
 * once, input split at every byte, replies far larger than one batch, a client that stops reading cut off while
 * others are served. The rest of the suite runs on whatever {@code auto} picks (or on
 * {@code -Dbloomery.io-transport=...}).
 */
class TransportIT {

  @ParameterizedTest
  @EnumSource(Transport.Kind.class)
  void eachAvailableTransportAnswersPipelinesInOrderWithOneOrTwoLoops(Transport.Kind kind) throws Exception {
    assumeTrue(kind.available(), () -> kind.label() + " is not available here: " + kind.whyUnavailable());
    for (int loops : new int[] {1, 2}) {
      try (BloomeryServer server = TestServer.start("--io-transport", kind.label(), "--io-threads",
          Integer.toString(loops)); RawClient setup = new RawClient(server.port())) {
        String info = setup.call("INFO", "server");
        assertThat(info).contains("multiplexing_api:" + kind.label() + "\r\n", "io_threads:" + loops + "\r\n");
        assertThat(setup.call("BF.RESERVE", "k", "0.0000001", "100000")).isEqualTo("+OK\r\n");
        int clients = 4;
        int perClient = 2_000;
        List<List<String>> results = RawClient.concurrently(server.port(), clients, (id, client) -> {
          ByteArrayOutputStream pipeline = new ByteArrayOutputStream();
          for (int i = 0; i < perClient; i++) {
            pipeline.write(RawClient.encode("BF.ADD", "k", "c" + id + "-" + i));
            pipeline.write(RawClient.encode("BF.EXISTS", "k", "c" + id + "-" + i));
          }
          client.send(pipeline.toByteArray());
          List<String> replies = new ArrayList<>();
          for (int i = 0; i < 2 * perClient; i++) {
            replies.add(client.reply());
          }
          return replies;
        }, () -> {});
        for (int c = 0; c < clients; c++) {
          List<String> replies = results.get(c);
          for (int i = 0; i < perClient; i++) {
            assertThat(replies.get(2 * i)).as("%s client %d add %d", kind, c, i).isEqualTo(":1\r\n");
            assertThat(replies.get(2 * i + 1)).as("%s client %d exists %d", kind, c, i).isEqualTo(":1\r\n");
          }
        }
        assertThat(setup.call("BF.CARD", "k")).isEqualTo(":" + clients * perClient + "\r\n");

        // a command split at every byte, each byte its own write
        try (RawClient slow = new RawClient(server.port())) {
          for (byte b : RawClient.encode("BF.EXISTS", "k", "c0-7")) {
            slow.send(new byte[] {b});
          }
          assertThat(slow.reply()).isEqualTo(":1\r\n");
        }

        // replies larger than one hand-off of the reply batch (64 KiB), several in one read
        String big = "x".repeat(200_000);
        try (RawClient client = new RawClient(server.port())) {
          ByteArrayOutputStream pipeline = new ByteArrayOutputStream();
          for (int i = 0; i < 3; i++) {
            pipeline.write(RawClient.encode("ECHO", big + i));
          }
          client.send(pipeline.toByteArray());
          for (int i = 0; i < 3; i++) {
            assertThat(client.reply()).isEqualTo("$" + (big.length() + 1) + "\r\n" + big + i + "\r\n");
          }
        }
      }
    }
  }

  @ParameterizedTest
  @EnumSource(Transport.Kind.class)
  void eachAvailableTransportCutsOffAClientThatStopsReading(Transport.Kind kind) throws Exception {
    assumeTrue(kind.available(), () -> kind.label() + " is not available here: " + kind.whyUnavailable());
    try (BloomeryServer server = TestServer.start("--io-transport", kind.label(), "--client-output-buffer-limit",
        "64kb"); RawClient other = new RawClient(server.port()); RawClient greedy = new RawClient(server.port())) {
      SecurityAndLimitsTest.greedyIsCutOffWhileOtherIsServed(server, other, greedy);
    }
  }

  @Test
  void autoTakesTheFirstAvailableOfIoUringEpollNioAndSaysWhyItSkippedOthers() {
    Transport.Choice auto = Transport.Kind.choose("auto");
    Transport.Kind expected = Transport.Kind.IO_URING.available() ? Transport.Kind.IO_URING
        : Transport.Kind.EPOLL.available() ? Transport.Kind.EPOLL : Transport.Kind.NIO;
    assertThat(auto.kind()).isEqualTo(expected);
    for (Transport.Kind k : Transport.Kind.values()) {
      if (k.ordinal() < expected.ordinal()) {
        assertThat(auto.reason()).contains(k.label() + " unavailable (" + k.whyUnavailable() + ")");
      }
    }
    assertThat(Transport.Kind.choose(" NIO ").kind()).isEqualTo(Transport.Kind.NIO);
    assertThat(Transport.Kind.NIO.whyUnavailable()).isNull();
  }

  /**
   * A JVM where no native transport may load (as in a container whose seccomp profile forbids io_uring, or with
   * Netty's own switch): {@code auto} falls back to NIO and serves; a named io_uring stops the start with the cause.
   */
  @Test
  void withoutNativeTransportsAutoFallsBackToNioAndANamedOneIsRefused(@TempDir Path dir) throws Exception {
    List<String> jvm = List.of("-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
        "-Dio.netty.transport.noNative=true");
    List<String> serve = List.of("--appendonly", "no", "--dir", dir.resolve("data").toString());
    List<String> auto = new ArrayList<>(serve);
    auto.addAll(List.of("--io-transport", "auto"));
    ChildServer.Started started = ChildServer.start(jvm, auto, dir.resolve("log"));
    try (RawClient client = new RawClient(started.port())) {
      assertThat(client.call("INFO", "server")).contains("multiplexing_api:nio\r\n");
      assertThat(client.call("BF.ADD", "k", "a")).isEqualTo(":1\r\n");
    } finally {
      started.process().destroyForcibly().waitFor();
    }
    List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString()));
    command.addAll(jvm);
    command.addAll(List.of("-cp", System.getProperty("java.class.path"), Main.class.getName(), "--port", "0",
        "--http-port", "0", "--io-transport", "io_uring"));
    command.addAll(serve);
    Process refused = new ProcessBuilder(command).redirectErrorStream(true).start();
    try {
      String output = new String(refused.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      assertThat(refused.waitFor(60, TimeUnit.SECONDS)).isTrue();
      assertThat(refused.exitValue()).isNotZero();
      assertThat(output).contains("io-transport io_uring is not available here: ")
          .contains("-Dio.netty.transport.noNative=true (use auto to fall back)");
    } finally {
      refused.destroyForcibly();
    }
  }

  @Test
  void aNamedTransportThatCannotRunHereIsRefusedWithTheCause() {
    for (Transport.Kind k : Transport.Kind.values()) {
      if (!k.available()) {
        assertThatThrownBy(() -> Transport.Kind.choose(k.label()))
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessage("io-transport " + k.label() + " is not available here: " + k.whyUnavailable()
                + " (use auto to fall back)");
      }
    }
    assertThatThrownBy(() -> Transport.Kind.choose("kqueue"))
        .hasMessage("io-transport must be auto, io_uring, epoll or nio, not 'kqueue'");
  }

  @Test
  void ioTransportAndIoThreadsOptionsAreCheckedWithOneLineErrors() {
    assertThatThrownBy(() -> ServerConfig.parse(Map.of(), "--io-transport", "uring"))
        .hasMessage("io-transport must be auto, io_uring, epoll or nio, not 'uring'");
    assertThatThrownBy(() -> ServerConfig.parse(Map.of(), "--io-threads", "-1"))
        .hasMessageStartingWith("io-threads must be");
    assertThatThrownBy(() -> ServerConfig.parse(Map.of(), "--io-threads", "two"))
        .hasMessage("io-threads must be an integer, not 'two'");
    assertThat(ServerConfig.parse(Map.of("BLOOMERY_IO_TRANSPORT", "epoll"), "--io-threads", "1").ioTransport())
        .isEqualTo("epoll");
    assertThat(ServerConfig.parse(Map.of(), "--io-threads", "1").ioThreads()).isEqualTo(1);
    assertThat(ServerConfig.parse(Map.of(), "--io-threads", "0").ioThreads())
        .isEqualTo(Runtime.getRuntime().availableProcessors());
  }
}
