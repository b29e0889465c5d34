package io.bloomery.server;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Starts {@code bloomery serve} ({@link Main}) as a real child process on this test JVM's class path, with stderr
 * appended to a log file, and waits for its ready line: the kill -9 and restart tests share this one launcher.
 */
public final class ChildServer {
  private static final Pattern READY = Pattern.compile("Ready to accept connections tcp on 127\\.0\\.0\\.1:(\\d+)");

  private ChildServer() {}

  /** A started child and the port its ready line announced. */
  public record Started(Process process, int port) {}

  /**
   * Starts {@code java jvmOptions… -cp <class path> Main --port 0 --http-port 0 serverArgs…}; if the ready line
   * does not come within 60 s, kills the child and fails with the log's text.
   */
  public static Started start(List<String> jvmOptions, List<String> serverArgs, Path log) throws Exception {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.addAll(jvmOptions);
    String transport = System.getProperty(ServerConfig.IO_TRANSPORT_PROPERTY);
    if (transport != null) { // a run of the suite on one transport puts its children on it too
      command.add("-D" + ServerConfig.IO_TRANSPORT_PROPERTY + "=" + transport);
    }
    command.addAll(List.of("-cp", System.getProperty("java.class.path"), Main.class.getName(), "--port", "0",
        "--http-port", "0"));
    command.addAll(serverArgs);
    Process process = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
    CompletableFuture<Integer> port = new CompletableFuture<>();
    Thread reader = new Thread(() -> {
      try (BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(),
          StandardCharsets.UTF_8))) {
        for (String line; (line = out.readLine()) != null; ) {
          Matcher m = READY.matcher(line);
          if (m.find()) {
            port.complete(Integer.parseInt(m.group(1)));
          }
        }
      } catch (IOException e) {
        // the process died; the future times out or was completed already
      }
      port.completeExceptionally(new IllegalStateException("server exited before it was ready"));
    }, "child-stdout");
    reader.setDaemon(true);
    reader.start();
    try {
      return new Started(process, port.get(60, TimeUnit.SECONDS));
    } catch (Exception e) {
      process.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
      throw new AssertionError("server did not start:\n" + Files.readString(log), e);
    }
  }
}
