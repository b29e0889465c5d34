package io.bloomery.server;

import static io.bloomery.server.FixedBloomKeyTest.client;
import static io.bloomery.server.FixedBloomKeyTest.text;
import static io.bloomery.server.FixedBloomKeyTest.utf8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomery.blocked.ScalableBlockedBloomFilter;
import io.bloomery.format.FilterFormat;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import redis.clients.jedis.Protocol;
import redis.clients.jedis.RedisProtocol;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.bloom.BFInsertParams;
import redis.clients.jedis.exceptions.JedisDataException;

/**
 * Scaling Bloom keys with the blocked layout ({@code BF.RESERVE key error capacity LAYOUT BLOCKED [EXPANSION n]}):
 * RedisBloom's scalable semantics through every BF command, answers identical to core's {@link
 * ScalableBlockedBloomFilter} built the same way, SCANDUMP/LOADCHUNK of its Bloomery file, maxmemory admission of each
 * new layer, journal and snapshot, and metrics. {@code LAYOUT CLASSIC} without NONSCALING is RedisBloom's own key.
 */
class ScalingBlockedKeyTest extends SharedServerTest {
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

  /** The library twin of {@code BF.RESERVE key rate capacity LAYOUT BLOCKED EXPANSION expansion}. */
  private static ScalableBlockedBloomFilter twin(long capacity, double rate, int expansion) {
    return ScalableBlockedBloomFilter.create(new byte[0], capacity, rate, expansion);
  }

  private static String[] items(String prefix, int from, int to) {
    String[] out = new String[to - from];
    for (int i = from; i < to; i++) {
      out[i - from] = prefix + i;
    }
    return out;
  }

  private static Object reserve(UnifiedJedis j, String... args) {
    return j.sendCommand(() -> utf8("BF.RESERVE"), args);
  }

  @Test
  void everyBfCommandAnswersWithRedisBloomsScalableSemantics() {
    assertThat(c.call("BF.RESERVE", "k", "0.01", "100", "LAYOUT", "BLOCKED", "EXPANSION", "4")).isEqualTo("+OK\r\n");
    assertThat(c.call("TYPE", "k")).isEqualTo("+BLbloom\r\n");
    assertThat(c.call("BF.ADD", "k", "a")).isEqualTo(":1\r\n");
    assertThat(c.call("BF.ADD", "k", "a")).as("an item already reported answers 0").isEqualTo(":0\r\n");
    assertThat(c.call("BF.MADD", "k", "b", "c", "a")).isEqualTo("*3\r\n:1\r\n:1\r\n:0\r\n");
    assertThat(c.call("BF.EXISTS", "k", "b")).isEqualTo(":1\r\n");
    assertThat(c.call("BF.MEXISTS", "k", "a", "zz-not-there")).isEqualTo("*2\r\n:1\r\n:0\r\n");
    assertThat(c.call("BF.CARD", "k")).isEqualTo(":3\r\n");
    assertThat(c.call("BF.INFO", "k", "FILTERS")).isEqualTo("*1\r\n:1\r\n");
    assertThat(c.call("BF.INFO", "k", "EXPANSION")).isEqualTo("*1\r\n:4\r\n");
    // past its capacity the key grows a layer of 4 x 100 items
    List<String> args = new ArrayList<>(List.of("BF.MADD", "k"));
    args.addAll(List.of(items("i", 0, 200)));
    assertThat(c.call(args.toArray(String[]::new))).startsWith("*200\r\n").doesNotContain("-");
    assertThat(c.call("BF.INFO", "k", "FILTERS")).isEqualTo("*1\r\n:2\r\n");
    assertThat(c.call("BF.INFO", "k", "CAPACITY")).isEqualTo("*1\r\n:500\r\n");
    assertThat(c.call("BF.DEBUG", "k")).startsWith("*3\r\n").contains("layout:blocked-scaling size:")
        .contains("capacity:100 size:100 ratio:0.005").contains("capacity:400 size:").contains("ratio:0.0025");
    assertThat(c.call("BF.INSERT", "k", "NOCREATE", "ITEMS", "a", "new-one")).isEqualTo("*2\r\n:0\r\n:1\r\n");
    assertThat(c.call("BF.RESERVE", "k", "0.01", "10", "LAYOUT", "BLOCKED")).isEqualTo("-ERR item exists\r\n");
    assertThat(c.call("CF.ADD", "k", "a"))
        .isEqualTo("-WRONGTYPE Operation against a key holding the wrong kind of value\r\n");
    assertThat(c.call("BF.EXISTS", "missing", "a")).isEqualTo(":0\r\n");
    // the validation of RedisBloom's options still comes first
    assertThat(c.call("BF.RESERVE", "v", "0.01", "100", "NONSCALING", "EXPANSION", "2", "LAYOUT", "BLOCKED"))
        .isEqualTo("-Nonscaling filters cannot expand\r\n");
    assertThat(c.call("BF.RESERVE", "v", "0.01", "100", "LAYOUT", "BLOCKED", "EXPANSION", "40000"))
        .isEqualTo("-ERR expansion must be in the range [0, 32768]\r\n");
    assertThat(c.call("BF.RESERVE", "v", "2", "100", "LAYOUT", "BLOCKED"))
        .isEqualTo("-ERR error rate must be in the range (0.000000, 1.000000)\r\n");
    assertThat(c.call("EXISTS", "v")).isEqualTo(":0\r\n");
    // EXPANSION 0 means NONSCALING, as for RedisBloom's key: the fixed blocked key
    assertThat(c.call("BF.RESERVE", "fixed", "0.01", "100", "LAYOUT", "BLOCKED", "EXPANSION", "0")).isEqualTo("+OK\r\n");
    assertThat(c.call("BF.DEBUG", "fixed")).contains("layout:blocked blocks:");
    assertThat(c.call("CONFIG", "SET", "bf-expansion-factor", "0")).isEqualTo("+OK\r\n");
    try {
      assertThat(c.call("BF.RESERVE", "fixed-too", "0.01", "100", "LAYOUT", "BLOCKED")).isEqualTo("+OK\r\n");
      assertThat(c.call("BF.DEBUG", "fixed-too")).contains("layout:blocked blocks:");
    } finally {
      assertThat(c.call("CONFIG", "SET", "bf-expansion-factor", "2")).isEqualTo("+OK\r\n");
    }
    // an error rate above 0.25 is capped as RedisBloom caps it: the first layer gets 0.125
    assertThat(c.call("BF.RESERVE", "loose", "0.6", "100", "LAYOUT", "BLOCKED")).isEqualTo("+OK\r\n");
    assertThat(c.call("BF.DEBUG", "loose")).contains("ratio:0.125");
  }

