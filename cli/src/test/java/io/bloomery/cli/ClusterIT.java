package io.bloomery.cli;

import static io.bloomery.cli.ClusterNodes.command;
import static io.bloomery.cli.ClusterNodes.freePort;
import static io.bloomery.cli.ClusterNodes.leaderPort;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomery.cli.ClusterNodes.Run;
import io.bloomery.cluster.node.Topology;
import io.bloomery.cluster.slot.HashSlot;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.JedisCluster;
import redis.clients.jedis.exceptions.JedisDataException;
import redis.clients.jedis.exceptions.JedisMovedDataException;
import redis.clients.jedis.util.SafeEncoder;

/**
 * Cluster nodes as real processes ({@code bloomery serve --cluster-enabled yes}) on loopback, made a cluster by
 * {@code bloomery cluster create}, used by cluster clients nobody here wrote (JedisCluster, {@code redis-cli -c}),
 * through a {@code kill -9} of a shard's leader.
 */
class ClusterIT {
  @TempDir(cleanup = CleanupMode.ON_SUCCESS) Path dir; // a failed run keeps its nodes' logs
  private ClusterNodes nodes;

  @BeforeEach
  void nodes() {
    nodes = new ClusterNodes(dir);
  }

  @AfterEach
  void stopNodes() throws InterruptedException {
    nodes.close();
  }

