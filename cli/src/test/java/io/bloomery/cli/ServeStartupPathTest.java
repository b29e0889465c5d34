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
 */
class ServeStartupPathTest {
  @Test
  void firstReply_loadsNoXmlLoggingConfiguration_andNoFlightRecorderEvents(@TempDir Path dir) throws Exception {
    Path classes = dir.resolve("classes.log");
    Path log = dir.resolve("server.log");
    List<String> command = new ArrayList<>(DedupChild.command("serve", "--port", "0", "--http-port", "0",
        "--appendonly", "no", "--dir", dir.resolve("data").toString()));
    command.add(1, "-Xlog:class+load=info:file=" + classes);
    Process server = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
    try {
      int port = ServerReady.port(server, log, 60, TimeUnit.SECONDS);
      try (Socket s = new Socket("127.0.0.1", port)) {
        s.setSoTimeout(30_000);
        OutputStream out = s.getOutputStream();
        out.write("*1\r\n$4\r\nPING\r\n".getBytes(StandardCharsets.US_ASCII));
        out.flush();
        InputStream in = s.getInputStream();
        assertThat(new String(in.readNBytes(7), StandardCharsets.US_ASCII)).isEqualTo("+PONG\r\n");
      }
    } finally {
      server.destroy();
      if (!server.waitFor(30, TimeUnit.SECONDS)) {
        server.destroyForcibly().waitFor();
      }
    }
    String loaded = Files.readString(classes);
    assertThat(loaded).as("the class-load log").contains("io.bloomery.server.BloomeryServer ");
    assertThat(loaded).doesNotContain("ch.qos.logback.classic.joran.JoranConfigurator ", "javax.xml.parsers.",
        "io.netty.buffer.AllocateChunkEvent", "io.netty.buffer.AllocateBufferEvent");
    assertThat(Files.readString(log))
        .containsPattern("(?m)^\\d\\d:\\d\\d:\\d\\d\\.\\d{3} INFO  BloomeryServer - bloomery \\S+ listening on ");
  }
}
