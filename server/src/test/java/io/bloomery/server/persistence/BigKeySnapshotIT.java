package io.bloomery.server.persistence;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomery.server.ChildServer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Protocol;
import redis.clients.jedis.RedisClient;
import redis.clients.jedis.UnifiedJedis;

/**
 * A scalable Bloom key near half of a small heap, in a real server process: BGSAVE and SAVE stream it (no copy of
 * the key), the journal is compacted into the snapshot, SIGTERM exits, and a restart reloads the key with its items.
 */
class BigKeySnapshotIT {
  private static final String HEAP = "-Xmx256m";
  /** Capacity of the key: one layer of 110 MB (RedisBloom's sizing at 0.5 % after tightening, 11.03 bits an item). */
  private static final String CAPACITY = "80000000";
  private static final int ITEMS = 2000;

  @TempDir Path dir;

  private Process process;

  private int start(Path log) throws Exception {
    ChildServer.Started started = ChildServer.start(List.of(HEAP, "-XX:+UseSerialGC"),
        List.of("--dir", dir.resolve("data").toString(), "--appendfsync", "everysec"), log);
    process = started.process();
    return started.port();
  }

  /** A client that waits as long as a reservation of 110 MB or a SAVE of it may take on a loaded machine. */
  private static UnifiedJedis client(int port) {
    return RedisClient.builder().hostAndPort(new HostAndPort("127.0.0.1", port))
        .clientConfig(DefaultJedisClientConfig.builder().socketTimeoutMillis(300_000).build()).build();
  }

  private static Object call(UnifiedJedis j, String command, String... args) {
    return j.sendCommand(() -> command.getBytes(StandardCharsets.US_ASCII), args);
  }

  private static String info(UnifiedJedis j) {
    return ServerPersistenceTest.text(j.sendCommand(Protocol.Command.INFO, "persistence"));
  }

  private static String field(String info, String name) {
    for (String line : info.split("\r\n")) {
      if (line.startsWith(name + ":")) {
        return line.substring(name.length() + 1);
      }
    }
    throw new AssertionError(name + " not in INFO persistence:\n" + info);
  }

  /** The bytes of the key's layers, from BF.DEBUG's {@code bytes:} fields. */
  private static long layerBytes(UnifiedJedis j) {
    long bytes = 0;
    for (Object line : (List<?>) call(j, "BF.DEBUG", "big")) {
      for (String field : ServerPersistenceTest.text(line).split(" ")) {
        if (field.startsWith("bytes:")) {
          bytes += Long.parseLong(field.substring("bytes:".length()));
        }
      }
    }
    return bytes;
  }

  private static String[] items(String prefix, int from, int to) {
    String[] out = new String[to - from];
    for (int i = from; i < to; i++) {
      out[i - from] = prefix + i;
    }
    return out;
  }

  private static void addAll(UnifiedJedis j, String[] items) {
    for (int i = 0; i < items.length; i += 500) {
      List<String> args = new ArrayList<>(List.of("big"));
      args.addAll(List.of(items).subList(i, Math.min(items.length, i + 500)));
      call(j, "BF.MADD", args.toArray(String[]::new));
    }
  }

  private static void assertAllPresent(UnifiedJedis j, String[] items) {
    List<String> args = new ArrayList<>(List.of("big"));
    args.addAll(List.of(items));
    List<Object> answers = new ArrayList<>((List<?>) call(j, "BF.MEXISTS", args.toArray(String[]::new)));
    assertThat(answers).hasSize(items.length).containsOnly(true);
  }

  private void stopWithSigterm(Path log) throws Exception {
    process.destroy(); // SIGTERM
    assertThat(process.waitFor(30, TimeUnit.SECONDS))
        .as("the server exits after SIGTERM (log:\n%s)", Files.readString(log)).isTrue();
    assertThat(process.exitValue()).isZero();
  }

  @Test
  void aKeyNearHalfTheHeapSnapshotsCompactsTheJournalAndSurvivesRestart() throws Exception {
    Path log = dir.resolve("server.log");
    String[] before = items("before-", 0, ITEMS);
    String[] after = items("after-", 0, ITEMS / 4);
    try {
      int port = start(log);
      long keyBytes;
      try (UnifiedJedis j = client(port)) {
        assertThat(ServerPersistenceTest.text(call(j, "BF.RESERVE", "big", "0.01", CAPACITY))).isEqualTo("OK");
        addAll(j, before);
        keyBytes = layerBytes(j);
        assertThat(keyBytes).as("key size against the 256 MB heap").isBetween(100L << 20, 128L << 20);
        long journalBefore = Long.parseLong(field(info(j), "aof_current_size"));
        assertThat(journalBefore).isGreaterThan(ITEMS * 8L);

        assertThat(ServerPersistenceTest.text(j.sendCommand(Protocol.Command.BGSAVE))).isEqualTo("Background saving started");
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        String status;
        do {
          Thread.sleep(100);
          status = info(j);
        } while (!(field(status, "rdb_bgsave_in_progress").equals("0") && field(status, "rdb_saves").equals("1"))
            && System.nanoTime() < deadline);
        assertThat(field(status, "rdb_saves")).as(status).isEqualTo("1");
        assertThat(field(status, "rdb_last_bgsave_status")).as(status).isEqualTo("ok");
        assertThat(Long.parseLong(field(status, "aof_current_size"))).as("journal after the snapshot")
            .isLessThan(journalBefore);
        assertThat(Long.parseLong(field(status, "aof_base_size"))).as("snapshot size").isGreaterThan(keyBytes);
        // The new snapshot's journal starts empty; the old segment stays as the previous state's journal until
        // the next snapshot is verified (docs/PERSISTENCE.md, "Damage").
        assertThat(DataDirectory.segments(dir.resolve("data")).keySet()).as("journal segments after the snapshot")
            .containsExactly(1L, 2L);

        addAll(j, after); // journaled after the snapshot
        assertThat(ServerPersistenceTest.text(j.sendCommand(Protocol.Command.SAVE))).isEqualTo("OK");
        assertThat(field(info(j), "rdb_last_bgsave_status")).isEqualTo("ok");
        assertThat(DataDirectory.segments(dir.resolve("data")).keySet())
            .as("journal segments after a second snapshot: the one holding the big key's records is gone")
            .containsExactly(2L, 3L);
      }
      stopWithSigterm(log);

      port = start(log);
      try (UnifiedJedis j = client(port)) {
        assertAllPresent(j, before);
        assertAllPresent(j, after);
        assertThat(call(j, "BF.CARD", "big")).isEqualTo((long) (before.length + after.length));
        assertThat(layerBytes(j)).isEqualTo(keyBytes);
      }
      stopWithSigterm(log);
    } finally {
      if (process != null && process.isAlive()) {
        process.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
      }
    }
  }
}
