package io.bloomery.server;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * MODULE LIST, INFO modules, cluster and persistence, SLOWLOG, LATENCY and the active-defrag options over the wire:
 * the parts the conformance recording cannot hold because they name the server or carry times, or because Bloomery's
 * words differ from a Redis built without jemalloc (the rest is replayed from admin.recording).
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

  /**
   * Without persistence, INFO persistence still has Redis's fields at their never-saved values: RLTest's existing-env
   * mode (RedisBloom's tests/flow) reads rdb_bgsave_in_progress after every FLUSHALL and fails without it.
   */
  @Test
  void infoPersistenceWithoutPersistenceHasRedisIdleFields() {
    try (BloomeryServer server = TestServer.start();
        RawClient c = new RawClient(server.port())) {
      assertThat(c.call("INFO", "persistence")).contains("\r\nloading:0\r\n")
          .contains("\r\nrdb_bgsave_in_progress:0\r\n").contains("\r\nrdb_last_bgsave_status:ok\r\n")
          .contains("\r\nrdb_saves:0\r\n").contains("\r\naof_enabled:0\r\n")
          .contains("\r\naof_rewrite_in_progress:0\r\n").contains("\r\naof_last_write_status:ok\r\n");
    }
  }

  /**
   * The active-defrag tuning options are kept as a Redis without jemalloc keeps them, and {@code activedefrag yes} is
   * refused with the reason, so a client that tries to enable it (RedisBloom's test_defrag) learns it cannot. The
   * ranges and Redis's words are replayed from admin.recording (admin/config-active-defrag).
   */
  @Test
  void activeDefragOptionsAreKeptAndEnablingItIsRefused() {
    try (BloomeryServer server = TestServer.start();
        RawClient c = new RawClient(server.port())) {
      assertThat(c.call("CONFIG", "SET", "active-defrag-ignore-bytes", "1", "active-defrag-cycle-min", "99"))
          .isEqualTo("+OK\r\n");
      assertThat(c.call("CONFIG", "GET", "active-defrag-ignore-bytes"))
          .isEqualTo("*2\r\n$26\r\nactive-defrag-ignore-bytes\r\n$1\r\n1\r\n");
      assertThat(c.call("CONFIG", "SET", "activedefrag", "yes")).startsWith("-ERR CONFIG SET failed (possibly "
          + "related to argument 'activedefrag') - Active defragmentation cannot be enabled: ");
      assertThat(c.call("CONFIG", "SET", "activedefrag", "no")).isEqualTo("+OK\r\n");
      assertThat(c.call("CONFIG", "GET", "activedefrag")).isEqualTo("*2\r\n$12\r\nactivedefrag\r\n$2\r\nno\r\n");
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
