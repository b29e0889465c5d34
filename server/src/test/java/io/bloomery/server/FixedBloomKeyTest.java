package io.bloomery.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomery.blocked.BlockedBloomFilter;
import io.bloomery.filter.BloomFilter;
import io.bloomery.filter.MembershipFilter;
import io.bloomery.format.FilterFormat;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Protocol;
import redis.clients.jedis.RedisClient;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.exceptions.JedisDataException;

/**
 * Fixed-size Bloom keys (core's classic and blocked filters) under BF.*: BF.RESERVE ... NONSCALING LAYOUT, BF.LOADCHUNK
 * of a Bloomery file in chunks (hostile sequences included), SCANDUMP round trips, MERGE, persistence and metrics.
 */
class FixedBloomKeyTest extends SharedServerTest {
  private RawClient c;
  private UnifiedJedis j;

  @BeforeEach
  void connect() {
    c = new RawClient(server.port());
    j = client(server.port());
    assertThat(c.call("FLUSHALL")).isEqualTo("+OK\r\n");
  }

  @AfterEach
  void disconnect() {
    c.close();
    j.close();
  }

  static UnifiedJedis client(int port) {
    return RedisClient.builder().hostAndPort(new HostAndPort("127.0.0.1", port))
        .clientConfig(DefaultJedisClientConfig.builder().build()).build();
  }

  static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  /** A core filter with items "m0".."m{n-1}", as {@code bloomery build} would write it. */
  static byte[] coreFile(MembershipFilter f, int n) {
    for (int i = 0; i < n; i++) {
      f.add(utf8("m" + i));
    }
    return FilterFormat.toBytes(f);
  }

  /** Loads {@code file} into {@code key}: the header chunk, then chunks of {@code size} bytes. */
  static void load(UnifiedJedis j, String key, byte[] file, int size) {
    int header = 18 + ((file[8] & 0xFF) | (file[9] & 0xFF) << 8);
    assertThat(j.bfLoadChunk(key, 1, Arrays.copyOf(file, header))).isEqualTo("OK");
    for (int at = header; at < file.length; at += size) {
      assertThat(j.bfLoadChunk(key, at + 1, Arrays.copyOfRange(file, at, Math.min(file.length, at + size))))
          .isEqualTo("OK");
    }
  }

