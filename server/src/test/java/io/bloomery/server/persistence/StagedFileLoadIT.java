package io.bloomery.server.persistence;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomery.blocked.BlockedBloomFilter;
import io.bloomery.filter.BloomFilter;
import io.bloomery.filter.MembershipFilter;
import io.bloomery.format.FilterFormat;
import io.bloomery.server.BloomeryServer;
import io.bloomery.server.ChildServer;
import io.bloomery.server.ServerConfig;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import redis.clients.jedis.Protocol;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.exceptions.JedisDataException;

/**
 * BF.LOADCHUNK of a Bloomery file that spans several chunks: staged in {@code <dir>/loads}, journaled by reference to
 * the loaded file, released when abandoned, and never a half key after a crash.
 */
class StagedFileLoadIT {

  @TempDir Path root;
  private Path dir;

  @org.junit.jupiter.api.BeforeEach
  void dataDirectory() {
    dir = root.resolve("data");
  }

  private BloomeryServer start(String... extra) throws IOException {
    List<String> args = new ArrayList<>(List.of("--port", "0", "--http-port", "0", "--dir", dir.toString(),
        "--appendfsync", "always"));
    args.addAll(List.of(extra));
    return BloomeryServer.start(ServerConfig.parse(Map.of(), args.toArray(String[]::new)));
  }

  private static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  /** A filter holding "m0".."m{n-1}" and its file. */
  private static byte[] file(MembershipFilter f, int n) {
    for (int i = 0; i < n; i++) {
      f.add(utf8("m" + i));
    }
    return FilterFormat.toBytes(f);
  }

  private static int headerLength(byte[] file) {
    return 18 + ((file[8] & 0xFF) | (file[9] & 0xFF) << 8);
  }

  /** Sends the header chunk and the chunks of {@code size} bytes covering [header, end). */
  private static void send(UnifiedJedis j, String key, byte[] file, int size, int end) {
    int header = headerLength(file);
    assertThat(j.bfLoadChunk(key, 1, Arrays.copyOf(file, header))).isEqualTo("OK");
    for (int at = header; at < end; at += size) {
      assertThat(j.bfLoadChunk(key, at + 1, Arrays.copyOfRange(file, at, Math.min(end, at + size)))).isEqualTo("OK");
    }
  }

  private static String info(UnifiedJedis j) {
    Object reply = j.sendCommand(Protocol.Command.INFO, "bloomery");
    return reply instanceof byte[] b ? new String(b, StandardCharsets.UTF_8) : String.valueOf(reply);
  }

  private List<String> loadFiles() {
    return LoadDirectory.files(dir);
  }

  private static void await(BooleanSupplier condition) throws InterruptedException {
    LoadDirectory.await(condition);
  }

  /** Whether INFO shows no load pending and none of their bytes still staged or reserved. */
  private static boolean released(String info) {
    return info.contains("file_loads_pending:0") && info.contains("file_loads_staged_bytes:0")
        && info.contains("file_loads_reserved_bytes:0");
  }

  @Test
  void aStagedLoadIsJournaledByItsFileUntilASnapshotHoldsIt() throws Exception {
    BloomFilter classic = BloomFilter.create(20_000, 0.01);
    byte[] file = file(classic, 15_000);
    BlockedBloomFilter blocked = BlockedBloomFilter.create(20_000, 0.01);
    byte[] blockedFile = file(blocked, 15_000);
    String[] probe = new String[30_000];
    for (int i = 0; i < probe.length; i++) {
      probe[i] = "m" + i; // the second half are non-members
    }
    List<Boolean> expected = Arrays.stream(probe).map(classic::mightContain).toList();
    List<Boolean> expectedBlocked = Arrays.stream(probe).map(blocked::mightContain).toList();
    try (BloomeryServer s = start(); UnifiedJedis j = ServerPersistenceTest.client(s.port())) {
      send(j, "c", file, 4096, file.length - 100);
      // mid-load: the bytes are on disk in the staging file, the filter's memory is promised, no key exists yet
      assertThat(info(j)).contains("file_loads_pending:1")
          .contains("file_loads_staged_bytes:" + (file.length - 100))
          .contains("file_loads_reserved_bytes:" + (((classic.bitSize() + 63) >>> 6) * 8));
      assertThat(loadFiles()).hasSize(1).allMatch(n -> n.endsWith(".part"));
      assertThat(j.exists("c")).isFalse();
      assertThat(j.bfLoadChunk("c", file.length - 100 + 1, Arrays.copyOfRange(file, file.length - 100, file.length)))
          .isEqualTo("OK");
      assertThat(info(j)).contains("file_loads_pending:0").contains("file_loads_staged_bytes:0")
          .contains("file_loads_reserved_bytes:0");
      // the journal holds a short record naming the loaded file, not the file itself
      assertThat(loadFiles()).hasSize(1).allMatch(n -> n.endsWith(".blmf"));
      send(j, "b", blockedFile, 100_000, blockedFile.length);
      assertThat(loadFiles()).hasSize(2);
      assertThat(j.bfMExists("c", probe)).isEqualTo(expected);
      j.bfAdd("c", "after-load");
    }
    // the close wrote a snapshot: the keys come back from it (replay of the loaded file is the next test)
    try (BloomeryServer s = start(); UnifiedJedis j = ServerPersistenceTest.client(s.port())) {
      assertThat(j.bfMExists("c", probe)).isEqualTo(expected);
      assertThat(j.bfMExists("b", probe)).isEqualTo(expectedBlocked);
      assertThat(j.bfExists("c", "after-load")).isTrue();
      // the shutdown snapshot holds both keys, so their loaded files are gone
      assertThat(loadFiles()).isEmpty();
    }
  }

