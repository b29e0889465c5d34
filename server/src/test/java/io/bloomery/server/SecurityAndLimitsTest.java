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
      // the disconnection is counted before the channel's close completes: wait for both
      while ((server.context().stats().outputBufferDisconnections.sum() == 0 || server.context().clientCount() > 1)
          && System.nanoTime() < deadline) {
        Thread.sleep(20);
      }
      assertThat(server.context().stats().outputBufferDisconnections.sum()).isEqualTo(1);
      assertThat(other.call("AUTH", "pw")).isEqualTo("+OK\r\n");
    }
  }

  /**
   * Replies of one read are sent as one buffer: those before a QUIT or a malformed frame in the same read still
   * arrive, in order, before its reply and the close.
   */
  @Test
  void repliesBeforeQuitOrABadFrameInTheSameReadArriveFirst() {
    try (BloomeryServer server = TestServer.start();
        RawClient quitting = new RawClient(server.port());
        RawClient bad = new RawClient(server.port())) {
      quitting.send("*3\r\n$6\r\nBF.ADD\r\n$1\r\nk\r\n$1\r\na\r\nPING\r\nQUIT\r\nPING\r\n".getBytes());
      assertThat(quitting.reply() + quitting.reply() + quitting.reply()).isEqualTo(":1\r\n+PONG\r\n+OK\r\n");
      assertThat(quitting.closedByServer()).isTrue();
      bad.send("*3\r\n$9\r\nBF.EXISTS\r\n$1\r\nk\r\n$1\r\na\r\n*1\r\n$4\r\nPING\r\n*1\r\n:x\r\n".getBytes());
      assertThat(bad.reply() + bad.reply() + bad.reply())
          .isEqualTo(":1\r\n+PONG\r\n-ERR Protocol error: expected '$', got ':'\r\n");
      assertThat(bad.closedByServer()).isTrue();
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
      greedyIsCutOffWhileOtherIsServed(server, other, greedy);
    }
  }

  /**
   * {@code greedy} pipelines large replies without reading them until the server (its output buffer limit well
   * below 4 MB) disconnects it; {@code other} is answered all along and afterwards.
   */
  static void greedyIsCutOffWhileOtherIsServed(BloomeryServer server, RawClient other, RawClient greedy)
      throws Exception {
    other.call("BF.RESERVE", "big", "0.001", "100000");
    java.io.ByteArrayOutputStream pipeline = new java.io.ByteArrayOutputStream();
    for (int i = 0; i < 200; i++) {
      pipeline.write(RawClient.encode("BF.SCANDUMP", "big", "1"));
    }
    byte[] bytes = pipeline.toByteArray();
    for (int round = 0; round < 20; round++) {
      try {
        greedy.send(bytes);
      } catch (RuntimeException closed) {
        break;
      }
      assertThat(other.call("PING")).isEqualTo("+PONG\r\n");
    }
    long deadline = System.nanoTime() + 10_000_000_000L;
    // the disconnection is counted before the channel's close completes: wait for both
    while ((server.context().stats().outputBufferDisconnections.sum() == 0 || server.context().clientCount() > 1)
        && System.nanoTime() < deadline) {
      Thread.sleep(20);
    }
    assertThat(server.context().stats().outputBufferDisconnections.sum()).isEqualTo(1);
    assertThat(other.call("BF.EXISTS", "big", "x")).isEqualTo(":0\r\n");
  }

  @Test
  void aClientAboveTheSoftLimitForItsSecondsIsDisconnectedWhileOthersAreServed() throws Exception {
    // hard limit far away (64 MB), soft limit 16 KB for 1 s: the greedy client is paused at 16 KB of unsent
    // replies and cut off when it is still there a second later; the hard limit is never what ends it
    try (BloomeryServer server = TestServer.start("--client-output-buffer-limit", "normal 64mb 16kb 1");
        RawClient other = new RawClient(server.port());
        RawClient greedy = new RawClient(server.port())) {
      assertThat(other.call("CONFIG", "GET", "client-output-buffer-limit"))
          .contains("normal " + 64L * 1024 * 1024 + " 16384 1");
      other.call("BF.RESERVE", "big", "0.001", "100000");
      java.io.ByteArrayOutputStream pipeline = new java.io.ByteArrayOutputStream();
      for (int i = 0; i < 400; i++) {
        pipeline.write(RawClient.encode("BF.SCANDUMP", "big", "1"));
      }
      try {
        greedy.send(pipeline.toByteArray());
      } catch (RuntimeException closed) {
        // already cut off while sending
      }
      long deadline = System.nanoTime() + 30_000_000_000L;
      // the disconnection is counted before the channel's close completes: wait for both
      while ((server.context().stats().outputBufferDisconnections.sum() == 0 || server.context().clientCount() > 1)
          && System.nanoTime() < deadline) {
        assertThat(other.call("PING")).isEqualTo("+PONG\r\n");
        Thread.sleep(20);
      }
      assertThat(server.context().stats().outputBufferDisconnections.sum()).isEqualTo(1);
      assertThat(server.context().clientCount()).isEqualTo(1);
      assertThat(other.call("BF.EXISTS", "big", "x")).isEqualTo(":0\r\n");
    }
  }

  @Test
  void outputBufferLimitOptionsAreCheckedWithOneLineErrors() {
    for (String[] bad : new String[][] {
        {"normal 64mb 16kb", "client-output-buffer-limit takes '<hard>' or 'normal <hard> <soft> <seconds>', not "
            + "'normal 64mb 16kb'"},
        {"normal 64mb 100 1", "client-output-buffer-limit soft limit must be 0 or at least 1kb, not 100"},
        {"normal 64mb 16kb -1", "client-output-buffer-limit seconds must be 0 to 86400, not '-1'"},
        {"normal 64mb 16kb x", "client-output-buffer-limit seconds must be 0 to 86400, not 'x'"}}) {
      assertThatThrownBy(() -> ServerConfig.parse(java.util.Map.of(), "--client-output-buffer-limit", bad[0]))
          .isInstanceOf(IllegalArgumentException.class).hasMessage(bad[1]);
    }
  }

  /** A local IPv4 address that is not loopback (the machine's own interface), or none. */
  static java.util.Optional<String> nonLoopbackLocalAddress() throws Exception {
    for (java.net.NetworkInterface nic : java.util.Collections.list(java.net.NetworkInterface.getNetworkInterfaces())) {
      if (!nic.isUp() || nic.isLoopback()) {
        continue;
      }
      for (java.net.InetAddress a : java.util.Collections.list(nic.getInetAddresses())) {
        if (a instanceof java.net.Inet4Address && !a.isLoopbackAddress() && !a.isLinkLocalAddress()) {
          return java.util.Optional.of(a.getHostAddress());
        }
      }
    }
    return java.util.Optional.empty();
  }

  @Test
  void protectedModeDeniesNonLoopbackClientsUntilAPasswordIsSetOrItIsOff() throws Exception {
    // a real client connecting over the machine's own non-loopback address (its source address is that one, so
    // the server sees a non-loopback peer); skipped where the machine has no such interface
    String local = nonLoopbackLocalAddress().orElse(null);
    org.junit.jupiter.api.Assumptions.assumeTrue(local != null, "no non-loopback IPv4 interface on this machine");
    String denied = "-" + io.bloomery.server.command.Errors.DENIED + "\r\n";
    try (BloomeryServer server = TestServer.start("--bind", "127.0.0.1 " + local)) {
      try (RawClient remote = new RawClient(local, server.port())) {
        remote.send(RawClient.encode("PING"));
        assertThat(remote.reply()).isEqualTo(denied);
        assertThat(remote.closedByServer()).isTrue();
      }
      try (RawClient loopback = new RawClient(server.port())) {
        assertThat(loopback.call("PING")).isEqualTo("+PONG\r\n");
      }
      assertThat(server.context().stats().rejectedConnections.sum()).isEqualTo(1);
    }
    try (BloomeryServer server = TestServer.start("--bind", local, "--requirepass", "pw");
        RawClient remote = new RawClient(local, server.port())) {
      assertThat(remote.call("PING")).isEqualTo("-NOAUTH Authentication required.\r\n");
      assertThat(remote.call("AUTH", "pw")).isEqualTo("+OK\r\n");
      assertThat(remote.call("PING")).isEqualTo("+PONG\r\n");
    }
    try (BloomeryServer server = TestServer.start("--bind", local, "--protected-mode", "no");
        RawClient remote = new RawClient(local, server.port())) {
      assertThat(remote.call("PING")).isEqualTo("+PONG\r\n");
    }
    // a password given to the default user through ACL lifts protected mode as requirepass does (Redis asks
    // whether the default user is nopass)
    try (BloomeryServer server = TestServer.start("--bind", "127.0.0.1 " + local);
        RawClient loopback = new RawClient(server.port())) {
      assertThat(loopback.call("ACL", "SETUSER", "default", "resetpass", ">pw")).isEqualTo("+OK\r\n");
      try (RawClient remote = new RawClient(local, server.port())) {
        assertThat(remote.call("PING")).isEqualTo("-NOAUTH Authentication required.\r\n");
        assertThat(remote.call("AUTH", "default", "pw")).isEqualTo("+OK\r\n");
        assertThat(remote.call("PING")).isEqualTo("+PONG\r\n");
      }
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
