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
    assertThat(none.err()).contains("bloomery cluster needs a subcommand: create, status, failover, add-node or "
        + "del-node");
    Cli.Result oneAddress = Cli.run("cluster", "add-node", "127.0.0.1:7000");
    assertThat(oneAddress.exitCode()).isEqualTo(BloomeryCommand.EXIT_USAGE);
    assertThat(oneAddress.err()).contains("Missing required parameter: 'EXISTING'");
    Cli.Result noId = Cli.run("cluster", "del-node", "127.0.0.1:7000");
    assertThat(noId.exitCode()).isEqualTo(BloomeryCommand.EXIT_USAGE);
    assertThat(noId.err()).contains("Missing required parameter: 'NODE_ID'");
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