  @Test
  void replayReadsTheLoadedFileWhenNoSnapshotHoldsTheKey() throws Exception {
    BloomFilter classic = BloomFilter.create(5_000, 0.01);
    byte[] file = file(classic, 4_000);
    List<String> before;
    try (BloomeryServer s = start(); UnifiedJedis j = ServerPersistenceTest.client(s.port())) {
      send(j, "c", file, 1000, file.length);
      j.bfAdd("c", "after-load");
      before = loadFiles();
      // copy the directory as a crash would leave it (the journal record is fsynced: appendfsync always)
      copyTree(dir, root.resolve("crash"));
      copyTree(dir, root.resolve("crash-copy"));
    }
    Path crashed = root.resolve("crash");
    assertThat(before).hasSize(1);
    try (BloomeryServer s = BloomeryServer.start(ServerConfig.parse(Map.of(), "--port", "0", "--http-port", "0",
        "--dir", crashed.toString())); UnifiedJedis j = ServerPersistenceTest.client(s.port())) {
      assertThat(j.bfExists("c", "m3999")).isTrue();
      assertThat(j.bfExists("c", "after-load")).isTrue();
      assertThat(j.bfCard("c")).isEqualTo(classic.insertedCount() + 1);
    }
    // a damaged loaded file stops recovery with a message naming it, rather than serving a wrong filter
    copyTree(root.resolve("crash-copy"), root.resolve("damaged"));
    Path loaded = root.resolve("damaged").resolve("loads").resolve(before.get(0));
    byte[] bytes = Files.readAllBytes(loaded);
    bytes[bytes.length / 2] ^= 1;
    Files.write(loaded, bytes);
    assertThatThrownBy(() -> BloomeryServer.start(ServerConfig.parse(Map.of(), "--port", "0", "--http-port", "0",
        "--dir", root.resolve("damaged").toString()))).hasStackTraceContaining("the loaded file " + before.get(0));
  }

  private static void copyTree(Path from, Path to) throws IOException {
    try (Stream<Path> all = Files.walk(from)) {
      for (Path p : all.toList()) {
        Path target = to.resolve(from.relativize(p).toString());
        if (Files.isDirectory(p)) {
          Files.createDirectories(target);
        } else {
          Files.copy(p, target);
        }
      }
    }
  }

  @Test
  void anAbandonedLoadIsReleasedWhenItsClientDisconnectsOrGoesIdle() throws Exception {
    byte[] file = file(BloomFilter.create(20_000, 0.01), 100);
    try (BloomeryServer s = start("--load-idle-timeout", "1"); UnifiedJedis watcher = ServerPersistenceTest.client(s.port())) {
      try (UnifiedJedis dying = ServerPersistenceTest.client(s.port())) {
        send(dying, "gone", file, 2048, file.length / 2);
        assertThat(info(watcher)).contains("file_loads_pending:1");
      }
      // the load leaves the pending set, then gives back its bytes and deletes its file: INFO's counters are read
      // one by one, so a read between those steps sees pending 0 with bytes still staged
      await(() -> released(info(watcher)) && loadFiles().isEmpty());
      // a client that stays connected but sends nothing more is released after the idle timeout
      send(watcher, "idle", file, 2048, file.length / 2);
      assertThat(loadFiles()).hasSize(1);
      await(() -> released(info(watcher)) && loadFiles().isEmpty());
      assertThatThrownBy(() -> watcher.bfLoadChunk("idle", file.length / 2 + 1,
          Arrays.copyOfRange(file, file.length / 2, file.length))).isInstanceOf(JedisDataException.class);
      assertThat(watcher.exists("idle", "gone")).isZero();
    }
  }

  @Test
  void aClientCannotSendTheRecoveryOnlyRecord() throws Exception {
    byte[] record = "BLOOMERY-LOADED-FILE:1.blmf".getBytes(StandardCharsets.US_ASCII);
    try (BloomeryServer s = start(); UnifiedJedis j = ServerPersistenceTest.client(s.port())) {
      // from a client it is an ordinary RedisBloom chunk for a missing key: no file is ever read
      assertThatThrownBy(() -> j.bfLoadChunk("x", 0, record)).isInstanceOf(JedisDataException.class)
          .hasMessage("ERR not found");
      assertThat(j.exists("x")).isFalse();
    }
  }

