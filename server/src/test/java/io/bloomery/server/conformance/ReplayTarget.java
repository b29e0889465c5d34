package io.bloomery.server.conformance;

import io.bloomery.server.BloomeryServer;
import io.bloomery.server.ServerConfig;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

/**
 * The server the replay runs against: the one named by the system property
 * {@value #PROPERTY} (or the environment variable {@value #ENV}) as {@code host:port} — for
 * example the real Redis + RedisBloom, to check the harness itself — or else a Bloomery server
 * started in this JVM on an ephemeral port with persistence off, stopped by {@link #close()}.
 */
final class ReplayTarget implements AutoCloseable {

  static final String PROPERTY = "bloomery.conformance.target";
  static final String ENV = "BLOOMERY_CONFORMANCE_TARGET";

  private final InetSocketAddress address;
  private final String description;
  private final AutoCloseable server;
  private final Path dir;

  private ReplayTarget(InetSocketAddress address, String description, AutoCloseable server, Path dir) {
    this.address = address;
    this.description = description;
    this.server = server;
    this.dir = dir;
  }

  static ReplayTarget open() throws IOException {
    String named = namedTarget();
    if (named != null) {
      int colon = named.lastIndexOf(':');
      if (colon <= 0) {
        throw new IllegalArgumentException(PROPERTY + " must be host:port, found '" + named + "'");
      }
      int port = Integer.parseInt(named.substring(colon + 1));
      return new ReplayTarget(new InetSocketAddress(named.substring(0, colon), port),
          "the server at " + named, null, null);
    }
    return startBloomery();
  }

  /** Starts Bloomery in this JVM: ephemeral ports, persistence off, a throwaway data directory. */
  private static ReplayTarget startBloomery() throws IOException {
    Path dir = Files.createTempDirectory("bloomery-conformance");
    BloomeryServer server = BloomeryServer.start(ServerConfig.parse(
        "--port", "0", "--bind", "127.0.0.1", "--appendonly", "no", "--http-port", "0", "--dir", dir.toString()));
    return new ReplayTarget(new InetSocketAddress("127.0.0.1", server.port()),
        "Bloomery in-process on 127.0.0.1:" + server.port(), server, dir);
  }

  private static String namedTarget() {
    String named = System.getProperty(PROPERTY);
    if (named == null || named.isBlank()) {
      named = System.getenv(ENV);
    }
    return named == null || named.isBlank() ? null : named.strip();
  }

  /** Closes {@code target} if there is one (an {@code @AfterAll} after a skipped {@code @BeforeAll}). */
  static void closeIfOpen(ReplayTarget target) throws Exception {
    if (target != null) {
      target.close();
    }
  }

  InetSocketAddress address() {
    return address;
  }

  String description() {
    return description;
  }

  @Override
  public void close() throws Exception {
    try {
      if (server != null) {
        server.close();
      }
    } finally {
      if (dir != null) {
        deleteTree(dir);
      }
    }
  }

  private static void deleteTree(Path root) throws IOException {
    try (Stream<Path> paths = Files.walk(root)) {
      for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    }
  }
}
