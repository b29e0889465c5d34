package io.bloomery.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * MIGRATE between real servers over real sockets: Bloomery to Bloomery (always), Bloomery to Redis + RedisBloom and
 * Redis + RedisBloom to Bloomery (where the oracle is built, see {@link Oracle}); Redis's errors for bad arguments,
 * an unreachable target, a silent one and one that answers garbage; the local delete journaled.
 */
class MigrateTest {
  static BloomeryServer source;
  static BloomeryServer target;
  private RawClient src;
  private RawClient dst;

  @BeforeAll
  static void start() {
    source = TestServer.start("--io-threads", "1");
    target = TestServer.start();
  }

  @AfterAll
  static void stop() {
    source.close();
    target.close();
  }

  @BeforeEach
  void connect() {
    src = new RawClient(source.port());
    dst = new RawClient(target.port());
    assertThat(src.call("FLUSHALL")).isEqualTo("+OK\r\n");
    assertThat(dst.call("FLUSHALL")).isEqualTo("+OK\r\n");
  }

  private String migrate(int port, String... rest) {
    String[] args = new String[3 + rest.length];
    args[0] = "MIGRATE";
    args[1] = "127.0.0.1";
    args[2] = Integer.toString(port);
    System.arraycopy(rest, 0, args, 3, rest.length);
    return src.call(args);
  }

  @Test
  void movesKeysWithTheirValuesAndExpiry() {
    src.call("BF.ADD", "bf", "a");
    src.call("CF.ADD", "cf", "b");
    src.call("PEXPIRE", "cf", "100000");
    assertThat(migrate(target.port(), "bf", "0", "5000")).isEqualTo("+OK\r\n");
    assertThat(src.call("EXISTS", "bf")).isEqualTo(":0\r\n");
    assertThat(dst.call("BF.EXISTS", "bf", "a")).isEqualTo(":1\r\n");
    assertThat(dst.call("BF.EXISTS", "bf", "z")).isEqualTo(":0\r\n");
    assertThat(dst.call("TTL", "bf")).isEqualTo(":-1\r\n");
    assertThat(migrate(target.port(), "cf", "0", "5000")).isEqualTo("+OK\r\n");
    assertThat(dst.call("CF.EXISTS", "cf", "b")).isEqualTo(":1\r\n");
    long pttl = Long.parseLong(dst.call("PTTL", "cf").trim().substring(1));
    assertThat(pttl).isBetween(1L, 100000L);
  }

  @Test
  void copyKeepsTheKeyAndTheTargetRefusesAnExistingOneWithoutReplace() {
    src.call("BF.ADD", "k", "a");
    assertThat(migrate(target.port(), "k", "0", "5000", "COPY")).isEqualTo("+OK\r\n");
    assertThat(src.call("EXISTS", "k")).isEqualTo(":1\r\n");
    assertThat(migrate(target.port(), "k", "0", "5000", "COPY"))
        .isEqualTo("-ERR Target instance replied with error: BUSYKEY Target key name already exists.\r\n");
    src.call("BF.ADD", "k", "b");
    assertThat(migrate(target.port(), "k", "0", "5000", "REPLACE")).isEqualTo("+OK\r\n");
    assertThat(src.call("EXISTS", "k")).isEqualTo(":0\r\n");
    assertThat(dst.call("BF.EXISTS", "k", "b")).isEqualTo(":1\r\n");
  }

  @Test
  void keysFormMovesThePresentKeysAndAnswersNokeyWhenNoneIs() {
    src.call("BF.ADD", "x", "1");
    src.call("TOPK.RESERVE", "y", "3");
    assertThat(migrate(target.port(), "", "0", "5000", "KEYS", "x", "missing", "y")).isEqualTo("+OK\r\n");
    assertThat(src.call("DBSIZE")).isEqualTo(":0\r\n");
    assertThat(dst.call("TYPE", "y")).isEqualTo("+TopK-TYPE\r\n");
    assertThat(migrate(target.port(), "", "0", "5000", "KEYS", "x", "y")).isEqualTo("+NOKEY\r\n");
    assertThat(migrate(target.port(), "nothing", "0", "5000")).isEqualTo("+NOKEY\r\n");
  }

