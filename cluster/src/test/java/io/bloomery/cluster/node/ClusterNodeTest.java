package io.bloomery.cluster.node;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomery.server.BloomeryServer;
import io.bloomery.server.ServerConfig;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * One node in this JVM ({@link BloomeryServer} with {@code cluster-enabled yes}), first alone, then a cluster of
 * itself (one shard of one member): its CLUSTER replies byte for byte in RESP2 and RESP3, in the shapes Redis 7.0
 * sends (recorded from a three-master redis-server 7.0.15 cluster), and its refusals.
 */
class ClusterNodeTest {
  @TempDir Path dir;
  private BloomeryServer server;

  @AfterEach
  void close() {
    if (server != null) {
      server.close();
    }
  }

  @Test
  void aNodeAnswersInRedisClustersShapesAndRefusesWhatItCannotDo() throws Exception {
    int port = RespConnection.freePort();
    int bus = RespConnection.freePort();
    server = BloomeryServer.start(ServerConfig.parse(Map.of(), "--cluster-enabled", "yes", "--port",
        Integer.toString(port), "--cluster-port", Integer.toString(bus), "--http-port", "0", "--dir", dir.toString()));
    try (RespConnection c = new RespConnection(port)) {
      String id = c.call("CLUSTER", "MYID");
      assertThat(id).matches("\\$40\r\n[0-9a-f]{40}\r\n");
      id = id.substring(5, 45);
      assertThat(c.call("CLUSTER", "INFO")).contains("cluster_state:fail\r\n").contains("cluster_known_nodes:1\r\n")
          .contains("cluster_slots_assigned:0\r\n");
      assertThat(c.call("CLUSTER", "NODES")).contains(id + " 127.0.0.1:" + port + "@" + bus
          + " myself,master - 0 0 0 connected\n");
      assertThat(c.call("CLUSTER", "SLOTS")).isEqualTo("*0\r\n");
      assertThat(c.call("BF.ADD", "k", "v")).isEqualTo("-CLUSTERDOWN Hash slot not served\r\n");
      assertThat(c.call("EXISTS", "a", "b")).isEqualTo("-CROSSSLOT Keys in request don't hash to the same slot\r\n");
      assertThat(c.call("CLUSTER", "KEYSLOT", "{user1000}.following")).isEqualTo(":3443\r\n");
      assertThat(c.call("CLUSTER", "COUNTKEYSINSLOT", "16384")).isEqualTo("-ERR Invalid slot\r\n");
      assertThat(c.call("CLUSTER", "COUNTKEYSINSLOT", "x"))
          .isEqualTo("-ERR value is not an integer or out of range\r\n");
      assertThat(c.call("CLUSTER", "GETKEYSINSLOT", "0", "-1")).isEqualTo("-ERR Invalid slot or number of keys\r\n");
      assertThat(c.call("CLUSTER", "KEYSLOT")).isEqualTo("-ERR wrong number of arguments for 'cluster|keyslot' "
          + "command\r\n");
      assertThat(c.call("CLUSTER", "FORGET", "e".repeat(40))).isEqualTo("-ERR this node is in no cluster\r\n");
      assertThat(c.call("CLUSTER", "FAILOVER")).isEqualTo("-ERR this node serves no shard of a cluster\r\n");
      assertThat(c.call("CLUSTER", "FAILOVER", "SOON")).isEqualTo("-ERR syntax error\r\n");
      assertThat(c.call("CLUSTER", "FAILOVER", "FORCE", "NOW")).isEqualTo("-ERR syntax error\r\n");
      assertThat(c.call("CLUSTER", "JOIN-TOPOLOGY", "cluster nothex")).startsWith("-ERR bad topology: ");
      String stranger = Topology.plan("c".repeat(40), List.of(new Topology.Node("d".repeat(40), "127.0.0.1", 1,
          "127.0.0.1", 2)), 1).encode();
      assertThat(c.call("CLUSTER", "JOIN-TOPOLOGY", stranger)).isEqualTo("-ERR this node (" + id + ") is not in the "
          + "topology\r\n");
      assertThat(c.call("ACL", "SETUSER", "reader", "on", ">pw", "+@all", "~*")).isEqualTo("+OK\r\n");
      assertThat(c.call("ACL", "SETUSER", "limited", "on", ">pw", "+@read", "+cluster", "~*")).isEqualTo("+OK\r\n");
      try (RespConnection limited = new RespConnection(port)) {
        assertThat(limited.call("AUTH", "limited", "pw")).isEqualTo("+OK\r\n");
        assertThat(limited.call("CLUSTER", "JOIN-TOPOLOGY", stranger)).isEqualTo("-NOPERM User limited has no "
            + "permissions to run the 'cluster|join-topology' command\r\n");
        assertThat(limited.call("CLUSTER", "FORGET", "e".repeat(40))).isEqualTo("-NOPERM User limited has no "
            + "permissions to run the 'cluster|forget' command\r\n");
      }

      String topology = Topology.plan("c".repeat(40), List.of(new Topology.Node(id, "127.0.0.1", port, "127.0.0.1",
          bus)), 1).encode();
      assertThat(c.call("CLUSTER", "JOIN-TOPOLOGY", topology)).isEqualTo("+OK\r\n");
      assertThat(c.call("CLUSTER", "JOIN-TOPOLOGY", topology)).isEqualTo("-ERR this node is already in a cluster\r\n");
      assertThat(c.call("CLUSTER", "COMMIT-TOPOLOGY", topology)).isEqualTo("+OK\r\n");
      long deadline = System.nanoTime() + 30_000_000_000L;
      while (!c.call("CLUSTER", "INFO").contains("cluster_state:ok")) {
        assertThat(System.nanoTime()).as("the one-member shard elects itself").isLessThan(deadline);
        Thread.sleep(50);
      }
      assertThat(c.call("BF.ADD", "k", "v")).isEqualTo(":1\r\n");
      assertThat(c.call("BF.EXISTS", "k", "v")).isEqualTo(":1\r\n");
      assertThat(c.call("CLUSTER", "FAILOVER", "TAKEOVER")).isEqualTo("-ERR You should send CLUSTER FAILOVER to a "
          + "replica\r\n");
      assertThat(c.call("CLUSTER", "FORGET", id)).isEqualTo("-ERR I tried hard but I can't forget myself...\r\n");
      assertThat(c.call("CLUSTER", "FORGET", "node-1")).isEqualTo("-ERR 'node-1' is not a node id (40 hex "
          + "digits)\r\n");
      assertThat(c.call("CLUSTER", "FORGET", id.substring(0, 12) + "0".repeat(28))).as("a node named like this one")
          .isEqualTo("-ERR the cluster still lists node " + id + ", whose replication slots are named like "
              + id.substring(0, 12) + "0".repeat(28) + "'s: remove it first (bloomery cluster del-node)\r\n");
      assertThat(c.call("CLUSTER", "FORGET", "e".repeat(40))).as("a node no longer listed, with no store here")
          .isEqualTo("+OK\r\n");
      assertThat(c.call("CONFIG", "SET", "maxmemory", "1")).isEqualTo("+OK\r\n");
      assertThat(c.call("BF.ADD", "k", "w")).as("a denyoom write over maxmemory is refused by the leader")
          .isEqualTo("-OOM command not allowed when used memory > 'maxmemory'.\r\n");
      assertThat(c.call("BF.EXISTS", "k", "w")).as("and never reached the log").isEqualTo(":0\r\n");
      assertThat(c.call("DEL", "k")).as("a write that frees memory is not refused").isEqualTo(":1\r\n");
      assertThat(c.call("BF.ADD", "k", "v")).isEqualTo(":1\r\n");
      assertThat(c.call("CONFIG", "SET", "maxmemory", "0")).isEqualTo("+OK\r\n");
      assertThat(c.call("CLUSTER", "COUNTKEYSINSLOT", "7629")).isEqualTo(":1\r\n");
      assertThat(c.call("CLUSTER", "GETKEYSINSLOT", "7629", "10")).isEqualTo("*1\r\n$1\r\nk\r\n");
      assertThat(c.call("INFO", "cluster")).contains("cluster_enabled:1");
      assertThat(c.call("BF.RESERVE", "blocked", "0.01", "1000", "LAYOUT", "BLOCKED")).isEqualTo("+OK\r\n");
      String[] added = new String[202];
      String[] probes = new String[402];
      added[0] = "BF.MADD";
      probes[0] = "BF.MEXISTS";
      added[1] = "blocked";
      for (int i = 0; i < 200; i++) {
        added[i + 2] = "in-" + i;
        probes[i + 2] = "in-" + i;
        probes[i + 202] = "out-" + i;
      }
      assertThat(c.call(added)).startsWith("*200\r\n:1\r\n");
      // a Bloomery file (the header, then the body): staged on the leader, then through the log whole
      List<RespConnection.Chunk> file = c.scandump("blocked");
      assertThat(file).hasSize(2);
      for (RespConnection.Chunk chunk : file) {
        assertThat(c.loadChunk("k9", chunk)).isEqualTo("+OK\r\n");
      }
      probes[1] = "blocked";
      String expected = c.call(probes);
      assertThat(expected).startsWith("*400\r\n" + ":1\r\n".repeat(200));
      probes[1] = "k9";
      assertThat(c.call(probes)).as("the loaded filter answers as its source, bit for bit").isEqualTo(expected);
      assertThat(c.loadChunk("k9", file.get(0))).isEqualTo("-ERR item exists\r\n");
      assertThat(c.callBytes("bf.LoadChunk".getBytes(StandardCharsets.UTF_8), "k10".getBytes(StandardCharsets.UTF_8),
          "1".getBytes(StandardCharsets.UTF_8), file.get(0).data())).as("a name in any case")
          .asString(StandardCharsets.UTF_8).isEqualTo("+OK\r\n");
      assertThat(c.loadChunk("k10", new RespConnection.Chunk(file.get(1).iterator() + 7, file.get(1).data())))
          .startsWith("-ERR invalid Bloomery file: chunk out of order");
      assertThat(c.call("EXISTS", "k10")).as("an abandoned load creates nothing").isEqualTo(":0\r\n");
      byte[] damaged = file.get(1).data().clone();
      damaged[damaged.length / 2] ^= 0x10;
      assertThat(c.loadChunk("k11", file.get(0))).isEqualTo("+OK\r\n");
      assertThat(c.loadChunk("k11", new RespConnection.Chunk(file.get(1).iterator(), damaged)))
          .as("every replica checks the file whole, its CRC-32C included").startsWith("-ERR invalid Bloomery file");
      assertThat(c.call("EXISTS", "k11")).isEqualTo(":0\r\n");
      byte[] huge = file.get(0).data().clone();
      java.nio.ByteBuffer.wrap(huge, huge.length - 8, 8).order(java.nio.ByteOrder.LITTLE_ENDIAN).putLong(1L << 31);
      assertThat(c.loadChunk("k12", new RespConnection.Chunk(1, huge))).as("more than a cluster write takes")
          .startsWith("-ERR a Bloomery file of a filter of ");
      assertThat(c.call("CONFIG", "SET", "maxmemory", "1")).isEqualTo("+OK\r\n");
      assertThat(c.loadChunk("k12", file.get(0))).isEqualTo("-OOM command not allowed when used memory > 'maxmemory'."
          + "\r\n");
      assertThat(c.call("CONFIG", "SET", "maxmemory", "0")).isEqualTo("+OK\r\n");
      assertThat(c.call("EXISTS", "k12")).isEqualTo(":0\r\n");
      assertThat(c.call("BF.LOADCHUNK", "k", "1", "x")).as("RedisBloom's chunks go through the log")
          .isEqualTo("-ERR invalid offset - no link found\r\n");
      assertThat(c.call("GUARD.EXISTS", "g", "x")).as("run by the leader's own guards")
          .startsWith("-ERR no such guarded key");
      assertThat(c.call("GUARD.RESERVE", "g", "nope", "0.01", "100")).as("checked before the log")
          .startsWith("-ERR no store 'nope' is declared");
      String large = "x".repeat(5 << 20);
      assertThat(c.call("CF.ADD", "k2", large)).as("a write larger than one log entry goes in parts")
          .isEqualTo(":1\r\n");
      assertThat(c.call("CF.EXISTS", "k2", large)).isEqualTo(":1\r\n");
      assertThat(c.call("BF.ADD", "k", "after")).isEqualTo(":1\r\n");
      String entry = "*4\r\n$9\r\n127.0.0.1\r\n:" + port + "\r\n$40\r\n" + id + "\r\n";
      assertThat(c.call("CLUSTER", "SLOTS")).isEqualTo("*1\r\n*3\r\n:0\r\n:16383\r\n" + entry + "*0\r\n");
      String node = "%7\r\n$2\r\nid\r\n$40\r\n" + id + "\r\n$4\r\nport\r\n:" + port + "\r\n$2\r\nip\r\n$9\r\n127.0.0.1"
          + "\r\n$8\r\nendpoint\r\n$9\r\n127.0.0.1\r\n$4\r\nrole\r\n$6\r\nmaster\r\n$18\r\nreplication-offset\r\n:";
      assertThat(c.call("HELLO", "3")).startsWith("%");
      assertThat(c.call("CLUSTER", "SLOTS")).isEqualTo("*1\r\n*3\r\n:0\r\n:16383\r\n" + entry + "%0\r\n");
      assertThat(c.call("CLUSTER", "SHARDS")).startsWith("*1\r\n%2\r\n$5\r\nslots\r\n*2\r\n:0\r\n:16383\r\n$5\r\nnodes"
          + "\r\n*1\r\n" + node).endsWith("\r\n$6\r\nhealth\r\n$6\r\nonline\r\n");
      assertThat(c.call("CLUSTER", "INFO")).startsWith("=").contains("\r\ntxt:cluster_state:ok\r\n");
      assertThat(c.call("CLUSTER", "NODES")).contains("txt:" + id + " 127.0.0.1:" + port + "@" + bus
          + " myself,master - 0 0 ").contains(" connected 0-16383\n");
    }
  }
}
