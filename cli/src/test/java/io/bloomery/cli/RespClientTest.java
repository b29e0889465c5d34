package io.bloomery.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * {@link RespClient} against a peer on a real socket that answers each request with scripted bytes, for the replies
 * a well-behaved server rarely sends; TopCommandTest and LoadCommandTest run it against the real server.
 */
class RespClientTest {

  /** Accepts one connection, records each request's bytes, and answers the i-th request with {@code replies[i]}. */
  private static CompletableFuture<String> peer(ServerSocket listener, String... replies) {
    return CompletableFuture.supplyAsync(() -> {
      try (Socket socket = listener.accept()) {
        InputStream in = socket.getInputStream();
        OutputStream out = socket.getOutputStream();
        ByteArrayOutputStream seen = new ByteArrayOutputStream();
        byte[] buffer = new byte[4096];
        for (String reply : replies) {
          int n = in.read(buffer);
          if (n < 0) {
            break;
          }
          seen.write(buffer, 0, n);
          out.write(reply.getBytes(StandardCharsets.UTF_8));
          out.flush();
        }
        return seen.toString(StandardCharsets.UTF_8);
      } catch (IOException e) {
        throw new IllegalStateException(e);
      }
    });
  }

  @Test
  void everyReplyType_andAnErrorReply_leaveTheConnectionUsable() throws Exception {
    try (ServerSocket listener = new ServerSocket(0)) {
      CompletableFuture<String> requests = peer(listener, "+OK\r\n", "-ERR no such key 'ключ'\r\n", ":-42\r\n",
          "$5\r\nhe\r\nl\r\n", "$-1\r\n", "*3\r\n$1\r\na\r\n:7\r\n*1\r\n+x\r\n", "*-1\r\n");
      try (RespClient client = RespClient.connect("127.0.0.1", listener.getLocalPort(), 5000, 5000, "s3cret")) {
        assertThatThrownBy(() -> client.call("BF.INFO", "ключ")).isInstanceOf(RespClient.ErrorReply.class)
            .hasMessage("ERR no such key 'ключ'");
        assertThat(client.call("INCRBY", "n", -42L)).isEqualTo(-42L);
        assertThat(client.call("GET", "k")).isEqualTo("he\r\nl".getBytes(StandardCharsets.UTF_8));
        assertThat(client.call("GET", "missing")).isNull();
        List<?> array = (List<?>) client.call("X", new byte[] {0, (byte) 0xff});
        assertThat((byte[]) array.get(0)).containsExactly('a');
        assertThat(array.get(1)).isEqualTo(7L);
        assertThat(array.get(2)).isEqualTo(List.of("x"));
        assertThat(client.call("Y")).isNull();
      }
      String expected = "*2\r\n$4\r\nAUTH\r\n$6\r\ns3cret\r\n";
      assertThat(requests.get(10, TimeUnit.SECONDS)).startsWith(expected)
          .contains("*3\r\n$6\r\nINCRBY\r\n$1\r\nn\r\n$3\r\n-42\r\n")
          .contains("*2\r\n$7\r\nBF.INFO\r\n$8\r\nключ\r\n");
    }
  }

  @Test
  void aBrokenOrForeignPeer_isAFailure_notAHang() throws Exception {
    try (ServerSocket listener = new ServerSocket(0)) {
      peer(listener, "HTTP/1.1 400 Bad Request\r\n");
      try (RespClient client = RespClient.connect("127.0.0.1", listener.getLocalPort(), 5000, 5000, null)) {
        assertThatThrownBy(() -> client.call("PING")).isInstanceOf(RespClient.Failure.class)
            .isNotInstanceOf(RespClient.ErrorReply.class).hasMessageContaining("not a RESP2 reply");
      }
    }
    try (ServerSocket listener = new ServerSocket(0)) {
      peer(listener, "$10\r\nshort");
      try (RespClient client = RespClient.connect("127.0.0.1", listener.getLocalPort(), 5000, 5000, null)) {
        assertThatThrownBy(() -> client.call("GET", "k")).isInstanceOf(RespClient.Failure.class)
            .hasMessageContaining("closed the connection");
      }
    }
  }

  @Test
  void noServer_isAOneLineFailure() throws Exception {
    int port;
    try (ServerSocket probe = new ServerSocket(0)) {
      port = probe.getLocalPort();
    }
    assertThatThrownBy(() -> RespClient.connect("127.0.0.1", port, 5000, 5000, null))
        .isInstanceOf(RespClient.Failure.class).message().doesNotContain("\n").isNotBlank();
  }
}