  @Test
  void authenticatesAndReportsTheTargetsErrors() {
    BloomeryServer locked = TestServer.start("--requirepass", "sesame");
    try {
      src.call("BF.ADD", "k", "a");
      assertThat(migrate(locked.port(), "k", "0", "5000", "COPY"))
          .isEqualTo("-ERR Target instance replied with error: NOAUTH Authentication required.\r\n");
      assertThat(migrate(locked.port(), "k", "0", "5000", "COPY", "AUTH", "wrong")).startsWith(
          "-ERR Target instance replied with error: WRONGPASS");
      assertThat(migrate(locked.port(), "k", "0", "5000", "AUTH2", "default", "sesame")).isEqualTo("+OK\r\n");
      assertThat(src.call("EXISTS", "k")).isEqualTo(":0\r\n");
      src.call("BF.ADD", "k", "a");
      assertThat(migrate(locked.port(), "k", "3", "5000", "AUTH", "sesame"))
          .isEqualTo("-ERR Target instance replied with error: ERR DB index is out of range\r\n");
      assertThat(src.call("EXISTS", "k")).isEqualTo(":1\r\n");
    } finally {
      locked.close();
    }
  }

  @Test
  void badArgumentsAnswerRedisErrors() {
    src.call("BF.ADD", "k", "a");
    assertThat(src.call("MIGRATE", "127.0.0.1", "1", "k", "0"))
        .isEqualTo("-ERR wrong number of arguments for 'migrate' command\r\n");
    assertThat(migrate(target.port(), "k", "0", "soon")).isEqualTo("-ERR value is not an integer or out of range\r\n");
    assertThat(migrate(target.port(), "k", "db", "10")).isEqualTo("-ERR value is not an integer or out of range\r\n");
    assertThat(migrate(target.port(), "k", "0", "10", "NOW")).isEqualTo("-ERR syntax error\r\n");
    assertThat(migrate(target.port(), "k", "0", "10", "AUTH")).isEqualTo("-ERR syntax error\r\n");
    assertThat(migrate(target.port(), "k", "0", "10", "AUTH2", "u")).isEqualTo("-ERR syntax error\r\n");
    assertThat(migrate(target.port(), "k", "0", "10", "KEYS", "k")).isEqualTo(
        "-ERR When using MIGRATE KEYS option, the key argument must be set to the empty string\r\n");
    assertThat(src.call("MULTI")).isEqualTo("+OK\r\n");
    assertThat(migrate(target.port(), "k", "0", "10")).isEqualTo("-ERR Command not allowed inside a transaction\r\n");
    assertThat(src.call("DISCARD")).isEqualTo("+OK\r\n");
    assertThat(src.call("EXISTS", "k")).isEqualTo(":1\r\n");
  }

  @Test
  void aclKeyPatternsCoverTheKeysAfterKeys() {
    assertThat(src.call("ACL", "SETUSER", "mover", "on", ">pw", "~allowed:*", "+@all")).isEqualTo("+OK\r\n");
    try (RawClient mover = new RawClient(source.port())) {
      src.call("BF.ADD", "secret", "a");
      assertThat(mover.call("AUTH", "mover", "pw")).isEqualTo("+OK\r\n");
      assertThat(mover.call("MIGRATE", "127.0.0.1", Integer.toString(target.port()), "", "0", "5000", "KEYS",
          "allowed:a", "secret")).isEqualTo("-NOPERM No permissions to access a key\r\n");
      assertThat(mover.call("MIGRATE", "127.0.0.1", Integer.toString(target.port()), "", "0", "5000", "KEYS",
          "allowed:a")).isEqualTo("+NOKEY\r\n");
      assertThat(src.call("EXISTS", "secret")).isEqualTo(":1\r\n");
    } finally {
      src.call("ACL", "DELUSER", "mover");
    }
  }

