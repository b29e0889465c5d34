package io.bloomery.server;

import java.io.IOException;
import java.io.PrintWriter;
import java.util.concurrent.CountDownLatch;

/**
 * {@code bloomery serve}: starts the server, prints where it listens and how to connect, and runs until SIGTERM or
 * SIGINT, which close it (flush, snapshot) and exit with status 0.
 */
public final class Main {
  private Main() {}

  public static void main(String[] args) {
    int status = run(args, new PrintWriter(System.out, true), new PrintWriter(System.err, true));
    System.exit(status);
  }

  /**
   * Runs the server until a signal arrives; returns the exit status (0 after a clean stop, 2 for bad options, 1 if
   * the server cannot start).
   */
  public static int run(String[] args, PrintWriter out, PrintWriter err) {
    if (System.getProperty("logback.configurationFile") == null && Main.class.getResource("/logback.xml") == null
        && Main.class.getResource("/logback-test.xml") == null) {
      System.setProperty("logback.configurationFile", "bloomery-server-logback.xml");
    }
    if (System.getProperty("io.netty.leakDetection.level") == null) {
      // Netty's default samples one buffer in 128 with a captured stack trace: a debugging aid that costs every
      // command a share of a stack walk; -Dio.netty.leakDetection.level=simple (or paranoid) turns it back on
      io.netty.util.ResourceLeakDetector.setLevel(io.netty.util.ResourceLeakDetector.Level.DISABLED);
    }
    ServerConfig config;
    try {
      config = ServerConfig.parse(args);
    } catch (IllegalArgumentException e) {
      err.println("bloomery serve: " + e.getMessage());
      err.flush();
      return 2;
    }
    BloomeryServer server;
    try {
      server = BloomeryServer.start(config);
    } catch (IOException e) {
      err.println("bloomery serve: " + e.getMessage());
      err.flush();
      return 1;
    }
    CountDownLatch stopped = new CountDownLatch(1);
    Runnable stop = () -> {
      try {
        server.close();
      } finally {
        stopped.countDown(); // whatever the close threw, main returns and the process exits
      }
    };
    server.afterShutdown(stopped::countDown); // SHUTDOWN: closed already, exit 0
    installSignalHandlers(stop);
    Runtime.getRuntime().addShutdownHook(new Thread(server::close, "bloomery-shutdown"));
    String host = config.bind().get(0);
    out.println("Ready to accept connections tcp on " + host + ":" + server.port());
    out.println("Connect with: redis-cli -p " + server.port()
        + (host.equals("127.0.0.1") ? "" : " -h " + host)
        + "   (metrics: http://" + host + ":" + server.httpPort() + "/metrics)");
    out.flush();
    try {
      stopped.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      server.close();
    }
    return 0;
  }

  /** SIGTERM and SIGINT stop the server cleanly (exit 0), where the JVM lets us handle them. */
  private static void installSignalHandlers(Runnable stop) {
    for (String name : new String[] {"TERM", "INT"}) {
      try {
        sun.misc.Signal.handle(new sun.misc.Signal(name), signal -> new Thread(stop, "bloomery-stop").start());
      } catch (IllegalArgumentException | UnsupportedOperationException e) {
        // this JVM does not let us handle the signal: the shutdown hook still closes the server
      }
    }
  }
}
