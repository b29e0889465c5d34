package io.bloomery.server;

import io.bloomery.guard.Credentials;
import io.bloomery.server.command.guard.StoreDeclaration;
import io.bloomery.server.state.LogLevel;
import io.bloomery.server.state.Settings;
import java.io.IOException;
import java.io.PrintWriter;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.LoggerFactory;

/**
 * {@code bloomery serve}: starts the server, prints where it listens and how to connect, and runs until SIGTERM or
 * SIGINT, which close it (flush, snapshot) and exit with status 0. SIGHUP re-reads {@code loglevel} and nothing
 * else ({@link #reload}).
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
        && Main.class.getResource("/logback-test.xml") == null
        && Main.class.getResource("/META-INF/services/ch.qos.logback.classic.spi.Configurator") == null) {
      System.setProperty("logback.configurationFile", "bloomery-server-logback.xml");
    }
    if (System.getProperty("io.netty.jfr.enabled") == null) {
      // Netty's allocator events (a chunk or buffer allocated or freed) make the first buffer it allocates register
      // them with the JDK's Flight Recorder, which reads their annotations through reflection: about 0.2-0.3 s of
      // CPU on the event loop before the first reply. -Dio.netty.jfr.enabled=true turns them back on.
      System.setProperty("io.netty.jfr.enabled", "false");
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
    LogLevel.apply(config.loglevel());
    rememberSecrets(config);
    // Until the server has started (recovery can take a while), SIGTERM and SIGINT end the process at once with
    // status 0 and SIGHUP is ignored: left to the JVM they would exit 143 and 129. A server half started holds
    // nothing a crash would not lose, and the shutdown hook closes it cleanly once start has returned it.
    AtomicReference<BloomeryServer> started = new AtomicReference<>();
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      BloomeryServer s = started.get();
      if (s != null) {
        s.close();
      }
    }, "bloomery-shutdown"));
    installSignalHandlers(() -> {
      LoggerFactory.getLogger(Main.class).info("stopped while starting: exiting before serving");
      System.exit(0);
    });
    handle("HUP", () -> LoggerFactory.getLogger(Main.class).info("SIGHUP while starting: ignored"));
    BloomeryServer server;
    try {
      server = BloomeryServer.start(config);
    } catch (IOException e) {
      err.println("bloomery serve: " + e.getMessage());
      err.flush();
      return 1;
    }
    started.set(server);
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
    handle("HUP", () -> reload(args, server.context().settings()));
    String host = config.bind().get(0);
    out.println("Ready to accept connections tcp on " + host + ":" + server.port());
    String http = "http://" + (host.contains(":") ? "[" + host + "]" : host) + ":" + server.httpPort();
    out.println("Connect with: redis-cli -p " + server.port()
        + (host.equals("127.0.0.1") ? "" : " -h " + host)
        + "   (dashboard: " + http + "/, metrics: " + http + "/metrics)");
    out.flush();
    try {
      stopped.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      server.close();
    }
    return 0;
  }

  /** The password and the stores' credentials are masked wherever they would appear in the log. */
  private static void rememberSecrets(ServerConfig config) {
    Credentials.remember(config.requirepass());
    for (StoreDeclaration store : config.stores(System.getenv())) {
      store.secrets().forEach(Credentials::remember);
    }
  }

  /** SIGTERM and SIGINT stop the server cleanly (exit 0), where the JVM lets us handle them. */
  private static void installSignalHandlers(Runnable stop) {
    for (String name : new String[] {"TERM", "INT"}) {
      handle(name, stop);
    }
  }

  /** Runs {@code action} on a thread of its own at each {@code signal}, where the JVM lets us handle it. */
  private static void handle(String signal, Runnable action) {
    try {
      sun.misc.Signal.handle(new sun.misc.Signal(signal), s -> new Thread(action, "bloomery-SIG" + signal).start());
    } catch (IllegalArgumentException | UnsupportedOperationException e) {
      // this JVM does not let us handle the signal: for TERM and INT the shutdown hook still closes the server
    }
  }

  /**
   * SIGHUP (systemd's {@code ExecReload}): reads the arguments again, the config file included, and applies
   * {@code loglevel}; every other option keeps the value the server started with until a restart, and the server
   * keeps running. A file that no longer parses is reported and changes nothing.
   */
  static void reload(String[] args, Settings settings) {
    org.slf4j.Logger log = LoggerFactory.getLogger(Main.class);
    ServerConfig config;
    try {
      config = ServerConfig.parse(args);
    } catch (IllegalArgumentException e) {
      log.warn("SIGHUP: the configuration was not reloaded: {}", e.getMessage());
      return;
    }
    LogLevel.apply(config.loglevel());
    settings.loglevel(config.loglevel());
    log.info("SIGHUP: loglevel is now {}; other options take effect on a restart", config.loglevel());
  }
}
