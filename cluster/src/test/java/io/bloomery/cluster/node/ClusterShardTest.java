package io.bloomery.cluster.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomery.cluster.slot.HashSlot;
import io.bloomery.server.BloomeryServer;
import io.bloomery.server.ServerConfig;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.proto.RaftProtos;
import org.apache.ratis.protocol.GroupInfoReply;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.exceptions.SetConfigurationException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A shard of three nodes in this JVM: a client's pipelined writes apply in order, batched into fewer log entries;
 * {@code CLUSTER FAILOVER} makes the follower it is sent to the shard's leader, the other nodes redirect to it, and
 * every write acknowledged before the transfer is there after it.
 */
class ClusterShardTest {
  @TempDir Path dir;
  private final List<BloomeryServer> servers = new ArrayList<>();
  private final Map<String, BloomeryServer> byId = new java.util.HashMap<>();

  @AfterEach
  void close() {
    servers.forEach(BloomeryServer::close);
  }

  @Test
  void aNodeAddedToAShardCatchesUpAndOutlivesTheRemovalOfAnother() throws Exception {
    List<Topology.Node> nodes = startShard();
    Topology.Node leader = awaitLeader(nodes, null);
    List<String> items = new ArrayList<>(List.of("BF.MEXISTS", "urls"));
    try (RespConnection c = new RespConnection(leader.port())) {
      for (int i = 0; i < 50; i++) {
        items.add("https://example.com/" + i);
        assertThat(c.call("BF.ADD", "urls", items.get(items.size() - 1))).isEqualTo(":1\r\n");
      }
    }
    String all = "*50\r\n" + ":1\r\n".repeat(50);

    Topology.Node fourth = startNode(3);
    Topology current = topologyOf(leader);
    Topology added = current.withMember("s0", fourth);
    try (RespConnection c = new RespConnection(leader.port())) {
      Topology otherSlots = Topology.plan(current.cluster(), added.nodes(), 2);
      assertThat(c.call("CLUSTER", "SET-TOPOLOGY", otherSlots.encode()))
          .isEqualTo("-ERR a membership change keeps the cluster and its shards' slots\r\n");
    }
    try (RespConnection c = new RespConnection(fourth.port())) {
      assertThat(c.call("CLUSTER", "JOIN-TOPOLOGY", added.encode(), current.encode())).isEqualTo("+OK\r\n");
    }
    // the new node's groups wait, without elections, for their leaders to add it: it would be shut out otherwise
    Thread.sleep(3 * ServerConfig.parse(Map.of()).clusterNodeTimeoutMillis()); // the default election timeout
    Topology.Node follower = nodes.stream().filter(n -> !n.equals(leader)).findFirst().orElseThrow();
    try (RespConnection c = new RespConnection(follower.port())) {
      assertThat(c.call("CLUSTER", "SET-TOPOLOGY", added.encode())).isEqualTo("+OK\r\n");
      assertThat(c.call("CLUSTER", "SET-TOPOLOGY", added.encode())).as("the same change again changes nothing")
          .isEqualTo("+OK\r\n");
    }
    try (RespConnection c = new RespConnection(fourth.port())) {
      assertThat(c.call("READONLY")).isEqualTo("+OK\r\n");
      awaitReply(c, items, all);
      assertThat(c.call("CLUSTER", "NODES").lines().filter(l -> l.contains(" connected")).count()).isEqualTo(4);
    }

    Topology removed = topologyOf(leader).without(follower.id());
    try (RespConnection c = new RespConnection(follower.port())) {
      assertThat(c.call("CLUSTER", "LEAVE")).as("still a member")
          .isEqualTo("-ERR the cluster still lists this node: remove it first (bloomery cluster del-node)\r\n");
    }
    try (RespConnection c = new RespConnection(leader.port())) {
      assertThat(c.call("CLUSTER", "SET-TOPOLOGY", removed.encode())).isEqualTo("+OK\r\n");
    }
    try (RespConnection c = new RespConnection(follower.port())) {
      assertThat(c.call("CLUSTER", "LEAVE")).isEqualTo("+OK\r\n");
      assertThat(c.call("BF.ADD", "urls", "x")).isEqualTo("-CLUSTERDOWN Hash slot not served\r\n");
      assertThat(c.call("CLUSTER", "JOIN-TOPOLOGY", added.encode()))
          .isEqualTo("-ERR this node left a cluster: restart it to join one\r\n");
    }
    byId.get(follower.id()).close();

    // the leader goes too: the two members left of three elect one of them, which holds every acknowledged add
    byId.get(leader.id()).close();
    Topology.Node other = nodes.stream().filter(n -> !n.equals(leader) && !n.equals(follower)).findFirst()
        .orElseThrow();
    Topology.Node successor = awaitLeader(List.of(other, fourth), null);
    try (RespConnection c = new RespConnection(successor.port())) {
      assertThat(c.call("BF.ADD", "urls", "after both left")).isEqualTo(":1\r\n");
      assertThat(c.call(items.toArray(String[]::new))).isEqualTo(all);
    }
  }

