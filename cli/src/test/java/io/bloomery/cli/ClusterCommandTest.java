package io.bloomery.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import org.junit.jupiter.api.Test;

/** {@code bloomery cluster}'s refusals of bad input, before or without any node answering. */
class ClusterCommandTest {
  @Test
  void aNodeCountThatMakesNoWholeShardsIsAUsageError() {
    Cli.Result r = Cli.run("cluster", "create", "--replication-factor", "3", "127.0.0.1:7000", "127.0.0.1:7001",
        "127.0.0.1:7002", "127.0.0.1:7003");
    assertThat(r.exitCode()).as(r.toString()).isEqualTo(BloomeryCommand.EXIT_USAGE);
    assertThat(r.err()).contains("4 nodes do not make shards of 3 members: give a multiple of 3 nodes");
  }

  @Test
  void anAddressGivenTwiceOrMalformedIsAUsageError() {
    Cli.Result twice = Cli.run("cluster", "create", "127.0.0.1:7000", "127.0.0.1:7001", "127.0.0.1:7000");
    assertThat(twice.exitCode()).isEqualTo(BloomeryCommand.EXIT_USAGE);
    assertThat(twice.err()).contains("node 127.0.0.1:7000 is given twice");
    Cli.Result bad = Cli.run("cluster", "status", "localhost");
    assertThat(bad.exitCode()).isEqualTo(BloomeryCommand.EXIT_USAGE);
    assertThat(bad.err()).contains("'localhost' is not HOST:PORT");
    Cli.Result badFailover = Cli.run("cluster", "failover", "127.0.0.1:70000");
    assertThat(badFailover.exitCode()).isEqualTo(BloomeryCommand.EXIT_USAGE);
    assertThat(badFailover.err()).contains("'127.0.0.1:70000': port 70000 is not in [1, 65535]");
    Cli.Result none = Cli.run("cluster");
    assertThat(none.exitCode()).isEqualTo(BloomeryCommand.EXIT_USAGE);
    assertThat(none.err()).contains("bloomery cluster needs a subcommand: create, status, failover, add-node, "
        + "del-node, add-shard, del-shard or reshard");
    Cli.Result oneAddress = Cli.run("cluster", "add-node", "127.0.0.1:7000");
    assertThat(oneAddress.exitCode()).isEqualTo(BloomeryCommand.EXIT_USAGE);
    assertThat(oneAddress.err()).contains("Missing required parameter: 'EXISTING'");
    Cli.Result noId = Cli.run("cluster", "del-node", "127.0.0.1:7000");
    assertThat(noId.exitCode()).isEqualTo(BloomeryCommand.EXIT_USAGE);
    assertThat(noId.err()).contains("Missing required parameter: 'NODE_ID'");
    Cli.Result noShard = Cli.run("cluster", "del-shard", "127.0.0.1:7000");
    assertThat(noShard.exitCode()).isEqualTo(BloomeryCommand.EXIT_USAGE);
    assertThat(noShard.err()).contains("Missing required parameter: 'SHARD'");
  }

  @Test
  void aReshardOrAddShardWithBadArgumentsIsAUsageError() {
    Cli.Result negative = Cli.run("cluster", "reshard", "--from", "0", "--to", "1", "--slots", "-1", "127.0.0.1:7000");
    assertThat(negative.exitCode()).as(negative.toString()).isEqualTo(BloomeryCommand.EXIT_USAGE);
    assertThat(negative.err()).contains("--slots must be from 0 to 16384, not -1");
    Cli.Result tooMany = Cli.run("cluster", "reshard", "--from", "0", "--to", "1", "--slots", "16385", "127.0.0.1:1");
    assertThat(tooMany.exitCode()).isEqualTo(BloomeryCommand.EXIT_USAGE);
    Cli.Result noTarget = Cli.run("cluster", "reshard", "--from", "0", "--slots", "5", "127.0.0.1:7000");
    assertThat(noTarget.exitCode()).isEqualTo(BloomeryCommand.EXIT_USAGE);
    assertThat(noTarget.err()).contains("Missing required option: '--to=SHARD'");
    Cli.Result noNew = Cli.run("cluster", "add-shard", "127.0.0.1:7000");
    assertThat(noNew.exitCode()).isEqualTo(BloomeryCommand.EXIT_USAGE);
    assertThat(noNew.err()).contains("Missing required parameter: 'NEW'");
    Cli.Result twice = Cli.run("cluster", "add-shard", "127.0.0.1:7000", "127.0.0.1:7001", "127.0.0.1:7001");
    assertThat(twice.exitCode()).isEqualTo(BloomeryCommand.EXIT_USAGE);
    assertThat(twice.err()).contains("a node is listed twice");
  }