  @Test
  void anUnreachableTargetIsAnIoErrorAndTheKeyStays() throws IOException {
    int closed;
    try (ServerSocket s = new ServerSocket(0)) {
      closed = s.getLocalPort();
    }
    src.call("BF.ADD", "k", "a");
    assertThat(migrate(closed, "k", "0", "1000"))
        .isEqualTo("-IOERR error or timeout writing to target instance\r\n");
    assertThat(src.call("MIGRATE", "no-such-host.invalid", "6379", "k", "0", "1000"))
        .isEqualTo("-IOERR error or timeout connecting to the client\r\n");
    assertThat(src.call("EXISTS", "k")).isEqualTo(":1\r\n");
  }

  /** A fake target: accepts connections and lets {@code behaviour} answer each. */
  private static ServerSocket fakeTarget(Consumer<Socket> behaviour) throws IOException {
    ServerSocket server = new ServerSocket(0);
    Thread.ofVirtual().start(() -> {
      while (!server.isClosed()) {
        try {
          Socket s = server.accept();
          Thread.ofVirtual().start(() -> behaviour.accept(s));
        } catch (IOException e) {
          return;
        }
      }
    });
    return server;
  }

  @Test
  void aSilentTargetHoldsOnlyItsOwnClient() throws Exception {
    CompletableFuture<Void> release = new CompletableFuture<>();
    try (ServerSocket silent = heldTarget(release, "")) {
      src.call("BF.ADD", "k", "a");
      // the server runs one event loop, shared by both clients; the MIGRATE cannot end before the target is released
      src.send(RawClient.encode("MIGRATE", "127.0.0.1", Integer.toString(silent.getLocalPort()), "k", "0", "60000"));
      try (RawClient other = new RawClient(source.port())) {
        assertThat(other.call("PING")).isEqualTo("+PONG\r\n");
        assertThat(other.call("BF.ADD", "k", "b")).isEqualTo(":1\r\n");
      }
      release.complete(null);
      assertThat(src.reply()).isEqualTo("-IOERR error or timeout reading to target instance\r\n");
      assertThat(src.call("EXISTS", "k")).isEqualTo(":1\r\n");
    } finally {
      release.complete(null);
    }
  }

  @Test
  void aKeyChangedLocallyWhileInTransitIsKept() throws Exception {
    CompletableFuture<Void> release = new CompletableFuture<>();
    try (ServerSocket slow = heldTarget(release, "+OK\r\n+OK\r\n+OK\r\n")) { // SELECT, two RESTOREs
      src.call("BF.ADD", "changed", "a");
      src.call("BF.ADD", "unchanged", "a");
      src.send(RawClient.encode("MIGRATE", "127.0.0.1", Integer.toString(slow.getLocalPort()), "", "0", "60000",
          "KEYS", "changed", "unchanged"));
      try (RawClient other = new RawClient(source.port())) {
        assertThat(other.call("BF.ADD", "changed", "b")).isEqualTo(":1\r\n");
      }
      release.complete(null);
      assertThat(src.reply()).isEqualTo("-ERR MIGRATE kept 1 key(s) that changed locally while in transit: the "
          + "target holds the value as it was dumped\r\n");
      assertThat(src.call("BF.EXISTS", "changed", "b")).isEqualTo(":1\r\n");
      assertThat(src.call("EXISTS", "unchanged")).isEqualTo(":0\r\n");
    } finally {
      release.complete(null);
    }
  }

