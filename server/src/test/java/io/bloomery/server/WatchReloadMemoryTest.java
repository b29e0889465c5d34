package io.bloomery.server;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * WATCH/UNWATCH with Redis's semantics for a touched key, DEBUG RELOAD as RedisBloom's flow tests use it, and MEMORY
 * USAGE with the figures Redis 8.0.2 (MALLOC=libc) + RedisBloom b28c294 answered for the same commands.
 */
class WatchReloadMemoryTest extends SharedServerTest {
  private RawClient c;
  private RawClient other;

  @BeforeEach
  void connect() {
    c = new RawClient(server.port());
    other = new RawClient(server.port());
    assertThat(c.call("FLUSHALL")).isEqualTo("+OK\r\n");
  }

  @AfterEach
  void disconnect() {
    c.close();
    other.close();
  }

  private String transactionAfter(Runnable meanwhile) {
    assertThat(c.call("WATCH", "w")).isEqualTo("+OK\r\n");
    meanwhile.run();
    assertThat(c.call("MULTI")).isEqualTo("+OK\r\n");
    assertThat(c.call("BF.ADD", "w", "from-transaction")).isEqualTo("+QUEUED\r\n");
    return c.call("EXEC");
  }

  @Test
  void aWatchedKeyChangedByAnyoneAbortsExecWithANullReply() {
    other.call("BF.ADD", "w", "x");
    assertThat(transactionAfter(() -> { })).isEqualTo("*1\r\n:1\r\n");
    assertThat(transactionAfter(() -> other.call("BF.ADD", "w", "y"))).isEqualTo("*-1\r\n");
    assertThat(c.call("BF.EXISTS", "w", "from-transaction")).as("nothing ran").isEqualTo(":1\r\n");
    assertThat(transactionAfter(() -> other.call("BF.ADD", "w", "x"))).as("a write that changes nothing")
        .isEqualTo("*-1\r\n");
    assertThat(transactionAfter(() -> other.call("BF.EXISTS", "w", "x"))).as("a read").isEqualTo("*1\r\n:0\r\n");
    assertThat(transactionAfter(() -> other.call("BF.ADD", "unwatched", "x"))).isEqualTo("*1\r\n:0\r\n");
    assertThat(transactionAfter(() -> other.call("EXPIRE", "w", "1000"))).isEqualTo("*-1\r\n");
    assertThat(transactionAfter(() -> other.call("DEL", "w"))).isEqualTo("*-1\r\n");
    assertThat(transactionAfter(() -> other.call("FLUSHALL"))).as("FLUSHALL of a missing watched key")
        .isEqualTo("*1\r\n:1\r\n");
    assertThat(transactionAfter(() -> other.call("FLUSHALL"))).isEqualTo("*-1\r\n");
    assertThat(transactionAfter(() -> c.call("BF.ADD", "w", "own write"))).as("the watcher's own write")
        .isEqualTo("*-1\r\n");
    assertThat(transactionAfter(() -> {
      c.call("UNWATCH");
      other.call("BF.ADD", "w", "z");
    })).as("UNWATCH forgot it").isEqualTo("*1\r\n:1\r\n");
    assertThat(transactionAfter(() -> other.call("DEBUG", "RELOAD"))).isEqualTo("*-1\r\n");
  }

  @Test
  void aWatchedKeyThatExpiresAbortsExecAndWatchIsRefusedInsideMulti() throws InterruptedException {
    other.call("BF.ADD", "w", "x");
    other.call("PEXPIRE", "w", "50");
    assertThat(c.call("WATCH", "w")).isEqualTo("+OK\r\n");
    Thread.sleep(120);
    assertThat(c.call("MULTI")).isEqualTo("+OK\r\n");
    assertThat(c.call("WATCH", "w")).isEqualTo("-ERR WATCH inside MULTI is not allowed\r\n");
    assertThat(c.call("PING")).isEqualTo("+QUEUED\r\n");
    assertThat(c.call("EXEC")).isEqualTo("*-1\r\n");
    c.call("HELLO", "3");
    assertThat(transactionAfter(() -> other.call("BF.ADD", "w", "y"))).isEqualTo("_\r\n");
    assertThat(transactionAfter(() -> { })).isEqualTo("*1\r\n#t\r\n");
    assertThat(c.call("WATCH", "w")).isEqualTo("+OK\r\n");
    other.call("BF.ADD", "w", "v");
    assertThat(c.call("MULTI")).isEqualTo("+OK\r\n");
    assertThat(c.call("DISCARD")).isEqualTo("+OK\r\n");
    assertThat(transactionAfter(() -> { })).as("DISCARD forgot the watch").isEqualTo("*1\r\n#f\r\n");
  }