  @Test
  void everyClusterCommandAnswersHelp() {
    for (String sub : new String[] {"create", "status", "failover", "add-node", "del-node", "add-shard", "del-shard",
        "reshard"}) {
      Cli.Result help = Cli.run("cluster", sub, "--help");
      assertThat(help.exitCode()).as(sub).isZero();
      assertThat(help.out()).as(sub).contains("Usage: bloomery cluster " + sub);
    }
    assertThat(Cli.run("cluster", "reshard", "--help").out()).contains("--slots=N").contains("--from=SHARD");
    Cli.Result cluster = Cli.run("cluster", "--help");
    assertThat(cluster.exitCode()).isZero();
    assertThat(cluster.out()).contains("add-shard").contains("del-shard").contains("reshard");
  }

  @Test
  void aReshardNamesAShardByNumberNameOrMemberAndRefusesAnyOther() {
    java.util.List<io.bloomery.cluster.node.Topology.Node> nodes = new java.util.ArrayList<>();
    for (int i = 0; i < 6; i++) {
      nodes.add(new io.bloomery.cluster.node.Topology.Node(String.format("%040x", i + 1), "127.0.0.1", 7000 + i,
          "127.0.0.1", 17000 + i));
    }
    io.bloomery.cluster.node.Topology t = io.bloomery.cluster.node.Topology.plan("a".repeat(40), nodes, 3);
    assertThat(ClusterCommand.Reshard.shardName(t, "s1")).isEqualTo("s1");
    assertThat(ClusterCommand.Reshard.shardName(t, "1")).isEqualTo("s1");
    assertThat(ClusterCommand.Reshard.shardName(t, String.format("%040x", 2))).isEqualTo("s0");
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> ClusterCommand.Reshard.shardName(t, "2"))
        .hasMessageContaining("no shard '2' in cluster").hasMessageContaining("(0 to 1)")
        .hasMessageContaining("(s0, s1)");
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> ClusterCommand.Reshard.shardName(t, "s7"))
        .hasMessageContaining("no shard 's7'");
  }

  @Test
  void anUnreachableNodeIsNamed() throws IOException {
    int port;
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      port = s.getLocalPort();
    }
    Cli.Result r = Cli.run("cluster", "create", "--replication-factor", "1", "127.0.0.1:" + port);
    assertThat(r.exitCode()).as(r.toString()).isEqualTo(BloomeryCommand.EXIT_FAILURE);
    assertThat(r.err()).contains("cannot reach node 127.0.0.1:" + port);
    Cli.Result add = Cli.run("cluster", "add-node", "127.0.0.1:" + port, "127.0.0.1:" + port);
    assertThat(add.exitCode()).as(add.toString()).isEqualTo(BloomeryCommand.EXIT_FAILURE);
    assertThat(add.err()).contains("cannot reach node 127.0.0.1:" + port);
    Cli.Result failover = Cli.run("cluster", "failover", "127.0.0.1:" + port);
    assertThat(failover.exitCode()).as(failover.toString()).isEqualTo(BloomeryCommand.EXIT_FAILURE);
    assertThat(failover.err()).contains("cannot reach node 127.0.0.1:" + port);
  }
}