  /**
   * Six nodes, two shards of three: JedisCluster and {@code redis-cli -c} add and check items in keys over every
   * eighth of the slots; a node answers a key of the other shard with MOVED to that shard's leader; the leader of
   * the second shard is killed with SIGKILL (so the first shard's nodes learn its successor through the metadata
   * group), and the same clients keep working with every acknowledged add still there, also on the killed node once
   * it is back.
   */
  @Test
  void clusterClientsKeepEveryAcknowledgedAddThroughAKilledLeader() throws Exception {
    List<Integer> ports = nodes.start(6, 4);
    int wildcardNode = ports.get(4);
    String[] addresses = ClusterNodes.addresses(ports);
    Run created = nodes.create(3, addresses);
    assertThat(created.status()).as(created.toString()).isZero();
    assertThat(created.out()).contains("6 nodes, 2 shard(s) of 3 members").contains(" myself,")
        .contains(" master - ").contains("127.0.0.1:" + wildcardNode + "@" + nodes.busPort(wildcardNode));
    Run again = nodes.create(3, addresses);
    assertThat(again.status()).isEqualTo(1);
    assertThat(again.err()).contains("is already in a cluster");
    Run status = nodes.cli("cluster", "status", addresses[5]);
    assertThat(status.status()).as(status.toString()).isZero();
    assertThat(status.out()).contains("cluster_state:ok shards:2 nodes:6").contains("slots 0-8191")
        .contains("slots 8192-16383").contains("leader").contains("follower").contains("applied ").contains("lag ");

    Set<HostAndPort> seeds = Set.of(new HostAndPort("127.0.0.1", ports.get(1)));
    Map<String, String> acknowledged = new LinkedHashMap<>();
    String secondShardKey = null;
    try (JedisCluster cluster = new JedisCluster(seeds, DefaultJedisClientConfig.builder().socketTimeoutMillis(10_000)
        .build(), 100, Duration.ofSeconds(40))) {
      Set<Integer> eighths = new HashSet<>();
      for (int i = 0; i < 200; i++) {
        String key = "key:" + i;
        assertThat(cluster.bfAdd(key, "before-" + i)).isTrue();
        acknowledged.put(key, "before-" + i);
        int slot = HashSlot.of(key.getBytes(StandardCharsets.UTF_8));
        eighths.add(slot / 2048);
        if (slot >= 8192) {
          secondShardKey = key;
        }
      }
      assertThat(eighths).as("keys in every eighth of the slots").hasSize(8);
      assertThat(redisCli(ports.get(2), "BF.ADD", "cli-key", "cli-item")).isEqualTo("1");
      assertThat(redisCli(ports.get(4), "BF.EXISTS", "cli-key", "cli-item")).isEqualTo("1");

      int secondLeader = leaderPort(ports.get(0), 8192);
      assertThat(ports.subList(3, 6)).contains(secondLeader);
      try (Jedis firstShardNode = new Jedis("127.0.0.1", ports.get(0))) {
        String key = secondShardKey;
        assertThatThrownBy(() -> firstShardNode.sendCommand(command("BF.EXISTS"), key, "x"))
            .isInstanceOf(JedisMovedDataException.class)
            .hasMessage("MOVED " + HashSlot.of(key.getBytes(StandardCharsets.UTF_8)) + " 127.0.0.1:" + secondLeader);
      }

      // a fixed filter's SCANDUMP (a Bloomery file) loaded through the cluster client into a key of the other shard:
      // its leader stages the chunks, then sends the file whole through its shard's log
      String source = "{" + secondShardKey + "}:blocked";
      String copy = "file-copy";
      for (int i = 0; HashSlot.of(copy.getBytes(StandardCharsets.UTF_8)) >= 8192; i++) {
        copy = "file-copy-" + i;
      }
      String copyKey = copy;
      assertThat(SafeEncoder.encode((byte[]) cluster.sendCommand(source, command("BF.RESERVE"), source, "0.01",
          "10000", "LAYOUT", "BLOCKED"))).isEqualTo("OK");
      List<String> fileItems = new ArrayList<>();
      for (int i = 0; i < 100; i++) {
        fileItems.add("file-item-" + i);
      }
      assertThat(cluster.bfMAdd(source, fileItems.toArray(String[]::new))).containsOnly(true);
      int fileChunks = 0;
      for (long iterator = 0; ; fileChunks++) {
        Map.Entry<Long, byte[]> chunk = cluster.bfScanDump(source, iterator);
        iterator = chunk.getKey();
        if (iterator == 0) {
          break;
        }
        assertThat(cluster.bfLoadChunk(copyKey, iterator, chunk.getValue())).isEqualTo("OK");
      }
      assertThat(fileChunks).as("a header, then the body").isEqualTo(2);
      assertThat(cluster.bfMExists(copyKey, fileItems.toArray(String[]::new))).containsOnly(true);
      assertThat(cluster.bfCard(copyKey)).isEqualTo(100L);
      assertThatThrownBy(() -> cluster.bfLoadChunk("bad-file", 1, SafeEncoder.encode("BLMF and the rest of a file")))
          .isInstanceOf(JedisDataException.class).hasMessageStartingWith("ERR invalid Bloomery file: ");

      // writes larger than one log entry (each sent in parts) to the second shard go on while its leader is killed
      String bigKey = "{" + secondShardKey + "}:big";
      List<Integer> bigAcknowledged = java.util.Collections.synchronizedList(new ArrayList<>());
      java.util.concurrent.atomic.AtomicBoolean stopBig = new java.util.concurrent.atomic.AtomicBoolean();
      Thread bigWriter = Thread.ofPlatform().start(() -> {
        for (int i = 0; !stopBig.get(); i++) {
          try {
            if (cluster.cfAdd(bigKey, bigItem(i))) {
              bigAcknowledged.add(i);
            }
          } catch (RuntimeException e) {
            // not acknowledged: it may or may not have been applied
          }
          pause(200); // a few a second: each is 5 MiB through nodes of 256 MiB heaps
        }
      });
      pause(300);
      nodes.kill(secondLeader);
      int bigBeforeKill = bigAcknowledged.size();
      for (int i = 0; i < 200; i++) {
        String key = "key:" + i;
        assertThat(cluster.bfAdd(key, "after-" + i)).isTrue();
        acknowledged.put(key + "#after", "after-" + i);
      }
      long bigDeadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      while (bigAcknowledged.size() <= bigBeforeKill) { // the new leader acknowledges large writes too
        assertThat(System.nanoTime()).as("a large write acknowledged after the kill").isLessThan(bigDeadline);
        Thread.sleep(50);
      }
      stopBig.set(true);
      bigWriter.join(120_000);
      for (int i : bigAcknowledged) {
        assertThat(cluster.cfExists(bigKey, bigItem(i))).as("acknowledged large write %d", i).isTrue();
      }
      assertThat(leaderPort(ports.get(0), 8192)).as("the first shard's view of the second's leader")
          .isNotEqualTo(secondLeader);
      for (Map.Entry<String, String> add : acknowledged.entrySet()) {
        assertThat(cluster.bfExists(add.getKey().replace("#after", ""), add.getValue())).as(add.toString()).isTrue();
      }
      assertThat(redisCliUntil(ports.get(0), "1", "BF.EXISTS", secondShardKey, "after-"
          + secondShardKey.substring(4))).isEqualTo("1");

      nodes.launch(secondLeader); // the killed node, on its own directory: it catches up as a follower
      nodes.awaitReady(secondLeader);
      try (Jedis follower = new Jedis("127.0.0.1", secondLeader)) {
        assertThat(follower.sendCommand(command("READONLY"))).isEqualTo("OK".getBytes(StandardCharsets.UTF_8));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        for (Map.Entry<String, String> add : acknowledged.entrySet()) {
          String key = add.getKey().replace("#after", "");
          if (HashSlot.of(key.getBytes(StandardCharsets.UTF_8)) < 8192) {
            continue; // the first shard's: this node answers MOVED for it
          }
          while (!Long.valueOf(1).equals(follower.sendCommand(command("BF.EXISTS"), key, add.getValue()))) {
            assertThat(System.nanoTime()).as("the restarted node has " + add).isLessThan(deadline);
            Thread.sleep(100);
          }
        }
        for (int i : bigAcknowledged) {
          while (!Long.valueOf(1).equals(follower.sendCommand(command("CF.EXISTS"), bigKey, bigItem(i)))) {
            assertThat(System.nanoTime()).as("the restarted node has large write %d", i).isLessThan(deadline);
            Thread.sleep(100);
          }
        }
      }
    }
    // a transaction through Jedis's own MULTI/EXEC, on the leader of its keys' slot
    try (Jedis jedis = new Jedis("127.0.0.1", leaderPort(ports.get(0), HashSlot.of("{tx}a".getBytes(
        StandardCharsets.UTF_8))))) {
      redis.clients.jedis.Transaction tx = jedis.multi();
      tx.sendCommand(command("BF.ADD"), "{tx}a", "x");
      tx.sendCommand(command("CF.ADD"), "{tx}b", "x");
      tx.sendCommand(command("BF.EXISTS"), "{tx}a", "x");
      assertThat(tx.exec()).containsExactly(1L, 1L, 1L);
    }
    try (Jedis node = new Jedis("127.0.0.1", ports.get(0))) {
      assertThat(node.info("cluster")).contains("cluster_enabled:1");
      assertThat(node.clusterInfo()).contains("cluster_state:ok").contains("cluster_known_nodes:6")
          .contains("cluster_size:2").contains("cluster_slots_assigned:16384");
      assertThat(node.clusterSlots()).hasSize(2);
      assertThatThrownBy(() -> node.sendCommand(command("CLUSTER"), "COUNTKEYSINSLOT", "16384"))
          .isInstanceOf(JedisDataException.class).hasMessage("ERR Invalid slot");
      assertThatThrownBy(() -> node.sendCommand(command("CLUSTER"), "GETKEYSINSLOT", "1", "-1"))
          .hasMessage("ERR Invalid slot or number of keys");
      assertThatThrownBy(() -> node.sendCommand(command("CLUSTER"), "NOSUCH"))
          .hasMessage("ERR unknown subcommand 'NOSUCH'. Try CLUSTER HELP.");
      assertThatThrownBy(() -> node.sendCommand(command("EXISTS"), "a", "b"))
          .hasMessage("CROSSSLOT Keys in request don't hash to the same slot");
      assertThatThrownBy(() -> node.sendCommand(command("CLUSTER"), "RESHARD", "s0", "s0", "1"))
          .hasMessage("ERR a migration moves slots from one shard to another, not to s0");
      assertThatThrownBy(() -> node.sendCommand(command("CLUSTER"), "RESHARD", "s0", "s9", "1"))
          .hasMessage("ERR no shard s9 (shards: s0, s1)");
      assertThatThrownBy(() -> node.sendCommand(command("CLUSTER"), "RESHARD", "s0", "s1", "8193"))
          .hasMessage("ERR shard s0 serves 8192 slots: move 1 to 8192, not 8193");
      assertThatThrownBy(() -> node.sendCommand(command("CLUSTER"), "RESHARD", "s0", "s1", "-5"))
          .hasMessage("ERR the slot count must be an integer from 0 to 16384");
      assertThatThrownBy(() -> node.sendCommand(command("CLUSTER"), "RESHARD", "s0", "s1"))
          .hasMessage("ERR wrong number of arguments for 'cluster|reshard' command");
      assertThat(node.sendCommand(command("CLUSTER"), "RESHARD", "s0", "s1", "0"))
          .isEqualTo("nothing to move".getBytes(StandardCharsets.UTF_8));
    }
  }

