package io.bloomery.server.command;

import io.bloomery.server.command.guard.GuardSets;
import io.bloomery.server.keyspace.Keyspace;
import io.bloomery.server.persistence.PersistenceControl;
import io.bloomery.server.resp.QueryMemory;
import java.io.IOException;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.Collection;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/** Everything commands reach beyond their own connection: keyspace, settings, clients, stats, persistence. */
public final class ServerContext {
  private final Keyspace keyspace;
  private final Settings settings;
  private final ServerStats stats = new ServerStats();
  private final ConcurrentHashMap<Long, ClientState> clients = new ConcurrentHashMap<>();
  private final AtomicLong nextClientId = new AtomicLong();
  private final long startMillis;
  private final String runId;
  private volatile PersistenceControl persistence = PersistenceControl.DISABLED;
  private volatile GuardSets guards = GuardSets.none();
  private volatile Consumer<Boolean> shutdown = snapshot -> {};
  private volatile int tcpPort;
  private volatile String transport = "nio";
  private volatile int ioThreads = 1;
  private final FileLoads fileLoads;
  private final QueryMemory queryMemory;

  public ServerContext(Keyspace keyspace, Settings settings) {
    this.keyspace = keyspace;
    this.settings = settings;
    this.queryMemory = new QueryMemory(settings.maxmemoryClients);
    this.startMillis = System.currentTimeMillis();
    this.fileLoads = new FileLoads(System::currentTimeMillis);
    StringBuilder id = new StringBuilder();
    SecureRandom random = new SecureRandom();
    for (int i = 0; i < 40; i++) {
      id.append(Character.forDigit(random.nextInt(16), 16));
    }
    this.runId = id.toString();
  }

  /** The Bloomery-file loads under way through BF.LOADCHUNK. */
  FileLoads fileLoads() {
    return fileLoads;
  }

  /**
   * Where BF.LOADCHUNK stages Bloomery files ({@code null}: a temporary directory), whether the journal keeps a
   * finished load by naming its file, and how long an unfinished load may wait for its next chunk. Before recovery.
   */
  public void configureFileLoads(Path dir, boolean journaled, long idleTimeoutMillis)
      throws IOException {
    fileLoads.configure(dir, journaled, idleTimeoutMillis);
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
   * The bytes counted against {@code maxmemory} and shown as INFO's {@code used_memory}: the keyspace's filters and
   * the guarded keys' filters.
   */
  public long usedMemory() {
    return keyspace.usedBytes() + guards.usedBytes();
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

  public void persistence(PersistenceControl control) {
    this.persistence = control;
  }

  /** The guarded sets (GUARD.*) and the stores the operator declared. */
  public GuardSets guards() {
    return guards;
  }

  public void guards(GuardSets value) {
    this.guards = value;
  }

  /**
   * Stops the server from another thread ({@code SHUTDOWN}): closes it, with a final snapshot if {@code snapshot},
   * then, under {@code bloomery serve}, exits 0. Returns at once.
   */
  public void shutdown(boolean snapshot) {
    shutdown.accept(snapshot);
  }

  /** What {@link #shutdown} runs (the server installs it). */
  public void onShutdown(Consumer<Boolean> value) {
    this.shutdown = value;
  }

  public long startMillis() {
    return startMillis;
  }

  public String runId() {
    return runId;
  }

  public int tcpPort() {
    return tcpPort;
  }

  public void tcpPort(int port) {
    this.tcpPort = port;
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

  public void transport(String name, int ioThreads) {
    this.transport = name;
    this.ioThreads = ioThreads;
  }

  /** Registers a new connection and returns its state (ids start at 1, as Redis's). */
  public ClientState connect(String address, String localAddress) {
    ClientState c = new ClientState(nextClientId.incrementAndGet(), address, localAddress, System.currentTimeMillis(),
        !settings.passwordRequired());
    clients.put(c.id(), c);
    stats.connectionsReceived.increment();
    return c;
  }

  public void disconnect(ClientState client) {
    clients.remove(client.id());
    fileLoads.clientGone(client.id());
  }

  public Collection<ClientState> clients() {
    return clients.values();
  }

  public int clientCount() {
    return clients.size();
  }
}
