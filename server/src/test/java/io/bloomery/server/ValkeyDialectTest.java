package io.bloomery.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * valkey-bloom's BF.INSERT options (VALIDATESCALETO, TIGHTENING, SEED) and BF.INFO MAXSCALEDCAPACITY, with the
 * figures and error texts valkey-bloom's own integration tests and docs expect, while RedisBloom's syntax keeps
 * RedisBloom's replies.
 */
class ValkeyDialectTest extends SharedServerTest {
  private RawClient c;

  @BeforeEach
  void connect() {
    c = new RawClient(server.port());
    assertThat(c.call("FLUSHALL")).isEqualTo("+OK\r\n");
  }

  @AfterEach
  void disconnect() {
    c.close();
  }

  @Test
  void maxScaledCapacityIsValkeyBloomsFigure() {
    // valkey-bloom's docs: the defaults (100 items, 0.01, expansion 2) reach 26214300 within its 128 MiB limit
    assertThat(c.call("BF.INSERT", "d", "CAPACITY", "100", "ERROR", "0.01", "EXPANSION", "2", "ITEMS", "a"))
        .isEqualTo("*1\r\n:1\r\n");
    assertThat(c.call("BF.INFO", "d", "MAXSCALEDCAPACITY")).isEqualTo(":26214300\r\n");
    assertThat(c.call("BF.INFO", "d", "maxscaledcapacity")).isEqualTo(":26214300\r\n");
    // its integration test: expansion 1 ends when a new layer's rate would underflow, after 1016 layers
    c.call("BF.INSERT", "fp", "CAPACITY", "100", "EXPANSION", "1", "ITEMS", "a");
    assertThat(c.call("BF.INFO", "fp", "MAXSCALEDCAPACITY")).isEqualTo(":101600\r\n");
    // a key that does not scale has no such field, in either dialect
    c.call("BF.RESERVE", "fixed", "0.01", "100", "NONSCALING");
    assertThat(c.call("BF.INFO", "fixed", "MAXSCALEDCAPACITY")).isEqualTo("-Invalid information value\r\n");
    assertThat(c.call("BF.INFO", "fixed", "TIGHTENING")).isEqualTo("-Invalid information value\r\n");
    assertThat(c.call("BF.INFO", "d", "TIGHTENING")).isEqualTo("$3\r\n0.5\r\n");
    c.call("HELLO", "3");
    assertThat(c.call("BF.INFO", "d", "TIGHTENING")).isEqualTo(",0.5\r\n");
    assertThat(c.call("BF.INFO", "d", "MAXSCALEDCAPACITY")).isEqualTo(":26214300\r\n");
    c.call("HELLO", "2");
    // the whole-key BF.INFO stays RedisBloom's five fields
    assertThat(c.call("BF.INFO", "d")).startsWith("*10\r\n");
  }

  @Test
  void validateScaleToPassesAtTheMaximumAndFailsOnePast() {
    assertThat(c.call("BF.INSERT", "k", "ERROR", "0.00000001", "CAPACITY", "100", "EXPANSION", "2",
        "VALIDATESCALETO", "13107101"))
        .isEqualTo("-ERR provided VALIDATESCALETO causes bloom object to exceed memory limit\r\n");
    assertThat(c.call("BF.INSERT", "k", "CAPACITY", "100", "ERROR", "0.01", "EXPANSION", "1",
        "VALIDATESCALETO", "101601"))
        .isEqualTo("-ERR provided VALIDATESCALETO causes false positive to degrade to 0\r\n");
    assertThat(c.call("EXISTS", "k")).isEqualTo(":0\r\n");
    // valkey-bloom's BF.INSERT creates the filter without ITEMS
    assertThat(c.call("BF.INSERT", "mem", "ERROR", "0.00000001", "CAPACITY", "100", "EXPANSION", "2",
        "VALIDATESCALETO", "13107100")).isEqualTo("*0\r\n");
    assertThat(c.call("BF.INFO", "mem", "MAXSCALEDCAPACITY")).isEqualTo(":13107100\r\n");
    assertThat(c.call("BF.INSERT", "fp", "CAPACITY", "100", "EXPANSION", "1", "VALIDATESCALETO", "101600",
        "ITEMS", "x", "y")).isEqualTo("*2\r\n:1\r\n:1\r\n");
    assertThat(c.call("BF.EXISTS", "fp", "y")).isEqualTo(":1\r\n");
  }

