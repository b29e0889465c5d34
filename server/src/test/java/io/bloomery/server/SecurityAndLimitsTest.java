package io.bloomery.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.RedisClient;
import redis.clients.jedis.RedisProtocol;
import redis.clients.jedis.UnifiedJedis;

/** Authentication, protocol limits before AUTH, hostile streams, maxclients, output buffers and maxmemory. */
class SecurityAndLimitsTest {

  @Test
  void passwordIsRequiredAndCheckedWithRedisReplies() {
    try (BloomeryServer server = TestServer.start("--requirepass", "s3cret");
        RawClient c = new RawClient(server.port())) {
      assertThat(c.call("BF.ADD", "k", "x")).isEqualTo("-NOAUTH Authentication required.\r\n");
      assertThat(c.call("PING")).isEqualTo("-NOAUTH Authentication required.\r\n");
      assertThat(c.call("NOPE")).startsWith("-ERR unknown command 'NOPE'");
      assertThat(c.call("AUTH", "wrong"))
          .isEqualTo("-WRONGPASS invalid username-password pair or user is disabled.\r\n");
      assertThat(c.call("AUTH", "other", "s3cret"))
          .isEqualTo("-WRONGPASS invalid username-password pair or user is disabled.\r\n");
      assertThat(c.call("HELLO", "3")).startsWith("-NOAUTH HELLO must be called with the client already authenticated");
      assertThat(c.call("AUTH", "s3cret")).isEqualTo("+OK\r\n");
      assertThat(c.call("BF.ADD", "k", "x")).isEqualTo(":1\r\n");
      assertThat(c.call("RESET")).isEqualTo("+RESET\r\n");
      assertThat(c.call("PING")).isEqualTo("-NOAUTH Authentication required.\r\n");
      for (RedisProtocol protocol : RedisProtocol.values()) {
        try (UnifiedJedis j = RedisClient.builder().hostAndPort(new HostAndPort("127.0.0.1", server.port()))
            .clientConfig(DefaultJedisClientConfig.builder().protocol(protocol).password("s3cret").build()).build()) {
          assertThat(j.bfExists("k", "x")).isTrue();
        }
      }
    }
  }

  @Test
  void unauthenticatedClientsCannotDeclareLargeCommands() {
    try (BloomeryServer server = TestServer.start("--requirepass", "pw");
        RawClient c = new RawClient(server.port())) {
      c.send("*2\r\n$4\r\nAUTH\r\n$100000\r\n".getBytes());
      assertThat(c.reply()).isEqualTo("-ERR Protocol error: unauthenticated bulk length\r\n");
      assertThat(c.closedByServer()).isTrue();
      try (RawClient d = new RawClient(server.port())) {
        d.send("*1000\r\n".getBytes());
        assertThat(d.reply()).isEqualTo("-ERR Protocol error: unauthenticated multibulk length\r\n");
        assertThat(d.closedByServer()).isTrue();
      }
    }
  }

  @Test
  void anUnauthenticatedClientThatNeverReadsIsCutOffAtOneMegabyte() throws Exception {
    try (BloomeryServer server = TestServer.start("--requirepass", "pw");
        RawClient flood = new RawClient(server.port());
        RawClient other = new RawClient(server.port())) {
      byte[] pings = "PING\r\n".repeat(50_000).getBytes(java.nio.charset.StandardCharsets.US_ASCII);
      for (int round = 0; round < 100 && server.context().stats().outputBufferDisconnections.sum() == 0; round++) {
        try {
          flood.send(pings);
        } catch (RuntimeException closed) {
          break;
        }
      }
      long deadline = System.nanoTime() + 10_000_000_000L;
      while (server.context().stats().outputBufferDisconnections.sum() == 0 && System.nanoTime() < deadline) {
        Thread.sleep(20);
      }
      assertThat(server.context().stats().outputBufferDisconnections.sum()).isEqualTo(1);
      assertThat(other.call("AUTH", "pw")).isEqualTo("+OK\r\n");
    }
  }

  @Test
  void aMalformedStreamClosesOnlyThatConnection() {
    try (BloomeryServer server = TestServer.start();
        RawClient good = new RawClient(server.port());
        RawClient bad = new RawClient(server.port())) {
      assertThat(good.call("BF.ADD", "k", "a")).isEqualTo(":1\r\n");
      bad.send("*2\r\n$4\r\nPING\r\n:oops\r\n".getBytes());
      assertThat(bad.reply()).isEqualTo("-ERR Protocol error: expected '$', got ':'\r\n");
      assertThat(bad.closedByServer()).isTrue();
      try (RawClient worse = new RawClient(server.port())) {
        worse.send("*1\r\n$99999999999\r\n".getBytes());
        assertThat(worse.reply()).isEqualTo("-ERR Protocol error: invalid bulk length\r\n");
        assertThat(worse.closedByServer()).isTrue();
      }
      assertThat(good.call("BF.EXISTS", "k", "a")).isEqualTo(":1\r\n");
    }
  }