  @Test
  void reserveLayoutMakesAFixedKeyWithBfReplies() {
    for (String layout : List.of("CLASSIC", "blocked")) {
      String key = "f-" + layout;
      assertThat(c.call("BF.RESERVE", key, "0.01", "3", "NONSCALING", "LAYOUT", layout)).isEqualTo("+OK\r\n");
      assertThat(c.call("TYPE", key)).isEqualTo("+BLbloom\r\n");
      assertThat(c.call("BF.ADD", key, "a")).isEqualTo(":1\r\n");
      assertThat(c.call("BF.ADD", key, "a")).isEqualTo(":0\r\n");
      // the capacity is what m and k hold (>= the 3 asked for; one 512-bit block holds more)
      long capacity = j.bfInfo(key).get("Capacity") instanceof Long l ? l : -1;
      assertThat(capacity).isGreaterThanOrEqualTo(3);
      int n = 0;
      while (j.bfCard(key) < capacity - 2) {
        j.bfAdd(key, "fill-" + n++);
      }
      // as RedisBloom's NONSCALING: once full a new item is refused and the MADD array stops after the error
      assertThat(c.call("BF.MADD", key, "a", "b", "c", "d", "e")).isEqualTo("*4\r\n:0\r\n:1\r\n:1\r\n"
          + "-ERR non scaling filter is full\r\n");
      assertThat(c.call("BF.ADD", key, "zz")).isEqualTo("-ERR non scaling filter is full\r\n");
      assertThat(c.call("BF.ADD", key, "a")).isEqualTo(":0\r\n");
      assertThat(c.call("BF.EXISTS", key, "a")).isEqualTo(":1\r\n");
      assertThat(c.call("BF.MEXISTS", key, "a", "b", "c")).isEqualTo("*3\r\n:1\r\n:1\r\n:1\r\n");
      assertThat(c.call("BF.CARD", key)).isEqualTo(":" + capacity + "\r\n");
      String info = c.call("BF.INFO", key);
      assertThat(info).startsWith("*10\r\n+Capacity\r\n:" + capacity + "\r\n+Size\r\n:")
          .endsWith("+Number of filters\r\n:1\r\n+Number of items inserted\r\n:" + capacity
              + "\r\n+Expansion rate\r\n$-1\r\n");
      assertThat(c.call("BF.INFO", key, "CAPACITY")).isEqualTo("*1\r\n:" + capacity + "\r\n");
      assertThat(c.call("BF.RESERVE", key, "0.01", "3", "NONSCALING", "LAYOUT", layout))
          .isEqualTo("-ERR item exists\r\n");
      assertThat(c.call("CF.ADD", key, "a"))
          .isEqualTo("-WRONGTYPE Operation against a key holding the wrong kind of value\r\n");
      assertThat(c.call("BF.INSERT", key, "ITEMS", "a")).isEqualTo("*1\r\n:0\r\n");
      assertThat(c.call("BF.DEBUG", key)).contains("layout:" + layout.toLowerCase());
    }
    // without NONSCALING, LAYOUT BLOCKED makes a scaling blocked key and LAYOUT CLASSIC RedisBloom's own scalable
    // key (ScalingBlockedKeyTest covers both)
    assertThat(c.call("BF.RESERVE", "scaling", "0.01", "100", "LAYOUT", "BLOCKED")).isEqualTo("+OK\r\n");
    assertThat(c.call("BF.DEBUG", "scaling")).contains("layout:blocked-scaling");
    assertThat(c.call("BF.RESERVE", "s", "0.01", "100", "NONSCALING", "LAYOUT", "cuckoo"))
        .isEqualTo("-ERR LAYOUT needs CLASSIC or BLOCKED\r\n");
    assertThat(c.call("BF.RESERVE", "s", "0.01", "100", "NONSCALING", "LAYOUT"))
        .isEqualTo("-ERR LAYOUT needs CLASSIC or BLOCKED\r\n");
    assertThat(c.call("EXISTS", "s")).isEqualTo(":0\r\n");
  }

  @Test
  void reservedCapacityIsReallyHeld() {
    assertThat(c.call("BF.RESERVE", "big", "0.01", "1000", "NONSCALING", "LAYOUT", "CLASSIC")).isEqualTo("+OK\r\n");
    String[] items = new String[1001];
    items[0] = "big";
    for (int i = 0; i < 1000; i++) {
      items[i + 1] = "item-" + i;
    }
    j.bfMAdd("big", Arrays.copyOfRange(items, 1, items.length));
    assertThat(j.bfCard("big")).isBetween(990L, 1000L); // a false positive answers 0 and is not counted
    // The filter's own capacity, derived from its m and k: at least what was reserved, above it by the rounding of k.
    assertThat((Long) j.bfInfo("big").get("Capacity")).isEqualTo(
        io.bloomery.sizing.BloomMath.capacityForHashes(9_586, 7)).isBetween(1000L, 1030L);
  }

