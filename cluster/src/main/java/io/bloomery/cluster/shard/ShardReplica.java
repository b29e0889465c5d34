package io.bloomery.cluster.shard;

import io.bloomery.server.state.Settings;
import java.io.Closeable;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.grpc.GrpcConfigKeys;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.RaftServerConfigKeys;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.util.SizeInBytes;
import org.apache.ratis.util.TimeDuration;

/**
 * One replica of one shard: a Ratis server over gRPC whose state machine is a {@link ShardStateMachine}, with its
 * Raft log, its snapshots and its Raft metadata under one directory. Starting it again on the same directory
 * recovers the replica (latest snapshot, then the log after it); an empty directory makes a new member.
 *
 * <p>Durability: Ratis forces the log before a replica counts an entry as its own, and the leader acknowledges a
 * write only after a majority of the group (itself included) has forced it — the single-node server's
 * {@code appendfsync always}.
 */
public final class ShardReplica implements Closeable {

  /**
   * How a replica runs.
   *
   * @param group the shard's group; {@code id} must be one of its replicas
   * @param id this replica's id
   * @param dir where its log, snapshots and Raft metadata live
   * @param electionTimeout the shortest election timeout; the longest is twice it (Raft's randomized range)
   * @param snapshotEvery applied entries between automatic snapshots; the log's closed segments before a snapshot are
   *     then purged, so a replica that missed them catches up from the snapshot
   * @param logSegmentBytes the size at which a log segment is closed and a new one begun (only closed segments are
   *     purged)
   */
  public record Options(ShardGroup group, String id, Path dir, Duration electionTimeout, long snapshotEvery,
      long logSegmentBytes) {
    public Options {
      Objects.requireNonNull(group, "group");
      Objects.requireNonNull(dir, "dir");
      if (!group.peers().containsKey(id)) {
        throw new IllegalArgumentException("replica " + id + " is not one of " + group.peers().keySet());
      }
      if (electionTimeout.toMillis() < 50) {
        throw new IllegalArgumentException("election timeout " + electionTimeout + " is under 50 ms");
      }
      if (snapshotEvery < 1) {
        throw new IllegalArgumentException("snapshot interval " + snapshotEvery + " is not positive");
      }
      if (logSegmentBytes < 1024) {
        throw new IllegalArgumentException("log segments of " + logSegmentBytes + " bytes: at least 1024");
      }
    }

    /** The shortest election timeout unless told otherwise. */
    public static final Duration DEFAULT_ELECTION_TIMEOUT = Duration.ofMillis(300);
    /** Applied entries between snapshots unless told otherwise. */
    public static final long DEFAULT_SNAPSHOT_EVERY = 100_000;
    /** Log segments of 32 MiB. */
    public static final long DEFAULT_LOG_SEGMENT_BYTES = 32L << 20;

    /** Defaults: {@link #DEFAULT_ELECTION_TIMEOUT}, {@link #DEFAULT_SNAPSHOT_EVERY}, {@link #DEFAULT_LOG_SEGMENT_BYTES}. */
    public Options(ShardGroup group, String id, Path dir) {
      this(group, id, dir, DEFAULT_ELECTION_TIMEOUT, DEFAULT_SNAPSHOT_EVERY, DEFAULT_LOG_SEGMENT_BYTES);
    }
  }

  private final RaftServer server;
  private final ShardStateMachine stateMachine;

  private ShardReplica(RaftServer server, ShardStateMachine stateMachine) {
    this.server = server;
    this.stateMachine = stateMachine;
  }

  /** Starts the replica: it joins its group's elections and log replication at once. */
  public static ShardReplica start(Options options, Settings settings) throws IOException {
    InetSocketAddress address = options.group().peers().get(options.id());
    RaftProperties properties = properties(options.dir(), address.getHostString(), address.getPort(),
        options.electionTimeout(), options.snapshotEvery(), options.logSegmentBytes());
    ShardStateMachine stateMachine = new ShardStateMachine(settings);
    boolean existing = Files.isDirectory(options.dir().resolve(options.group().groupId().getUuid().toString()));
    RaftServer server = RaftServer.newBuilder()
        .setServerId(RaftPeerId.valueOf(options.id()))
        .setGroup(options.group().raftGroup())
        .setStateMachine(stateMachine)
        .setProperties(properties)
        .setOption(existing ? RaftStorage.StartupOption.RECOVER : RaftStorage.StartupOption.FORMAT)
        .build();
    server.start();
    return new ShardReplica(server, stateMachine);
  }

