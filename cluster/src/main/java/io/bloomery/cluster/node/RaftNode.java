package io.bloomery.cluster.node;

import io.bloomery.cluster.shard.ShardClient;
import io.bloomery.cluster.shard.ShardReplica;
import io.bloomery.cluster.shard.ShardStateMachine;
import io.bloomery.cluster.slot.HashSlot;
import io.bloomery.server.ClusterNode;
import io.bloomery.server.ServerConfig;
import io.bloomery.server.command.CommandSpec;
import io.bloomery.server.command.Dispatcher;
import io.bloomery.server.command.guard.GuardSets;
import io.bloomery.server.keyspace.Key;
import io.bloomery.server.keyspace.Keyspace;
import io.bloomery.server.resp.Reply;
import io.bloomery.server.state.ClientState;
import io.bloomery.server.state.ServerContext;
import io.bloomery.server.state.Settings;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.proto.RaftProtos;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.RaftClientAsynchronousProtocol;
import org.apache.ratis.protocol.GroupInfoReply;
import org.apache.ratis.protocol.GroupManagementRequest;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.protocol.SetConfigurationRequest;
import org.apache.ratis.protocol.SnapshotManagementRequest;
import org.apache.ratis.protocol.exceptions.SetConfigurationException;
import org.apache.ratis.retry.RetryPolicies;
import org.apache.ratis.server.DivisionInfo;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.statemachine.StateMachine;
import org.apache.ratis.util.LifeCycle;
import org.apache.ratis.util.TimeDuration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/*
 * Where a command runs on a cluster node.
 *
 * One Ratis server per node, on the cluster bus port, hosts the node's Raft groups: the metadata group (every node)
 * and the group of the shard the node replicates. Groups are added once, when `bloomery cluster create` sends the
 * topology (CLUSTER JOIN-TOPOLOGY), and found again in the storage directory on every later start.
 *
 * A keyed command is routed by its keys' slot: to the shard that serves the slot; the shard's Raft leader runs it
 * (a write through the log, a read after Ratis confirmed the leadership), anyone else answers MOVED with the
 * leader's announced address. A node knows its own shard's leader from its own Raft division; other shards' leaders
 * from the metadata group, where each leader announces itself (leaderAnnouncer). Nothing here decides anything of
 * consensus: who leads, what committed and in what order is Ratis's.
 */

/**
 * A Bloomery cluster node ({@code bloomery serve --cluster-enabled yes}): its identity, its Ratis server, and the
 * routing of every client command ({@link ClusterNode}).
 */
public final class RaftNode implements ClusterNode {
  private static final Logger LOG = LoggerFactory.getLogger(RaftNode.class);
  /** The metadata group's id: the same on every node of every cluster (a node is in one cluster). */
  static final RaftGroupId META = RaftGroupId.valueOf(
      UUID.nameUUIDFromBytes("bloomery-cluster-metadata".getBytes(StandardCharsets.UTF_8)));
  /** How long a command waits for its shard to have a leader before the client is told the cluster is down. */
  static final Duration LEADER_WAIT = Duration.ofSeconds(5);
  /** How long a command of a slot whose keys just left waits for the topology to record it before {@code ASK}. */
  static final Duration GONE_HOLD = Duration.ofSeconds(1);
  /** How long CLUSTER TOPOLOGY asks the metadata group again while it has no leader (its leader was just lost). */
  private static final Duration TOPOLOGY_WAIT = Duration.ofSeconds(20);
  private static final long POLL_MILLIS = 50;
  /** How often a node checks whether it still hears from the metadata group's leader ({@link #confirmIfCutOff}). */
  private static final Duration CUT_OFF_CHECK = Duration.ofSeconds(5);
  /** How long CLUSTER FAILOVER waits for the leader to bring this replica up to date and hand over. */
  private static final long FAILOVER_MILLIS = 10_000;
  /** How long Ratis may take to write a group's snapshot for {@code SAVE}: a shard's filters can be gigabytes. */
  private static final Duration SNAPSHOT_WAIT = Duration.ofMinutes(10);

  private final NodeIdentity me;
  private final ClusterGuards guarded;
  private final RaftServer raft;
  private final MetaStateMachine meta;
  private final Map<RaftGroupId, ShardStateMachine> shards;
  private final ClientId clientId = ClientId.randomId();
  private final AtomicLong callIds = new AtomicLong();
  private final ScheduledExecutorService timer;
  private final ExecutorService admin;
  /** Reads the committed topology to confirm this node's membership: blocking reads, off the admin thread. */
  private final ExecutorService membership;
  private final Set<String> announcing = ConcurrentHashMap.newKeySet();
  private final Map<String, RaftGroupId> groupIds = new ConcurrentHashMap<>();
  private final Map<RaftGroupId, Proposals> proposals = new ConcurrentHashMap<>();
  private final ClusterReplies replies;
  private final ClusterFileLoads files;
  /** The shortest Raft election timeout of this node's groups ({@code cluster-node-timeout}). */
  private final Duration electionTimeout;
  private volatile RaftClient metaClient;
  /** The metadata group's members {@link #metaClient} was made for. */
  private java.util.Collection<RaftPeer> metaClientPeers;
  /** Whether this node left its cluster ({@link #leave}) since it started. */
  private volatile boolean left;

  private RaftNode(NodeIdentity me, RaftServer raft, MetaStateMachine meta,
      Map<RaftGroupId, ShardStateMachine> shards, ClusterGuards guarded, ClusterFileLoads files,
      Duration electionTimeout) {
    this.guarded = guarded;
    this.electionTimeout = electionTimeout;
    this.files = files;
    this.me = me;
    this.raft = raft;
    this.meta = meta;
    this.shards = shards;
    this.timer = Executors.newSingleThreadScheduledExecutor(Thread.ofPlatform().daemon().name("cluster-timer")
        .factory());
    this.admin = Executors.newSingleThreadExecutor(Thread.ofPlatform().daemon().name("cluster-admin").factory());
    this.membership = Executors.newSingleThreadExecutor(Thread.ofPlatform().daemon().name("cluster-membership")
        .factory());
    this.replies = new ClusterReplies(this);
    timer.scheduleWithFixedDelay(this::announceLeaders, 100, 100, TimeUnit.MILLISECONDS);
    timer.execute(() -> confirmMembership(0));
    timer.scheduleWithFixedDelay(this::confirmIfCutOff, CUT_OFF_CHECK.toSeconds(), CUT_OFF_CHECK.toSeconds(),
        TimeUnit.SECONDS);
  }

  /**
   * A node removed while it was up but did not get {@code CLUSTER LEAVE} (unreachable then: paused, partitioned)
   * hears from no metadata leader any more, since the group no longer counts it: checked every so often, such a node
   * asks the other members whether it is still listed ({@link #confirmMembership}), and leaves if it is not, instead
   * of serving from the topology it last knew until it is restarted.
   */
  private void confirmIfCutOff() {
    if (left || topology() == null) {
      return;
    }
    boolean cutOff;
    try {
      DivisionInfo info = raft.getDivision(META).getInfo();
      cutOff = !info.isLeader() && (!info.isFollower() || info.getRoleInfoProto().getFollowerInfo().getLeaderInfo()
          .getLastRpcElapsedTimeMs() > CUT_OFF_CHECK.toMillis());
    } catch (IOException | RuntimeException e) {
      cutOff = true; // the group's replica here was closed (its leader shut it out)
    }
    if (cutOff || shardReplicaClosed(topology())) {
      confirmMembership(-1);
    }
  }

  /** Whether Ratis shut down this node's replica of its shard in {@code t} (the node still runs). */
  private boolean shardReplicaClosed(Topology t) {
    Topology.Shard mine = t == null ? null : t.shardOfNode(me.id());
    if (mine == null) {
      return false;
    }
    try {
      LifeCycle.State state = raft.getDivision(t.group(mine).raftGroup().getGroupId()).getInfo().getLifeCycleState();
      return state == LifeCycle.State.CLOSED || state == LifeCycle.State.EXCEPTION;
    } catch (IOException | RuntimeException e) {
      return false; // not hosted here (yet): the node is joining, or left
    }
  }

  /**
   * Starts this node's replica of its shard again, from its directory, when Ratis shut it down while the committed
   * topology still lists the node in that shard. Ratis shuts a replica down for good when it stands for election
   * outside the configuration its log holds ({@code NOT_IN_CONF}), or when a leader answers its vote request with
   * "shut down": both meant for a removed member. A member just added can meet either: Ratis lets it stand for
   * election once it is within the catch-up gap of the leader's log, before its log holds the configuration that
   * adds it, and if the leader dies in that moment it shuts itself down. Every later change of its shard then waits
   * on a member that answers nothing (MembershipChaosIT met it on a loaded machine). Starting it again reads its term,
   * vote, log and snapshot from disk, as a restart of the process does, so Raft's guarantees hold; a replica whose
   * log's configuration still leaves it out then waits for the leader without standing for election.
   */
  private void reopenClosedShardReplica(Topology committed) {
    Topology.Shard mine = committed.shardOfNode(me.id());
    if (mine == null || !shardReplicaClosed(committed)) {
      return;
    }
    RaftGroupId id = committed.group(mine).raftGroup().getGroupId();
    synchronized (this) {
      if (left) {
        return;
      }
      LOG.warn("Ratis shut down this node's replica of shard {} though the cluster lists the node as its member; "
          + "starting it again from its directory", mine.name());
      try {
        RaftClientReply removed = raft.groupManagement(GroupManagementRequest.newRemove(clientId, raft.getId(),
            callIds.incrementAndGet(), id, false, false));
        if (!removed.isSuccess()) {
          throw removed.getException() != null ? removed.getException() : new IOException(removed.toString());
        }
        shards.remove(id);
        proposals.remove(id);
        addGroup(RaftGroup.valueOf(id), false); // no members given: as at a start, from its own log and snapshot
        LOG.info("replica of shard {} started again", mine.name());
      } catch (IOException | RuntimeException e) {
        LOG.warn("starting the replica of shard {} again failed", mine.name(), e);
      }
    }
  }

