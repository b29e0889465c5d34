package io.bloomery.server;

import io.bloomery.server.command.Dispatcher;
import io.bloomery.server.command.guard.GuardSets;
import io.bloomery.server.keyspace.Keyspace;
import io.bloomery.server.net.Transport;
import io.bloomery.server.persistence.CommandReplayer;
import io.bloomery.server.persistence.Durability;
import io.bloomery.server.persistence.FsyncPolicy;
import io.bloomery.server.persistence.PersistenceControl;
import io.bloomery.server.resp.RespLimits;
import io.bloomery.server.state.ServerContext;
import io.bloomery.server.state.Settings;
import java.io.IOException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A running server: the RESP listener, the keyspace, the command layer and the HTTP endpoint. Start one with
 * {@link #start(ServerConfig)}; {@link #close()} stops accepting, saves a snapshot if persistence is on, and stops.
 */
public final class BloomeryServer implements AutoCloseable {
  /** The server's version, reported by INFO. */
  public static final String VERSION = "0.1.0";

  private static final Logger LOG = LoggerFactory.getLogger(BloomeryServer.class);

  private final ServerConfig config;
  private final ServerContext context;
  private final GuardSets guards;
  private final Dispatcher dispatcher;
  private final Transport transport;
  private final MetricsHttpServer http;
  private final Durability durability; // null when nothing is persisted
  private final ClusterNode cluster; // null unless cluster-enabled
  private final AtomicBoolean closed = new AtomicBoolean();
  private volatile Runnable afterShutdown = () -> {};

  private BloomeryServer(ServerConfig config, ServerContext context, GuardSets guards, Dispatcher dispatcher,
      Transport transport, MetricsHttpServer http, Durability durability, ClusterNode cluster) {
    this.config = config;
    this.cluster = cluster;
    this.context = context;
    this.guards = guards;
    this.dispatcher = dispatcher;
    this.transport = transport;
    this.http = http;
    this.durability = durability;
    context.shutdownRequested().thenAccept(snapshot ->
        Thread.ofPlatform().name("bloomery-shutdown-command").start(() -> {
          close(snapshot);
          afterShutdown.run();
        }));
  }

  /**
   * Starts a server in this process.
   *
   * <p>With {@code --appendonly yes} (the default), or a {@code save} setting, or a data directory that already
   * holds state, the keyspace is first recovered from {@code --dir} (snapshot, then journal replay) and every
   * mutating command is journaled from then on; see {@link Durability}. With {@code cluster-enabled yes} the keys
   * live in the node's shards instead, replicated by their Raft logs under {@code --dir} ({@link ClusterNode}), and
   * the local journal is not used.
   *
   * @throws IOException if a port cannot be bound, or the data directory is in use, unreadable or damaged (the
   *     message names the file and the offset)
   */
  public static BloomeryServer start(ServerConfig config) throws IOException {
    Settings settings = settings(config);
    Transport.Choice choice;
    try {
      choice = Transport.Kind.choose(config.ioTransport());
    } catch (IllegalArgumentException e) {
      throw new IOException(e.getMessage(), e);
    }
    Keyspace keyspace = new Keyspace(System::currentTimeMillis);
    boolean persistent = persistent(config);
    ServerContext.Builder contexts = ServerContext.builder(keyspace, settings)
        .aclFile(config.aclfile())
        .transport(choice.kind().label(), config.ioThreads())
        // a cluster node stages Bloomery files it leads the keys of in its own directory too, journaling nothing
        .fileLoads(persistent || config.clusterEnabled() ? config.dir().resolve("loads") : null,
            config.appendonly() && !config.clusterEnabled(), config.loadIdleTimeoutMillis());
    ServerContext recovering = contexts.build();
    Durability durability;
    try {
      durability = openDurability(config, keyspace, CommandFamilies.dispatcher(recovering));
      recovering.fileLoadsRecovered();
    } catch (IOException | RuntimeException e) {
      recovering.closeFileLoads();
      throw e;
    }
    GuardSets guards = new GuardSets(config.stores(System.getenv()), config.guardTimeoutMillis(),
        config.guardStatementTimeoutMillis(), config.guardBuildTimeoutMillis(),
        config.appendonly() ? config.dir() : null);
    ServerContext context = contexts
        .persistence(durability == null ? PersistenceControl.DISABLED : durability.control())
        .guards(guards)
        .build();
    if (durability != null) {
      durability.onCut(context::fileLoadsAtCut);
    }
    Dispatcher dispatcher = CommandFamilies.dispatcher(context, guards);
    keyspace.suspendExpiry(false);
    ClusterNode cluster = null;
    try {
      if (config.clusterEnabled()) { // the node's shard log declares its guarded keys: none are listed here
        settings.clusterEnabled(true);
        cluster = ClusterNode.start(config, context, guards);
        dispatcher.router(cluster);
        context.replica(cluster);
      }
      try {
        guards.reopenListed();
      } catch (RuntimeException e) {
        throw new IOException(e.getMessage(), e);
      }
      return listen(config, settings, keyspace, context, guards, dispatcher, choice, durability, cluster);
    } catch (IOException | RuntimeException e) {
      if (cluster != null) {
        cluster.close();
      }
      guards.close();
      if (durability != null) {
        durability.close(false); // it never served: the directory stays as recovery found it
      }
      context.closeFileLoads();
      throw e;
    }
  }

  /**
   * Recovers the keyspace from the data directory, replaying the journal through {@code replayer}, and journals into
   * it; {@code null} when nothing persists.
   */
  private static Durability openDurability(ServerConfig config, Keyspace keyspace, CommandReplayer replayer)
      throws IOException {
    if (!persistent(config)) {
      return null;
    }
    keyspace.suspendExpiry(true);
    Durability durability = Durability.open(config.dir(), config.appendonly(), FsyncPolicy.parse(config.appendfsync()),
        keyspace, replayer, keyspace::restore);
    keyspace.journal(durability.journal());
    return durability;
  }

  /** Whether the keyspace persists in the data directory: not on a cluster node, whose shards' logs hold the keys. */
  private static boolean persistent(ServerConfig config) {
    return !config.clusterEnabled()
        && (config.appendonly() || !config.save().isBlank() || Durability.holdsState(config.dir()));
  }

  private static BloomeryServer listen(ServerConfig config, Settings settings, Keyspace keyspace,
      ServerContext context, GuardSets guards, Dispatcher dispatcher, Transport.Choice choice, Durability durability,
      ClusterNode cluster) throws IOException {
    RespLimits limits = new RespLimits(config.protoMaxBulkLen(), RespLimits.DEFAULT.maxInlineBytes(),
        config.clientQueryBufferLimit(), RespLimits.DEFAULT.unauthenticatedMaxArguments(),
        RespLimits.DEFAULT.unauthenticatedMaxBulkBytes());
    LOG.info("transport {} with {} event loop(s): {}", choice.kind().label(), config.ioThreads(), choice.reason());
    Transport transport;
    try {
      transport = Transport.start(context, dispatcher, limits, config.bind(), config.port(),
          config.outputBufferSoftLimit(), config.outputBufferStallMillis(), choice.kind(), config.ioThreads());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted while binding", e);
    } catch (Transport.BindFailure e) {
      throw cannotListen("", e.host(), e.port(), e.getCause());
    }
    settings.port(transport.port());
    MetricsHttpServer http;
    try {
      http = MetricsHttpServer.start(context, guards, config.bind().get(0), config.httpPort(), config.httpLimits());
    } catch (IOException e) {
      transport.close();
      throw cannotListen(" for HTTP", config.bind().get(0), config.httpPort(), e);
    }
    if (durability != null) {
      durability.metrics().bindTo(http.registry());
    }
    scheduleCron(transport.workers().next(), keyspace, context);
    if (!config.bind().stream().allMatch(BloomeryServer::isLoopback) && context.acl().defaultUser().nopass()
        && settings.protectedMode()) {
      LOG.warn("listening on {} without a password: protected mode refuses clients that are not on loopback "
          + "(on the HTTP port, all but /health)", config.bind());
    }
    LOG.info("bloomery {} listening on {} port {} ({}), http port {}", VERSION, config.bind(), transport.port(),
        transport.name(), http.port());
    if (!io.netty.util.internal.PlatformDependent.hasUnsafe()) {
      LOG.info("Netty runs without sun.misc.Unsafe; start the JVM with --sun-misc-unsafe-memory-access=allow "
          + "(./bloomery does) for about a quarter less CPU per command");
    }
    return new BloomeryServer(config, context, guards, dispatcher, transport, http, durability, cluster);
  }

  /**
   * {@code cannot listen[what] on HOST:PORT: REASON} ({@code [HOST]:PORT} for IPv6), REASON being the operating
   * system's words without the name of the call Netty's native transports put before them
   * ({@code bind(..) failed with error(-98): }).
   */
  private static IOException cannotListen(String what, String host, int port, Throwable cause) {
    String address = (host.contains(":") ? "[" + host + "]" : host) + ":" + port;
    String reason = String.valueOf(cause.getMessage()).replaceFirst("^\\w+\\(\\.\\.\\) failed[^:]*: ", "");
    return new IOException("cannot listen" + what + " on " + address + ": " + reason, cause);
  }

  /**
   * Runs active expiry and the idle-load sweep {@code hz} times a second, reading {@code hz} before each wait so
   * that CONFIG SET hz applies from the next run; ends when the event loop shuts down.
   */
  private static void scheduleCron(java.util.concurrent.ScheduledExecutorService loop, Keyspace keyspace,
      ServerContext context) {
    long hz = Math.max(1, Math.min(500, context.settings().hz()));
    try {
      loop.schedule(() -> {
        try {
          int removed = keyspace.expireCycle(200);
          context.stats().expiredKeys.add(removed);
          context.sweepIdleFileLoads();
        } catch (RuntimeException e) {
          LOG.warn("active expiry failed", e);
        }
        scheduleCron(loop, keyspace, context);
      }, 1000 / hz, TimeUnit.MILLISECONDS);
    } catch (java.util.concurrent.RejectedExecutionException shuttingDown) {
      // the event loop is closing with the server: no further run
    }
  }

  private static boolean isLoopback(String host) {
    return host.equals("127.0.0.1") || host.equals("::1") || host.equals("localhost") || host.startsWith("127.");
  }

  private static Settings settings(ServerConfig config) {
    Settings s = new Settings();
    s.port(config.port());
    s.bind(String.join(" ", config.bind()));
    s.dir(config.dir().toString());
    s.journal(config.appendonly(), config.appendfsync());
    s.requirepass(config.requirepass());
    s.maxmemory(config.maxmemory());
    s.maxclients(config.maxclients());
    s.timeoutSeconds(config.timeoutSeconds());
    s.protectedMode(config.protectedMode());
    s.outputBuffer(config.outputBufferLimit(), config.outputBufferSoftLimit(), config.outputBufferStallMillis() / 1000);
    s.save(config.save());
    s.httpAuth(config.httpAuth());
    s.queryMemory(config.clientQueryBufferLimit(), config.maxmemoryClients());
    s.authFailDelayMillis(config.authFailDelayMillis());
    config.moduleOptions(s);
    s.loglevel(config.loglevel());
    s.configFile(config.file() == null ? null : config.file().toAbsolutePath());
    return s;
  }

  /** The RESP port actually bound. */
  public int port() {
    return transport.port();
  }

  /** The HTTP port actually bound. */
  public int httpPort() {
    return http.port();
  }

  public ServerConfig config() {
    return config;
  }

  /** Commands, keyspace, settings and stats: for the persistence layer and tests in this module. */
  public ServerContext context() {
    return context;
  }

  /** The command layer that serves clients. */
  public Dispatcher dispatcher() {
    return dispatcher;
  }

  /**
   * Stops accepting clients, flushes the journal and writes a final snapshot when persistence is on, releases the
   * data directory, and stops. Idempotent.
   */
  @Override
  public void close() {
    close(true);
  }

  /** Whether {@link #close} has run (or is running). */
  public boolean closed() {
    return closed.get();
  }

  /**
   * Runs {@code then} after a {@code SHUTDOWN} command has closed the server ({@code bloomery serve} exits 0 there).
   */
  public void afterShutdown(Runnable then) {
    this.afterShutdown = then;
  }

  /** {@link #close()}, with the final snapshot only if {@code snapshot} (SHUTDOWN NOSAVE passes false). */
  public void close(boolean snapshot) {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    LOG.info("shutting down");
    transport.close();
    http.close();
    if (cluster != null) {
      cluster.close();
    }
    guards.close();
    // before the final snapshot: a load still being finished is cancelled (no half key), its files deleted
    context.closeFileLoads();
    if (durability != null) {
      try {
        durability.close(snapshot);
      } catch (IOException | RuntimeException e) {
        LOG.error("final snapshot failed (the journal still holds every write)", e);
      }
    }
    LOG.info("bye");
  }
}
