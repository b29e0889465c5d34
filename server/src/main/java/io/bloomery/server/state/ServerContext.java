package io.bloomery.server.state;

import io.bloomery.server.keyspace.Keyspace;
import io.bloomery.server.persistence.PersistenceControl;
import io.bloomery.server.persistence.load.FileLoads;
import io.bloomery.server.resp.QueryMemory;
import io.bloomery.server.state.acl.Acl;
import java.io.IOException;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.Collection;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Everything commands reach beyond their own connection: keyspace, settings, clients, stats, persistence, the
 * guarded sets. Made complete by a {@link Builder} and never rewired: the server builds one context to replay the
 * journal into and, once recovery has produced the persistence layer, the one that serves clients. The one thing
 * set later is the {@link ReplicaView} of a cluster node started on it ({@link #replica}), which decides what
 * {@link #servedKeyspace()} describes.
 */
public final class ServerContext {
  private final Keyspace keyspace;
  private final Settings settings;
  private final ServerStats stats;
  private final ConcurrentHashMap<Long, ClientState> clients = new ConcurrentHashMap<>();
  private final AtomicLong nextClientId = new AtomicLong();
  private final long startMillis;
  private final String runId;
  private final PersistenceControl persistence;
  private final GuardedKeys guards;
  private final CompletableFuture<Boolean> shutdown = new CompletableFuture<>();
  private final String transport;
  private final int ioThreads;
  private final FileLoads fileLoads;
  private final QueryMemory queryMemory;
  private final Acl acl;
  private final Monitors monitors = new Monitors();
  private volatile ReplicaView replica;

  /**
   * A context with no persistence, no guarded sets, and BF.LOADCHUNK staging in a temporary directory: what the
   * command layer needs in tests and tools that run commands without a server.
   */
  public ServerContext(Keyspace keyspace, Settings settings) {
    this(builder(keyspace, settings));
  }

  private ServerContext(Builder b) {
    this.keyspace = b.keyspace;
    this.settings = b.settings;
    this.stats = b.stats;
    this.startMillis = b.startMillis;
    this.runId = b.runId;
    this.fileLoads = b.fileLoads;
    this.queryMemory = b.queryMemory;
    this.persistence = b.persistence;
    this.guards = b.guards;
    this.transport = b.transport;
    this.ioThreads = b.ioThreads;
    this.acl = b.acl;
  }

  /** Starts a context over {@code keyspace} and {@code settings}; see {@link Builder}. */
  public static Builder builder(Keyspace keyspace, Settings settings) {
    return new Builder(keyspace, settings);
  }

  /**
   * Makes contexts. Every context one builder makes shares its keyspace, settings, statistics, run id, start time,
   * query-memory count and BF.LOADCHUNK loads, so the context recovery replays the journal into and the one that
   * then serves clients see the same state; each context is complete as built and does not change.
   */
  public static final class Builder {
    private final Keyspace keyspace;
    private final Settings settings;
    private final ServerStats stats = new ServerStats();
    private final long startMillis = System.currentTimeMillis();
    private final String runId = newRunId();
    private final FileLoads fileLoads = new FileLoads(System::currentTimeMillis);
    private final QueryMemory queryMemory;
    private PersistenceControl persistence = PersistenceControl.DISABLED;
    private GuardedKeys guards = GuardedKeys.NONE;
    private String transport = "nio";
    private int ioThreads = 1;
    private Acl acl;

    private Builder(Keyspace keyspace, Settings settings) {
      this.keyspace = keyspace;
      this.settings = settings;
      this.queryMemory = new QueryMemory(settings.maxmemoryClients());
      this.acl = new Acl(null);
      acl.requirepass(settings.requirepass());
    }

    /**
     * The ACL file ({@code --aclfile}) whose users the server loads when its command table is complete, and which
     * ACL LOAD and ACL SAVE read and write; none unless given. Before the first {@link #build}.
     */
    public Builder aclFile(Path file) {
      this.acl = new Acl(file);
      acl.requirepass(settings.requirepass());
      return this;
    }

    /**
     * Where BF.LOADCHUNK stages Bloomery files ({@code null}: a temporary directory), whether the journal keeps a
     * finished load by naming its file, and how long an unfinished load may wait for its next chunk. Before the first
     * {@link #build}.
     */
    public Builder fileLoads(Path dir, boolean journaled, long idleTimeoutMillis) {
      fileLoads.configure(dir, journaled, idleTimeoutMillis);
      return this;
    }

    /** SAVE, BGSAVE, BGREWRITEAOF, LASTSAVE and INFO persistence; {@link PersistenceControl#DISABLED} unless given. */
    public Builder persistence(PersistenceControl value) {
      this.persistence = Objects.requireNonNull(value, "persistence");
      return this;
    }

    /** The guarded keys (GUARD.*); {@link GuardedKeys#NONE} unless given. */
    public Builder guards(GuardedKeys value) {
      this.guards = Objects.requireNonNull(value, "guards");
      return this;
    }

    /** The transport's name and its event loops ({@code io-threads}), for INFO; {@code nio} and 1 unless given. */
    public Builder transport(String name, int ioThreads) {
      this.transport = Objects.requireNonNull(name, "name");
      this.ioThreads = ioThreads;
      return this;
    }

    /** A context with what this builder holds now. */
    public ServerContext build() {
      return new ServerContext(this);
    }

    private static String newRunId() {
      StringBuilder id = new StringBuilder();
      SecureRandom random = new SecureRandom();
      for (int i = 0; i < 40; i++) {
        id.append(Character.forDigit(random.nextInt(16), 16));
      }
      return id.toString();
    }
  }

  /** The Bloomery-file loads under way through BF.LOADCHUNK. */
  public FileLoads fileLoads() {
    return fileLoads;
  }

  /** After recovery: deletes staging files of unfinished loads and loaded files the journal no longer names. */
  public void fileLoadsRecovered() throws IOException {
    fileLoads.afterRecovery();
  }

  /** At a snapshot's cut: what to run once the snapshot is published (deletes the loaded files it covers). */
  public Runnable fileLoadsAtCut() {
    return fileLoads.atCut();
  }

  /** Abandons the unfinished file loads idle for longer than the timeout; returns how many. */
  public int sweepIdleFileLoads() {
    return fileLoads.sweepIdle();
  }

  /** Abandons every unfinished file load (server shutdown). */
  public void closeFileLoads() {
    fileLoads.close();
  }

  public Keyspace keyspace() {
    return keyspace;
  }

  /**
   * The keyspace whose keys this server serves, as INFO, {@code /metrics}, {@code /health} and the dashboard
   * describe it: {@link #keyspace()}, or on a cluster node its shard replica's (none, so an empty one, before it
   * joins or after it left).
   */
  public Keyspace servedKeyspace() {
    ReplicaView view = replica;
    if (view == null) {
      return keyspace;
    }
    Keyspace held = view.replicaKeyspace();
    return held != null ? held : keyspace;
  }

  /** The cluster node started on this context, once ({@code null} on a single node). */
  public void replica(ReplicaView view) {
    if (replica != null) {
      throw new IllegalStateException("a cluster node is already started on this context");
    }
    replica = view;
  }

  /** The cluster node's replica ({@code null} on a single node). */
  public ReplicaView replica() {
    return replica;
  }

  /**
   * The bytes counted against {@code maxmemory} and shown as INFO's {@code used_memory}: the served keyspace's
   * filters and the guarded keys' filters.
   */
  public long usedMemory() {
    return servedKeyspace().usedBytes() + guards.usedBytes();
  }

  public Settings settings() {
    return settings;
  }

  public ServerStats stats() {
    return stats;
  }

  public PersistenceControl persistence() {
    return persistence;
  }

  /** The guarded keys (GUARD.*), as the rest of the server sees them. */
  public GuardedKeys guards() {
    return guards;
  }

  /**
   * Asks the server to stop ({@code SHUTDOWN}) and returns at once: the server, which follows
   * {@link #shutdownRequested()}, closes from another thread, with a final snapshot if {@code snapshot}, then, under
   * {@code bloomery serve}, exits 0. The first request decides.
   */
  public void shutdown(boolean snapshot) {
    shutdown.complete(snapshot);
  }

  /** Completes with the first {@link #shutdown} request's {@code snapshot}; the server closes itself on it. */
  public CompletionStage<Boolean> shutdownRequested() {
    return shutdown;
  }

  public long startMillis() {
    return startMillis;
  }

  public String runId() {
    return runId;
  }

  /** The RESP port: the settings' {@code port}, which the server sets to the one it bound. */
  public int tcpPort() {
    return (int) settings.port();
  }

  public String transport() {
    return transport;
  }

  /** The heap commands still being read hold across all connections, against {@code maxmemory-clients}. */
  public QueryMemory queryMemory() {
    return queryMemory;
  }

  /** Event loops serving clients ({@code io-threads}), for INFO. */
  public int ioThreads() {
    return ioThreads;
  }

  /** Registers a new connection and returns its state (ids start at 1, as Redis's). */
  /** The ACL users and log. */
  public Acl acl() {
    return acl;
  }

  /** The connections in MONITOR mode. */
  public Monitors monitors() {
    return monitors;
  }

  public ClientState connect(String address, String localAddress) {
    ClientState c = new ClientState(nextClientId.incrementAndGet(), address, localAddress, System.currentTimeMillis(),
        acl.defaultUser().openWithoutPassword());
    c.user(acl.defaultUser());
    clients.put(c.id(), c);
    stats.connectionsReceived.increment();
    return c;
  }

  public void disconnect(ClientState client) {
    clients.remove(client.id());
    monitors.remove(client);
    client.unwatchAll();
    fileLoads.clientGone(client.id());
  }

  public Collection<ClientState> clients() {
    return clients.values();
  }

  public int clientCount() {
    return clients.size();
  }
}