  /**
   * After a start: a node removed ({@code bloomery cluster del-node}) while it was down finds in its own logs the
   * topology that still lists it, and would serve from it (writes waiting on groups that no longer count it). It asks
   * the metadata group, through the other members its own topology names, for the committed topology; if that no longer
   * lists it, it leaves as {@code CLUSTER LEAVE} does. A node its own topology does not list yet (joining, add-node
   * under way) has nothing to confirm. Asked again every 2 s, every 30 s after a minute, until the group answers;
   * {@code attempt} -1 asks once.
   */
  private void confirmMembership(int attempt) {
    if (left) {
      return;
    }
    Topology own = topology();
    if (own == null || own.node(me.id()) == null) {
      if (own == null && joined() && attempt >= 0 && attempt < 30) { // the metadata replica may not have replayed its log yet
        timer.schedule(() -> confirmMembership(attempt + 1), 2, TimeUnit.SECONDS);
      }
      return;
    }
    // the other members only: this node's own replica knows nothing newer, and once the group's leader shut it out
    // (it stood for election outside the configuration) it refuses every request at once
    List<RaftPeer> others = new ArrayList<>(metaPeers(own));
    others.removeIf(p -> p.getId().toString().equals(me.id()));
    if (others.isEmpty()) {
      return;
    }
    membership.execute(() -> {
      Topology committed;
      try {
        committed = committedTopologyThrough(others, new IOException("no member answered"));
      } catch (IOException e) {
        if (attempt % 10 == 0) {
          LOG.info("cannot read the committed topology yet to confirm this node's membership: {}", e.toString());
        }
        if (attempt >= 0) {
          timer.schedule(() -> confirmMembership(attempt + 1), attempt < 30 ? 2 : 30, TimeUnit.SECONDS);
        }
        return;
      }
      if (committed != null && committed.cluster().equals(own.cluster()) && committed.node(me.id()) == null) {
        LOG.warn("cluster {} no longer lists this node ({}): it was removed while it was down; leaving it",
            own.cluster(), me.id());
        synchronized (this) {
          try {
            if (!left) {
              dropGroups(own);
            }
          } catch (IOException | RuntimeException e) {
            LOG.warn("leaving the cluster that removed this node failed", e);
          }
        }
      } else if (committed != null && committed.cluster().equals(own.cluster())) {
        reopenClosedShardReplica(committed);
      }
    });
  }

  /** {@link ClusterNode.Provider} for the server's service lookup. */
  public static final class Provider implements ClusterNode.Provider {
    @Override
    public ClusterNode start(ServerConfig config, ServerContext context, GuardSets guards) throws IOException {
      return RaftNode.start(config, context.settings(), guards, new ClusterFileLoads(context.fileLoads()));
    }
  }

  /**
   * Starts the node of {@code config}: its identity ({@link NodeIdentity}, made on the first start), then its Ratis
   * server on the cluster bus port with the groups its directory holds.
   *
   * @param settings the server's settings: the module defaults a leader stamps on the commands it accepts
   * @param guards the server's guarded keys, which from here on follow the declarations of the node's shard logs
   * @param files the server's staging of Bloomery files, for the keys of the shard this node leads
   * @throws IOException if the identity does not match the options, the bus port cannot be bound, or the logs are
   *     damaged
   */
  static RaftNode start(ServerConfig config, Settings settings, GuardSets guards, ClusterFileLoads files)
      throws IOException {
    String bind = config.bind().get(0);
    String host = config.clusterAnnounceIp();
    if (host == null) {
      if (bind.equals("0.0.0.0") || bind.equals("::") || bind.equals("*")) {
        throw new IOException("a cluster node bound to " + bind + " needs --cluster-announce-ip: the address clients "
            + "and the other nodes use to reach it");
      }
      host = bind;
    }
    Path dir = config.dir();
    NodeIdentity me = NodeIdentity.open(dir, host, config.clusterAnnouncePort(), host, config.clusterPort());
    Duration electionTimeout = Duration.ofMillis(config.clusterNodeTimeoutMillis());
    RaftProperties properties = ShardReplica.properties(dir.resolve("raft"), bind, config.clusterPort(),
        electionTimeout, ShardReplica.Options.DEFAULT_SNAPSHOT_EVERY,
        ShardReplica.Options.DEFAULT_LOG_SEGMENT_BYTES);
    MetaStateMachine meta = new MetaStateMachine();
    Map<RaftGroupId, ShardStateMachine> shards = new ConcurrentHashMap<>();
    ClusterGuards guarded = new ClusterGuards(guards, me.id());
    StateMachine.Registry registry = group -> group.equals(META) ? meta
        : shards.computeIfAbsent(group, g -> new ShardStateMachine(settings, guarded.of(g)));
    RaftServer raft = RaftServer.newBuilder().setServerId(RaftPeerId.valueOf(me.id()))
        .setStateMachineRegistry(registry).setProperties(properties)
        .setOption(RaftStorage.StartupOption.RECOVER).build();
    try {
      raft.start();
    } catch (IOException | RuntimeException e) {
      raft.close();
      throw new IOException("cannot start the cluster bus on " + bind + ":" + config.clusterPort() + ": "
          + e.getMessage(), e);
    }
    LOG.info("cluster node {} ({}:{}, bus {}:{})", me.id(), me.host(), me.port(), me.busHost(), me.busPort());
    RaftNode node = new RaftNode(me, raft, meta, shards, guarded, files, electionTimeout);
    guarded.node(node);
    return node;
  }

  NodeIdentity me() {
    return me;
  }

  /** The topology, or {@code null} before the cluster is created. */
  Topology topology() {
    return meta.topology();
  }

  /** Whether this node joined a cluster (it holds the metadata group). */
  boolean joined() {
    for (RaftGroupId g : raft.getGroupIds()) {
      if (g.equals(META)) {
        return true;
      }
    }
    return false;
  }

  // ------------------------------------------------------------------------------------------------ routing

  /**
   * A keyed write: it either queues for its shard's log here ({@link Proposals}, in the order it arrived), or is
   * answered with a redirection or an error, so a client's later writes may run before its earlier ones are
   * answered.
   */
  @Override
  public boolean pipelines(CommandSpec spec, List<byte[]> argv) {
    return ShardStateMachine.replicates(spec) && !files.handles(argv) && !Dispatcher.keysOf(spec, argv).isEmpty();
  }

  @Override
  public CompletionStage<Reply> route(ClientState client, CommandSpec spec, List<byte[]> argv) {
    String name = spec != null ? spec.name() : new String(argv.get(0), StandardCharsets.UTF_8).toLowerCase(Locale.ROOT);
    boolean asking = !name.equals("asking") && client.takeAsking();
    switch (name) {
      case "cluster" -> {
        return replies.cluster(client, argv);
      }
      case "readonly" -> {
        client.replicaReads(true);
        return done(Reply.OK);
      }
      case "readwrite" -> {
        client.replicaReads(false);
        return done(Reply.OK);
      }
      case "watch" -> {
        return watch(client, argv, System.nanoTime() + LEADER_WAIT.toNanos());
      }
      case "save", "bgsave" -> {
        return snapshot(name.equals("save"));
      }
      case "asking" -> {
        if (argv.size() != 1) {
          return done(Reply.error("ERR wrong number of arguments for 'asking' command"));
        }
        client.asking();
        return done(Reply.OK);
      }
      default -> { }
    }
    if (spec == null) {
      return null;
    }
    if ("guard".equals(spec.group())) {
      return guard(client, spec, argv);
    }
    if (files.handles(argv)) {
      return fileChunk(client, argv, asking, System.nanoTime() + LEADER_WAIT.toNanos());
    }
    boolean write = ShardStateMachine.replicates(spec);
    boolean read = ShardStateMachine.reads(spec);
    List<Key> keys = Dispatcher.keysOf(spec, argv);
    Topology topology = meta.topology();
    if (keys.isEmpty()) {
      return keyless(client, argv, topology, write, read);
    }
    int slot = HashSlot.of(keys.get(0).bytes());
    for (int i = 1; i < keys.size(); i++) {
      if (HashSlot.of(keys.get(i).bytes()) != slot) {
        return done(Reply.error("CROSSSLOT Keys in request don't hash to the same slot"));
      }
    }
    if (topology == null) {
      return done(Reply.error("CLUSTERDOWN Hash slot not served"));
    }
    if (!write && !read) {
      return done(Reply.error("ERR " + name.toUpperCase(Locale.ROOT) + " is not available on a cluster node"));
    }
    return keyed(client, argv, slot, write, asking, System.nanoTime() + LEADER_WAIT.toNanos());
  }

  /**
   * The shard a command of {@code slot} runs on: the one that serves it, or, after ASKING, the one it is being moved
   * to.
   */
  private static Topology.Shard shardFor(Topology topology, int slot, boolean asked) {
    Topology.Migration m = topology.migration();
    return asked && m != null && m.covers(slot) ? topology.shard(m.to()) : topology.shardOf(slot);
  }

  /**
   * A keyless command: a write goes through this node's shard's log when this node leads it (FLUSHALL), a read
   * answers from this node's replica (DBSIZE, SCAN: this node's keys, as on a Redis Cluster node); anything else
   * (PING, INFO, CONFIG, CLIENT, ...) runs locally.
   */
  private CompletionStage<Reply> keyless(ClientState client, List<byte[]> argv, Topology topology, boolean write,
      boolean read) {
    if (!write && !read) {
      return null;
    }
    Topology.Shard mine = topology == null ? null : topology.shardOfNode(me.id());
    if (mine == null) {
      return write ? done(Reply.error("CLUSTERDOWN The cluster is down")) : null;
    }
    RaftServer.Division division = division(mine);
    if (write) {
      if (division == null || !division.getInfo().isLeader()) {
        return done(Reply.error("READONLY You can't write against a read only replica."));
      }
      return propose(division, argv, mine, System.nanoTime() + LEADER_WAIT.toNanos(),
          () -> done(Reply.error("READONLY You can't write against a read only replica.")));
    }
    return localRead(mine, argv);
  }