  @Test
  void journalReplaysTheDialectsCommands(@TempDir Path dir) throws Exception {
    String[] args = {"--port", "0", "--http-port", "0", "--dir", dir.toString(), "--appendfsync", "always"};
    String info;
    try (BloomeryServer s = BloomeryServer.start(ServerConfig.parse(Map.of(), args));
        RawClient raw = new RawClient(s.port())) {
      assertThat(raw.call("BF.INSERT", "v", "CAPACITY", "50", "EXPANSION", "4", "VALIDATESCALETO", "1000"))
          .isEqualTo("*0\r\n");
      assertThat(raw.call("BF.INSERT", "v", "TIGHTENING", "0.5", "VALIDATESCALETO", "1000", "ITEMS", "a", "b"))
          .isEqualTo("*2\r\n:1\r\n:1\r\n");
      info = raw.call("BF.INFO", "v");
    }
    try (BloomeryServer s = BloomeryServer.start(ServerConfig.parse(Map.of(), args));
        RawClient raw = new RawClient(s.port())) {
      assertThat(raw.call("BF.INFO", "v")).isEqualTo(info).contains(":50\r\n");
      assertThat(raw.call("BF.MEXISTS", "v", "a", "b")).isEqualTo("*2\r\n:1\r\n:1\r\n");
      assertThat(raw.call("BF.INFO", "v", "EXPANSION")).isEqualTo("*1\r\n:4\r\n");
    }
  }

  @Test
  void badValkeyOptionsGetValkeyBloomsErrors() {
    assertThat(c.call("BF.INSERT", "k", "NONSCALING", "VALIDATESCALETO", "100", "ITEMS", "a"))
        .isEqualTo("-ERR cannot use NONSCALING and VALIDATESCALETO options together\r\n");
    assertThat(c.call("BF.INSERT", "k", "VALIDATESCALETO", "0", "ITEMS", "a"))
        .isEqualTo("-ERR (capacity should be larger than 0)\r\n");
    assertThat(c.call("BF.INSERT", "k", "VALIDATESCALETO", "x", "ITEMS", "a")).isEqualTo("-ERR bad capacity\r\n");
    assertThat(c.call("BF.INSERT", "k", "VALIDATESCALETO", "-5", "ITEMS", "a")).isEqualTo("-ERR bad capacity\r\n");
    assertThat(c.call("BF.INSERT", "k", "TIGHTENING", "x", "ITEMS", "a"))
        .isEqualTo("-ERR bad tightening ratio\r\n");
    assertThat(c.call("BF.INSERT", "k", "TIGHTENING", "1", "ITEMS", "a"))
        .isEqualTo("-ERR (0 < tightening ratio range < 1)\r\n");
    assertThat(c.call("BF.INSERT", "k", "TIGHTENING", "0.9", "ITEMS", "a"))
        .startsWith("-ERR TIGHTENING other than 0.5 is not supported");
    assertThat(c.call("BF.INSERT", "k", "SEED", "short", "ITEMS", "a")).isEqualTo("-ERR invalid seed\r\n");
    assertThat(c.call("BF.INSERT", "k", "SEED", "0123456789abcdef0123456789abcdef", "ITEMS", "a"))
        .startsWith("-ERR SEED is not supported");
    assertThat(c.call("BF.INSERT", "k", "VALIDATESCALETO")).startsWith("-ERR wrong number of arguments");
    assertThat(c.call("EXISTS", "k")).isEqualTo(":0\r\n");
    // the ratio Bloomery's filters use is accepted
    assertThat(c.call("BF.INSERT", "k", "TIGHTENING", "0.5", "ITEMS", "a")).isEqualTo("*1\r\n:1\r\n");
    // RedisBloom's syntax keeps RedisBloom's replies: ITEMS stays required, other words stay unknown
    assertThat(c.call("BF.INSERT", "r", "CAPACITY", "100")).startsWith("-ERR wrong number of arguments");
    assertThat(c.call("BF.INSERT", "r", "TIGHT", "0.5", "ITEMS", "a")).isEqualTo("-Unknown argument received\r\n");
  }
}