  /**
   * A machine dies for good: {@code cluster add-node} puts a new node in its shard, {@code cluster del-node} stops
   * counting the dead one, and the shard then survives the loss of its leader too, with every acknowledged add.
   */
  @Test
  void aDeadNodeIsReplacedWithAddNodeAndDelNode() throws Exception {
    List<Integer> ports = nodes.start(4, -1);
    String[] addresses = ClusterNodes.addresses(ports);
    Run created = nodes.create(3, java.util.Arrays.copyOf(addresses, 3));
    assertThat(created.status()).as(created.toString()).isZero();
    int leader = leaderPort(ports.get(0), 0);
    List<String> items = new java.util.ArrayList<>();
    try (Jedis jedis = new Jedis("127.0.0.1", leader)) {
      for (int i = 0; i < 100; i++) {
        items.add("https://example.com/" + i);
        assertThat(jedis.sendCommand(command("BF.ADD"), "urls", items.get(i))).isEqualTo(1L);
      }
    }
    int dead = ports.subList(0, 3).stream().filter(p -> p != leader).findFirst().orElseThrow();
    String deadId;
    try (Jedis jedis = new Jedis("127.0.0.1", dead)) {
      deadId = jedis.clusterMyId();
    }
    nodes.kill(dead);

    Run unknownShard = nodes.cli("cluster", "add-node", "--shard", "s9", addresses[3], "127.0.0.1:" + leader);
    assertThat(unknownShard.status()).as(unknownShard.toString()).isEqualTo(BloomeryCommand.EXIT_USAGE);
    assertThat(unknownShard.err()).contains("no shard s9 (shards: s0)");
    // The first step of an add-node whose change then stopped (the node it went through died before the change):
    // the new node joined, the committed topology does not list it. Running add-node again finishes it.
    Topology current;
    try (Jedis jedis = new Jedis("127.0.0.1", leader)) {
      current = Topology.parse(SafeEncoder.encode((byte[]) jedis.sendCommand(command("CLUSTER"), "TOPOLOGY")));
    }
    Topology.Node fresh =
        ClusterCommand.describe(new ClusterCommand.Auth(), ClusterCommand.Address.parse(addresses[3]));
    try (Jedis jedis = new Jedis("127.0.0.1", ports.get(3))) {
      assertThat(SafeEncoder.encode((byte[]) jedis.sendCommand(command("CLUSTER"), "JOIN-TOPOLOGY",
          current.withMember("s0", fresh).encode(), current.encode()))).isEqualTo("OK");
    }
    Run added = nodes.cli("cluster", "add-node", addresses[3], "127.0.0.1:" + leader);
    assertThat(added.status()).as(added.toString()).isZero();
    assertThat(added.out()).contains("is a member of shard s0").contains("127.0.0.1:" + ports.get(3) + "@");
    Run twice = nodes.cli("cluster", "add-node", addresses[3], "127.0.0.1:" + leader);
    assertThat(twice.status()).as(twice.toString()).isZero();
    assertThat(twice.out()).contains("is already a member of shard s0");
    Run unknownNode = nodes.cli("cluster", "del-node", "127.0.0.1:" + leader, "f".repeat(40));
    assertThat(unknownNode.status()).as(unknownNode.toString()).isEqualTo(BloomeryCommand.EXIT_USAGE);
    assertThat(unknownNode.err()).contains("node " + "f".repeat(40) + " is not in cluster");
    Run removed = nodes.cli("cluster", "del-node", "127.0.0.1:" + leader, deadId);
    assertThat(removed.status()).as(removed.toString()).isZero();
    assertThat(removed.out()).contains("Node " + deadId + " (127.0.0.1:" + dead + ") is no longer counted");
    assertThat(removed.out().lines().skip(1)).as("CLUSTER NODES after it").hasSize(3)
        .noneMatch(line -> line.contains(deadId));

    nodes.kill(leader); // two members of three are left: the survivor of the first three and the new node
    int survivor = ports.subList(0, 3).stream().filter(p -> p != leader && p != dead).findFirst().orElseThrow();
    Set<HostAndPort> seeds = Set.of(new HostAndPort("127.0.0.1", survivor), new HostAndPort("127.0.0.1",
        ports.get(3)));
    try (JedisCluster cluster = new JedisCluster(seeds, DefaultJedisClientConfig.builder().socketTimeoutMillis(10_000)
        .build(), 100, Duration.ofSeconds(40))) {
      assertThat(cluster.bfAdd("urls", "after the replacement")).isTrue();
      assertThat(cluster.bfMExists("urls", items.toArray(String[]::new))).hasSize(100).containsOnly(true);
    }
    assertThat(leaderPort(survivor, 0)).isIn(survivor, ports.get(3));

    // Started again on its directory, whose logs still list it, the removed node learns from the metadata group that
    // it was removed, and leaves: it serves no slot instead of taking writes its old group never counts.
    nodes.launch(dead);
    nodes.awaitReady(dead);
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (true) {
      String info;
      try (Jedis jedis = new Jedis("127.0.0.1", dead)) {
        info = jedis.clusterInfo();
      }
      if (info.contains("cluster_slots_assigned:0")) {
        break;
      }
      assertThat(System.nanoTime()).as("the removed node still serves slots: %s", info).isLessThan(deadline);
      Thread.sleep(200);
    }
    try (Jedis jedis = new Jedis("127.0.0.1", dead)) {
      assertThatThrownBy(() -> jedis.sendCommand(command("BF.ADD"), "urls", "to a removed node"))
          .isInstanceOf(JedisDataException.class).hasMessageStartingWith("CLUSTERDOWN");
    }
  }