  /**
   * {@code EXEC}: a transaction's commands go to their shard's log together, as one entry with nothing between them
   * (reads included, so that they see the transaction's earlier writes), and the reply is the array of theirs. As in
   * Redis Cluster, every key of a transaction must hash to one slot, which this node's shard must lead (else
   * {@code MOVED}); a command that is not a keyed data command, or one refused for memory, discards it.
   */
  /** What a WATCH on a cluster node watched: the shard replica's keys, while this node led it in {@code term}. */
  private record WatchContext(RaftGroupId group, long term) {}

  /** A watch that cannot hold: its keys were watched under different leaders (a leader change between WATCHes). */
  private static final Object BROKEN_WATCH = new Object();

  /**
   * {@code WATCH} on a cluster node: the keys (one slot, as in Redis Cluster) are watched in the replica of the shard
   * this node leads, under its current term; {@code MOVED} elsewhere. {@code EXEC} then runs the transaction only if
   * this node still leads in that term and no watched key changed by the time every entry before the transaction's
   * has been applied here ({@link Proposals}).
   */
  private CompletionStage<Reply> watch(ClientState client, List<byte[]> argv, long deadline) {
    if (client.inTransaction()) {
      return done(Reply.error(io.bloomery.server.command.Errors.WATCH_IN_MULTI));
    }
    int slot = -1;
    for (int i = 1; i < argv.size(); i++) {
      int s = HashSlot.of(argv.get(i));
      if (slot >= 0 && s != slot) {
        return done(Reply.error("CROSSSLOT Keys in request don't hash to the same slot"));
      }
      slot = s;
    }
    Topology topology = meta.topology();
    if (topology == null) {
      return done(Reply.error("CLUSTERDOWN Hash slot not served"));
    }
    Topology.Shard shard = topology.shardOf(slot);
    RaftServer.Division division = division(shard);
    ShardStateMachine machine = division == null ? null : shards.get(division.getGroup().getGroupId());
    if (division == null || machine == null || !division.getInfo().isLeader()) {
      return elsewhere(shard, slot, false, deadline, () -> watch(client, argv, deadline));
    }
    WatchContext context = new WatchContext(division.getGroup().getGroupId(), division.getInfo().getCurrentTerm());
    ClientState.RoutedWatch held = client.routedWatch();
    io.bloomery.server.keyspace.Watches.Watcher watcher = held != null ? held.watcher()
        : machine.keyspace().watches().newWatcher();
    for (int i = 1; i < argv.size(); i++) {
      watcher.watch(Key.of(argv.get(i)));
    }
    client.routedWatch(new ClientState.RoutedWatch(watcher,
        held == null || held.context().equals(context) ? context : BROKEN_WATCH));
    return done(Reply.OK);
  }

  @Override
  public CompletionStage<Reply> transaction(ClientState client, List<CommandSpec> specs,
      List<List<byte[]>> commands) {
    ClientState.RoutedWatch watch = client.routedWatch();
    client.routedWatch(null); // this transaction owns the watch now: it unwatches once answered
    if (watch != null) {
      CompletionStage<Reply> run = watchedTransaction(watch, specs, commands);
      return run.whenComplete((r, e) -> watch.watcher().unwatchAll());
    }
    return unwatchedTransaction(specs, commands, null);
  }

  private CompletionStage<Reply> watchedTransaction(ClientState.RoutedWatch watch, List<CommandSpec> specs,
      List<List<byte[]>> commands) {
    if (!(watch.context() instanceof WatchContext context)) {
      return done(Reply.NIL_ARRAY);
    }
    java.util.function.BooleanSupplier holds = () -> {
      RaftServer.Division now = division(context.group());
      return now != null && now.getInfo().isLeader() && now.getInfo().getCurrentTerm() == context.term()
          && !watch.watcher().touchedOrExpired();
    };
    return unwatchedTransaction(specs, commands, holds);
  }

  private CompletionStage<Reply> unwatchedTransaction(List<CommandSpec> specs, List<List<byte[]>> commands,
      java.util.function.BooleanSupplier holds) {
    if (commands.isEmpty()) {
      return done(holds == null || holds.getAsBoolean() ? Reply.array(List.of()) : Reply.NIL_ARRAY);
    }
    int slot = -1;
    for (int i = 0; i < commands.size(); i++) {
      CommandSpec spec = specs.get(i);
      List<Key> keys = Dispatcher.keysOf(spec, commands.get(i));
      if (!(ShardStateMachine.replicates(spec) || ShardStateMachine.reads(spec))
          || files.handles(commands.get(i)) || "guard".equals(spec.group()) || keys.isEmpty()) {
        return done(Reply.error("EXECABORT Transaction discarded because of: " + spec.name().toUpperCase(Locale.ROOT)
            + " is not available in a transaction on a cluster node (keyed data commands only)"));
      }
      for (Key k : keys) {
        int s = HashSlot.of(k.bytes());
        if (slot >= 0 && s != slot) {
          return done(Reply.error("EXECABORT Transaction discarded because of: CROSSSLOT Keys in request don't hash "
              + "to the same slot"));
        }
        slot = s;
      }
    }
    if (meta.topology() == null) {
      return done(Reply.error("CLUSTERDOWN Hash slot not served"));
    }
    return transactionAt(specs, commands, slot, System.nanoTime() + LEADER_WAIT.toNanos(), holds);
  }

  private CompletionStage<Reply> transactionAt(List<CommandSpec> specs, List<List<byte[]>> commands, int slot,
      long deadline, java.util.function.BooleanSupplier holds) {
    Topology topology = meta.topology();
    if (topology == null) { // this node left its cluster while the transaction waited
      return done(Reply.error("CLUSTERDOWN Hash slot not served"));
    }
    Topology.Shard shard = topology.shardOf(slot);
    java.util.function.Supplier<CompletionStage<Reply>> again = () -> transactionAt(specs, commands, slot, deadline,
        holds);
    RaftServer.Division division = division(shard);
    if (division != null && division.getInfo().isLeader()) {
      ShardStateMachine machine = shards.get(division.getGroup().getGroupId());
      for (CommandSpec spec : specs) {
        String refused = machine == null ? null : machine.refusal(spec);
        if (refused != null) {
          return done(Reply.error("EXECABORT Transaction discarded because of: " + refused));
        }
      }
      return proposalsOf(division, shard).addTransaction(commands, deadline, again, holds)
          .thenCompose(r -> settle(r, shard, slot, deadline, again));
    }
    return elsewhere(shard, slot, false, deadline, again);
  }

  // ------------------------------------------------------------------------------------------ guarded keys

  /**
   * GUARD.*: a guarded key's store commit is the truth, and only its shard's leader talks to the store for it.
   * RESERVE, DROP and REBUILD go through the shard's log, which declares, drops or rebuilds the key on every replica
   * ({@link ClusterGuards});
   * the other commands of a key run here, on this node's guard, if this node leads its shard, else {@code MOVED};
   * after {@code READONLY}, GUARD.EXISTS, MEXISTS and INFO run on a follower's guard too (its filter follows the
   * store through a replication slot of its own, so a negative may miss the rows of the last moments, as any read
   * on a replica may be stale; a "maybe" is still confirmed in the store). GUARD.SLOTS (keyless) lists this node's
   * own slots.
   */
  private CompletionStage<Reply> guard(ClientState client, CommandSpec spec, List<byte[]> argv) {
    List<Key> keys = Dispatcher.keysOf(spec, argv);
    if (keys.isEmpty()) {
      return null;
    }
    if (spec.name().equals("guard.reserve")) {
      String refused = io.bloomery.server.command.guard.GuardCommands.reserveRefusal(guarded.guards(), argv);
      if (refused != null) {
        return done(Reply.error(refused));
      }
    }
    int slot = HashSlot.of(keys.get(0).bytes());
    boolean replicaRead = client.replicaReads() && ShardStateMachine.reads(spec);
    return guardAt(spec.name(), argv, keys.get(0), slot, replicaRead, System.nanoTime() + LEADER_WAIT.toNanos());
  }

  private CompletionStage<Reply> guardAt(String name, List<byte[]> argv, Key key, int slot, boolean replicaRead,
      long deadline) {
    Topology topology = meta.topology();
    if (topology == null) {
      return done(Reply.error("CLUSTERDOWN Hash slot not served"));
    }
    Topology.Shard shard = topology.shardOf(slot);
    RaftServer.Division division = division(shard);
    boolean leads = division != null && division.getInfo().isLeader();
    java.util.function.Supplier<CompletionStage<Reply>> again =
        () -> guardAt(name, argv, key, slot, replicaRead, deadline);
    if (!name.equals("guard.reserve") && !name.equals("guard.drop") && !name.equals("guard.rebuild")) {
      // run by this server's own handler, which cannot wait for a leader: MOVED, or CLUSTERDOWN while none leads
      if (!leads && !(replicaRead && division != null)) {
        return elsewhere(shard, slot, false, System.nanoTime(), again);
      }
      ShardStateMachine machine = shards.get(division.getGroup().getGroupId());
      return machine != null && machine.gone(slot) ? movedOnceRecorded(shard, slot, deadline) : null;
    }
    if (!leads) {
      return elsewhere(shard, slot, false, deadline, again);
    }
    List<byte[]> entry = !name.equals("guard.reserve")
        ? List.of(ascii(ShardStateMachine.GUARD), ascii(name.substring("guard.".length()).toUpperCase(Locale.ROOT)),
            key.bytes())
        : List.of(ascii(ShardStateMachine.GUARD), ascii("RESERVE"), key.bytes(), argv.get(2),
            ascii(Double.toString(io.bloomery.server.command.Args.parseDouble(argv.get(3)))),
            ascii(Long.toString(io.bloomery.server.command.Args.parseLong(argv.get(4)))));
    CompletionStage<Reply> applied = propose(division, entry, shard, deadline, again)
        .thenCompose(r -> settle(r, shard, slot, deadline, again));
    if (name.equals("guard.drop")) {
      return applied;
    }
    GuardSets sets = guarded.guards();
    if (name.equals("guard.rebuild")) {
      return applied.thenCompose(r -> !Reply.OK.equals(r) ? done(r) : sets.rebuilt(key).handle((v, e) -> e == null
          ? Reply.OK : Reply.error("ERR the rebuild failed on this node: " + (e.getCause() != null ? e.getCause()
              : e).getMessage()))
          .completeOnTimeout(Reply.error("STOREDOWN the rebuild goes on while adds continue on every replica;"
              + " GUARD.INFO shows rebuilding 1 until it ends"), sets.buildTimeoutMillis(), TimeUnit.MILLISECONDS));
    }
    return applied.thenCompose(r -> !Reply.OK.equals(r) ? done(r) : sets.built(key).handle((v, e) -> e == null ? Reply.OK
        : Reply.error("STOREDOWN the guarded key is declared on every replica, but this node's copy is not built: "
            + e.getMessage() + " (GUARD.INFO shows its state)"))
        .completeOnTimeout(Reply.error("STOREDOWN the guarded key is declared on every replica; this node's copy is"
            + " still being built from the store: the build goes on, GUARD.INFO shows its state, and the key answers"
            + " once it is ready"), sets.buildTimeoutMillis(), TimeUnit.MILLISECONDS));
  }