  /**
   * A replica's Ratis settings: storage under {@code dir}, gRPC on {@code host:port}, elections between
   * {@code electionTimeout} and twice it, linearizable reads (on a leader's lease), a snapshot every {@code snapshotEvery} applied entries
   * with the log purged up to it, log segments of {@code logSegmentBytes}.
   */
  public static RaftProperties properties(Path dir, String host, int port, Duration electionTimeout,
      long snapshotEvery, long logSegmentBytes) throws IOException {
    RaftProperties properties = new RaftProperties();
    Files.createDirectories(dir);
    RaftServerConfigKeys.setStorageDir(properties, List.of(dir.toFile()));
    GrpcConfigKeys.Server.setHost(properties, host);
    GrpcConfigKeys.Server.setPort(properties, port);
    long timeout = electionTimeout.toMillis();
    RaftServerConfigKeys.Rpc.setTimeoutMin(properties, TimeDuration.valueOf(timeout, TimeUnit.MILLISECONDS));
    RaftServerConfigKeys.Rpc.setTimeoutMax(properties, TimeDuration.valueOf(2 * timeout, TimeUnit.MILLISECONDS));
    // A leader that heard from no majority for the longest election timeout steps down and then stays out of
    // elections for this long. Ratis's default, 10 s, leaves a shard without a leader for those 10 s whenever the
    // replica that stepped down holds the only log that can win (an entry the live followers lack): one election
    // round lets another replica win first where it can, and no more.
    RaftServerConfigKeys.LeaderElection.setLeaderStepDownWaitTime(properties,
        TimeDuration.valueOf(2 * timeout, TimeUnit.MILLISECONDS));
    RaftServerConfigKeys.Read.setOption(properties, RaftServerConfigKeys.Read.Option.LINEARIZABLE);
    // A linearizable read on the leader needs proof that no other replica leads. With the lease, that proof is a
    // majority having answered an append sent less than 0.9 election timeouts ago (no follower starts an election
    // sooner than one timeout after the leader's last append, and Ratis drops the lease during a leadership
    // transfer); without it, every read waits for a round of heartbeats. The lease assumes the replicas' clocks run
    // at nearly the same rate (not that they agree), as etcd's and TiKV's lease reads do.
    RaftServerConfigKeys.Read.setLeaderLeaseEnabled(properties, true);
    RaftServerConfigKeys.Snapshot.setAutoTriggerEnabled(properties, true);
    RaftServerConfigKeys.Snapshot.setAutoTriggerThreshold(properties, snapshotEvery);
    RaftServerConfigKeys.Snapshot.setRetentionFileNum(properties, 2);
    RaftServerConfigKeys.Log.setPurgeUptoSnapshotIndex(properties, true);
    RaftServerConfigKeys.Log.setSegmentSizeMax(properties, SizeInBytes.valueOf(logSegmentBytes));
    // Ratis keeps the entries of up to 6 closed segments (200 MB) of each group in the heap by default, whatever the
    // heap: with large writes on a node sized from a small maxmemory that alone fills it. Two segments' worth keeps
    // what a follower a little behind needs; one further behind is sent entries read back from the segment files.
    RaftServerConfigKeys.Log.setSegmentCacheNumMax(properties, 2);
    RaftServerConfigKeys.Log.setSegmentCacheSizeMax(properties, SizeInBytes.valueOf(2 * logSegmentBytes));
    RaftServerConfigKeys.Log.setPurgeGap(properties, (int) Math.min(Integer.MAX_VALUE, snapshotEvery));
    // A follower appends each request's entries to its log in the request's own thread (Ratis's behaviour before
    // its "compose" option). With compose on, Ratis 3.3.0's default, a request whose first entry has the index of an
    // append still in progress is answered with that append's completion yet acknowledged up to its own last entry,
    // even where it carries entries that append lacks (as a request resent after an INCONSISTENCY reply may): the
    // leader then counts entries as matched that the follower never wrote and sends it nothing before them again.
    // MembershipChaosIT caught a replica stuck so in 1 run of 5: its log ended one entry short of the leader's count.
    RaftServerConfigKeys.Log.setAppendEntriesComposeEnabled(properties, false);
    // A replica killed while its log worker wrote a buffer of entries can leave the open segment ending in part of an
    // entry and then the zeros the segment was preallocated with (write(2) returns short when SIGKILL arrives between
    // pages). Ratis reads past an entry cut off by the end of the file, but here the zeros make it a checksum
    // mismatch, and its default policy then refuses the whole log: the replica never starts again. Reading up to the
    // first damaged entry, and cutting the segment there, loses only entries this replica never forced, so never
    // counted towards a majority. Damage before the last segment still stops the start: the next segment's first
    // index then leaves a gap, which Ratis refuses.
    RaftServerConfigKeys.Log.setCorruptionPolicy(properties, RaftServerConfigKeys.Log.CorruptionPolicy.WARN_AND_RETURN);
    return clientProperties(properties);
  }

  /**
   * The largest gRPC message a replica or a client of a shard takes: a client's {@code DUMP} is a query whose answer
   * may be as large as the largest value a client may send (Redis's default {@code proto-max-bulk-len}, 512 MiB),
   * beside the answer's framing (a reshard reads a key in answers of at most 64 MiB). A limit only, not a buffer. (A log entry stays
   * within Ratis's 4 MiB, whose buffer is allocated: a larger key is copied in parts.)
   */
  public static final SizeInBytes MESSAGE_MAX = SizeInBytes.valueOf((512L << 20) + (8L << 20));

  /** {@code properties} with {@link #MESSAGE_MAX}: for every Ratis server and client of a cluster. */
  public static RaftProperties clientProperties(RaftProperties properties) {
    GrpcConfigKeys.setMessageSizeMax(properties, MESSAGE_MAX);
    return properties;
  }

  /** The state machine: the keyspace this replica has applied. */
  public ShardStateMachine stateMachine() {
    return stateMachine;
  }

  /** The Ratis server. */
  public RaftServer server() {
    return server;
  }

  /** Leaves the group's work (the directory keeps everything needed to start again). */
  @Override
  public void close() throws IOException {
    server.close();
  }
}