  @Test
  void aNodeStartedOnAnotherNodesDirectoryOrWithoutAnAddressToAnnounceIsRefused() throws Exception {
    int port = nodes.start(1, -1).get(0);
    nodes.kill(port);
    int other = freePort();
    Run refused = nodes.cli("serve", "--cluster-enabled", "yes", "--port", Integer.toString(other), "--cluster-port",
        Integer.toString(freePort()), "--http-port", "0", "--dir", nodes.directory(port).toString());
    assertThat(refused.status()).isEqualTo(1);
    assertThat(refused.err()).contains("belongs to node").contains("127.0.0.1:" + port)
        .contains("start it with the options it had, or give this node an empty --dir");
    Run wildcard = nodes.cli("serve", "--cluster-enabled", "yes", "--port", Integer.toString(other), "--bind", "0.0.0.0",
        "--cluster-port", Integer.toString(freePort()), "--http-port", "0",
        "--dir", dir.resolve("wildcard").toString());
    assertThat(wildcard.status()).isEqualTo(1);
    assertThat(wildcard.err()).contains("a cluster node bound to 0.0.0.0 needs --cluster-announce-ip");
  }

  /** Without cluster-enabled, a server loads no class of Ratis (the cluster module stays off the path it takes). */
  @Test
  void aSingleNodeServerLoadsNoRatisClass() throws Exception {
    Path classes = dir.resolve("classes.log");
    List<String> command = DedupChild.command("serve", "--port", "0", "--http-port", "0", "--appendonly", "no",
        "--dir", dir.resolve("single").toString());
    command.add(1, "-Xlog:class+load=info:file=" + classes);
    Path log = dir.resolve("single.log");
    Process server = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
    try {
      int port = ServerReady.port(server, log, 60, TimeUnit.SECONDS);
      try (Jedis jedis = new Jedis("127.0.0.1", port)) {
        assertThat(jedis.sendCommand(command("BF.ADD"), "k", "v")).isEqualTo(1L);
        assertThat(jedis.info("cluster")).contains("cluster_enabled:0");
      }
    } finally {
      server.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
    }
    String loaded = Files.readString(classes);
    assertThat(loaded).contains("io.bloomery.server.BloomeryServer").doesNotContain("org.apache.ratis")
        .doesNotContain("io.bloomery.cluster");
  }