  @Test
  void aCoreFileLoadedInChunksAnswersLikeTheLibrary() {
    long seed = System.nanoTime();
    try {
      List<MembershipFilter> filters = List.of(BloomFilter.create(2000, 0.01), BlockedBloomFilter.create(2000, 0.01));
      int[] sizes = {1, 7, 100, 4096, 1 << 20};
      java.util.Random random = new java.util.Random(seed);
      for (MembershipFilter f : filters) {
        byte[] file = coreFile(f, 1500);
        String key = "file-" + f.kind().kindName();
        load(j, key, file, sizes[random.nextInt(sizes.length)]);
        assertThat(j.type(key)).isEqualTo("BLbloom");
        List<String> probe = new ArrayList<>();
        for (int i = 0; i < 3000; i++) {
          probe.add("m" + i);
        }
        List<Boolean> expected = new ArrayList<>();
        for (String p : probe) {
          expected.add(f.mightContain(utf8(p)));
        }
        assertThat(j.bfMExists(key, probe.toArray(String[]::new))).isEqualTo(expected);
        assertThat(j.bfCard(key)).isEqualTo(f instanceof BloomFilter b ? b.insertedCount() : ((BlockedBloomFilter) f).insertedCount());
        // SCANDUMP yields the same file, header first, so it round-trips through LOADCHUNK
        java.io.ByteArrayOutputStream dumped = new java.io.ByteArrayOutputStream();
        long it = 0;
        while (true) {
          Map.Entry<Long, byte[]> chunk = j.bfScanDump(key, it);
          if (chunk.getKey() == 0) {
            break;
          }
          if (it == 0) {
            assertThat(chunk.getKey()).isEqualTo(1L);
            assertThat(new String(chunk.getValue(), 0, 4, StandardCharsets.US_ASCII)).isEqualTo("BLMF");
          }
          assertThat(j.bfLoadChunk(key + "-copy", chunk.getKey(), chunk.getValue())).isEqualTo("OK");
          dumped.writeBytes(chunk.getValue());
          it = chunk.getKey();
        }
        assertThat(dumped.toByteArray()).isEqualTo(file);
        assertThat(j.bfMExists(key + "-copy", probe.toArray(String[]::new))).isEqualTo(expected);
        // the whole file in one chunk also loads
        assertThat(j.bfLoadChunk(key + "-one", 1, file)).isEqualTo("OK");
        assertThat(j.bfExists(key + "-one", "m1")).isTrue();
      }
    } catch (AssertionError e) {
      throw new AssertionError("seed " + seed + ": " + e.getMessage(), e);
    }
  }

  @Test
  void aDumpLargerThanOneChunkRoundTrips() {
    // 15M items at 1% is about 18 MB of bits: the dump takes more than one 16 MiB data chunk
    assertThat(c.call("BF.RESERVE", "large", "0.01", "15000000", "NONSCALING", "LAYOUT", "CLASSIC"))
        .isEqualTo("+OK\r\n");
    j.bfMAdd("large", "a", "b", "c");
    long it = 0;
    int chunks = 0;
    long bytes = 0;
    while (true) {
      Map.Entry<Long, byte[]> chunk = j.bfScanDump("large", it);
      if (chunk.getKey() == 0) {
        assertThat(chunk.getValue()).isEmpty();
        break;
      }
      assertThat(chunk.getKey()).isEqualTo(bytes + 1);
      assertThat(chunk.getValue().length).isLessThanOrEqualTo(16 << 20); // bounded, whatever the key's size
      assertThat(j.bfLoadChunk("large-copy", chunk.getKey(), chunk.getValue())).isEqualTo("OK");
      bytes += chunk.getValue().length;
      chunks++;
      it = chunk.getKey();
    }
    assertThat(chunks).isGreaterThanOrEqualTo(3);
    assertThat(j.bfMExists("large-copy", "a", "b", "c", "d")).containsExactly(true, true, true, false);
    assertThat(j.bfCard("large-copy")).isEqualTo(3L);
    assertThat(j.bfInfo("large-copy")).isEqualTo(j.bfInfo("large"));
  }

  private void assertNoKey(String key) {
    assertThat(j.exists(key)).isFalse();
    assertThat(j.bfExists(key, "m1")).isFalse();
  }