  @Test
  void layoutClassicWithoutNonscalingIsRedisBloomsOwnKey() {
    assertThat(c.call("BF.RESERVE", "classic", "0.01", "1000", "LAYOUT", "CLASSIC", "EXPANSION", "3"))
        .isEqualTo("+OK\r\n");
    assertThat(c.call("BF.RESERVE", "plain", "0.01", "1000", "EXPANSION", "3")).isEqualTo("+OK\r\n");
    assertThat(c.call("TYPE", "classic")).isEqualTo("+MBbloom--\r\n");
    assertThat(c.call("BF.DEBUG", "classic")).isEqualTo(c.call("BF.DEBUG", "plain"));
    assertThat(c.call("BF.SCANDUMP", "classic", "0")).isEqualTo(c.call("BF.SCANDUMP", "plain", "0"));
  }

  /** Through Jedis's own Bloom API over RESP2 and RESP3: every answer is the library twin's. */
  @ParameterizedTest
  @EnumSource(RedisProtocol.class)
  void answersAreTheLibrarysThroughJedis(RedisProtocol protocol) {
    try (UnifiedJedis j = JedisSmokeTest.jedis(server, protocol)) {
      String key = "jedis-" + protocol;
      assertThat(text(reserve(j, key, "0.01", "500", "LAYOUT", "BLOCKED"))).isEqualTo("OK");
      ScalableBlockedBloomFilter twin = twin(500, 0.01, 2);
      String[] added = items("url-", 0, 4_000);
      List<Boolean> expected = new ArrayList<>();
      for (String item : added) {
        expected.add(twin.add(utf8(item)));
      }
      List<Boolean> answers = new ArrayList<>(j.bfMAdd(key, java.util.Arrays.copyOf(added, 2_000)));
      for (int i = 2_000; i < added.length; i++) {
        answers.add(i % 2 == 0 ? j.bfAdd(key, added[i])
            : j.bfInsert(key, BFInsertParams.insertParams().noCreate(), added[i]).get(0));
      }
      assertThat(answers).isEqualTo(expected);
      String[] probes = items("url-", 0, 8_000);
      List<Boolean> present = new ArrayList<>();
      for (String probe : probes) {
        present.add(twin.mightContain(utf8(probe)));
      }
      assertThat(j.bfMExists(key, probes)).isEqualTo(present);
      assertThat(j.bfExists(key, "url-7")).isTrue();
      assertThat(j.bfCard(key)).isEqualTo(twin.insertedCount());
      Map<String, Object> info = j.bfInfo(key);
      assertThat(info).containsEntry("Capacity", twin.capacity())
          .containsEntry("Number of filters", (long) twin.filterCount())
          .containsEntry("Number of items inserted", twin.insertedCount()).containsEntry("Expansion rate", 2L)
          .containsKey("Size");
      assertThat(twin.filterCount()).isEqualTo(4); // 500 + 1000 + 2000 < 4000
      assertThat(j.type(key)).isEqualTo("BLbloom");
      assertThatThrownBy(() -> j.bfInsert("nope-" + protocol, BFInsertParams.insertParams().noCreate(), "x"))
          .isInstanceOf(JedisDataException.class).hasMessage("ERR not found");
    }
  }