  /**
   * A metadata change planned from members the group no longer has (the view of an old leader that has not yet
   * learned it lost its leadership, after a member was added) is refused, and the group keeps its members.
   */
  @Test
  void aMetadataChangePlannedFromMembersTheGroupNoLongerHasIsRefused() throws Exception {
    List<Topology.Node> nodes = startShard();
    awaitLeader(nodes, null);
    List<RaftPeer> all = RaftNode.metaPeers(topologyOf(nodes.get(0)));
    List<RaftPeer> stale = List.copyOf(all.subList(0, 2));
    RaftGroup group = RaftGroup.valueOf(RaftNode.META, all);

    assertThatThrownBy(() -> RaftNode.reconfigure(group, stale, stale, null))
        .isInstanceOf(SetConfigurationException.class).hasMessageContaining("is different than the request");
    assertThat(metaMembers(nodes)).as("members after the refused change").hasSize(3);

    RaftNode.reconfigure(group, all, stale, null); // planned from the members it has: applied
    assertThat(metaMembers(nodes)).as("members after the change").hasSize(2);
  }

  /** The metadata group's members as its leader, asked through any of {@code nodes}, has them. */
  private static java.util.Collection<RaftPeer> metaMembers(List<Topology.Node> nodes) throws Exception {
    List<RaftPeer> peers = RaftNode.metaPeers(Topology.plan("e".repeat(40), nodes, 3));
    long deadline = System.nanoTime() + 30_000_000_000L;
    try (RaftClient c = RaftNode.clientOf(RaftGroup.valueOf(RaftNode.META, peers), 50)) {
      while (true) {
        for (RaftPeer p : peers) {
          GroupInfoReply info = c.getGroupManagementApi(p.getId()).info(RaftNode.META);
          if (info.getRoleInfoProto().getRole() == RaftProtos.RaftPeerRole.LEADER) {
            return info.getGroup().getPeers();
          }
        }
        assertThat(System.nanoTime()).as("a member of the metadata group answers as its leader").isLessThan(deadline);
        Thread.sleep(50);
      }
    }
  }

  /** The topology {@code node}'s metadata group holds. */
  private static Topology topologyOf(Topology.Node node) throws Exception {
    try (RespConnection c = new RespConnection(node.port())) {
      String reply = c.call("CLUSTER", "TOPOLOGY");
      return Topology.parse(reply.substring(reply.indexOf("\r\n") + 2, reply.length() - 2));
    }
  }

  /** Sends {@code command} until it answers {@code expected}: 30 s at most. */
  private static void awaitReply(RespConnection c, List<String> command, String expected) throws Exception {
    awaitReply(c, command, expected::equals);
  }

  /**
   * A replica that Ratis shut down while its node runs (as it does to a member just added that stands for election
   * before its log holds the configuration that adds it) is started again from its directory: it takes the writes
   * made meanwhile, and its counter is exactly the increments, none applied twice.
   */
  @Test
  void aReplicaRatisShutDownWhileItsNodeRunsIsStartedAgainAndCatchesUp() throws Exception {
    List<Topology.Node> nodes = startShard();
    Topology.Node leader = awaitLeader(nodes, null);
    Topology.Node follower = nodes.stream().filter(n -> !n.equals(leader)).findFirst().orElseThrow();
    List<String> items = new ArrayList<>(List.of("BF.MEXISTS", "urls"));
    try (RespConnection c = new RespConnection(leader.port())) {
      assertThat(c.call("CMS.INITBYDIM", "counts", "1000", "5")).isEqualTo("+OK\r\n");
      for (int i = 0; i < 20; i++) {
        items.add("before-" + i);
        assertThat(c.call("BF.ADD", "urls", items.get(items.size() - 1))).isEqualTo(":1\r\n");
        assertThat(c.call("CMS.INCRBY", "counts", "x", "1")).isEqualTo("*1\r\n:" + (i + 1) + "\r\n");
      }
    }
    RaftNode node = (RaftNode) byId.get(follower.id()).context().replica();
    org.apache.ratis.server.RaftServer.Division replica = node.division(topologyOf(leader).shardOfNode(follower.id()));
    replica.close();
    assertThat(replica.getInfo().getLifeCycleState()).isEqualTo(org.apache.ratis.util.LifeCycle.State.CLOSED);

    try (RespConnection c = new RespConnection(leader.port())) {
      for (int i = 0; i < 20; i++) {
        items.add("after-" + i);
        assertThat(c.call("BF.ADD", "urls", items.get(items.size() - 1))).isEqualTo(":1\r\n");
        assertThat(c.call("CMS.INCRBY", "counts", "x", "1")).isEqualTo("*1\r\n:" + (21 + i) + "\r\n");
      }
    }
    try (RespConnection c = new RespConnection(follower.port())) {
      assertThat(c.call("READONLY")).isEqualTo("+OK\r\n");
      awaitReply(c, items, "*40\r\n" + ":1\r\n".repeat(40));
      // the last CMS.INCRBY followed the last BF.ADD, maybe in a later entry the follower applies after it: wait
      // until the count reaches 40, then it must be exactly 40 (none applied twice)
      List<String> query = List.of("CMS.QUERY", "counts", "x");
      awaitReply(c, query, reply -> Long.parseLong(reply.substring(reply.indexOf(':') + 1).trim()) >= 40);
      assertThat(c.call(query.toArray(String[]::new))).isEqualTo("*1\r\n:40\r\n");
    }
    assertThat(node.division(topologyOf(leader).shardOfNode(follower.id())).getInfo().isAlive()).isTrue();
  }