  @Test
  void maxclientsRefusesTheConnectionAboveTheLimit() {
    try (BloomeryServer server = TestServer.start("--maxclients", "2");
        RawClient a = new RawClient(server.port());
        RawClient b = new RawClient(server.port())) {
      assertThat(a.call("PING")).isEqualTo("+PONG\r\n");
      assertThat(b.call("PING")).isEqualTo("+PONG\r\n");
      try (RawClient c = new RawClient(server.port())) {
        assertThat(c.reply()).isEqualTo("-ERR max number of clients reached\r\n");
        assertThat(c.closedByServer()).isTrue();
      }
      assertThat(server.context().stats().rejectedConnections.sum()).isEqualTo(1);
    }
  }

  @Test
  void aClientThatStopsReadingIsDisconnectedWithoutStallingOthers() throws Exception {
    try (BloomeryServer server = TestServer.start("--client-output-buffer-limit", "64kb");
        RawClient other = new RawClient(server.port());
        RawClient greedy = new RawClient(server.port())) {
      other.call("BF.RESERVE", "big", "0.001", "100000");
      StringBuilder pipeline = new StringBuilder();
      for (int i = 0; i < 200; i++) {
        pipeline.append(new String(RawClient.encode("BF.SCANDUMP", "big", "1"), "ISO-8859-1"));
      }
      byte[] bytes = pipeline.toString().getBytes("ISO-8859-1");
      for (int round = 0; round < 20; round++) {
        try {
          greedy.send(bytes);
        } catch (RuntimeException closed) {
          break;
        }
        assertThat(other.call("PING")).isEqualTo("+PONG\r\n");
      }
      long deadline = System.nanoTime() + 10_000_000_000L;
      while (server.context().stats().outputBufferDisconnections.sum() == 0 && System.nanoTime() < deadline) {
        Thread.sleep(20);
      }
      assertThat(server.context().stats().outputBufferDisconnections.sum()).isEqualTo(1);
      assertThat(other.call("BF.EXISTS", "big", "x")).isEqualTo(":0\r\n");
    }
  }

  @Test
  void maxmemoryRefusesNewFiltersBeforeAllocating() {
    try (BloomeryServer server = TestServer.start("--maxmemory", "1mb");
        RawClient c = new RawClient(server.port())) {
      String oom = "-OOM command not allowed when used memory > 'maxmemory'.\r\n";
      assertThat(c.call("BF.RESERVE", "huge", "0.0001", "100000000")).isEqualTo(oom);
      assertThat(c.call("EXISTS", "huge")).isEqualTo(":0\r\n");
      assertThat(c.call("BF.RESERVE", "small", "0.01", "1000")).isEqualTo("+OK\r\n");
      List<String> replies = new ArrayList<>();
      for (int i = 0; i < 20; i++) {
        replies.add(c.call("BF.RESERVE", "f" + i, "0.01", "100000"));
      }
      assertThat(replies).contains("+OK\r\n").contains(oom);
      assertThat(server.context().keyspace().usedBytes()).isLessThan(1024 * 1024 + 200_000);
      assertThat(c.call("BF.ADD", "small", "x")).isEqualTo(":1\r\n");
      assertThat(c.call("CONFIG", "SET", "maxmemory", "1000")).isEqualTo("+OK\r\n");
      assertThat(c.call("BF.ADD", "small", "y")).isEqualTo(oom);
      assertThat(c.call("BF.MADD", "small", "y")).isEqualTo(oom);
      assertThat(c.call("BF.EXISTS", "small", "x")).isEqualTo(":1\r\n");
      assertThat(c.call("DEL", "f0")).startsWith(":");
      assertThat(c.call("CONFIG", "SET", "maxmemory", "0")).isEqualTo("+OK\r\n");
      assertThat(c.call("BF.ADD", "small", "y")).isEqualTo(":1\r\n");
      assertThat(c.call("INFO", "memory")).contains("used_memory:");
    }
  }

  @Test
  void badOptionsGetAOneLineError() {
    assertThatThrownBy(() -> ServerConfig.parse(java.util.Map.of(), "--port", "x"))
        .hasMessage("port must be an integer, not 'x'");
    assertThatThrownBy(() -> ServerConfig.parse(java.util.Map.of(), "--nope", "1"))
        .hasMessageStartingWith("unknown option --nope");
    assertThatThrownBy(() -> ServerConfig.parse(java.util.Map.of(), "--appendfsync", "sometimes"))
        .hasMessage("appendfsync must be always, everysec or no, not 'sometimes'");
    assertThatThrownBy(() -> ServerConfig.parse(java.util.Map.of(), "--maxmemory", "lots"))
        .hasMessageStartingWith("not a memory size: 'lots'");
    ServerConfig config = ServerConfig.parse(java.util.Map.of("BLOOMERY_PORT", "7000"), "--maxmemory", "2mb");
    assertThat(config.port()).isEqualTo(7000);
    assertThat(config.maxmemory()).isEqualTo(2 * 1024 * 1024);
    assertThat(config.bind()).containsExactly("127.0.0.1");
    assertThat(config.appendfsync()).isEqualTo("everysec");
    assertThat(config.httpPort()).isEqualTo(9180);
  }
}