  /** SCANDUMP hands out the key's Bloomery file, which LOADCHUNK (in any chunking) turns back into the same key. */
  @Test
  void scanDumpAndLoadChunkCarryTheBloomeryFile() {
    try (UnifiedJedis j = client(server.port())) {
      reserve(j, "src", "0.02", "300", "LAYOUT", "BLOCKED", "EXPANSION", "3");
      ScalableBlockedBloomFilter twin = twin(300, 0.02, 3);
      String[] added = items("d", 0, 2_000);
      j.bfMAdd("src", added);
      for (String item : added) {
        twin.add(utf8(item));
      }
      ByteArrayOutputStream dumped = new ByteArrayOutputStream();
      long it = 0;
      while (true) {
        Map.Entry<Long, byte[]> chunk = j.bfScanDump("src", it);
        if (chunk.getKey() == 0) {
          break;
        }
        assertThat(j.bfLoadChunk("copy", chunk.getKey(), chunk.getValue())).isEqualTo("OK");
        dumped.writeBytes(chunk.getValue());
        it = chunk.getKey();
      }
      assertThat(dumped.toByteArray()).as("the dump is the library's file").isEqualTo(FilterFormat.toBytes(twin));
      String[] probes = items("d", 0, 6_000);
      assertThat(j.bfMExists("copy", probes)).isEqualTo(j.bfMExists("src", probes));
      assertThat(j.bfInfo("copy")).isEqualTo(j.bfInfo("src"));
      // a file built by the library loads in small chunks and keeps growing as a key
      FixedBloomKeyTest.load(j, "built", FilterFormat.toBytes(twin), 97);
      assertThat(j.type("built")).isEqualTo("BLbloom");
      assertThat(j.bfCard("built")).isEqualTo(twin.insertedCount());
      int layers = twin.filterCount();
      j.bfMAdd("built", items("more", 0, 6_000));
      assertThat(j.bfInfo("built").get("Number of filters")).isEqualTo((long) layers + 1);
      // BF.MERGE of two chains of the same geometry
      assertThat(text(j.sendCommand(() -> utf8("BF.MERGE"), "merged", "src", "copy"))).isEqualTo("OK");
      assertThat(j.bfCard("merged")).isEqualTo(2 * twin.insertedCount());
      assertThat(j.bfExists("merged", "d1999")).isTrue();
    }
  }

  /** Each new layer is admitted against maxmemory before it is allocated; a refusal changes nothing. */
  @Test
  void aNewLayerPastMaxmemoryIsRefusedWithOomAndNothingChanges() {
    try (BloomeryServer small = TestServer.start("--maxmemory", "2000000"); UnifiedJedis s = client(small.port())) {
      // layer 0: 1000 items; layer 1 would hold 32,768,000 items, tens of MB
      assertThat(text(reserve(s, "k", "0.01", "1000", "LAYOUT", "BLOCKED", "EXPANSION", "32768"))).isEqualTo("OK");
      ScalableBlockedBloomFilter twin = twin(1_000, 0.01, 32768);
      int i = 0;
      while (twin.insertedCount() < 1_000) {
        String item = "f" + i++;
        assertThat(s.bfAdd("k", item)).isEqualTo(twin.add(utf8(item)));
      }
      while (twin.mightContain(utf8("f" + i))) {
        i++;
      }
      String next = "f" + i;
      Map<String, Object> before = s.bfInfo("k");
      assertThatThrownBy(() -> s.bfAdd("k", next)).isInstanceOf(JedisDataException.class).hasMessageStartingWith("OOM");
      List<Object> madd = s.sendCommand(() -> utf8("BF.MADD"), "k", "f0", next, "f1") instanceof List<?> l
          ? new ArrayList<>(l) : List.of();
      assertThat(madd).hasSize(2);
      assertThat(madd.get(0)).isIn(0L, false); // RESP2 integer or RESP3 boolean: an item already present
      assertThat(madd.get(1)).isInstanceOf(JedisDataException.class);
      assertThat(((JedisDataException) madd.get(1)).getMessage()).startsWith("OOM");
      assertThat(s.bfInfo("k")).isEqualTo(before);
      assertThat(s.bfExists("k", "f0")).isTrue();
      assertThat(s.bfAdd("k", "f1")).as("an item already present needs no layer").isFalse();
      assertThatThrownBy(() -> reserve(s, "huge", "0.001", "100000000", "LAYOUT", "BLOCKED"))
          .isInstanceOf(JedisDataException.class).hasMessageStartingWith("OOM");
      assertThat(s.exists("huge")).isFalse();
    }
  }

