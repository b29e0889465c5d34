package io.bloomery.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A server that cannot listen says on which address and port, and leaves its data directory exactly as it found it:
 * a start that fails before serving writes no snapshot, and the next start on a free port recovers the same state.
 */
class StartupFailureTest {
  @TempDir Path dir;

  private BloomeryServer start(String appendonly, String transport, int port, int httpPort) throws IOException {
    List<String> args = new ArrayList<>(List.of("--bind", "127.0.0.1", "--port", String.valueOf(port),
        "--http-port", String.valueOf(httpPort), "--dir", dir.toString(), "--appendonly", appendonly,
        "--io-transport", transport, "--save", appendonly.equals("yes") ? "" : "3600 1"));
    return BloomeryServer.start(ServerConfig.parse(Map.of(), args.toArray(String[]::new)));
  }

  /** Every file under {@link #dir} and its bytes. */
  private Map<String, byte[]> files() throws IOException {
    Map<String, byte[]> found = new TreeMap<>();
    try (Stream<Path> all = Files.walk(dir)) {
      for (Path p : all.filter(Files::isRegularFile).toList()) {
        found.put(dir.relativize(p).toString(), Files.readAllBytes(p));
      }
    }
    return found;
  }

  private void assertUnchanged(Map<String, byte[]> before) throws IOException {
    Map<String, byte[]> after = files();
    assertThat(after.keySet()).isEqualTo(before.keySet());
    for (Map.Entry<String, byte[]> e : before.entrySet()) {
      assertThat(after.get(e.getKey())).as(e.getKey()).isEqualTo(e.getValue());
    }
  }

  /** Fills {@link #dir} with a key written by a server that then stopped cleanly. */
  private void serveOnce(String appendonly, String transport) throws IOException {
    try (BloomeryServer server = start(appendonly, transport, 0, 0); RawClient c = new RawClient(server.port())) {
      assertThat(c.call("BF.ADD", "k", "a")).isEqualTo(":1\r\n");
      if (appendonly.equals("no")) {
        assertThat(c.call("SAVE")).isEqualTo("+OK\r\n");
      }
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"yes/auto", "no/auto", "yes/nio"})
  void aPortInUseIsNamedAndTheDataDirectoryIsLeftAsItWas(String mode) throws IOException {
    String appendonly = mode.split("/")[0];
    String transport = mode.split("/")[1];
    serveOnce(appendonly, transport);
    Map<String, byte[]> before = files();
    assertThat(before).containsKey("MANIFEST");
    try (ServerSocket taken = new ServerSocket(0, 50, InetAddress.getByName("127.0.0.1"))) {
      assertThatThrownBy(() -> start(appendonly, transport, taken.getLocalPort(), 0)).isInstanceOf(IOException.class)
          .hasMessage("cannot listen on 127.0.0.1:" + taken.getLocalPort() + ": Address already in use");
      assertUnchanged(before);
      assertThatThrownBy(() -> start(appendonly, transport, 0, taken.getLocalPort())).isInstanceOf(IOException.class)
          .hasMessage("cannot listen for HTTP on 127.0.0.1:" + taken.getLocalPort() + ": Address already in use");
      assertUnchanged(before);
    }
    try (BloomeryServer server = start(appendonly, transport, 0, 0); RawClient c = new RawClient(server.port())) {
      assertThat(c.call("BF.EXISTS", "k", "a")).isEqualTo(":1\r\n");
    }
  }
}