  /**
   * A write larger than one log entry (the {@code RESTORE} of a filter whose payload is 9.6 MB, a transaction of 5 MiB
   * of items, RedisBloom's {@code BF.LOADCHUNK} of that filter's chunks, a 5.4 MB Bloomery file once its leader has
   * all its chunks) goes through the shard's log in parts and applies at its last part, alike on every replica; the
   * writes after it go on.
   */
  @Test
  void aWriteLargerThanOneLogEntryAppliesInPartsOnEveryReplica() throws Exception {
    List<Topology.Node> nodes = startShard();
    Topology.Node leader = awaitLeader(nodes, null);
    // a filter nearly half its bits set, so that its payload does not compress: 7.3 million items in 9.6 MB
    io.bloomery.scalable.ScalableBloomFilter filter =
        io.bloomery.scalable.ScalableBloomFilter.createNonScaling(8_000_000, 0.01);
    for (int i = 0; i < 7_300_000; i++) {
      filter.add(bytes("item-" + i));
    }
    filter.add(bytes("x"));
    filter.add(bytes("y"));
    byte[] payload = io.bloomery.server.rdb.DumpPayload.dump(filter);
    assertThat(payload.length).isGreaterThan((int) Proposals.MAX_COMMAND_BYTES * 2);
    String first = "a".repeat(5 << 19);
    String second = "b".repeat(5 << 19);
    try (RespConnection c = new RespConnection(leader.port())) {
      assertThat(c.callBytes(bytes("RESTORE"), bytes("copy"), bytes("0"), payload))
          .asString(StandardCharsets.US_ASCII).isEqualTo("+OK\r\n");
      assertThat(c.call("MULTI")).isEqualTo("+OK\r\n");
      assertThat(c.call("CF.ADD", "items", first)).isEqualTo("+QUEUED\r\n");
      assertThat(c.call("CF.ADD", "items", second)).isEqualTo("+QUEUED\r\n");
      assertThat(c.call("EXEC")).isEqualTo("*2\r\n:1\r\n:1\r\n");
      assertThat(c.call("WATCH", "items")).isEqualTo("+OK\r\n");
      assertThat(c.call("MULTI")).isEqualTo("+OK\r\n");
      assertThat(c.call("CF.ADD", "items", first)).isEqualTo("+QUEUED\r\n");
      assertThat(c.call("CF.ADD", "items", second)).isEqualTo("+QUEUED\r\n");
      assertThat(c.call("EXEC")).as("its watched keys could change between its parts")
          .startsWith("-ERR a transaction under WATCH of " + (2 * (5 << 19) + 2 * 6 + 2 * 5) + " bytes");
      assertThat(c.call("BF.ADD", "copy", "after")).isEqualTo(":1\r\n");
      // RedisBloom's SCANDUMP chunks load through the log too, a chunk larger than one entry in parts
      for (RespConnection.Chunk chunk : c.scandump("copy")) {
        assertThat(c.loadChunk("loaded", chunk)).isEqualTo("+OK\r\n");
      }
      // a Bloomery file (a blocked filter's SCANDUMP: its header, then its body in chunks) is staged on the leader
      // and goes through the log whole, in parts: 5.4 MB here
      assertThat(c.call("BF.RESERVE", "blocked", "0.001", "3000000", "LAYOUT", "BLOCKED")).isEqualTo("+OK\r\n");
      assertThat(c.call("BF.MADD", "blocked", "x", "y", "z")).isEqualTo("*3\r\n:1\r\n:1\r\n:1\r\n");
      List<RespConnection.Chunk> file = c.scandump("blocked");
      assertThat(file).hasSizeGreaterThan(1);
      assertThat(file.stream().mapToLong(chunk -> chunk.data().length).sum())
          .isGreaterThan(Proposals.MAX_COMMAND_BYTES);
      for (RespConnection.Chunk chunk : file) {
        assertThat(c.loadChunk("fromFile", chunk)).isEqualTo("+OK\r\n");
      }
    }
    for (Topology.Node n : nodes) {
      try (RespConnection c = new RespConnection(n.port())) {
        assertThat(c.call("READONLY")).isEqualTo("+OK\r\n");
        awaitReply(c, List.of("BF.EXISTS", "copy", "after"), ":1\r\n");
        assertThat(c.call("BF.MEXISTS", "copy", "x", "y", "item-7299999")).as("node %s", n.id())
            .isEqualTo("*3\r\n:1\r\n:1\r\n:1\r\n");
        assertThat(c.call("CF.COUNT", "items", first)).as("node %s: the watched transaction applied nothing", n.id())
            .isEqualTo(":1\r\n");
        assertThat(c.call("CF.COUNT", "items", second)).isEqualTo(":1\r\n");
        assertThat(c.call("BF.CARD", "copy")).isEqualTo(":" + (filter.insertedCount() + 1) + "\r\n");
        assertThat(c.call("BF.MEXISTS", "loaded", "x", "after", "item-0")).isEqualTo("*3\r\n:1\r\n:1\r\n:1\r\n");
        assertThat(c.call("BF.CARD", "loaded")).isEqualTo(":" + (filter.insertedCount() + 1) + "\r\n");
        assertThat(c.call("BF.MEXISTS", "fromFile", "x", "y", "z")).as("node %s", n.id())
            .isEqualTo("*3\r\n:1\r\n:1\r\n:1\r\n");
        assertThat(c.call("BF.CARD", "fromFile")).isEqualTo(":3\r\n");
        assertThat(c.call("BF.INFO", "fromFile", "CAPACITY")).isEqualTo(c.call("BF.INFO", "blocked", "CAPACITY"));
      }
    }
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  /**
   * A key whose DUMP payload is larger than one export answer ({@code cluster.export} answers at most 4 MiB of it) is
   * read from its source in parts (1 MiB here, 64 MiB by default) and staged on its target as they come: the moved
   * key's bits are the source's, byte for byte. Two shards of one node each; the key is a filter for 8 million items
   * at 1 % (9.6 MB) loaded with random bits, so that its payload does not compress. {@code -Dcluster.bigKeyItems=N}
   * sizes it for N items (1.2 bytes an item) and {@code -Dcluster.bigKeyPartBytes=B} sets the parts.
   */
  @Test
  void aKeyLargerThanOneExportAnswerMovesWholeInParts() throws Exception {
    List<Topology.Node> nodes = List.of(startNode(0), startNode(1));
    Topology planned = Topology.plan("f".repeat(40), nodes, 1);
    join(planned, nodes);
    Topology.Shard from = planned.shard("s0");
    int slot = from.slots().get(from.slots().size() - 1).last(); // a reshard moves the source's highest slots
    String key = null;
    for (int i = 0; key == null; i++) {
      if (HashSlot.of(bytes("big" + i)) == slot) {
        key = "big" + i;
      }
    }
    long items = Long.getLong("cluster.bigKeyItems", 8_000_000);
    Topology.Node source = nodes.stream().filter(n -> n.id().equals(from.members().get(0))).findFirst().orElseThrow();
    Topology.Node target = nodes.stream().filter(n -> n != source).findFirst().orElseThrow();
    byte[] before;
    try (RespConnection c = new RespConnection(source.port())) {
      awaitReply(c, List.of("BF.ADD", "{" + key + "}probe", "x"), reply -> !reply.startsWith("-"));
      // the key's header from a filter of that size, then its bits: random, loaded chunk by chunk
      io.bloomery.scalable.ScalableBloomFilter shape =
          io.bloomery.scalable.ScalableBloomFilter.createNonScaling(items, 0.01);
      java.util.SplittableRandom random = new java.util.SplittableRandom(20261205);
      for (io.bloomery.format.RedisBloomDump.Chunk chunk = io.bloomery.format.RedisBloomDump.scanDump(shape, 0);
          !chunk.isEnd(); chunk = io.bloomery.format.RedisBloomDump.scanDump(shape, chunk.iterator())) {
        byte[] data = chunk.data();
        if (chunk.iterator() > 1) { // not the header
          random.nextBytes(data);
        }
        assertThat(c.loadChunk(key, new RespConnection.Chunk(chunk.iterator(), data))).isEqualTo("+OK\r\n");
      }
      assertThat(c.call("BF.ADD", key, "added")).isEqualTo(":1\r\n");
      before = scandumpDigest(c, key);
      System.setProperty(Reshard.PART_BYTES_PROPERTY, System.getProperty("cluster.bigKeyPartBytes", "1048576"));
      try {
        assertThat(c.timeout(600_000).call("CLUSTER", "RESHARD", "s0", "s1", "1")).as("the reshard's report")
            .contains("moved 1 slot");
      } finally {
        System.clearProperty(Reshard.PART_BYTES_PROPERTY);
      }
      assertThat(c.call("BF.EXISTS", key, "added")).startsWith("-MOVED " + slot + " ");
    }
    try (RespConnection c = new RespConnection(target.port())) {
      assertThat(c.call("BF.EXISTS", key, "added")).isEqualTo(":1\r\n");
      assertThat(scandumpDigest(c, key)).as("the moved key's header and bits are the source's").isEqualTo(before);
    }
  }

  /** The SHA-256 of a BF key's {@code BF.SCANDUMP} chunks, iterators and data. */
  private static byte[] scandumpDigest(RespConnection c, String key) throws Exception {
    java.security.MessageDigest sha = java.security.MessageDigest.getInstance("SHA-256");
    long[] payloadBytes = {0};
    c.scandump(key, chunk -> {
      sha.update(bytes(Long.toString(chunk.iterator())));
      sha.update(chunk.data());
      payloadBytes[0] += chunk.data().length;
    });
    assertThat(payloadBytes[0]).as("the key is larger than one export answer")
        .isGreaterThan(io.bloomery.cluster.shard.ShardStateMachine.EXPORT_INLINE_MAX);
    return sha.digest();
  }

  @Test
  void pipelinedWritesApplyInOrderInFewerLogEntriesAndAReadWaitsForThem() throws Exception {
    Topology.Node leader = awaitLeader(startShard(), null);
    try (RespConnection c = new RespConnection(leader.port())) {
      assertThat(c.call("CMS.INITBYDIM", "counts", "1000", "5")).isEqualTo("+OK\r\n");
      long before = appliedIndex(c);
      List<String[]> commands = new ArrayList<>();
      for (int i = 0; i < 200; i++) {
        commands.add(new String[] {"CMS.INCRBY", "counts", "x", "1"});
      }
      commands.add(new String[] {"CMS.QUERY", "counts", "x"}); // a read: runs once the 200 writes are answered
      for (int i = 0; i < 200; i++) {
        commands.add(new String[] {"CMS.INCRBY", "counts", "x", "1"});
        commands.add(new String[] {"BF.ADD", "seen", "item-" + (i % 100)}); // the second add of an item answers 0
      }
      List<String> replies = c.pipeline(commands);
      List<String> expected = new ArrayList<>();
      for (int i = 1; i <= 200; i++) {
        expected.add("*1\r\n:" + i + "\r\n");
      }
      expected.add("*1\r\n:200\r\n");
      for (int i = 0; i < 200; i++) {
        expected.add("*1\r\n:" + (201 + i) + "\r\n");
        expected.add(i < 100 ? ":1\r\n" : ":0\r\n");
      }
      assertThat(replies).containsExactlyElementsOf(expected);
      long entries = appliedIndex(c) - before;
      assertThat(entries).as("log entries for 400 pipelined writes").isPositive().isLessThan(400);
    }
  }

  /** The shard leader's applied log index, from CLUSTER SHARDS on it (the largest replication offset it lists). */
  private static long appliedIndex(RespConnection c) throws Exception {
    java.util.regex.Matcher m = java.util.regex.Pattern.compile("replication-offset\r\n:(\\d+)")
        .matcher(c.call("CLUSTER", "SHARDS"));
    long max = -1;
    while (m.find()) {
      max = Math.max(max, Long.parseLong(m.group(1)));
    }
    assertThat(max).as("CLUSTER SHARDS names a replication offset").isNotNegative();
    return max;
  }

  @Test
  void theReplicaSentClusterFailoverLeadsItsShardAndHoldsEveryAcknowledgedWrite() throws Exception {
    List<Topology.Node> nodes = startShard();
    Topology.Node leader = awaitLeader(nodes, null);
    Topology.Node successor = nodes.stream().filter(n -> !n.equals(leader)).findFirst().orElseThrow();

    List<String> items = new ArrayList<>();
    try (RespConnection c = new RespConnection(leader.port())) {
      for (int i = 0; i < 50; i++) {
        items.add("https://example.com/" + i);
        assertThat(c.call("BF.ADD", "urls", items.get(i))).isEqualTo(":1\r\n");
      }
      assertThat(c.call("CLUSTER", "FAILOVER")).isEqualTo("-ERR You should send CLUSTER FAILOVER to a replica\r\n");
    }
    // a Bloomery file whose header the old leader staged: the rest, sent after the failover, cannot be applied
    RespConnection staging = new RespConnection(leader.port());
    assertThat(staging.call("BF.RESERVE", "{urls}file", "0.01", "1000", "LAYOUT", "BLOCKED")).isEqualTo("+OK\r\n");
    List<RespConnection.Chunk> file = staging.scandump("{urls}file");
    assertThat(staging.loadChunk("{urls}copy", file.get(0))).isEqualTo("+OK\r\n");
    try (RespConnection c = new RespConnection(successor.port())) {
      assertThat(c.call("CLUSTER", "FAILOVER")).isEqualTo("+OK\r\n");
      assertThat(c.call("CLUSTER", "NODES")).contains(successor.id() + " 127.0.0.1:" + successor.port() + "@"
          + successor.busPort() + " myself,master ");
      List<String> args = new ArrayList<>(List.of("BF.MEXISTS", "urls"));
      args.addAll(items);
      assertThat(c.call(args.toArray(String[]::new))).isEqualTo("*50\r\n" + ":1\r\n".repeat(50));
      assertThat(c.call("BF.ADD", "urls", "after the failover")).isEqualTo(":1\r\n");
    }
    assertThat(awaitLeader(nodes, successor)).isEqualTo(successor);
    try (RespConnection c = new RespConnection(leader.port())) {
      assertThat(c.call("BF.ADD", "urls", "sent to the old leader")).isEqualTo("-MOVED " + HashSlot.of("urls".getBytes(StandardCharsets.UTF_8)) + " 127.0.0.1:"
          + successor.port() + "\r\n");
    }
    try (staging) {
      assertThat(staging.loadChunk("{urls}copy", file.get(1))).isEqualTo("-" + ClusterFileLoads.LEADER_LOST + "\r\n");
      assertThat(staging.loadChunk("{urls}copy", file.get(1))).as("abandoned: only a header starts a load again")
          .startsWith("-MOVED ");
      assertThat(staging.call("READONLY")).isEqualTo("+OK\r\n");
      assertThat(staging.call("EXISTS", "{urls}copy")).isEqualTo(":0\r\n");
    }
  }

  @Test
  void infoMetricsAndHealthDescribeTheShardReplicaOnEveryMember() throws Exception {
    List<Topology.Node> nodes = startShard();
    Topology.Node leader = awaitLeader(nodes, null);
    try (RespConnection c = new RespConnection(leader.port())) {
      assertThat(c.call("BF.ADD", "{u}a", "x")).isEqualTo(":1\r\n");
      assertThat(c.call("CF.ADD", "{u}b", "x")).isEqualTo(":1\r\n");
      assertThat(c.call("CMS.INITBYDIM", "{u}c", "100", "5")).isEqualTo("+OK\r\n");
      String info = c.call("INFO");
      assertThat(info).contains("redis_mode:cluster\r\n").contains("# Replication\r\nrole:master\r\n")
          .contains("db0:keys=3,expires=0,").contains("keys_bloom:1\r\n").contains("keys_cuckoo:1\r\n");
      assertThat(info).as("the replica's filters, not the node's empty keyspace")
          .doesNotContain("\r\nused_memory:0\r\n");
      awaitReply(c, List.of("INFO", "replication"), s -> s.contains("connected_slaves:2\r\n"));
      assertThat(c.call("INFO", "replication")).containsPattern("slave0:ip=127\\.0\\.0\\.1,port=\\d+,state=online,"
          + "offset=\\d+,lag=0\r\n");
    }
    for (Topology.Node n : nodes) {
      if (n.equals(leader)) {
        continue;
      }
      try (RespConnection c = new RespConnection(n.port())) {
        awaitReply(c, List.of("INFO", "keyspace"), s -> s.contains("db0:keys=3,"));
        assertThat(c.call("INFO", "replication")).contains("role:slave\r\nmaster_host:127.0.0.1\r\nmaster_port:"
            + leader.port() + "\r\nmaster_link_status:up\r\n");
      }
      BloomeryServer server = byId.get(n.id());
      HttpClient http = HttpClient.newHttpClient();
      String metrics = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.httpPort()
          + "/metrics")).build(), HttpResponse.BodyHandlers.ofString()).body();
      assertThat(metrics).contains("\nbloomery_keys 3.0\n");
      String health = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.httpPort()
          + "/health")).build(), HttpResponse.BodyHandlers.ofString()).body();
      assertThat(health).contains("\"keys\":3");
    }
  }

  /**
   * SAVE on a cluster node snapshots its shard's replica and the metadata group. Restarted, the node applies only
   * the entries after its snapshots (Ratis starts applying at a snapshot's index), so it knows the cluster and holds
   * its keys through the two snapshots, and it follows the log written while it was down.
   */
  @Test
  void saveSnapshotsBothGroupsAndAMemberRestartsFromThem() throws Exception {
    List<Topology.Node> nodes = startShard();
    Topology.Node leader = awaitLeader(nodes, null);
    List<String> exists = new ArrayList<>(List.of("BF.MEXISTS", "urls"));
    try (RespConnection c = new RespConnection(leader.port())) {
      for (int i = 0; i < 20; i++) {
        exists.add("https://example.com/" + i);
        assertThat(c.call("BF.ADD", "urls", exists.get(exists.size() - 1))).isEqualTo(":1\r\n");
      }
    }
    int x = nodes.indexOf(nodes.stream().filter(n -> !n.equals(leader)).findFirst().orElseThrow());
    Topology.Node follower = nodes.get(x);
    try (RespConnection c = new RespConnection(follower.port())) {
      awaitReply(c, List.of("INFO", "keyspace"), r -> r.contains("db0:keys=1,"));
      assertThat(c.call("SAVE")).isEqualTo("+OK\r\n");
      assertThat(c.call("BGSAVE")).isEqualTo("+Background saving started\r\n");
    }
    BloomeryServer stopped = byId.get(follower.id());
    stopped.close();
    servers.remove(stopped);
    Path raftDir = dir.resolve("n" + x).resolve("raft");
    List<Path> groups;
    try (var listed = Files.list(raftDir)) {
      groups = listed.filter(Files::isDirectory).filter(g -> Files.isDirectory(g.resolve("current"))).toList();
    }
    assertThat(groups).as("the shard's group and the metadata group").hasSize(2);
    for (Path g : groups) {
      try (var files = Files.list(g.resolve("sm"))) {
        assertThat(files.map(f -> f.getFileName().toString()))
            .as("snapshots in %s", g).anyMatch(f -> f.matches("snapshot\\.\\d+_\\d+"));
      }
    }
    try (RespConnection c = new RespConnection(leader.port())) {
      assertThat(c.call("BF.ADD", "urls", "while it was down")).isEqualTo(":1\r\n");
    }
    exists.add("while it was down");
    String all = "*21\r\n" + ":1\r\n".repeat(21);
    startNode(x, follower.port(), follower.busPort());
    try (RespConnection c = new RespConnection(follower.port())) {
      awaitReply(c, List.of("CLUSTER", "NODES"), r -> nodes.stream().allMatch(n -> r.contains(n.id())));
      assertThat(c.call("READONLY")).isEqualTo("+OK\r\n");
      awaitReply(c, exists, r -> r.equals(all));
    }
  }

  /**
   * MULTI/EXEC on a cluster node: the commands of one slot apply together through the shard's log (a read sees the
   * transaction's earlier writes) and reach the followers; a transaction across slots or with a keyless command is
   * discarded, one sent to a follower is redirected; under WATCH, another client's change makes EXEC run nothing.
   */
  @Test
  void aTransactionOfOneSlotAppliesTogetherThroughTheLog() throws Exception {
    List<Topology.Node> nodes = startShard();
    Topology.Node leader = awaitLeader(nodes, null);
    try (RespConnection c = new RespConnection(leader.port())) {
      assertThat(c.call("MULTI")).isEqualTo("+OK\r\n");
      assertThat(c.call("BF.ADD", "{t}seen", "x")).isEqualTo("+QUEUED\r\n");
      assertThat(c.call("CMS.INITBYDIM", "{t}counts", "100", "5")).isEqualTo("+QUEUED\r\n");
      assertThat(c.call("CMS.INCRBY", "{t}counts", "x", "2")).isEqualTo("+QUEUED\r\n");
      assertThat(c.call("BF.EXISTS", "{t}seen", "x")).isEqualTo("+QUEUED\r\n");
      assertThat(c.call("EXEC")).isEqualTo("*4\r\n:1\r\n+OK\r\n*1\r\n:2\r\n:1\r\n");

      assertThat(c.call("MULTI")).isEqualTo("+OK\r\n");
      assertThat(c.call("EXEC")).isEqualTo("*0\r\n");
      assertThat(c.call("MULTI")).isEqualTo("+OK\r\n");
      c.call("BF.ADD", "a", "x");
      c.call("BF.ADD", "b", "x");
      assertThat(c.call("EXEC")).isEqualTo("-EXECABORT Transaction discarded because of: CROSSSLOT Keys in request "
          + "don't hash to the same slot\r\n");
      assertThat(c.call("MULTI")).isEqualTo("+OK\r\n");
      c.call("PING");
      assertThat(c.call("EXEC")).startsWith("-EXECABORT Transaction discarded because of: PING is not available in "
          + "a transaction on a cluster node");
      assertThat(c.call("BF.EXISTS", "a", "x")).as("nothing of a discarded transaction ran").isEqualTo(":0\r\n");

      // WATCH: a change by another client between WATCH and EXEC makes EXEC run nothing
      assertThat(c.call("WATCH", "{t}seen")).isEqualTo("+OK\r\n");
      try (RespConnection other = new RespConnection(leader.port())) {
        assertThat(other.call("BF.ADD", "{t}seen", "z")).isEqualTo(":1\r\n");
      }
      assertThat(c.call("MULTI")).isEqualTo("+OK\r\n");
      c.call("BF.ADD", "{t}seen", "w");
      assertThat(c.call("EXEC")).isEqualTo("*-1\r\n");
      assertThat(c.call("BF.EXISTS", "{t}seen", "w")).isEqualTo(":0\r\n");
      assertThat(c.call("WATCH", "{t}seen", "{t}counts")).isEqualTo("+OK\r\n");
      assertThat(c.call("MULTI")).isEqualTo("+OK\r\n");
      c.call("BF.ADD", "{t}seen", "w");
      assertThat(c.call("EXEC")).as("unchanged: it runs").isEqualTo("*1\r\n:1\r\n");
      assertThat(c.call("WATCH", "{t}seen")).isEqualTo("+OK\r\n");
      assertThat(c.call("UNWATCH")).isEqualTo("+OK\r\n");
      try (RespConnection other = new RespConnection(leader.port())) {
        assertThat(other.call("BF.ADD", "{t}seen", "v")).isEqualTo(":1\r\n");
      }
      assertThat(c.call("MULTI")).isEqualTo("+OK\r\n");
      c.call("BF.ADD", "{t}seen", "u");
      assertThat(c.call("EXEC")).as("unwatched: it runs").isEqualTo("*1\r\n:1\r\n");
      assertThat(c.call("WATCH", "a", "b")).isEqualTo("-CROSSSLOT Keys in request don't hash to the same slot\r\n");
    }
    Topology.Node follower = nodes.stream().filter(n -> !n.equals(leader)).findFirst().orElseThrow();
    try (RespConnection c = new RespConnection(follower.port())) {
      assertThat(c.call("MULTI")).isEqualTo("+OK\r\n");
      c.call("BF.ADD", "{t}seen", "y");
      assertThat(c.call("EXEC")).isEqualTo("-MOVED " + HashSlot.of("{t}seen".getBytes(StandardCharsets.UTF_8))
          + " 127.0.0.1:" + leader.port() + "\r\n");
      assertThat(c.call("WATCH", "{t}seen")).isEqualTo("-MOVED " + HashSlot.of("{t}seen".getBytes(
          StandardCharsets.UTF_8)) + " 127.0.0.1:" + leader.port() + "\r\n");
      assertThat(c.call("READONLY")).isEqualTo("+OK\r\n");
      awaitReply(c, List.of("CMS.QUERY", "{t}counts", "x"), r -> r.equals("*1\r\n:2\r\n"));
      assertThat(c.call("BF.EXISTS", "{t}seen", "y")).as("the redirected transaction did not run")
          .isEqualTo(":0\r\n");
    }
  }

  /** Sends {@code command} until its reply passes {@code check}: 30 s at most. */
  private static void awaitReply(RespConnection c, List<String> command, java.util.function.Predicate<String> check)
      throws Exception {
    long deadline = System.nanoTime() + 30_000_000_000L;
    String last;
    while (!check.test(last = c.call(command.toArray(String[]::new)))) {
      assertThat(System.nanoTime()).as("%s (last: %s)", command, last).isLessThan(deadline);
      Thread.sleep(50);
    }
  }

  private List<Topology.Node> startShard() throws Exception {
    List<Topology.Node> nodes = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      nodes.add(startNode(i));
    }
    join(Topology.plan("e".repeat(40), nodes, 3), nodes);
    return nodes;
  }

  /** Makes {@code nodes} the cluster of {@code planned}. */
  private static void join(Topology planned, List<Topology.Node> nodes) throws Exception {
    String topology = planned.encode();
    for (Topology.Node n : nodes) {
      try (RespConnection c = new RespConnection(n.port())) {
        assertThat(c.call("CLUSTER", "JOIN-TOPOLOGY", topology)).isEqualTo("+OK\r\n");
      }
    }
    try (RespConnection c = new RespConnection(nodes.get(0).port())) {
      assertThat(c.call("CLUSTER", "COMMIT-TOPOLOGY", topology)).isEqualTo("+OK\r\n");
    }
  }

  /**
   * Starts cluster node {@code i} (not in a cluster yet) on free ports; again on others if one was taken between
   * finding it free and binding it (a connection's ephemeral port), in a directory made anew.
   */
  private Topology.Node startNode(int i) throws Exception {
    for (int attempt = 1; ; attempt++) {
      try {
        return startNode(i, RespConnection.freePort(), RespConnection.freePort());
      } catch (java.io.IOException e) {
        String why = String.valueOf(e.getMessage());
        if (attempt == 5 || !(why.contains("Address already in use") || why.contains("cannot start the cluster bus"))) {
          throw e;
        }
        try (java.util.stream.Stream<Path> files = Files.walk(dir.resolve("n" + i))) {
          for (Path f : files.sorted(java.util.Comparator.reverseOrder()).toList()) {
            Files.delete(f);
          }
        }
      }
    }
  }

  /** Starts cluster node {@code i} on these ports (its directory as it is: new, or of a stopped node). */
  private Topology.Node startNode(int i, int port, int bus) throws Exception {
    BloomeryServer server = BloomeryServer.start(ServerConfig.parse(Map.of(), "--cluster-enabled", "yes", "--port",
        Integer.toString(port), "--cluster-port", Integer.toString(bus), "--http-port",
        Integer.toString(RespConnection.freePort()), "--dir", dir.resolve("n" + i).toString()));
    servers.add(server);
    try (RespConnection c = new RespConnection(port)) {
      Topology.Node node = new Topology.Node(c.call("CLUSTER", "MYID").substring(5, 45), "127.0.0.1", port,
          "127.0.0.1", bus);
      byId.put(node.id(), server);
      return node;
    }
  }

  /**
   * The shard's leader once every node names the same one of them in CLUSTER NODES (and, if {@code expected} is
   * given, names it): 60 s at most.
   */
  private static Topology.Node awaitLeader(List<Topology.Node> nodes, Topology.Node expected) throws Exception {
    long deadline = System.nanoTime() + 60_000_000_000L;
    while (true) {
      List<String> named = new ArrayList<>();
      for (Topology.Node n : nodes) {
        try (RespConnection c = new RespConnection(n.port())) {
          c.call("CLUSTER", "NODES").lines().filter(l -> l.contains(" master ") || l.contains(",master "))
              .forEach(l -> named.add(l.replaceFirst("^txt:", "").split(" ")[0]));
        }
      }
      java.util.Optional<Topology.Node> leader = named.size() == nodes.size()
          && named.stream().distinct().count() == 1 && (expected == null || named.get(0).equals(expected.id()))
          ? nodes.stream().filter(n -> n.id().equals(named.get(0))).findFirst() : java.util.Optional.empty();
      if (leader.isPresent()) { // one of these nodes: not a stopped one they still name
        return leader.get();
      }
      assertThat(System.nanoTime()).as("every node names one leader (%s)", named).isLessThan(deadline);
      Thread.sleep(50);
    }
  }
}