  /**
   * A cluster of one shard grows: {@code cluster add-shard} makes three more nodes a second shard, serving no slot;
   * {@code cluster reshard} moves 1000 slots with their keys to it while two writers add to keys in the moving slots
   * (and elsewhere) through JedisCluster. The node running the reshard is killed with SIGKILL once the move has begun,
   * the reshard is run again through a node of the second shard and finishes it though the first shard's leader is
   * killed meanwhile, and afterwards every acknowledged add is there,
   * the counts of CF.ADD are exact (no add applied twice), the moved slots' keys live only in the second shard, and
   * the first shard's nodes answer MOVED for them. Last, a member of the second shard removed without being told
   * leaves by itself. {@code -Dchaos.reshards=N} adds N round trips of 500 slots between the shards before the checks,
   * each move with a node killed at a seeded random moment ({@code -Dchaos.seed=S}); none by default.
   */
  @Test
  void aNewShardTakesSlotsByAReshardKilledHalfwayThatLosesNoAcknowledgedWrite() throws Exception {
    List<Integer> ports = nodes.start(6, -1);
    String[] addresses = ClusterNodes.addresses(ports);
    Run created = nodes.create(3, java.util.Arrays.copyOf(addresses, 3));
    assertThat(created.status()).as(created.toString()).isZero();
    Run grown = nodes.cli("cluster", "add-shard", addresses[0], addresses[3], addresses[4], addresses[5]);
    assertThat(grown.status()).as(grown.toString()).isZero();
    assertThat(grown.out()).contains("Shard s1 of 3 nodes added").contains(" 0-16383");
    Run again = nodes.cli("cluster", "add-shard", addresses[1], addresses[3], addresses[4], addresses[5]);
    assertThat(again.status()).as(again.toString()).isZero();
    assertThat(again.out()).contains("Shard s1 of 3 nodes is already in the cluster");
    int firstMoved = 16384 - 1000;
    List<String> moving = new ArrayList<>();
    List<String> staying = new ArrayList<>();
    for (int i = 0; moving.size() < 1500 || staying.size() < 20; i++) {
      String key = "url:" + i;
      (HashSlot.of(key.getBytes(StandardCharsets.UTF_8)) >= firstMoved ? moving : staying).add(key);
    }
    List<String> keys = new ArrayList<>(moving.subList(0, 1500));
    keys.addAll(staying.subList(0, 20));
    // a filter whose DUMP (3.6 MB) is more than one log entry takes: the reshard copies it in parts
    String big = "big:0";
    for (int i = 1; HashSlot.of(big.getBytes(StandardCharsets.UTF_8)) < firstMoved; i++) {
      big = "big:" + i;
    }
    long bigCard = fillLarge(ports.get(0), big);
    Set<HostAndPort> seeds = Set.of(new HostAndPort("127.0.0.1", ports.get(5)));
    java.util.Map<String, Set<String>> acknowledged = new java.util.concurrent.ConcurrentHashMap<>();
    java.util.Map<String, Integer> counted = new java.util.concurrent.ConcurrentHashMap<>();
    java.util.Map<String, Integer> uncertain = new java.util.concurrent.ConcurrentHashMap<>();
    try (JedisCluster cluster = new JedisCluster(seeds, DefaultJedisClientConfig.builder().socketTimeoutMillis(10_000)
        .build(), 100, Duration.ofSeconds(60))) {
      for (String key : keys) {
        assertThat(cluster.bfAdd(key, "seed")).isTrue();
        acknowledged.computeIfAbsent(key, k -> java.util.concurrent.ConcurrentHashMap.newKeySet()).add("seed");
      }
      java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
      java.util.concurrent.atomic.AtomicLong failures = new java.util.concurrent.atomic.AtomicLong();
      List<Thread> writers = new ArrayList<>();
      for (int w = 0; w < 2; w++) {
        int writer = w;
        writers.add(Thread.ofPlatform().start(() -> {
          java.util.Random random = new java.util.Random(writer);
          for (int n = 0; !stop.get(); n++) {
            String key = keys.get(random.nextInt(keys.size()));
            String item = "w" + writer + "-" + n;
            String counter = "{" + key + "}count";
            try {
              if (cluster.bfAdd(key, item)) {
                acknowledged.computeIfAbsent(key, k -> java.util.concurrent.ConcurrentHashMap.newKeySet()).add(item);
              }
            } catch (RuntimeException e) {
              failures.incrementAndGet();
            }
            // not through JedisCluster, which sends a command again after a lost connection: it may then count twice
            switch (oneCfAdd(ports, counter, random)) {
              case ACKNOWLEDGED -> counted.merge(counter, 1, Integer::sum);
              case UNCERTAIN -> uncertain.merge(counter, 1, Integer::sum); // applied at most once
              case NOT_APPLIED -> { }
            }
          }
        }));
      }
      Thread.sleep(1000);
      int runner = ports.get(0);
      java.util.concurrent.CompletableFuture<Run> first = java.util.concurrent.CompletableFuture.supplyAsync(() -> {
        try {
          return nodes.cli("cluster", "reshard", "--from", "0", "--to", "1", "--slots", "1000", "127.0.0.1:" + runner);
        } catch (Exception e) {
          throw new IllegalStateException(e);
        }
      });
      awaitMigrating(ports.get(3));
      nodes.kill(runner);
      Run interrupted = first.get(60, TimeUnit.SECONDS);
      assertThat(interrupted.status()).as("the reshard whose node was killed: " + interrupted).isNotZero();
      nodes.launch(runner);
      nodes.awaitReady(runner);
      // finished through a node of the second shard, while the first shard's leader is killed too
      java.util.concurrent.CompletableFuture<Run> second = java.util.concurrent.CompletableFuture.supplyAsync(() -> {
        try {
          return nodes.cli("cluster", "reshard", "--from", "0", "--to", "1", "--slots", "0", addresses[4]);
        } catch (Exception e) {
          throw new IllegalStateException(e);
        }
      });
      Thread.sleep(500);
      int sourceLeader = leaderPort(ports.get(4), 0);
      nodes.kill(sourceLeader);
      Run finished = second.get(120, TimeUnit.SECONDS);
      assertThat(finished.status()).as(finished.toString()).isZero();
      assertThat(finished.out()).contains("moved 1000 slots (").contains("keys) from s0 to s1")
          .contains(" 0-15383").contains(" 15384-16383").doesNotContain("->-");
      nodes.launch(sourceLeader);
      nodes.awaitReady(sourceLeader);
      reshardsWithKills(ports);
      Thread.sleep(1000);
      stop.set(true);
      for (Thread t : writers) {
        t.join(120_000);
      }

      for (Map.Entry<String, Set<String>> e : acknowledged.entrySet()) {
        for (String item : e.getValue()) {
          assertThat(cluster.bfExists(e.getKey(), item)).as("%s %s", e.getKey(), item).isTrue();
        }
      }
      for (Map.Entry<String, Integer> e : counted.entrySet()) {
        long count = cluster.cfCount(e.getKey(), "same");
        assertThat(count).as(e.getKey()).isBetween((long) e.getValue(),
            (long) e.getValue() + uncertain.getOrDefault(e.getKey(), 0));
      }
      assertThat(counted.values().stream().mapToInt(Integer::intValue).sum()).as("CF.ADDs acknowledged")
          .isGreaterThan(100);
      System.out.printf("ClusterIT: reshard checks: %d adds acknowledged (%d failed attempts), %d CF.ADDs acknowledged, "
          + "%d uncertain%n", acknowledged.values().stream().mapToInt(Set::size).sum(), failures.get(),
          counted.values().stream().mapToInt(Integer::intValue).sum(),
          uncertain.values().stream().mapToInt(Integer::intValue).sum());
    }
    String moved = moving.get(0);
    int slot = HashSlot.of(moved.getBytes(StandardCharsets.UTF_8));
    int secondLeader = leaderPort(ports.get(3), slot); // a node never killed: its view of the topology is current
    assertThat(ports.subList(3, 6)).contains(secondLeader);
    for (int port : ports.subList(0, 3)) {
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
      try (Jedis node = new Jedis("127.0.0.1", port)) {
        // the restarted node may still be replaying the metadata group's log: it names the old shard until then
        while (!node.clusterNodes().contains(" 15384-16383") && System.nanoTime() < deadline) {
          Thread.sleep(100);
        }
        assertThatThrownBy(() -> node.sendCommand(command("BF.EXISTS"), moved, "seed"))
            .isInstanceOf(JedisMovedDataException.class).hasMessage("MOVED " + slot + " 127.0.0.1:" + secondLeader);
        assertThat(node.clusterCountKeysInSlot(slot)).as("keys of a moved slot left on node %d", port).isZero();
      }
    }
    try (Jedis leader = new Jedis("127.0.0.1", secondLeader)) {
      assertThat(leader.clusterCountKeysInSlot(slot)).isPositive();
    }
    for (int port : ports.subList(3, 6)) {
      awaitCard(port, big, bigCard);
    }
    assertThat(redisCli(ports.get(0), "BF.EXISTS", moved, "seed")).isEqualTo("1");

    // A member removed while it is up, without CLUSTER LEAVE (as if it could not be reached then), hears from no
    // metadata leader any more: it asks the others, finds it is no longer listed, and leaves.
    int removed = ports.subList(3, 6).stream().filter(p -> p != secondLeader).findFirst().orElseThrow();
    try (Jedis leader = new Jedis("127.0.0.1", secondLeader); Jedis gone = new Jedis("127.0.0.1", removed)) {
      Topology current = Topology.parse(SafeEncoder.encode((byte[]) leader.sendCommand(command("CLUSTER"),
          "TOPOLOGY")));
      assertThat(SafeEncoder.encode((byte[]) leader.sendCommand(command("CLUSTER"), "SET-TOPOLOGY",
          current.without(gone.clusterMyId()).encode()))).isEqualTo("OK");
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(40);
      String info;
      while (!(info = gone.clusterInfo()).contains("cluster_slots_assigned:0")) {
        assertThat(System.nanoTime()).as("the removed node still serves slots: %s", info).isLessThan(deadline);
        Thread.sleep(200);
      }
      assertThatThrownBy(() -> gone.sendCommand(command("BF.EXISTS"), moved, "seed"))
          .hasMessageStartingWith("CLUSTERDOWN");
    }

    // The new shard gives its slots back and is removed with its two remaining members; nothing is lost.
    Run serving = nodes.cli("cluster", "del-shard", addresses[0], "s1");
    assertThat(serving.status()).as(serving.toString()).isEqualTo(BloomeryCommand.EXIT_USAGE);
    assertThat(serving.err()).contains("cannot remove shard s1: shard s1 serves 1000 slots: move them to another "
        + "shard first");
    Run fromInside = nodes.cli("cluster", "del-shard", "127.0.0.1:" + secondLeader, "s1");
    assertThat(fromInside.err()).as(fromInside.toString()).contains("send del-shard to a node of another shard");
    Run back = nodes.cli("cluster", "reshard", "--from", "s1", "--to", "s0", "--slots", "1000", addresses[0]);
    assertThat(back.status()).as(back.toString()).isZero();
    assertThat(back.out()).contains("moved 1000 slots (").contains(" 0-16383");
    Run removedShard = nodes.cli("cluster", "del-shard", addresses[1], "1");
    assertThat(removedShard.status()).as(removedShard.toString()).isZero();
    assertThat(removedShard.out()).contains("Shard s1 is removed from cluster").contains(secondLeader
        + ") left the cluster and serves no slot.");
    assertThat(removedShard.out().lines().filter(l -> l.contains("master") || l.contains("slave")).count())
        .as(removedShard.out()).isEqualTo(3);
    try (Jedis left = new Jedis("127.0.0.1", secondLeader)) {
      assertThat(left.clusterInfo()).contains("cluster_slots_assigned:0");
    }
    try (JedisCluster cluster = new JedisCluster(Set.of(new HostAndPort("127.0.0.1", ports.get(2))),
        DefaultJedisClientConfig.builder().socketTimeoutMillis(10_000).build(), 10, Duration.ofSeconds(30))) {
      for (Map.Entry<String, Set<String>> e : acknowledged.entrySet()) {
        for (String item : e.getValue()) {
          assertThat(cluster.bfExists(e.getKey(), item)).as("after del-shard: %s %s", e.getKey(), item).isTrue();
        }
      }
      for (Map.Entry<String, Integer> e : counted.entrySet()) {
        assertThat(cluster.cfCount(e.getKey(), "same")).as(e.getKey()).isBetween((long) e.getValue(),
            (long) e.getValue() + uncertain.getOrDefault(e.getKey(), 0));
      }
    }
    try (Jedis node = new Jedis("127.0.0.1", ports.get(0))) {
      assertThat(node.clusterCountKeysInSlot(slot)).as("the moved slot's keys are back").isPositive();
    }
    for (int port : ports.subList(0, 3)) {
      awaitCard(port, big, bigCard);
    }
  }