  @Test
  void hostileChunkSequencesLeaveNoKey() {
    byte[] file = coreFile(BloomFilter.create(500, 0.01), 300);
    int header = 18;
    // truncated: header and part of the body only
    j.bfLoadChunk("t", 1, Arrays.copyOf(file, header));
    j.bfLoadChunk("t", header + 1, Arrays.copyOfRange(file, header, file.length - 10));
    assertNoKey("t");
    // out of order: the second chunk skips bytes, and the load is abandoned
    j.bfLoadChunk("o", 1, Arrays.copyOf(file, header));
    assertThatThrownBy(() -> j.bfLoadChunk("o", header + 5, Arrays.copyOfRange(file, header + 4, file.length)))
        .isInstanceOf(JedisDataException.class).hasMessageContaining("out of order");
    assertThatThrownBy(() -> j.bfLoadChunk("o", header + 1, Arrays.copyOfRange(file, header, file.length)))
        .isInstanceOf(JedisDataException.class).hasMessage("ERR not found");
    assertNoKey("o");
    // a wrong CRC (one payload bit flipped) is found when the last byte arrives
    byte[] flipped = file.clone();
    flipped[header + 30] ^= 1;
    assertThatThrownBy(() -> j.bfLoadChunk("c", 1, flipped)).isInstanceOf(JedisDataException.class)
        .hasMessageStartingWith("ERR invalid Bloomery file: ");
    assertNoKey("c");
    // a chunk running past the end
    j.bfLoadChunk("p", 1, Arrays.copyOf(file, header));
    byte[] longer = Arrays.copyOfRange(file, header, file.length + 1);
    assertThatThrownBy(() -> j.bfLoadChunk("p", header + 1, longer)).isInstanceOf(JedisDataException.class)
        .hasMessageContaining("past the file's end");
    assertNoKey("p");
    // a header claiming 2^40 bits (the format's largest, a 128 GiB bitmap) is refused by the heap check before
    // anything is allocated or staged; one claiming more than the format allows is refused as malformed
    byte[] huge = Arrays.copyOf(file, header);
    ByteBuffer.wrap(huge).order(ByteOrder.LITTLE_ENDIAN).putLong(10, 20 + (1L << 37));
    assertThatThrownBy(() -> j.bfLoadChunk("h", 1, huge)).isInstanceOf(JedisDataException.class)
        .hasMessageStartingWith("OOM");
    assertNoKey("h");
    ByteBuffer.wrap(huge).order(ByteOrder.LITTLE_ENDIAN).putLong(10, 20 + (1L << 37) + 8);
    assertThatThrownBy(() -> j.bfLoadChunk("h", 1, huge)).isInstanceOf(JedisDataException.class)
        .hasMessageContaining("exceeds");
    assertNoKey("h");
    // only the truncated load "t" is still waiting for its last bytes; the refused ones hold nothing
    assertThat(text(j.sendCommand(Protocol.Command.INFO, "bloomery"))).contains("file_loads_pending:1")
        .contains("file_loads_staged_bytes:" + (file.length - 10));
    // other kinds, versions, flags and short headers
    for (int[] patch : new int[][] {{5, 5}, {4, 2}, {7, 1}}) {
      byte[] bad = Arrays.copyOf(file, header);
      bad[patch[0]] = (byte) patch[1];
      assertThatThrownBy(() -> j.bfLoadChunk("k", 1, bad)).isInstanceOf(JedisDataException.class)
          .hasMessageStartingWith("ERR invalid Bloomery file: ");
    }
    assertThatThrownBy(() -> j.bfLoadChunk("k", 1, utf8("BLMF"))).isInstanceOf(JedisDataException.class)
        .hasMessageStartingWith("ERR invalid Bloomery file: ");
    assertNoKey("k");
    // an existing key is never overwritten
    j.bfAdd("exists", "x");
    assertThatThrownBy(() -> j.bfLoadChunk("exists", 1, file)).isInstanceOf(JedisDataException.class)
        .hasMessage("ERR item exists");
    assertThat(j.type("exists")).isEqualTo("MBbloom--");
  }

  @Test
  void aHugeHeaderIsRefusedByMaxmemory() {
    try (BloomeryServer small = TestServer.start("--maxmemory", "1000000"); UnifiedJedis s = client(small.port())) {
      byte[] file = coreFile(BloomFilter.create(10_000_000, 0.01), 0);
      assertThatThrownBy(() -> s.bfLoadChunk("big", 1, Arrays.copyOf(file, 18))).isInstanceOf(JedisDataException.class)
          .hasMessageStartingWith("OOM");
      assertThat(s.exists("big")).isFalse();
      assertThatThrownBy(() -> s.sendCommand(() -> utf8("BF.RESERVE"), "r", "0.01", "10000000", "NONSCALING", "LAYOUT",
          "BLOCKED")).isInstanceOf(JedisDataException.class).hasMessageStartingWith("OOM");
      assertThat(s.exists("r")).isFalse();
      assertThat(text(s.sendCommand(Protocol.Command.valueOf("PING")))).isEqualTo("PONG");
    }
  }

