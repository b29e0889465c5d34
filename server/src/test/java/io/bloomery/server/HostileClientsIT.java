package io.bloomery.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Clients that try to exhaust a small heap (256 MB) within the protocol's limits, against a real server process:
 * each is refused with an error and closed, the server never runs out of memory, and other clients keep being
 * served meanwhile.
 */
class HostileClientsIT {
  /** Blocking socket reads and writes, each on its own thread (the common pool may have only one). */
  private static final java.util.concurrent.Executor THREADS = command -> Thread.ofPlatform().daemon().start(command);
  private static final String MEMORY_REFUSAL = "-ERR Protocol error: clients' pending commands reached "
      + "maxmemory-clients";

  private static ChildServer.Started start(Path dir) throws Exception {
    return ChildServer.start(List.of("-Xmx256m"), List.of("--appendonly", "no", "--dir",
        dir.resolve("data").toString()), dir.resolve("log"));
  }

  /** The first line the server sends on {@code socket} (without CRLF), or what came before it closed. */
  private static CompletableFuture<String> firstLine(Socket socket) {
    return CompletableFuture.supplyAsync(() -> {
      ByteArrayOutputStream line = new ByteArrayOutputStream();
      try {
        InputStream in = socket.getInputStream();
        for (int c; (c = in.read()) != -1 && c != '\n'; ) {
          line.write(c);
        }
      } catch (IOException e) {
        // closed: what was read is the answer
      }
      return line.toString(StandardCharsets.ISO_8859_1).strip();
    }, THREADS);
  }

  private static String info(RawClient client, String field) {
    for (String line : client.call("INFO").split("\r\n")) {
      if (line.startsWith(field + ":")) {
        return line.substring(field.length() + 1);
      }
    }
    throw new AssertionError("INFO has no " + field);
  }

  /** Waits (up to 10 s) until no connection holds query buffer memory. */
  private static void awaitBuffersReleased(RawClient client) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (!info(client, "mem_clients_query_buffers").equals("0") && System.nanoTime() < deadline) {
      Thread.sleep(50);
    }
    assertThat(info(client, "mem_clients_query_buffers")).isEqualTo("0");
  }

  private static void stop(ChildServer.Started started) throws InterruptedException {
    started.process().destroy();
    if (!started.process().waitFor(30, TimeUnit.SECONDS)) {
      started.process().destroyForcibly().waitFor();
    }
  }

  /**
   * A declared count of 268000001 arguments followed by empty ones: each empty argument is 6 bytes on the wire but
   * an array and a list slot on the heap. The server refuses the command once the pending commands' memory reaches
   * maxmemory-clients (a quarter of the heap), long before the heap runs out.
   */
  @Test
  void manyEmptyArgumentsAreRefusedBeforeTheHeapRunsOut(@TempDir Path dir) throws Exception {
    ChildServer.Started server = start(dir);
    try (RawClient other = new RawClient(server.port()); Socket attacker = new Socket("127.0.0.1", server.port())) {
      attacker.setSoTimeout(120_000);
      CompletableFuture<String> answer = firstLine(attacker);
      OutputStream out = attacker.getOutputStream();
      out.write("*268000001\r\n$6\r\nBF.ADD\r\n".getBytes(StandardCharsets.US_ASCII));
      byte[] chunk = "$0\r\n\r\n".repeat(10_000).getBytes(StandardCharsets.US_ASCII);
      long sent = 0;
      int served = 0;
      try {
        // 1.5 GB of empty arguments (268M of them) is the whole command: the server must refuse well before
        for (int i = 0; sent < 1_608_000_000L && !answer.isDone(); i++) {
          out.write(chunk);
          sent += chunk.length;
          if (i % 100 == 0) {
            assertThat(other.call("BF.ADD", "alive", Integer.toString(i))).matches(":[01]\r\n");
            served++;
          }
        }
      } catch (IOException closed) {
        // the server closed the connection while the attacker was still sending
      }
      assertThat(answer.get(120, TimeUnit.SECONDS)).isEqualTo(MEMORY_REFUSAL);
      assertThat(served).as("the other client was answered during the attack").isPositive();
      assertThat(other.call("PING")).isEqualTo("+PONG\r\n");
      assertThat(info(other, "protocol_error_disconnections")).isEqualTo("1");
      awaitBuffersReleased(other);
    } finally {
      stop(server);
    }
    String log = Files.readString(dir.resolve("log"));
    assertThat(log).doesNotContain("OutOfMemoryError").doesNotContain("unexpected error")
        .contains("Protocol error: clients' pending commands reached maxmemory-clients");
  }

  /**
   * Three clients each send 23 MB of a 24 MB argument: together they pass a quarter of the heap (64 MB), so the
   * server refuses at least one, and what the rest hold stays within it; once they are gone the budget is free again
   * and a large command goes through.
   */
  @Test
  void largeArgumentsFromSeveralClientsAreHeldToTheTotal(@TempDir Path dir) throws Exception {
    ChildServer.Started server = start(dir);
    List<Socket> senders = new ArrayList<>();
    try (RawClient other = new RawClient(server.port())) {
      List<CompletableFuture<String>> answers = new ArrayList<>();
      List<CompletableFuture<Void>> sends = new ArrayList<>();
      byte[] payload = new byte[1 << 20];
      java.util.Arrays.fill(payload, (byte) 'x');
      for (int c = 0; c < 3; c++) {
        Socket s = new Socket("127.0.0.1", server.port());
        s.setSoTimeout(120_000);
        senders.add(s);
        answers.add(firstLine(s));
        sends.add(CompletableFuture.runAsync(() -> {
          try {
            OutputStream out = s.getOutputStream();
            out.write(("*3\r\n$6\r\nBF.ADD\r\n$1\r\nk\r\n$" + (24 << 20) + "\r\n").getBytes(StandardCharsets.US_ASCII));
            for (int mb = 0; mb < 23; mb++) {
              out.write(payload);
            }
          } catch (IOException closed) {
            // refused and closed while sending
          }
        }, THREADS));
      }
      CompletableFuture.allOf(sends.toArray(CompletableFuture[]::new)).get(120, TimeUnit.SECONDS);
      CompletableFuture.anyOf(answers.toArray(CompletableFuture[]::new)).get(120, TimeUnit.SECONDS);
      assertThat(answers.stream().filter(a -> a.isDone() && a.join().equals(MEMORY_REFUSAL)).count())
          .as("clients refused").isPositive();
      long limit = Long.parseLong(other.call("CONFIG", "GET", "maxmemory-clients").split("\r\n")[4]);
      assertThat(limit).isBetween(60L << 20, 64L << 20);
      assertThat(Long.parseLong(info(other, "mem_clients_query_buffers"))).isLessThanOrEqualTo(limit);
      assertThat(other.call("PING")).isEqualTo("+PONG\r\n");
      for (Socket s : senders) {
        s.close();
      }
      awaitBuffersReleased(other);
      byte[] big = new byte[20 << 20];
      java.util.Arrays.fill(big, (byte) 'y');
      other.send(("*3\r\n$6\r\nBF.ADD\r\n$1\r\nk\r\n$" + big.length + "\r\n").getBytes(StandardCharsets.US_ASCII));
      other.send(big);
      other.send("\r\n".getBytes(StandardCharsets.US_ASCII));
      assertThat(other.reply()).isEqualTo(":1\r\n");
    } finally {
      for (Socket s : senders) {
        s.close();
      }
      stop(server);
    }
    assertThat(Files.readString(dir.resolve("log"))).doesNotContain("OutOfMemoryError");
  }
}