  /**
   * Journal replay and snapshot bring a chain back exactly; an MADD cut short by maxmemory is journaled only up to
   * the refused item, so a restart under a larger budget does not add what the client was refused.
   */
  @Test
  void chainsSurviveJournalAndSnapshotAndShowInMetrics(@TempDir Path dir) throws IOException, InterruptedException {
    String[] base = {"--port", "0", "--http-port", "0", "--dir", dir.toString(), "--appendfsync", "always"};
    String[] budget = java.util.stream.Stream.concat(java.util.Arrays.stream(base),
        java.util.stream.Stream.of("--maxmemory", "2000000")).toArray(String[]::new);
    ScalableBlockedBloomFilter twin = twin(200, 0.01, 2);
    ScalableBlockedBloomFilter capped = twin(1_000, 0.01, 32768);
    String refused;
    try (BloomeryServer s = BloomeryServer.start(ServerConfig.parse(Map.of(), budget)); UnifiedJedis p = client(s.port())) {
      reserve(p, "chain", "0.01", "200", "LAYOUT", "BLOCKED");
      String[] added = items("j", 0, 1_000);
      p.bfMAdd("chain", added);
      for (String item : added) {
        twin.add(utf8(item));
      }
      reserve(p, "capped", "0.01", "1000", "LAYOUT", "BLOCKED", "EXPANSION", "32768");
      List<String> fill = new ArrayList<>();
      int i = 0;
      while (capped.insertedCount() < 1_000) {
        String item = "c" + i++;
        fill.add(item);
        capped.add(utf8(item));
      }
      while (capped.mightContain(utf8("c" + i))) { // already reported: answers 0, needs no layer
        fill.add("c" + i++);
      }
      refused = "c" + i;
      fill.add(refused);
      fill.add("after-the-refusal");
      Object reply = p.sendCommand(() -> utf8("BF.MADD"), java.util.stream.Stream.concat(
          java.util.stream.Stream.of("capped"), fill.stream()).toArray(String[]::new));
      List<?> answers = (List<?>) reply;
      assertThat(answers).hasSize(fill.size() - 1);
      assertThat(answers.get(answers.size() - 1)).isInstanceOf(JedisDataException.class);
    }
    try (BloomeryServer s = BloomeryServer.start(ServerConfig.parse(Map.of(), base)); UnifiedJedis p = client(s.port())) {
      assertThat(p.bfCard("chain")).isEqualTo(twin.insertedCount());
      assertThat(p.bfInfo("chain").get("Number of filters")).isEqualTo((long) twin.filterCount());
      assertThat(p.bfExists("chain", "j999")).isTrue();
      assertThat(p.bfCard("capped")).isEqualTo(1_000L);
      assertThat(p.bfInfo("capped").get("Number of filters")).as("the refused layer was not replayed").isEqualTo(1L);
      assertThat(p.bfExists("capped", refused)).isFalse();
      assertThat(text(p.sendCommand(Protocol.Command.SAVE))).isEqualTo("OK");
      p.bfAdd("chain", "after-save");
      twin.add(utf8("after-save"));
    }
    try (BloomeryServer s = BloomeryServer.start(ServerConfig.parse(Map.of(), base)); UnifiedJedis p = client(s.port())) {
      assertThat(p.bfMExists("chain", "j0", "j999", "after-save")).containsExactly(true, true, true);
      assertThat(p.bfCard("chain")).isEqualTo(twin.insertedCount());
      String[] probes = items("j", 0, 3_000);
      List<Boolean> expected = new ArrayList<>();
      for (String probe : probes) {
        expected.add(twin.mightContain(utf8(probe)));
      }
      assertThat(p.bfMExists("chain", probes)).isEqualTo(expected);
      assertThat(p.type("chain")).isEqualTo("BLbloom");
      HttpResponse<String> metrics = HttpClient.newHttpClient().send(
          HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + s.httpPort() + "/metrics")).build(),
          HttpResponse.BodyHandlers.ofString());
      assertThat(metrics.body())
          .containsPattern("key=\"chain\",kind=\"scalable-blocked\"|kind=\"scalable-blocked\",key=\"chain\"");
    }
  }
}
