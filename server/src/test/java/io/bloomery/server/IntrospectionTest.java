package io.bloomery.server;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * MODULE LIST, INFO modules and cluster, SLOWLOG and LATENCY over the wire: the parts the conformance recording
 * cannot hold because they name the server or carry times (the rest is replayed from admin.recording).
 */
class IntrospectionTest {

  @Test
  void moduleListAndInfoNameRedisBloomsModule() {
    try (BloomeryServer server = TestServer.start();
        RawClient c = new RawClient(server.port())) {
      assertThat(c.call("MODULE", "LIST")).isEqualTo("*1\r\n*8\r\n$4\r\nname\r\n$2\r\nbf\r\n$3\r\nver\r\n:999999\r\n"
          + "$4\r\npath\r\n$8\r\nbloomery\r\n$4\r\nargs\r\n*0\r\n");
      assertThat(c.call("INFO", "modules")).contains("# Modules\r\nmodule:name=bf,ver=999999,api=1,filters=0,"
          + "usedby=[],using=[],options=[handle-io-errors]\r\n");
      assertThat(c.call("INFO")).contains("# Modules\r\n").contains("# Cluster\r\ncluster_enabled:0\r\n");
      assertThat(c.call("HELLO", "3")).contains("ver\r\n:999999\r\n");
    }
  }

  /** Every command goes to the slow log at threshold 0, arguments cut as Redis cuts them; -1 turns it off. */
  @Test
  void theSlowLogKeepsSlowCommandsWithTheirArguments() {
    try (BloomeryServer server = TestServer.start();
        RawClient c = new RawClient(server.port())) {
      assertThat(c.call("CLIENT", "SETNAME", "worker")).isEqualTo("+OK\r\n");
      assertThat(c.call("CONFIG", "SET", "slowlog-log-slower-than", "0")).isEqualTo("+OK\r\n");
      assertThat(c.call("SLOWLOG", "RESET")).isEqualTo("+OK\r\n");
      String[] madd = new String[40];
      madd[0] = "BF.MADD";
      madd[1] = "k";
      madd[2] = "x".repeat(200);
      for (int i = 3; i < madd.length; i++) {
        madd[i] = "i" + i;
      }
      c.call(madd);
      String entry = c.call("SLOWLOG", "GET", "1");
      assertThat(entry).startsWith("*1\r\n*6\r\n:").contains("*32\r\n$7\r\nBF.MADD\r\n$1\r\nk\r\n")
          .contains("x".repeat(128) + "... (72 more bytes)\r\n").contains("... (9 more arguments)\r\n")
          .endsWith("$6\r\nworker\r\n");
      assertThat(c.call("CONFIG", "SET", "slowlog-max-len", "1")).isEqualTo("+OK\r\n");
      assertThat(c.call("SLOWLOG", "LEN")).isEqualTo(":1\r\n");
      assertThat(c.call("CONFIG", "SET", "slowlog-log-slower-than", "-1")).isEqualTo("+OK\r\n");
      c.call("SLOWLOG", "RESET");
      c.call("PING");
      assertThat(c.call("SLOWLOG", "LEN")).isEqualTo(":0\r\n");
    }
  }

  /** With a threshold, a command at least that slow is an event LATENCY LATEST and HISTORY show. */
  @Test
  void theLatencyMonitorRecordsSlowCommands() {
    try (BloomeryServer server = TestServer.start();
        RawClient c = new RawClient(server.port())) {
      assertThat(c.call("LATENCY", "LATEST")).isEqualTo("*0\r\n");
      assertThat(c.call("CONFIG", "SET", "latency-monitor-threshold", "1")).isEqualTo("+OK\r\n");
      assertThat(c.call("DEBUG", "SLEEP", "0.02")).isEqualTo("+OK\r\n");
      String latest = c.call("LATENCY", "LATEST");
      assertThat(latest).startsWith("*1\r\n*4\r\n$7\r\ncommand\r\n:");
      assertThat(c.call("LATENCY", "HISTORY", "command")).startsWith("*1\r\n*2\r\n:");
      assertThat(c.call("LATENCY", "RESET")).isEqualTo(":1\r\n");
      assertThat(c.call("LATENCY", "LATEST")).isEqualTo("*0\r\n");
    }
  }
}