  static String text(Object reply) {
    return reply instanceof byte[] bytes ? new String(bytes, StandardCharsets.UTF_8) : String.valueOf(reply);
  }

  @Test
  void mergeUnionsIdenticalFixedFilters() {
    c.call("BF.RESERVE", "a", "0.01", "100", "NONSCALING", "LAYOUT", "BLOCKED");
    c.call("BF.RESERVE", "b", "0.01", "100", "NONSCALING", "LAYOUT", "BLOCKED");
    c.call("BF.RESERVE", "classic", "0.01", "100", "NONSCALING", "LAYOUT", "CLASSIC");
    c.call("BF.ADD", "a", "x");
    c.call("BF.ADD", "b", "y");
    assertThat(c.call("BF.MERGE", "a", "b")).isEqualTo("+OK\r\n");
    assertThat(c.call("BF.MEXISTS", "a", "x", "y")).isEqualTo("*2\r\n:1\r\n:1\r\n");
    assertThat(c.call("BF.MERGE", "u", "a", "b")).isEqualTo("+OK\r\n");
    assertThat(c.call("TYPE", "u")).isEqualTo("+BLbloom\r\n");
    assertThat(c.call("BF.MERGE", "a", "classic")).startsWith("-ERR filters differ");
    c.call("BF.ADD", "scalable", "x");
    assertThat(c.call("BF.MERGE", "scalable", "a")).startsWith("-ERR filters differ");
  }

  @Test
  void fixedKeysSurviveJournalAndSnapshotAndShowInMetrics(@TempDir Path dir) throws IOException, InterruptedException {
    BlockedBloomFilter built = BlockedBloomFilter.create(1000, 0.01);
    byte[] file = coreFile(built, 800);
    String[] args = {"--port", "0", "--http-port", "0", "--dir", dir.toString(), "--appendfsync", "always"};
    try (BloomeryServer s = BloomeryServer.start(ServerConfig.parse(Map.of(), args)); UnifiedJedis p = client(s.port())) {
      p.sendCommand(() -> utf8("BF.RESERVE"), "r", "0.001", "500", "NONSCALING", "LAYOUT", "CLASSIC");
      p.bfMAdd("r", "a", "b");
      load(p, "loaded", file, 333);
    }
    try (BloomeryServer s = BloomeryServer.start(ServerConfig.parse(Map.of(), args)); UnifiedJedis p = client(s.port())) {
      assertThat(p.bfMExists("r", "a", "b", "c")).containsExactly(true, true, false);
      assertThat(p.bfCard("loaded")).isEqualTo(built.insertedCount());
      assertThat(p.bfExists("loaded", "m799")).isTrue();
      assertThat(text(p.sendCommand(Protocol.Command.SAVE))).isEqualTo("OK");
      p.bfAdd("r", "after-save");
    }
    try (BloomeryServer s = BloomeryServer.start(ServerConfig.parse(Map.of(), args)); UnifiedJedis p = client(s.port())) {
      assertThat(p.bfMExists("r", "a", "after-save")).containsExactly(true, true);
      assertThat(p.type("loaded")).isEqualTo("BLbloom");
      Map<String, Object> ignored = p.bfInfo("loaded");
      assertThat(ignored.get("Number of items inserted")).isEqualTo(built.insertedCount());
      assertThat(text(p.sendCommand(Protocol.Command.INFO, "memory"))).contains("used_memory:");
      HttpResponse<String> metrics = HttpClient.newHttpClient().send(
          HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + s.httpPort() + "/metrics")).build(),
          HttpResponse.BodyHandlers.ofString());
      assertThat(metrics.body()).containsPattern("key=\"loaded\",kind=\"blocked\"|kind=\"blocked\",key=\"loaded\"")
          .containsPattern("kind=\"classic\"");
    }
  }
}