  /**
   * Waits (up to 20 s: a follower applies what its leader committed a moment later) for the replica at {@code port}
   * to answer {@code card} for BF.CARD {@code key}.
   */
  private static void awaitCard(int port, String key, long card) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    try (Jedis replica = new Jedis("127.0.0.1", port)) {
      replica.readonly();
      long seen;
      while ((seen = (Long) replica.sendCommand(command("BF.CARD"), key)) != card && System.nanoTime() < deadline) {
        Thread.sleep(100);
      }
      assertThat(seen).as("BF.CARD %s on the replica at %d", key, port).isEqualTo(card);
    }
  }

  /**
   * Reserves {@code key} for 3,000,000 items at 1 % (3.6 MB) and adds 1,000,000 distinct items, pipelined to the
   * leader of its slot (found through the node at {@code port}); returns its BF.CARD.
   */
  private static long fillLarge(int port, String key) throws InterruptedException {
    int leader = leaderPort(port, HashSlot.of(key.getBytes(StandardCharsets.UTF_8)));
    try (Jedis jedis = new Jedis("127.0.0.1", leader)) {
      assertThat(SafeEncoder.encode((byte[]) jedis.sendCommand(command("BF.RESERVE"), key, "0.01", "3000000")))
          .isEqualTo("OK");
      for (int batch = 0; batch < 100; batch++) {
        redis.clients.jedis.Pipeline p = jedis.pipelined();
        for (int c = 0; c < 100; c++) {
          String[] args = new String[101];
          args[0] = key;
          for (int i = 1; i < args.length; i++) {
            args[i] = "item-" + batch + "-" + c + "-" + i;
          }
          p.sendCommand(command("BF.MADD"), args);
        }
        p.sync();
      }
      long card = (Long) jedis.sendCommand(command("BF.CARD"), key);
      assertThat(card).isBetween(990_000L, 1_000_000L);
      return card;
    }
  }

  /** Round trips of {@link #reshardsWithKills} ({@code -Dchaos.reshards=N}; none by default, to keep CI short). */
  private static final int RESHARD_ROUND_TRIPS = Integer.getInteger("chaos.reshards", 0);
  private static final long RESHARD_SEED = Long.getLong("chaos.seed", System.nanoTime());

  /**
   * {@link #RESHARD_ROUND_TRIPS} times, 500 slots go from the second shard to the first and back, each move with a
   * node (any of the six, the one running the reshard included) killed with SIGKILL at a seeded random moment of its
   * first 2 s and started again 1 s later; a move whose run failed is finished through another node. The writers run
   * all along; the test's checks then cover every move.
   */
  private void reshardsWithKills(List<Integer> ports) throws Exception {
    if (RESHARD_ROUND_TRIPS == 0) {
      return;
    }
    java.util.Random chaos = new java.util.Random(RESHARD_SEED);
    for (int move = 0; move < 2 * RESHARD_ROUND_TRIPS; move++) {
      String from = move % 2 == 0 ? "1" : "0";
      String to = move % 2 == 0 ? "0" : "1";
      int before = topologyAt(ports.get(0)).shard("s" + to).slotCount();
      int via = ports.get(chaos.nextInt(ports.size()));
      int victim = ports.get(chaos.nextInt(ports.size()));
      long delay = chaos.nextInt(2000);
      Thread killer = Thread.ofPlatform().start(() -> {
        try {
          Thread.sleep(delay);
          nodes.kill(victim);
          Thread.sleep(1000);
          nodes.launch(victim);
          nodes.awaitReady(victim);
        } catch (Exception e) {
          throw new IllegalStateException(e);
        }
      });
      long start = System.nanoTime();
      Run run = nodes.cli("cluster", "reshard", "--from", from, "--to", to, "--slots", "500", "127.0.0.1:" + via);
      killer.join(120_000);
      System.out.printf("ClusterIT: seed %d, move %d (%s -> %s through %d): node %d killed after %d ms; status %d in "
          + "%d ms%n", RESHARD_SEED, move, from, to, via, victim, delay, run.status(),
          (System.nanoTime() - start) / 1_000_000);
      if (run.status() != 0) {
        // finished through a live node: what the topology records is left (or, if the move never began, all of it)
        int other = ports.stream().filter(p -> p != victim).findFirst().orElseThrow();
        Topology now = topologyAt(other);
        String slots = now.migration() != null || now.shard("s" + to).slotCount() != before ? "0" : "500";
        Run finished = nodes.cli("cluster", "reshard", "--from", from, "--to", to, "--slots", slots,
            "127.0.0.1:" + other);
        assertThat(finished.status()).as("seed %d, move %d: %s", RESHARD_SEED, move, finished).isZero();
      }
      assertThat(topologyAt(ports.get(0)).shard("s" + to).slotCount()).as("seed %d, move %d", RESHARD_SEED, move)
          .isEqualTo(before + 500);
    }
  }

  /** The committed topology, read through the node at {@code port} (any node: it asks the metadata leader). */
  private static Topology topologyAt(int port) {
    try (Jedis j = new Jedis("127.0.0.1", port, 30_000)) {
      return Topology.parse(SafeEncoder.encode((byte[]) j.sendCommand(command("CLUSTER"), "TOPOLOGY")));
    }
  }

  private enum Outcome { ACKNOWLEDGED, UNCERTAIN, NOT_APPLIED }

  /**
   * {@code CF.ADD key same}, sent once, following {@code MOVED} and {@code ASK} (with {@code ASKING}) by hand and
   * trying again after {@code TRYAGAIN} or {@code CLUSTERDOWN} (none applied anything); a lost connection or any other
   * error leaves its fate unknown. Starts at a random node.
   */
  private static Outcome oneCfAdd(List<Integer> ports, String key, java.util.Random random) {
    int port = ports.get(random.nextInt(ports.size()));
    boolean asking = false;
    for (int hop = 0; hop < 50; hop++) {
      try (Jedis j = new Jedis("127.0.0.1", port, 10_000)) {
        if (asking) {
          j.sendCommand(command("ASKING"));
        }
        j.sendCommand(command("CF.ADD"), key, "same");
        return Outcome.ACKNOWLEDGED;
      } catch (JedisDataException e) {
        String m = String.valueOf(e.getMessage());
        asking = m.startsWith("ASK ");
        if (m.startsWith("MOVED ") || asking) {
          port = Integer.parseInt(m.substring(m.lastIndexOf(':') + 1));
        } else if (m.startsWith("TRYAGAIN") || m.startsWith("CLUSTERDOWN")) {
          pause(100);
        } else {
          return Outcome.UNCERTAIN;
        }
      } catch (redis.clients.jedis.exceptions.JedisConnectionException e) {
        if (!(e.getCause() instanceof java.net.ConnectException)) {
          return Outcome.UNCERTAIN;
        }
        port = ports.get(random.nextInt(ports.size())); // a dead node: nothing was sent
        asking = false;
        pause(100);
      }
    }
    return Outcome.NOT_APPLIED;
  }

  /** Item {@code i} of the large writes: 5 MiB, more than one log entry takes. */
  private static String bigItem(int i) {
    return i + ":" + "x".repeat(5 << 20);
  }

  private static void pause(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Waits (60 s at most) until CLUSTER NODES on {@code port} shows slots migrating. */
  private static void awaitMigrating(int port) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (true) {
      try (Jedis jedis = new Jedis("127.0.0.1", port)) {
        if (jedis.clusterNodes().contains("->-")) {
          return;
        }
      } catch (RuntimeException e) {
        // not answering yet
      }
      assertThat(System.nanoTime()).as("a reshard began within 60 s").isLessThan(deadline);
      Thread.sleep(20);
    }
  }

  // ------------------------------------------------------------------------------------------------ helpers

  /** {@code redis-cli -c -p PORT ARGS...}'s output, trimmed. */
  private static String redisCli(int port, String... args) throws Exception {
    List<String> command = new ArrayList<>(List.of("redis-cli", "-c", "-p", Integer.toString(port)));
    command.addAll(List.of(args));
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
    p.waitFor(30, TimeUnit.SECONDS);
    return out;
  }

  /** {@link #redisCli} until it answers {@code expected} (20 s at most: the node may still name the old leader). */
  private static String redisCliUntil(int port, String expected, String... args) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    String out;
    while (!(out = redisCli(port, args)).equals(expected) && System.nanoTime() < deadline) {
      Thread.sleep(200);
    }
    return out;
  }
}