  private static byte[] ascii(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  /**
   * A command of a guarded key whose slot a reshard moved away from {@code from}, a shard this node leads: the key
   * went with it (its target answers for it now), so the command is redirected to where the topology records the
   * slot once it does ({@code TRYAGAIN} if that does not come by {@code deadline}: the node running the reshard
   * died between the two; running it again records it).
   */
  private CompletionStage<Reply> movedOnceRecorded(Topology.Shard from, int slot, long deadline) {
    Topology topology = meta.topology();
    if (topology == null) {
      return done(Reply.error("CLUSTERDOWN Hash slot not served"));
    }
    Topology.Shard owner = topology.shardOf(slot);
    if (!owner.name().equals(from.name())) {
      return elsewhere(owner, slot, false, deadline, () -> movedOnceRecorded(from, slot, deadline));
    }
    if (System.nanoTime() > deadline) {
      return done(Reply.error("TRYAGAIN slot " + slot + " is being moved to another shard: try again"));
    }
    return later(() -> movedOnceRecorded(from, slot, deadline));
  }

  /** The term in which this node leads the shard of {@code key}, or -1 if it does not lead it. */
  long leaderTerm(Key key) {
    Topology topology = meta.topology();
    RaftServer.Division division = topology == null ? null : division(topology.shardOf(HashSlot.of(key.bytes())));
    return division != null && division.getInfo().isLeader() ? division.getInfo().getCurrentTerm() : -1;
  }

  /**
   * Whether this node still leads the shard of {@code key} in {@code term}, confirmed by a linearizable read (the
   * leader's lease, or a round of heartbeats) that starts now.
   */
  CompletionStage<Boolean> confirmLeader(Key key, long term) {
    Topology topology = meta.topology();
    if (topology == null) {
      return CompletableFuture.completedFuture(false);
    }
    int slot = HashSlot.of(key.bytes());
    Topology.Shard shard = topology.shardOf(slot);
    RaftServer.Division division = division(shard);
    if (division == null || !division.getInfo().isLeader() || division.getInfo().getCurrentTerm() != term) {
      return CompletableFuture.completedFuture(false);
    }
    return read(division, List.of(ascii("EXISTS"), key.bytes()), shard, slot, System.nanoTime()
        + LEADER_WAIT.toNanos()).thenApply(r -> !(r instanceof Reply.Error) && division.getInfo().isLeader()
            && division.getInfo().getCurrentTerm() == term);
  }

  /**
   * A command of {@code slot}: run here if this node leads the shard that serves it (or, {@code asked}, the shard it
   * is being moved to), else redirected. A reply of a slot a reshard is moving is settled ({@link #settle}).
   */
  private CompletionStage<Reply> keyed(ClientState client, List<byte[]> argv, int slot, boolean write, boolean asked,
      long deadline) {
    Topology topology = meta.topology();
    if (topology == null) { // this node left its cluster while the command waited
      return done(Reply.error("CLUSTERDOWN Hash slot not served"));
    }
    Topology.Shard shard = shardFor(topology, slot, asked);
    java.util.function.Supplier<CompletionStage<Reply>> again = () -> keyed(client, argv, slot, write, asked,
        deadline);
    RaftServer.Division division = division(shard);
    CompletionStage<Reply> reply;
    if (division != null && division.getInfo().isLeader()) {
      reply = write ? propose(division, argv, shard, deadline, again) : read(division, argv, shard, slot, deadline);
    } else if (!write && division != null && client.replicaReads()) {
      reply = localRead(shard, argv);
    } else {
      return elsewhere(shard, slot, asked, deadline, again);
    }
    return reply.thenCompose(r -> settle(r, shard, slot, deadline, again));
  }

  /**
   * A chunk of a Bloomery file ({@link ClusterFileLoads}): staged here if this node leads the shard of its key (or,
   * {@code asked}, the shard the key's slot is being moved to), else redirected like any write of the key; a later
   * chunk of a load staged here while this node no longer leads abandons it. After the last chunk the whole file
   * goes through the shard's log as one write, and a leader lost meanwhile abandons the load too (a redirection would
   * send the last chunk alone to a node that staged none of it).
   */
  private CompletionStage<Reply> fileChunk(ClientState client, List<byte[]> argv, boolean asked, long deadline) {
    Key key = Key.of(argv.get(1));
    int slot = HashSlot.of(key.bytes());
    Topology topology = meta.topology();
    if (topology == null) {
      files.abandon(key);
      return done(Reply.error("CLUSTERDOWN Hash slot not served"));
    }
    Topology.Shard shard = shardFor(topology, slot, asked);
    RaftServer.Division division = division(shard);
    ShardStateMachine machine = division == null ? null : shards.get(division.getGroup().getGroupId());
    if (division == null || machine == null || !division.getInfo().isLeader()) {
      if (files.pending(key)) {
        files.abandon(key);
        return done(Reply.error(ClusterFileLoads.LEADER_LOST));
      }
      return elsewhere(shard, slot, asked, deadline, () -> fileChunk(client, argv, asked, deadline));
    }
    return files.chunk(client.id(), argv, machine,
        file -> keyed(client, ClusterFileLoads.write(key.bytes(), file), slot, true, asked,
            System.nanoTime() + LEADER_WAIT.toNanos())
            .thenApply(r -> r instanceof Reply.Error e && (e.text().startsWith("MOVED ")
                || e.text().startsWith("ASK ")) ? Reply.error(ClusterFileLoads.LEADER_LOST) : r));
  }

  /**
   * The reply for a command of {@code slot} that this node does not lead: {@code MOVED} to {@code shard}'s leader
   * ({@code ASK} when {@code asked}: the shard the slot is being moved to), or, while it has none, {@code again}
   * after a short pause until {@code deadline}, then {@code CLUSTERDOWN}.
   */
  private CompletionStage<Reply> elsewhere(Topology.Shard shard, int slot, boolean asked, long deadline,
      java.util.function.Supplier<CompletionStage<Reply>> again) {
    String leader = leaderOf(shard);
    if (leader != null && !leader.equals(me.id())) {
      Topology.Node node = meta.topology().node(leader);
      return done(Reply.error((asked ? "ASK " : "MOVED ") + slot + " " + node.host() + ":" + node.port()));
    }
    if (System.nanoTime() > deadline) {
      return done(Reply.error("CLUSTERDOWN The cluster is down: shard " + shard.name() + " has no leader"));
    }
    return later(again);
  }

  /**
   * A shard's reply to a command of {@code slot}, as the client gets it. A reshard moving the slot makes the shard
   * answer, having applied nothing, {@link ShardStateMachine#FROZEN} (its keys are being copied: the command waits
   * and goes {@code again} until {@code deadline}, then {@code TRYAGAIN}) or {@link ShardStateMachine#GONE} (its keys
   * left: {@code MOVED} once the topology says the slot is served where they went, {@link #awaitRecord} until
   * then). A transaction's commands share a slot, so either all of them answer so or none.
   */
  private CompletionStage<Reply> settle(Reply reply, Topology.Shard shard, int slot, long deadline,
      java.util.function.Supplier<CompletionStage<Reply>> again) {
    Reply first = reply instanceof Reply.Array array && !array.elements().isEmpty() ? array.elements().get(0) : reply;
    if (!(first instanceof Reply.Error error) || !error.text().startsWith("BLOOMERY-")) {
      return done(reply);
    }
    Topology topology = meta.topology();
    if (topology == null) {
      return done(Reply.error("CLUSTERDOWN Hash slot not served"));
    }
    Topology.Migration m = topology.migration();
    if (error.text().equals(ShardStateMachine.GONE)) {
      if (m != null && m.covers(slot) && m.from().equals(shard.name())) {
        return awaitRecord(shard.name(), slot, System.nanoTime() + GONE_HOLD.toNanos(), deadline, again);
      }
      Topology.Shard owner = topology.shardOf(slot);
      if (!owner.name().equals(shard.name())) {
        return elsewhere(owner, slot, false, deadline, again);
      }
    }
    if (System.nanoTime() > deadline) { // frozen for longer than a command waits, or gone before the topology says
      return done(Reply.error("TRYAGAIN slot " + slot + " is being moved to another shard: try again"));
    }
    return later(again);
  }

  /**
   * A command of a slot whose keys left shard {@code from} in a reshard's step that the topology does not record
   * yet (one metadata entry away): held until it does, then {@code again}, which is answered {@code MOVED}, the
   * redirection every client follows (redis-py 4.3.4 cannot follow {@code ASK} to a node missing from its slot map:
   * docs/CLUSTER.md, "Client notes"). If the record does not come by {@code askAt} (the node running the reshard
   * died), {@code ASK} to the shard that holds the keys.
   */
  private CompletionStage<Reply> awaitRecord(String from, int slot, long askAt, long deadline,
      java.util.function.Supplier<CompletionStage<Reply>> again) {
    Topology topology = meta.topology();
    if (topology == null) {
      return done(Reply.error("CLUSTERDOWN Hash slot not served"));
    }
    Topology.Migration m = topology.migration();
    if (m == null || !m.covers(slot) || !m.from().equals(from)) {
      return again.get();
    }
    if (System.nanoTime() >= askAt) {
      return elsewhere(topology.shard(m.to()), slot, true, deadline, again);
    }
    return later(() -> awaitRecord(from, slot, askAt, deadline, again));
  }

  /** The queue of writes for the shard this node leads through {@code division}. */
  private Proposals proposalsOf(RaftServer.Division division, Topology.Shard shard) {
    return proposals.computeIfAbsent(division.getGroup().getGroupId(), g -> new Proposals(raft, g, shard.name(),
        clientId, callIds::incrementAndGet, timer, () -> {
          ShardStateMachine machine = shards.get(g);
          return machine == null ? 0 : machine.keyspace().usedBytes();
        }));
  }

  /** The reply {@code attempt} gives when it runs again after a short pause (a leader being elected or readied). */
  private CompletableFuture<Reply> later(java.util.function.Supplier<CompletionStage<Reply>> attempt) {
    CompletableFuture<Reply> later = new CompletableFuture<>();
    timer.schedule(() -> attempt.get().whenComplete((r, e) -> {
      if (e != null) {
        later.completeExceptionally(e);
      } else {
        later.complete(r);
      }
    }), POLL_MILLIS, TimeUnit.MILLISECONDS);
    return later;
  }

  /**
   * Queues a write for this node's leading division's log ({@link Proposals}): it is applied after every write this
   * node queued for the shard before it, and answered once a majority has its entry.
   *
   * @param elsewhere the reply if this node no longer leads the shard when the write's turn comes
   */
  private CompletableFuture<Reply> propose(RaftServer.Division division, List<byte[]> argv, Topology.Shard shard,
      long deadline, java.util.function.Supplier<CompletionStage<Reply>> elsewhere) {
    ShardStateMachine machine = shards.get(division.getGroup().getGroupId());
    CommandSpec spec = machine == null ? null : machine.spec(argv.get(0));
    String refused = spec == null ? null : machine.refusal(spec);
    if (refused != null) {
      return CompletableFuture.completedFuture(Reply.error(refused));
    }
    return proposalsOf(division, shard).add(argv, deadline, elsewhere);
  }

  /**
   * Runs a read on this node's leading division, once Ratis confirmed the leadership (its lease, or a round of
   * heartbeats). A leader not ready yet (its first entry of the term not committed) is asked again until
   * {@code deadline}.
   */
  private CompletableFuture<Reply> read(RaftServer.Division division, List<byte[]> argv, Topology.Shard shard,
      int slot, long deadline) {
    RaftClientRequest request = RaftClientRequest.newBuilder().setClientId(clientId).setServerId(raft.getId())
        .setGroupId(division.getGroup().getGroupId()).setCallId(callIds.incrementAndGet())
        .setMessage(ShardClient.message(argv)).setType(RaftClientRequest.readRequestType()).build();
    CompletableFuture<RaftClientReply> sent;
    try {
      sent = submit(raft, division, request);
    } catch (IOException e) {
      return CompletableFuture.completedFuture(Reply.error("ERR shard " + shard.name() + ": " + e.getMessage()));
    }
    return sent.handle((reply, failure) -> {
      if (failure != null) {
        return CompletableFuture.completedFuture(ShardErrors.of(shard.name(), null, failure));
      }
      if (reply.isSuccess()) {
        return CompletableFuture.completedFuture(ShardStateMachine.reply(reply.getMessage()));
      }
      if (reply.getLeaderNotReadyException() != null) {
        if (System.nanoTime() > deadline) {
          return CompletableFuture.completedFuture(ShardErrors.leaderNotReady(shard.name()));
        }
        return later(() -> read(division, argv, shard, slot, deadline));
      }
      if (reply.getNotLeaderException() != null) {
        String leader = leaderOf(shard);
        Topology.Node node = leader == null ? null : meta.topology().node(leader);
        if (node != null && !leader.equals(me.id())) {
          return CompletableFuture.completedFuture(Reply.error("MOVED " + slot + " " + node.host() + ":"
              + node.port()));
        }
        return CompletableFuture.completedFuture(Reply.error("CLUSTERDOWN The cluster is down: shard "
            + shard.name() + " is electing a leader"));
      }
      return CompletableFuture.completedFuture(ShardErrors.of(shard.name(), reply, null));
    }).thenCompose(r -> r);
  }

  /**
   * Hands {@code request} to this node's division of its group on the calling thread. Ratis's server-wide entry
   * point ({@link RaftServer#submitClientRequestAsync}) runs each request on a thread of its client pool and blocks
   * the caller until that thread took it: two thread switches per command, most of the CPU a read on a leader
   * costs. A division is Ratis's client protocol itself, so it is asked directly where it is one.
   */
  static CompletableFuture<RaftClientReply> submit(RaftServer raft, RaftServer.Division division,
      RaftClientRequest request) throws IOException {
    if (division instanceof RaftClientAsynchronousProtocol direct) {
      return direct.submitClientRequestAsync(request);
    }
    return raft.submitClientRequestAsync(request);
  }

  /** Answers a read from this node's replica of {@code shard}, as far as it has applied the log. */
  private CompletionStage<Reply> localRead(Topology.Shard shard, List<byte[]> argv) {
    ShardStateMachine machine = machine(shard);
    if (machine == null) {
      return done(Reply.error("CLUSTERDOWN this node holds no replica of shard " + shard.name()));
    }
    return machine.query(ShardClient.message(argv)).thenApply(ShardStateMachine::reply);
  }

  // ------------------------------------------------------------------------------------------------ SAVE

  /**
   * {@code SAVE} and {@code BGSAVE} on a cluster node: a Ratis snapshot of each of its groups (its shard's replica
   * and the metadata group), after which Ratis may purge their logs up to it. The server's own snapshot file would
   * hold its local keyspace, which a cluster node does not use. A group with no entry applied since its last
   * snapshot keeps that one. {@code SAVE} answers once every snapshot is written; {@code BGSAVE} at once, logging a
   * failure.
   */
  private CompletionStage<Reply> snapshot(boolean wait) {
    List<CompletableFuture<Reply>> taken = new ArrayList<>();
    for (RaftGroupId g : raft.getGroupIds()) {
      CompletableFuture<RaftClientReply> sent = raft.snapshotManagementAsync(SnapshotManagementRequest.newCreate(
          clientId, raft.getId(), g, callIds.incrementAndGet(), SNAPSHOT_WAIT.toMillis(), 1));
      taken.add(sent.handle((reply, failure) -> {
        Throwable why = failure != null ? failure : reply.isSuccess() ? null : reply.getException();
        if (why != null) {
          LOG.warn("the snapshot of group {} failed", g, why);
          return Reply.error("ERR the snapshot of Raft group " + g.getUuid() + " failed: " + why.getMessage());
        }
        return Reply.OK;
      }));
    }
    CompletableFuture<Reply> all = CompletableFuture.allOf(taken.toArray(CompletableFuture[]::new))
        .thenApply(v -> taken.stream().map(CompletableFuture::join).filter(r -> r != Reply.OK).findFirst()
            .orElse(Reply.OK));
    return wait ? all : done(new Reply.Simple("Background saving started"));
  }

  // ------------------------------------------------------------------------------------------------ INFO

  /** The shard this node is a member of, as the topology it holds lists it; {@code null} if none, or it left. */
  private Topology.Shard ownShard() {
    Topology t = meta.topology();
    return t == null || left ? null : t.shardOfNode(me.id());
  }

  @Override
  public Keyspace replicaKeyspace() {
    Topology.Shard mine = ownShard();
    ShardStateMachine machine = mine == null ? null : machine(mine);
    return machine == null ? null : machine.keyspace();
  }

  /**
   * As a Redis Cluster node words it: on its shard's leader {@code role:master} and a {@code slaveN} line for each
   * follower that answered within an election timeout ({@code offset} its matching log index); on a follower
   * {@code role:slave}, the leader's address, and whether it hears from it. Offsets are Raft log indexes.
   */
  @Override
  public Map<String, String> replicationInfo() {
    Map<String, String> info = new LinkedHashMap<>();
    Topology.Shard mine = ownShard();
    RaftServer.Division division = mine == null ? null : division(mine);
    if (division == null) {
      info.put("role", "master");
      info.put("connected_slaves", "0");
      return info;
    }
    Topology topology = meta.topology();
    long applied = division.getInfo().getLastAppliedIndex();
    if (division.getInfo().isLeader()) {
      info.put("role", "master");
      List<String> lines = new ArrayList<>();
      for (Follower f : followers(division)) {
        Topology.Node n = topology.node(f.id());
        if (n != null && f.lastRpcElapsedMillis() <= electionTimeout.toMillis()) {
          lines.add("ip=" + n.host() + ",port=" + n.port() + ",state=online,offset=" + f.matchIndex() + ",lag="
              + f.lastRpcElapsedMillis() / 1000);
        }
      }
      info.put("connected_slaves", Integer.toString(lines.size()));
      for (int i = 0; i < lines.size(); i++) {
        info.put("slave" + i, lines.get(i));
      }
      info.put("master_repl_offset", Long.toString(applied));
      return info;
    }
    String leader = leaderOf(mine);
    Topology.Node at = leader == null ? null : topology.node(leader);
    info.put("role", "slave");
    info.put("master_host", at == null ? "?" : at.host());
    info.put("master_port", at == null ? "0" : Integer.toString(at.port()));
    info.put("master_link_status", at == null ? "down" : "up");
    info.put("slave_repl_offset", Long.toString(applied));
    info.put("slave_read_only", "1");
    info.put("connected_slaves", "0");
    info.put("master_repl_offset", Long.toString(applied));
    return info;
  }

  // ------------------------------------------------------------------------------------------------ leaders

  /** This node's division of {@code shard}'s group, or {@code null} if it is not a member. */
  RaftServer.Division division(Topology.Shard shard) {
    return division(groupId(shard));
  }

  /** A shard's Raft group id (a name-based UUID, computed once per shard). */
  private RaftGroupId groupId(Topology.Shard shard) {
    return groupIds.computeIfAbsent(shard.name(), name -> meta.topology().group(shard).groupId());
  }

  private RaftServer.Division division(RaftGroupId id) {
    if (!shards.containsKey(id) && !id.equals(META)) {
      return null;
    }
    try {
      return raft.getDivision(id);
    } catch (IOException e) {
      return null;
    }
  }

  /** This node's replica of {@code shard}, or {@code null}. */
  ShardStateMachine machine(Topology.Shard shard) {
    return shards.get(groupId(shard));
  }

  /** A follower as its leader sees it: how far its log matches the leader's, and when it last answered. */
  record Follower(String id, long matchIndex, long lastRpcElapsedMillis) {}

  /**
   * The followers of {@code division} as its leader tracks them, in no particular order; none unless this node
   * leads it.
   */
  static List<Follower> followers(RaftServer.Division division) {
    DivisionInfo info = division.getInfo();
    if (!info.isLeader()) {
      return List.of();
    }
    // both come from the leader's log appenders, in the same order, unless the members changed between the calls
    var rpc = info.getRoleInfoProto().getLeaderInfo().getFollowerInfoList();
    long[] match = info.getFollowerMatchIndices();
    List<Follower> out = new ArrayList<>(rpc.size());
    for (int i = 0; i < rpc.size(); i++) {
      out.add(new Follower(rpc.get(i).getId().getId().toStringUtf8(), rpc.size() == match.length ? match[i] : 0,
          rpc.get(i).getLastRpcElapsedTimeMs()));
    }
    return out;
  }

  /**
   * The node id of {@code shard}'s leader: as this node's division knows it when this node is a member, else as the
   * metadata group last recorded it; {@code null} when unknown: an election, or a leader this node has not heard from
   * for longer than an election timeout (so that clients wait for its successor here rather than be sent to a
   * dead node).
   */
  String leaderOf(Topology.Shard shard) {
    RaftServer.Division division = division(shard);
    if (division != null) {
      DivisionInfo info = division.getInfo();
      RaftPeerId leader = info.getLeaderId();
      if (leader == null || info.isCandidate()) {
        return null;
      }
      if (info.isFollower() && info.getRoleInfoProto().getFollowerInfo().getLeaderInfo().getLastRpcElapsedTimeMs()
          > electionTimeout.toMillis()) {
        return null; // silent for longer than an election timeout: presumed dead, an election is due
      }
      return leader.toString();
    }
    MetaStateMachine.Leader leader = meta.leader(shard.name());
    return leader == null ? null : leader.node();
  }

  /** The Raft term of {@code shard}'s current leadership as known here (CLUSTER NODES' config epoch). */
  long termOf(Topology.Shard shard) {
    RaftServer.Division division = division(shard);
    if (division != null) {
      return division.getInfo().getCurrentTerm();
    }
    MetaStateMachine.Leader leader = meta.leader(shard.name());
    return leader == null ? 0 : leader.term();
  }

  /**
   * Records in the metadata group each shard this node leads, with its term, unless the group has it already: how
   * the nodes outside the shard learn its leader.
   */
  private void announceLeaders() {
    Topology topology = meta.topology();
    if (topology == null) {
      return;
    }
    try {
      for (Topology.Shard shard : topology.shards()) {
        RaftServer.Division division = division(shard);
        if (division == null || !division.getInfo().isLeader() || !division.getInfo().isLeaderReady()) {
          continue;
        }
        long term = division.getInfo().getCurrentTerm();
        MetaStateMachine.Leader known = meta.leader(shard.name());
        if (known != null && known.term() >= term && known.node().equals(me.id())) {
          continue;
        }
        if (announcing.add(shard.name())) {
          metaClient().async().send(MetaStateMachine.leaderEntry(shard.name(), term, me.id()))
              .whenComplete((r, e) -> announcing.remove(shard.name()));
        }
      }
    } catch (RuntimeException e) {
      LOG.warn("announcing this node's leaderships failed (retried)", e);
    }
  }

  /** A Ratis client of the metadata group, made once the group is known here. */
  /**
   * A client of the metadata group, made for its members as this node's replica knows them and made again when they
   * changed: a client knows only the peers it was made with, and a removed node's bus port may now be another
   * node's, which answers for no such group.
   */
  RaftClient metaClient() {
    RaftServer.Division division = division(META);
    if (division == null) {
      throw new IllegalStateException("this node is in no cluster");
    }
    RaftGroup group = division.getGroup();
    synchronized (this) {
      RaftClient c = metaClient;
      if (c != null && group.getPeers().equals(metaClientPeers)) {
        return c;
      }
      RaftClient made = clientOf(group, 300);
      metaClient = made;
      metaClientPeers = group.getPeers();
      if (c != null) {
        // requests in flight on the old client complete or fail on their own; close it once they had time to
        timer.schedule(() -> closeQuietly(c), 60, TimeUnit.SECONDS);
      }
      return made;
    }
  }

  /** A client of {@code group} (its id and members), asking again every 100 ms up to {@code attempts} times. */
  static RaftClient clientOf(RaftGroup group, int attempts) {
    return clientOf(group, attempts, null);
  }

  /**
   * As {@link #clientOf(RaftGroup, int)}, each request given up (and asked again) after {@code requestTimeout}, or
   * Ratis's 3 s where {@code null}.
   */
  static RaftClient clientOf(RaftGroup group, int attempts, java.time.Duration requestTimeout) {
    RaftProperties properties = ShardReplica.clientProperties(new RaftProperties());
    if (requestTimeout != null) {
      org.apache.ratis.client.RaftClientConfigKeys.Rpc.setRequestTimeout(properties,
          TimeDuration.valueOf(requestTimeout.toMillis(), TimeUnit.MILLISECONDS));
    }
    return RaftClient.newBuilder().setRaftGroup(group)
        .setProperties(properties).setClientId(ClientId.randomId())
        .setRetryPolicy(RetryPolicies.retryUpToMaximumCountWithFixedSleep(attempts,
            TimeDuration.valueOf(100, TimeUnit.MILLISECONDS)))
        .build();
  }

  private static void closeQuietly(RaftClient c) {
    try {
      c.close();
    } catch (IOException | RuntimeException e) {
      LOG.debug("closing a metadata client failed", e);
    }
  }

  // ------------------------------------------------------------------------------------------------ create

  /**
   * {@code CLUSTER JOIN-TOPOLOGY}: adds the metadata group (all nodes) and this node's shard group to this node's
   * Raft server, off the event loop. Refused when the node is in a cluster already or the topology does not list
   * it with its own addresses. Asked again with the same groups (an add-node run again after its membership change
   * failed halfway), it answers OK without changing anything, so the change can be finished.
   */
  CompletionStage<Reply> join(Topology topology, Topology current) {
    if (current != null && (!current.sameSlots(topology) || current.node(me.id()) != null)) {
      return done(Reply.error("ERR the current topology must be the same cluster and slots, without this node"));
    }
    Topology.Node listed = topology.node(me.id());
    if (listed == null) {
      return done(Reply.error("ERR this node (" + me.id() + ") is not in the topology"));
    }
    if (!listed.equals(new Topology.Node(me.id(), me.host(), me.port(), me.busHost(), me.busPort()))) {
      return done(Reply.error("ERR the topology lists this node as " + listed.address() + ", but it is "
          + me.host() + ":" + me.port() + "@" + me.busPort()));
    }
    return CompletableFuture.supplyAsync(() -> {
      synchronized (this) {
        if (left) {
          return Reply.error("ERR this node left a cluster: restart it to join one");
        }
        // Joining a running cluster (add-node), the groups are added with their current members, which do not
        // include this node: Ratis then starts each in its initializing state, with no election timer, until the
        // group's leader adds it. Listed as a member, it would stand for election before the leader knows it, and
        // the leader answers such a candidate with a shutdown: its replica closes for good.
        // A new shard's members are all new (add-shard): they form its group from scratch, as on cluster create.
        Topology members = current != null ? current : topology;
        Topology.Shard mine = topology.shardOfNode(me.id());
        Topology.Shard existing = mine == null ? null : members.shard(mine.name());
        RaftGroup shardGroup = mine == null ? null
            : existing != null ? members.group(existing).raftGroup() : topology.group(mine).raftGroup();
        if (joined()) {
          Set<RaftGroupId> wanted = new HashSet<>();
          wanted.add(META);
          if (shardGroup != null) {
            wanted.add(shardGroup.getGroupId());
          }
          Set<RaftGroupId> have = new HashSet<>();
          raft.getGroupIds().forEach(have::add);
          return current != null && have.equals(wanted) ? Reply.OK
              : Reply.error("ERR this node is already in a cluster");
        }
        try {
          if (shardGroup != null) {
            addGroup(shardGroup, true);
          }
          addGroup(RaftGroup.valueOf(META, metaPeers(members)), true);
          return Reply.OK;
        } catch (IOException | RuntimeException e) {
          LOG.warn("joining the cluster failed", e);
          return Reply.error("ERR joining the cluster failed: " + e.getMessage());
        }
      }
    }, admin);
  }

  /**
   * Adds {@code group} to this node's Ratis server: a new replica ({@code format}), or one started again from its
   * directory, its members then read from its own log and snapshot.
   */
  private void addGroup(RaftGroup group, boolean format) throws IOException {
    RaftClientReply reply = raft.groupManagement(GroupManagementRequest.newAdd(clientId, raft.getId(),
        callIds.incrementAndGet(), group, format));
    if (!reply.isSuccess()) {
      throw reply.getException() != null ? reply.getException() : new IOException("group add failed: " + reply);
    }
  }

  /**
   * {@code CLUSTER COMMIT-TOPOLOGY}: writes the topology into the metadata group's log (once a majority of the nodes
   * joined and elected the group's leader), off the event loop.
   */
  CompletionStage<Reply> commit(Topology topology) {
    if (!joined()) {
      return done(Reply.error("ERR this node has not joined a cluster (CLUSTER JOIN-TOPOLOGY first)"));
    }
    return CompletableFuture.supplyAsync(() -> {
      try {
        RaftClientReply reply = metaClient().io().send(MetaStateMachine.topologyEntry(topology));
        String answer = reply.getMessage().getContent().toString(StandardCharsets.UTF_8);
        return answer.equals("OK") ? Reply.OK : Reply.error(answer);
      } catch (IOException | RuntimeException e) {
        return Reply.error("ERR the metadata group did not commit the topology: " + e.getMessage());
      }
    }, admin);
  }

  /**
   * {@code CLUSTER SET-TOPOLOGY}: a membership change, off the event loop. For each shard whose members change, the
   * shard's Raft group gets its new configuration (Ratis's membership change: a node added is first brought up to the
   * leader's log, then counted; a majority of the old and of the new members must agree); then the metadata group's
   * likewise; then the new topology is written into the metadata group's log, if the topology there is still the one
   * this change was planned from. A node being added must have joined with the new topology first
   * ({@code CLUSTER JOIN-TOPOLOGY}), so that it hosts the groups it is added to.
   */
  CompletionStage<Reply> setTopology(Topology next) {
    if (topology() == null) {
      return done(Reply.error("ERR this node is in no cluster"));
    }
    return CompletableFuture.supplyAsync(() -> {
      try {
        Topology current = committedTopology();
        if (current == null || !current.sameSlots(next)) {
          return Reply.error("ERR a membership change keeps the cluster and its shards' slots");
        }
        // a new shard's group formed when its members joined; the others change their members through Raft
        for (Topology.Shard shard : next.shards()) {
          Topology.Shard old = current.shard(shard.name());
          if (old != null && !old.members().equals(shard.members())) {
            reconfigure(current.group(old).raftGroup(), null, next.group(shard).raftGroup().getPeers(),
                leaderOf(old));
            LOG.info("shard {} members: {} -> {}", shard.name(), old.members(), shard.members());
          }
        }
        if (!current.nodes().equals(next.nodes())) {
          reconfigureMeta(metaPeers(next));
        }
        RaftClientReply reply = metaClient().io().send(MetaStateMachine.membershipEntry(current, next));
        String answer = reply.getMessage().getContent().toString(StandardCharsets.UTF_8);
        return answer.equals("OK") ? Reply.OK : Reply.error(answer);
      } catch (IOException | RuntimeException e) {
        LOG.warn("membership change failed", e);
        return Reply.error("ERR the membership change did not complete: " + e.getMessage());
      }
    }, admin);
  }

  /**
   * Sets the metadata group's members to {@code wanted}, one node at a time: first each node that leaves, then each
   * that joins. Ratis refuses a change that adds a majority of the current members at once (add-shard adds a shard's
   * worth of nodes), and one node at a time keeps every step's old and new majorities overlapping as del-shard removes
   * a shard's worth. Each step is planned from the members the group's leader has at that moment and is applied only
   * if the group still has them ({@link #reconfigure}'s compare-and-set): a plan made from a view gone stale (an old
   * leader that has not yet learned it lost its leadership still answers as the leader) is refused and planned again.
   */
  private void reconfigureMeta(List<RaftPeer> wanted) throws IOException {
    long deadline = System.nanoTime() + TOPOLOGY_WAIT.toNanos();
    while (true) {
      MetaView now = metaGroupAtLeader(wanted);
      List<RaftPeer> step = nextStep(now.group().getPeers(), wanted);
      if (step == null) {
        return;
      }
      try {
        reconfigure(now.group(), List.copyOf(now.group().getPeers()), step, now.leader().toString());
      } catch (SetConfigurationException e) {
        if (System.nanoTime() > deadline) {
          throw e;
        }
        LOG.info("metadata group's members changed since they were read; planning the step again: {}",
            e.getMessage());
      }
    }
  }

  /**
   * The next one-node step from {@code members} towards {@code wanted}: without the first member that leaves, else
   * with the first node that joins, else {@code wanted} itself where a member's address differs; {@code null} when
   * the members are the wanted ones.
   */
  static List<RaftPeer> nextStep(java.util.Collection<RaftPeer> members, List<RaftPeer> wanted) {
    Map<RaftPeerId, String> wantedAddress = new LinkedHashMap<>();
    wanted.forEach(p -> wantedAddress.put(p.getId(), p.getAddress()));
    Map<RaftPeerId, RaftPeer> current = new LinkedHashMap<>();
    members.forEach(p -> current.put(p.getId(), p));
    for (RaftPeer p : members) {
      if (!wantedAddress.containsKey(p.getId())) {
        List<RaftPeer> step = new ArrayList<>(members);
        step.remove(p);
        return step;
      }
    }
    for (RaftPeer p : wanted) {
      if (!current.containsKey(p.getId())) {
        List<RaftPeer> step = new ArrayList<>(members);
        step.add(p);
        return step;
      }
    }
    boolean moved = members.stream().anyMatch(p -> !p.getAddress().equals(wantedAddress.get(p.getId())));
    return moved ? List.copyOf(wanted) : null;
  }

  /** The metadata group's members and leader, as that leader has them. */
  private record MetaView(RaftGroup group, RaftPeerId leader) {}

  /**
   * The metadata group's members as its leader has them, asked of each member this node knows and each of {@code
   * also} until one answers as the leader (20 s at most). Not this node's own replica's list: a node started again a
   * moment ago may not have heard yet of a member added just before, and a change planned from that list would set
   * the group to members that leave out one it has (MembershipChaosIT caught the group cut from four members to two
   * so, which then lost its majority to a single kill).
   */
  private MetaView metaGroupAtLeader(List<RaftPeer> also) throws IOException {
    long deadline = System.nanoTime() + TOPOLOGY_WAIT.toNanos();
    IOException failed = new IOException("no member of the metadata group answered as its leader within "
        + TOPOLOGY_WAIT.toSeconds() + " s");
    while (true) {
      Map<RaftPeerId, RaftPeer> peers = new LinkedHashMap<>();
      division(META).getGroup().getPeers().forEach(p -> peers.put(p.getId(), p));
      also.forEach(p -> peers.putIfAbsent(p.getId(), p));
      for (RaftPeer peer : peers.values()) {
        try (RaftClient c = clientOf(RaftGroup.valueOf(META, List.of(peer)), 1)) {
          GroupInfoReply info = c.getGroupManagementApi(peer.getId()).info(META);
          if (info.getRoleInfoProto().getRole() == RaftProtos.RaftPeerRole.LEADER) {
            return new MetaView(info.getGroup(), peer.getId());
          }
        } catch (IOException | RuntimeException e) {
          if (failed.getSuppressed().length < peers.size()) {
            failed.addSuppressed(e);
          }
        }
      }
      if (System.nanoTime() > deadline) {
        throw failed;
      }
      try {
        Thread.sleep(100);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new java.io.InterruptedIOException("interrupted while looking for the metadata group's leader");
      }
    }
  }

  /**
   * {@code CLUSTER RESHARD FROM TO COUNT}: moves {@code count} slots and their keys from shard {@code from} to shard
   * {@code to}, after finishing any move under way ({@link Reshard}), off the event loop.
   */
  CompletionStage<Reply> reshard(String from, String to, int count) {
    if (topology() == null) {
      return done(Reply.error("ERR this node is in no cluster"));
    }
    return CompletableFuture.supplyAsync(() -> new Reshard(this).run(from, to, count), admin);
  }

  /**
   * {@code CLUSTER TOPOLOGY}: the topology as the metadata group has committed it, read through its leader, not this
   * node's replica, which may not have applied the latest change yet (a node just restarted): {@code bloomery
   * cluster add-node} and {@code del-node} plan their change from it.
   */
  CompletionStage<Reply> committedTopologyReply() {
    return committedTopologyReply(System.nanoTime() + TOPOLOGY_WAIT.toNanos());
  }

  /** As {@link #committedTopologyReply()}, asking again while the metadata group elects a leader until deadline. */
  private CompletionStage<Reply> committedTopologyReply(long deadline) {
    RaftClient client;
    try {
      client = left || !joined() ? null : metaClient();
    } catch (IllegalStateException e) {
      client = null;
    }
    if (client == null) {
      return done(Reply.error("CLUSTERDOWN Hash slot not served"));
    }
    return client.async().sendReadOnly(MetaStateMachine.TOPOLOGY_QUERY).handle((reply, failure) -> {
      if (failure != null || !reply.isSuccess()) {
        if (System.nanoTime() < deadline) {
          return later(() -> committedTopologyReply(deadline));
        }
        return done(Reply.error("CLUSTERDOWN the metadata group did not answer: "
            + (failure != null ? failure.getMessage() : reply.getException())));
      }
      String text = reply.getMessage().getContent().toStringUtf8();
      return done(text.isEmpty() ? Reply.error("CLUSTERDOWN Hash slot not served") : Reply.bulk(text));
    }).thenCompose(r -> r);
  }

  /**
   * The topology as the metadata group has committed it, read through its leader (linearizable: this node's own
   * replica may not have applied the latest change yet); {@code null} before the cluster is created.
   */
  /** How long a guarded key's build may take before GUARD.RESERVE, or a reshard that moves it, stops waiting. */
  long guardBuildTimeoutMillis() {
    return guarded.guards().buildTimeoutMillis();
  }

  Topology committedTopology() throws IOException {
    String text = metaClient().io().sendReadOnly(MetaStateMachine.TOPOLOGY_QUERY).getMessage().getContent()
        .toStringUtf8();
    return text.isEmpty() ? null : Topology.parse(text);
  }

  /**
   * Sets {@code group}'s members to {@code peers} through its leader (found from the group's current members). A
   * leader that the change removes first hands its leadership to a member that stays: a Ratis leader that commits a
   * configuration without itself shuts its own division down while the change's request still waits on it.
   *
   * @param from the members the change was planned from: the group's leader applies it only if it has exactly these
   *     (by id), and refuses it otherwise with {@link SetConfigurationException}; {@code null} to set the members
   *     whatever they are
   * @param leader the group's leader as this node knows it, or {@code null}
   */
  static void reconfigure(RaftGroup group, List<RaftPeer> from, java.util.Collection<RaftPeer> peers, String leader)
      throws IOException {
    // 30 s of retries: the group may be electing a leader (its old one just died), and a new member catching up
    try (RaftClient client = clientOf(group, 300)) {
      boolean leaderStays = leader == null || peers.stream().anyMatch(p -> p.getId().toString().equals(leader));
      if (!leaderStays) {
        IOException last = null;
        for (RaftPeer successor : peers) {
          if (group.getPeer(successor.getId()) == null) {
            continue; // a member being added cannot lead before it is one
          }
          try {
            RaftClientReply moved = client.admin().transferLeadership(successor.getId(), FAILOVER_MILLIS);
            if (moved.isSuccess()) {
              last = null;
              break;
            }
            last = moved.getException() != null ? moved.getException()
                : new IOException("leadership transfer failed: " + moved);
          } catch (IOException e) {
            last = e;
          }
        }
        if (last != null) {
          throw new IOException("the leader " + leader + " being removed could not hand over its leadership: "
              + last.getMessage(), last);
        }
      }
      SetConfigurationRequest.Arguments.Builder change = SetConfigurationRequest.Arguments.newBuilder()
          .setServersInNewConf(List.copyOf(peers));
      if (from != null) {
        change.setServersInCurrentConf(from).setMode(SetConfigurationRequest.Mode.COMPARE_AND_SET);
      }
      RaftClientReply reply = client.admin().setConfiguration(change.build());
      if (!reply.isSuccess()) {
        throw reply.getException() != null ? reply.getException()
            : new IOException("the configuration change failed: " + reply);
      }
    }
  }

  /** The metadata group's members for {@code topology}: every node. */
  static List<RaftPeer> metaPeers(Topology topology) {
    List<RaftPeer> peers = new ArrayList<>();
    for (Topology.Node n : topology.nodes()) {
      peers.add(RaftPeer.newBuilder().setId(n.id()).setAddress(n.busHost() + ":" + n.busPort()).build());
    }
    return peers;
  }

  /**
   * {@code CLUSTER LEAVE}: after {@code bloomery cluster del-node} removed this node from the cluster, drops its Raft
   * groups (Ratis keeps their directories, renamed) and forgets the topology: the node then serves no slot until it
   * is restarted, and can join a cluster again. Refused unless the metadata group, read through its leader
   * (linearizable), no longer lists this node.
   */
  CompletionStage<Reply> leave() {
    Topology t = topology();
    if (t == null) {
      return done(Reply.error("ERR this node is in no cluster"));
    }
    return CompletableFuture.supplyAsync(() -> {
      synchronized (this) {
        try {
          Topology now = committedTopologyThroughAny(t);
          if (now == null || now.node(me.id()) != null) {
            return Reply.error("ERR the cluster still lists this node: remove it first (bloomery cluster del-node)");
          }
          dropGroups(t);
          return Reply.OK;
        } catch (IOException | RuntimeException e) {
          LOG.warn("leaving the cluster failed", e);
          return Reply.error("ERR leaving the cluster failed: " + e.getMessage());
        }
      }
    }, admin);
  }

  /**
   * {@code CLUSTER FORGET NODE_ID}: drops the replication slots that node {@code id}, which the cluster no longer
   * lists, left in this node's PostgreSQL stores (what {@code bloomery cluster del-node} asks of every remaining node:
   * a node removed while down drops its own only if it runs again, and until then PostgreSQL keeps WAL for each).
   * Refused for this node, and for a node the committed topology, read through the metadata group's leader, lists.
   */
  CompletionStage<Reply> forget(String id) {
    Topology t = topology();
    if (t == null) {
      return done(Reply.error("ERR this node is in no cluster"));
    }
    try {
      NodeIdentity.checkId(id);
    } catch (IllegalArgumentException e) {
      return done(Reply.error("ERR " + e.getMessage()));
    }
    if (id.equals(me.id())) {
      return done(Reply.error("ERR I tried hard but I can't forget myself..."));
    }
    return CompletableFuture.supplyAsync(() -> {
      try {
        return committedTopologyThroughAny(t);
      } catch (IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
    }, admin).thenCompose(now -> {
      String tag = GuardSets.slotTag(id);
      Topology.Node listed = now == null ? null : now.nodes().stream()
          .filter(n -> GuardSets.slotTag(n.id()).equals(tag)).findFirst().orElse(null);
      if (listed != null) {
        return done(Reply.error("ERR the cluster still lists node " + listed.id() + (listed.id().equals(id) ? ""
            : ", whose replication slots are named like " + id + "'s") + ": remove it first (bloomery cluster"
            + " del-node)"));
      }
      return guarded.guards().dropSlotsOfNode(id).<Reply>thenApply(stores -> {
        LOG.info("CLUSTER FORGET {}: {}", id, stores.isEmpty() ? "no replication slot of it in any store"
            : String.join("; ", stores));
        return Reply.OK;
      });
    }).exceptionally(e -> Reply.error("ERR cannot drop the replication slots of node " + id + ": "
        + GuardSets.oneLine(e)));
  }

  /**
   * The committed topology, read through the metadata group's client, or, when that fails, through each other node
   * of {@code t} in turn: a node just removed may hold a client that names a member which has left and dropped the
   * group since (del-shard's members leave one after another), whose answer, "group not found", Ratis's client does
   * not take to another member.
   */
  private Topology committedTopologyThroughAny(Topology t) throws IOException {
    IOException failed;
    try {
      return committedTopology();
    } catch (IOException e) {
      failed = e;
    } catch (RuntimeException e) {
      failed = new IOException(e.getMessage(), e);
    }
    List<RaftPeer> others = new ArrayList<>(metaPeers(t));
    others.removeIf(p -> p.getId().toString().equals(me.id()));
    return committedTopologyThrough(others, failed);
  }

  /**
   * The committed topology as the first of {@code peers} (metadata members) that answers gives it, each asked on its
   * own: a client of them all would keep asking one that left and dropped the group ("group not found"), which
   * Ratis's client does not take to another member; {@code failed}, with each member's failure, if none answers.
   */
  private static Topology committedTopologyThrough(List<RaftPeer> peers, IOException failed) throws IOException {
    for (RaftPeer peer : peers) {
      try (RaftClient c = clientOf(RaftGroup.valueOf(META, List.of(peer)), 3)) {
        RaftClientReply reply = c.io().sendReadOnly(MetaStateMachine.TOPOLOGY_QUERY);
        if (reply.isSuccess()) {
          String text = reply.getMessage().getContent().toStringUtf8();
          return text.isEmpty() ? null : Topology.parse(text);
        }
        failed.addSuppressed(reply.getException() != null ? reply.getException() : new IOException("no answer"));
      } catch (IOException | RuntimeException e) {
        failed.addSuppressed(e);
      }
    }
    throw failed;
  }

  /**
   * Leaves cluster {@code t}, which no longer lists this node: from here on the node serves no slot, whatever Ratis
   * takes to close the groups; it drops them (Ratis keeps their directories, renamed) and forgets the topology.
   */
  private void dropGroups(Topology t) throws IOException {
    left = true;
    meta.forget();
    RaftClient c = metaClient;
    metaClient = null;
    if (c != null) {
      c.close();
    }
    for (RaftGroupId g : raft.getGroupIds()) {
      shards.remove(g);
      proposals.remove(g);
      guarded.removed(g);
      // a division being closed can wait on its election threads: bounded, on a thread of its own
      CompletableFuture<RaftClientReply> removal = CompletableFuture.supplyAsync(() -> {
        try {
          return raft.groupManagement(GroupManagementRequest.newRemove(clientId, raft.getId(),
              callIds.incrementAndGet(), g, false, true));
        } catch (IOException e) {
          throw new java.io.UncheckedIOException(e);
        }
      }, task -> Thread.ofPlatform().daemon().name("cluster-leave").start(task));
      try {
        RaftClientReply reply = removal.get(20, TimeUnit.SECONDS);
        if (!reply.isSuccess()) {
          LOG.warn("removing Raft group {} after leaving the cluster failed: {}", g, reply.getException());
        }
      } catch (java.util.concurrent.TimeoutException e) {
        LOG.warn("Raft group {} is still closing 20 s after this node left the cluster", g);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IOException("interrupted while leaving the cluster", e);
      } catch (java.util.concurrent.ExecutionException e) {
        LOG.warn("removing Raft group {} after leaving the cluster failed", g, e.getCause());
      }
    }
    LOG.info("cluster node {} left cluster {}", me.id(), t.cluster());
  }

  /**
   * {@code CLUSTER FAILOVER [FORCE|TAKEOVER]}: makes this node its shard's leader by a Raft leadership transfer, off
   * the event loop, and answers once it leads (or why it does not). The leader first brings this replica up to its
   * log, so no acknowledged write is lost; a majority of the shard must be up, as for any write. FORCE and TAKEOVER,
   * which in Redis skip the master's agreement or the cluster's, are accepted and do the same: nothing here is
   * decided without the shard's majority.
   */
  CompletionStage<Reply> failover() {
    Topology t = topology();
    Topology.Shard mine = t == null ? null : t.shardOfNode(me.id());
    RaftServer.Division division = mine == null ? null : division(mine);
    if (division == null) {
      return done(Reply.error("ERR this node serves no shard of a cluster"));
    }
    if (division.getInfo().isLeader()) {
      return done(Reply.error("ERR You should send CLUSTER FAILOVER to a replica"));
    }
    return CompletableFuture.supplyAsync(() -> {
      try (RaftClient client = clientOf(division.getGroup(), 100)) {
        RaftClientReply reply = client.admin().transferLeadership(RaftPeerId.valueOf(me.id()), FAILOVER_MILLIS);
        if (!reply.isSuccess()) {
          return Reply.error("ERR the failover did not complete: " + reply.getException());
        }
        LOG.info("cluster node {} leads shard {} after CLUSTER FAILOVER", me.id(), mine.name());
        return Reply.OK;
      } catch (IOException | RuntimeException e) {
        return Reply.error("ERR the failover did not complete: " + e.getMessage());
      }
    }, admin);
  }

  static CompletionStage<Reply> done(Reply reply) {
    return CompletableFuture.completedFuture(reply);
  }

  @Override
  public void close() {
    timer.shutdownNow();
    admin.shutdownNow();
    membership.shutdownNow();
    try {
      RaftClient c = metaClient;
      if (c != null) {
        c.close();
      }
      raft.close();
    } catch (IOException e) {
      LOG.warn("closing the cluster node failed", e);
    }
  }
}
