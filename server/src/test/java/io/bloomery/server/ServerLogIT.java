package io.bloomery.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What a real server process writes to its log when clients misbehave. */
class ServerLogIT {

  private static long lines(String log, String containing) {
    return log.lines().filter(l -> l.contains(containing)).count();
  }

  /**
   * Fifteen connections each sending a frame with an ESC byte where a '$' belongs: each gets the error with the
   * byte escaped, and the log holds at most ten of those lines (the rest are counted for a later summary) with no
   * raw control byte in it.
   */
  @Test
  void protocolErrorsAreEscapedAndRateLimited(@TempDir Path dir) throws Exception {
    ChildServer.Started server = ChildServer.start(List.of(), List.of("--appendonly", "no", "--dir",
        dir.resolve("data").toString()), dir.resolve("log"));
    try {
      for (int i = 0; i < 15; i++) {
        try (RawClient c = new RawClient(server.port())) {
          c.send("*1\r\n\u001b[31m\r\n".getBytes(StandardCharsets.ISO_8859_1));
          assertThat(c.reply()).isEqualTo("-ERR Protocol error: expected '$', got '\\x1b'\r\n");
        }
      }
      try (RawClient c = new RawClient(server.port())) {
        assertThat(c.call("PING")).isEqualTo("+PONG\r\n");
      }
    } finally {
      stop(server);
    }
    String log = Files.readString(dir.resolve("log"), StandardCharsets.ISO_8859_1);
    assertThat(log).doesNotContain("\u001b");
    assertThat(lines(log, "Protocol error: expected '$', got '\\x1b'")).isBetween(1L, 10L);
  }

  /**
   * An error the server does not expect (here an {@code OutOfMemoryError} growing a 64 MB buffer in a 128 MB heap,
   * with the client memory limit turned off) is logged once for the connection, with its cause in the line and,
   * at {@code --loglevel verbose}, its stack trace; the server goes on serving.
   */
  @Test
  void anUnexpectedErrorIsLoggedOnceWithItsCause(@TempDir Path dir) throws Exception {
    ChildServer.Started server = ChildServer.start(List.of("-Xmx128m"), List.of("--appendonly", "no", "--dir",
        dir.resolve("data").toString(), "--maxmemory-clients", "0", "--loglevel", "verbose"), dir.resolve("log"));
    try {
      try (Socket s = new Socket("127.0.0.1", server.port())) {
        OutputStream out = s.getOutputStream();
        out.write("*2\r\n$4\r\nECHO\r\n$500000000\r\n".getBytes(StandardCharsets.US_ASCII));
        byte[] mb = new byte[1 << 20];
        try {
          for (int i = 0; i < 400; i++) {
            out.write(mb);
          }
        } catch (IOException closed) {
          // the server closed the connection after the error
        }
      }
      try (RawClient c = new RawClient(server.port())) {
        assertThat(c.call("PING")).isEqualTo("+PONG\r\n");
      }
    } finally {
      stop(server);
    }
    String log = Files.readString(dir.resolve("log"));
    assertThat(lines(log, "after an unexpected error")).as(log).isEqualTo(1);
    assertThat(log).containsPattern("closing client id=\\d+ addr=127\\.0\\.0\\.1:\\d+ after an unexpected error: "
        + "java\\.lang\\.OutOfMemoryError")
        .contains("at io.bloomery.server.resp.RespDecoder");
  }

  private static void stop(ChildServer.Started started) throws InterruptedException {
    started.process().destroy();
    if (!started.process().waitFor(30, TimeUnit.SECONDS)) {
      started.process().destroyForcibly().waitFor();
    }
  }
}