  @Test
  void debugReloadKeepsEveryKeyAndItsExpiry() {
    c.call("BF.RESERVE", "bf", "0.01", "10", "EXPANSION", "2");
    for (int i = 0; i < 50; i++) {
      c.call("BF.ADD", "bf", "item" + i);
    }
    c.call("CF.INSERT", "cf", "ITEMS", "a", "b");
    c.call("CMS.INITBYDIM", "cms", "20", "5");
    c.call("CMS.INCRBY", "cms", "a", "5");
    c.call("TOPK.RESERVE", "topk", "3");
    c.call("TOPK.ADD", "topk", "a", "b", "a");
    c.call("CBF.RESERVE", "counting", "0.01", "100");
    c.call("CBF.ADD", "counting", "x");
    c.call("EXPIRE", "cf", "1000");
    String bfInfo = c.call("BF.INFO", "bf");
    String cfInfo = c.call("CF.INFO", "cf");
    String list = c.call("TOPK.LIST", "topk", "WITHCOUNT");
    assertThat(c.call("DEBUG", "RELOAD")).isEqualTo("+OK\r\n");
    assertThat(c.call("DBSIZE")).isEqualTo(":5\r\n");
    assertThat(c.call("BF.INFO", "bf")).isEqualTo(bfInfo);
    assertThat(c.call("BF.EXISTS", "bf", "item49")).isEqualTo(":1\r\n");
    assertThat(c.call("CF.INFO", "cf")).isEqualTo(cfInfo);
    assertThat(Long.parseLong(c.call("TTL", "cf").substring(1).trim())).isBetween(990L, 1000L);
    assertThat(c.call("CMS.QUERY", "cms", "a")).isEqualTo("*1\r\n:5\r\n");
    assertThat(c.call("TOPK.LIST", "topk", "WITHCOUNT")).isEqualTo(list);
    assertThat(c.call("CBF.EXISTS", "counting", "x")).isEqualTo(":1\r\n");
    assertThat(c.call("DEBUG", "RELOAD", "NOSAVE", "NOFLUSH", "MERGE")).isEqualTo("+OK\r\n");
    assertThat(c.call("DEBUG", "RELOAD", "BOGUS")).isEqualTo("-ERR syntax error\r\n");
  }

  @Test
  void memoryUsageIsRedisBloomsFigure() {
    c.call("CMS.INITBYDIM", "cms1", "20", "5");
    c.call("CF.RESERVE", "cf", "1000");
    c.call("BF.RESERVE", "bf", "0.05", "1000");
    c.call("TOPK.RESERVE", "tk", "10");
    assertThat(c.call("MEMORY", "USAGE", "cms1")).isEqualTo(":480\r\n");
    assertThat(c.call("MEMORY", "USAGE", "cf")).isEqualTo(":1128\r\n");
    assertThat(c.call("MEMORY", "USAGE", "bf")).isEqualTo(":1104\r\n");
    assertThat(c.call("MEMORY", "USAGE", "tk", "SAMPLES", "0")).isEqualTo(":2824\r\n");
    assertThat(c.call("MEMORY", "USAGE", "missing")).isEqualTo("$-1\r\n");
    assertThat(c.call("MEMORY", "USAGE", "cf", "SAMPLES")).isEqualTo("-ERR syntax error\r\n");
    assertThat(c.call("MEMORY", "USAGE", "cf", "SAMPLES", "x")).isEqualTo(
        "-ERR value is not an integer or out of range\r\n");
  }
}