  @Test
  void aTimeoutOfZeroOrLessMeansOneSecond() throws Exception {
    CompletableFuture<Void> release = new CompletableFuture<>();
    try (ServerSocket silent = heldTarget(release, "")) {
      src.call("BF.ADD", "k", "a");
      for (String timeout : new String[] {"0", "-5"}) {
        long start = System.nanoTime();
        assertThat(migrate(silent.getLocalPort(), "k", "0", timeout))
            .isEqualTo("-IOERR error or timeout reading to target instance\r\n");
        assertThat(System.nanoTime() - start).isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(1000));
      }
      assertThat(src.call("EXISTS", "k")).isEqualTo(":1\r\n");
    } finally {
      release.complete(null);
    }
  }

  @Test
  void aTargetAnsweringGarbageLeavesTheKey() throws Exception {
    CompletableFuture<Void> now = CompletableFuture.completedFuture(null);
    try (ServerSocket garbage = heldTarget(now, "\u0000\u0001junk without an end");
        ServerSocket erring = heldTarget(now, "-WEIRD thing\r\n+OK\r\n-SECOND\r\n")) {
      src.call("BF.ADD", "k", "a");
      assertThat(migrate(garbage.getLocalPort(), "k", "0", "1000"))
          .isEqualTo("-IOERR error or timeout reading to target instance\r\n");
      assertThat(migrate(erring.getLocalPort(), "k", "0", "1000"))
          .isEqualTo("-ERR Target instance replied with error: WEIRD thing\r\n");
      assertThat(src.call("EXISTS", "k")).isEqualTo(":1\r\n");
    }
  }

  /**
   * A fake target that says nothing until {@code release} completes, then sends {@code reply}, ends its output and
   * reads whatever the source still sends until the source hangs up.
   */
  private static ServerSocket heldTarget(CompletableFuture<Void> release, String reply) throws IOException {
    return fakeTarget(s -> {
      try (s) {
        release.join();
        s.getOutputStream().write(reply.getBytes(StandardCharsets.ISO_8859_1));
        s.shutdownOutput();
        drain(s.getInputStream());
      } catch (IOException e) {
        // the source went away
      }
    });
  }

  private static void drain(InputStream in) throws IOException {
    byte[] buf = new byte[8192];
    while (in.read(buf) >= 0) {
      // discard what the source sends
    }
  }

  @Test
  void theLocalDeleteIsJournaled(@TempDir Path dir) {
    BloomeryServer first = TestServer.start("--appendonly", "yes", "--appendfsync", "always", "--dir",
        dir.toString());
    try (RawClient c = new RawClient(first.port())) {
      c.call("BF.ADD", "gone", "a");
      c.call("BF.ADD", "kept", "a");
      assertThat(c.call("MIGRATE", "127.0.0.1", Integer.toString(target.port()), "gone", "0", "5000"))
          .isEqualTo("+OK\r\n");
    } finally {
      first.close(false);
    }
    BloomeryServer second = TestServer.start("--appendonly", "yes", "--dir", dir.toString());
    try (RawClient c = new RawClient(second.port())) {
      assertThat(c.call("EXISTS", "gone")).isEqualTo(":0\r\n");
      assertThat(c.call("EXISTS", "kept")).isEqualTo(":1\r\n");
    } finally {
      second.close();
    }
  }

  @Test
  void movesToAndFromRedisWithRedisBloom() throws Exception {
    try (Oracle redis = Oracle.startOrSkip()) {
      RawClient r = new RawClient(redis.port());
      src.call("BF.ADD", "bf", "a");
      src.call("CMS.INITBYDIM", "cms", "20", "5");
      src.call("CMS.INCRBY", "cms", "x", "7");
      assertThat(migrate(redis.port(), "", "0", "5000", "KEYS", "bf", "cms")).isEqualTo("+OK\r\n");
      assertThat(r.call("BF.EXISTS", "bf", "a")).isEqualTo(":1\r\n");
      assertThat(r.call("CMS.QUERY", "cms", "x")).isEqualTo("*1\r\n:7\r\n");
      assertThat(src.call("DBSIZE")).isEqualTo(":0\r\n");
      r.call("CF.ADD", "cf", "c");
      assertThat(r.call("MIGRATE", "127.0.0.1", Integer.toString(target.port()), "cf", "0", "5000"))
          .isEqualTo("+OK\r\n");
      assertThat(dst.call("CF.EXISTS", "cf", "c")).isEqualTo(":1\r\n");
      assertThat(r.call("EXISTS", "cf")).isEqualTo(":0\r\n");
      r.call("BF.ADD", "dup", "1");
      dst.call("BF.ADD", "dup", "1");
      assertThat(r.call("MIGRATE", "127.0.0.1", Integer.toString(target.port()), "dup", "0", "5000"))
          .isEqualTo("-ERR Target instance replied with error: BUSYKEY Target key name already exists.\r\n");
      r.close();
    }
  }
}
