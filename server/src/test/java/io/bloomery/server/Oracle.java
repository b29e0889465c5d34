package io.bloomery.server;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;

/**
 * A real Redis 8.0.2 with RedisBloom loaded, as tools/conformance/README.md builds it, for tests that move data
 * between it and Bloomery. Its directory (holding {@code bin/redis-server} and {@code bin/redisbloom.so}) is
 * {@code $BLOOMERY_ORACLE}, else {@code /work/oracle}; where neither holds one the test is skipped, saying so.
 */
final class Oracle implements AutoCloseable {
  private final Process process;
  private final int port;

  private Oracle(Process process, int port) {
    this.process = process;
    this.port = port;
  }

  /** Starts one on an ephemeral port, or skips the calling test when no oracle is built here. */
  static Oracle startOrSkip() throws Exception {
    String dir = System.getenv().getOrDefault("BLOOMERY_ORACLE", "/work/oracle");
    Path server = Path.of(dir, "bin", "redis-server");
    Path module = Path.of(dir, "bin", "redisbloom.so");
    Assumptions.assumeTrue(Files.isExecutable(server) && Files.isRegularFile(module),
        "no Redis + RedisBloom oracle at " + dir + " (set BLOOMERY_ORACLE; tools/conformance/README.md builds one)");
    int port;
    try (ServerSocket s = new ServerSocket(0)) {
      port = s.getLocalPort();
    }
    Path work = Files.createTempDirectory("oracle-");
    Process p = new ProcessBuilder(List.of(server.toString(), "--port", Integer.toString(port), "--bind",
        "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", work.toString(), "--loadmodule", module.toString()))
        .redirectErrorStream(true).redirectOutput(work.resolve("redis.log").toFile()).start();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (System.nanoTime() < deadline) {
      try (RawClient c = new RawClient(port)) {
        if (c.call("PING").equals("+PONG\r\n")) {
          return new Oracle(p, port);
        }
      } catch (RuntimeException notYet) {
        Thread.sleep(50);
      }
    }
    p.destroyForcibly();
    throw new IOException("the oracle did not answer on port " + port + "; see " + work.resolve("redis.log"));
  }

  int port() {
    return port;
  }

  @Override
  public void close() throws InterruptedException {
    process.destroy();
    if (!process.waitFor(10, TimeUnit.SECONDS)) {
      process.destroyForcibly();
    }
  }
}
