package io.bloomery.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What {@code bloomery serve} loads on its way to the first reply, in a child JVM that logs every class it loads:
 * its logging is set up in code ({@link LogConfigurator}: no XML parser, none of logback's XML configuration
 * framework) and Netty's allocator does not register Flight Recorder events; the log lines keep the product's format.
 * And what it leaves behind: a server that keeps nothing on disk ({@code --appendonly no}, as a cluster node's
 * keyspace), killed, leaves nothing in the temporary directory unless a load staged a file there.
 */
class ServeStartupPathTest {
  @Test
  void firstReply_loadsNoXmlLoggingConfiguration_andNoFlightRecorderEvents(@TempDir Path dir) throws Exception {
    Path classes = dir.resolve("classes.log");
    Path log = dir.resolve("server.log");
    askThenStop(dir, "-Xlog:class+load=info:file=" + classes, "*1\r\n$4\r\nPING\r\n", "+PONG\r\n", false);
    String loaded = Files.readString(classes);
    assertThat(loaded).as("the class-load log").contains("io.bloomery.server.BloomeryServer ");
    assertThat(loaded).doesNotContain("ch.qos.logback.classic.joran.JoranConfigurator ", "javax.xml.parsers.",
        "io.netty.buffer.AllocateChunkEvent", "io.netty.buffer.AllocateBufferEvent");
    assertThat(Files.readString(log))
        .containsPattern("(?m)^\\d\\d:\\d\\d:\\d\\d\\.\\d{3} INFO  BloomeryServer - bloomery \\S+ listening on ");
  }

  @Test
  void aServerKeepingNothingOnDisk_killed_leavesNothingInTheTemporaryDirectory(@TempDir Path dir) throws Exception {
    Path tmp = Files.createDirectory(dir.resolve("tmp"));
    askThenStop(dir, "-Djava.io.tmpdir=" + tmp, "*3\r\n$6\r\nBF.ADD\r\n$1\r\nk\r\n$1\r\na\r\n", ":1\r\n", true);
    try (var left = Files.list(tmp)) {
      assertThat(left).as("what the killed server left in java.io.tmpdir").isEmpty();
    }
  }

  /**
   * Starts {@code bloomery serve} with {@code jvmOption}, keeping nothing on disk (its log in {@code dir}), sends
   * {@code request}, expects {@code reply}, then stops it: with SIGKILL if {@code kill}, else SIGTERM.
   */
  private static void askThenStop(Path dir, String jvmOption, String request, String reply, boolean kill)
      throws Exception {
    Path log = dir.resolve("server.log");
    List<String> command = new ArrayList<>(DedupChild.command("serve", "--port", "0", "--http-port", "0",
        "--appendonly", "no", "--dir", dir.resolve("data").toString()));
    command.add(1, jvmOption);
    Process server = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
    try {
      int port = ServerReady.port(server, log, 60, TimeUnit.SECONDS);
      try (Socket s = new Socket("127.0.0.1", port)) {
        s.setSoTimeout(30_000);
        OutputStream out = s.getOutputStream();
        out.write(request.getBytes(StandardCharsets.US_ASCII));
        out.flush();
        InputStream in = s.getInputStream();
        assertThat(new String(in.readNBytes(reply.length()), StandardCharsets.US_ASCII)).isEqualTo(reply);
      }
    } finally {
      if (kill) {
        server.destroyForcibly(); // kill -9: nothing of the server's own runs after this
      } else {
        server.destroy();
      }
      if (!server.waitFor(30, TimeUnit.SECONDS)) {
        server.destroyForcibly().waitFor();
      }
    }
  }
}