  @Test
  void duplicatedAndReorderedChunksAbandonTheLoad() throws Exception {
    byte[] file = file(BlockedBloomFilter.create(5_000, 0.01), 100);
    int header = headerLength(file);
    try (BloomeryServer s = start(); UnifiedJedis j = ServerPersistenceTest.client(s.port())) {
      assertThat(j.bfLoadChunk("d", 1, Arrays.copyOf(file, header))).isEqualTo("OK");
      byte[] first = Arrays.copyOfRange(file, header, header + 1000);
      assertThat(j.bfLoadChunk("d", header + 1, first)).isEqualTo("OK");
      // the same chunk again (a client retrying after a lost reply) is out of order: nothing is written twice
      assertThatThrownBy(() -> j.bfLoadChunk("d", header + 1, first)).isInstanceOf(JedisDataException.class)
          .hasMessageContaining("out of order");
      assertThat(info(j)).contains("file_loads_pending:0");
      assertThat(loadFiles()).isEmpty();
      assertThat(j.exists("d")).isFalse();
      // a later chunk sent before an earlier one
      assertThat(j.bfLoadChunk("d", 1, Arrays.copyOf(file, header))).isEqualTo("OK");
      assertThatThrownBy(() -> j.bfLoadChunk("d", header + 1001, Arrays.copyOfRange(file, header + 1000, file.length)))
          .isInstanceOf(JedisDataException.class).hasMessageContaining("out of order");
      assertThat(loadFiles()).isEmpty();
      // a full, in-order load afterwards still works
      send(j, "d", file, 1000, file.length);
      assertThat(j.bfExists("d", "m99")).isTrue();
    }
  }

  @Test
  void aBlockedHeaderPastOneJavaArrayIsRefusedAsMalformed() throws Exception {
    // core's blocked storage is one long[] (at most 2^31 - 1 words, MAX_BLOCKS blocks, ~16 GiB): a header claiming
    // one block more is refused before anything is allocated or staged, naming the limit
    byte[] header = Arrays.copyOf(file(BlockedBloomFilter.create(100, 0.01), 1), 18);
    java.nio.ByteBuffer.wrap(header).order(java.nio.ByteOrder.LITTLE_ENDIAN)
        .putLong(10, 20 + 64 * (BlockedBloomFilter.MAX_BLOCKS + 1));
    try (BloomeryServer s = start(); UnifiedJedis j = ServerPersistenceTest.client(s.port())) {
      assertThatThrownBy(() -> j.bfLoadChunk("b", 1, header)).isInstanceOf(JedisDataException.class)
          .hasMessageStartingWith("ERR invalid Bloomery file: ").hasMessageContaining("blocked filter file")
          .hasMessageContaining("exceeds the format");
      java.nio.ByteBuffer.wrap(header).order(java.nio.ByteOrder.LITTLE_ENDIAN)
          .putLong(10, 20 + 64 * BlockedBloomFilter.MAX_BLOCKS);
      // the largest legal blocked file (~16 GiB) is refused by the heap check of this small test server instead
      assertThatThrownBy(() -> j.bfLoadChunk("b", 1, header)).isInstanceOf(JedisDataException.class)
          .hasMessageStartingWith("OOM");
      assertThat(loadFiles()).isEmpty();
      assertThat(j.exists("b")).isFalse();
    }
  }

  @Test
  void killNineMidLoadLeavesNoHalfKeyAndNoStagingFile() throws Exception {
    byte[] file = file(BloomFilter.create(50_000, 0.01), 1000);
    Path log = root.resolve("server.log");
    ChildServer.Started started = ChildServer.start(List.of("-Xmx256m", "-XX:+UseSerialGC",
        "-XX:TieredStopAtLevel=1"), List.of("--dir", dir.toString(), "--appendfsync", "always"), log);
    Process child = started.process();
    try {
      try (UnifiedJedis j = ServerPersistenceTest.client(started.port())) {
        j.bfAdd("other", "x");
        send(j, "half", file, 8192, file.length - 5000);
        assertThat(loadFiles()).hasSize(1).allMatch(n -> n.endsWith(".part"));
      }
    } finally {
      child.destroyForcibly().waitFor();
    }
    try (BloomeryServer s = start(); UnifiedJedis j = ServerPersistenceTest.client(s.port())) {
      assertThat(j.exists("half")).isFalse();
      assertThat(j.bfExists("other", "x")).isTrue();
      assertThat(loadFiles()).isEmpty();
      assertThat(info(j)).contains("file_loads_pending:0");
    }
  }
}
