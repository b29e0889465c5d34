package io.bloomery.server.persistence;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomery.server.BloomeryServer;
import io.bloomery.server.ChildServer;
import io.bloomery.server.ServerConfig;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Protocol;
import redis.clients.jedis.RedisClient;
import redis.clients.jedis.UnifiedJedis;

/** The server started in-process with --dir: restart keeps every key; SAVE, BGREWRITEAOF, LASTSAVE and INFO. */
class ServerPersistenceTest {
  @TempDir Path dir;

  private BloomeryServer start(String... extra) throws IOException {
    String[] base = {"--port", "0", "--http-port", "0", "--dir", dir.toString()};
    String[] args = new String[base.length + extra.length];
    System.arraycopy(base, 0, args, 0, base.length);
    System.arraycopy(extra, 0, args, base.length, extra.length);
    return BloomeryServer.start(ServerConfig.parse(Map.of(), args));
  }

  static UnifiedJedis client(int port) {
    return RedisClient.builder().hostAndPort(new HostAndPort("127.0.0.1", port))
        .clientConfig(DefaultJedisClientConfig.builder().build()).build();
  }

  static String text(Object reply) {
    return reply instanceof byte[] bytes ? new String(bytes, StandardCharsets.UTF_8) : String.valueOf(reply);
  }

  @Test
  void keysSurviveARestartAndPersistenceCommandsAnswer() throws IOException {
    try (BloomeryServer server = start("--appendfsync", "always"); UnifiedJedis j = client(server.port())) {
      j.bfReserve("urls", 0.01, 1000);
      j.bfMAdd("urls", "a", "b", "c");
      j.cmsInitByDim("hits", 100, 4);
      j.cmsIncrBy("hits", "home", 5);
      j.cfAdd("cf", "x");
      String info = text(j.sendCommand(Protocol.Command.INFO, "persistence"));
      assertThat(info).contains("aof_enabled:1").contains("aof_fsync:always").contains("aof_last_write_status:ok");
      assertThat(text(j.sendCommand(Protocol.Command.SAVE))).isEqualTo("OK");
      long lastSave = (Long) j.sendCommand(Protocol.Command.LASTSAVE);
      assertThat(lastSave).isPositive();
      j.bfAdd("urls", "after-save");
      assertThat(text(j.sendCommand(Protocol.Command.BGREWRITEAOF))).isNotEmpty();
      j.bfAdd("urls", "after-rewrite");
    }
    assertThat(Files.exists(dir.resolve("MANIFEST"))).isTrue();
    try (BloomeryServer server = start(); UnifiedJedis j = client(server.port())) {
      assertThat(j.bfMExists("urls", "a", "b", "c", "after-save", "after-rewrite", "never")).containsExactly(true, true,
          true, true, true, false);
      assertThat(j.cmsQuery("hits", "home")).containsExactly(5L);
      assertThat(j.cfExists("cf", "x")).isTrue();
      assertThat(text(j.sendCommand(Protocol.Command.INFO, "persistence"))).contains("aof_fsync:everysec");
      HttpResponse<String> metrics = HttpClient.newHttpClient().send(
          HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.httpPort() + "/metrics")).build(),
          HttpResponse.BodyHandlers.ofString());
      assertThat(metrics.body()).contains("bloomery_aof_size_bytes ").contains("bloomery_snapshot_last_time_seconds ")
          .contains("bloomery_persistence_lag_seconds ").contains("bloomery_aof_fsync_seconds_count ");
    } catch (InterruptedException e) {
      throw new AssertionError(e);
    }
    assertThat(LogCheck.check(dir).startable()).isTrue();
  }

  /**
   * A t-digest's queries compress it, which changes its INFO and every later answer; after a kill -9 (journal
   * replay) and after a snapshot it must answer exactly as a digest that never restarted, which only holds if the
   * compressing reads were journaled.
   */
  @Test
  void aTDigestAnswersAfterAKillAndARestartExactlyAsOneThatNeverRestarted() throws Exception {
    Object[] expected;
    ChildServer.Started child = ChildServer.start(List.of("-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"),
        List.of("--dir", dir.toString(), "--appendfsync", "always"), dir.resolveSibling(dir.getFileName() + ".log"));
    try (UnifiedJedis j = client(child.port())) {
      tdigestSteps(j, "live", 0);
      tdigestSteps(j, "kept", 0);
      tdigestSteps(j, "live", 1);
      expected = tdigestAnswers(j, "live");
      assertThat(tdigestAnswers(j, "kept")).isNotEqualTo(expected); // the control differs, so the check can fail
    } finally {
      child.process().destroyForcibly();
      child.process().waitFor();
    }
    try (BloomeryServer server = start(); UnifiedJedis j = client(server.port())) {
      assertThat(text(j.sendCommand(Protocol.Command.TYPE, "kept"))).isEqualTo("TDIS-TYPE");
      tdigestSteps(j, "kept", 1);
      assertThat(tdigestAnswers(j, "kept")).isEqualTo(expected);
      assertThat(text(j.sendCommand(Protocol.Command.SAVE))).isEqualTo("OK");
    }
    expected[2] = true; // the query before SAVE compressed what was buffered
    try (BloomeryServer server = start(); UnifiedJedis j = client(server.port())) {
      assertThat(tdigestAnswers(j, "kept")).isEqualTo(expected);
    }
  }

  /** Adds in batches with compressing reads between them (phase 0), then more adds (phase 1). */
  private static void tdigestSteps(UnifiedJedis j, String key, int phase) {
    if (phase == 0) {
      j.sendCommand(() -> "TDIGEST.CREATE".getBytes(StandardCharsets.US_ASCII), key, "COMPRESSION", "5");
    }
    for (int batch = 0; batch < 6; batch++) {
      String[] args = new String[41];
      args[0] = key;
      for (int i = 1; i <= 40; i++) {
        args[i] = Double.toString(Math.sin(phase * 1000 + batch * 40 + i) * 100);
      }
      j.sendCommand(() -> "TDIGEST.ADD".getBytes(StandardCharsets.US_ASCII), args);
      if (phase == 0) {
        j.sendCommand(() -> "TDIGEST.QUANTILE".getBytes(StandardCharsets.US_ASCII), key, "0.5");
      }
    }
  }

  private static Object[] tdigestAnswers(UnifiedJedis j, String key) {
    Object before = j.sendCommand(() -> "TDIGEST.INFO".getBytes(StandardCharsets.US_ASCII), key);
    Object quantiles = j.sendCommand(() -> "TDIGEST.QUANTILE".getBytes(StandardCharsets.US_ASCII), key, "0.01",
        "0.3", "0.5", "0.99");
    Object after = j.sendCommand(() -> "TDIGEST.INFO".getBytes(StandardCharsets.US_ASCII), key);
    return new Object[] {deep(quantiles), deep(after), deep(before).equals(deep(after))};
  }

  private static Object deep(Object reply) {
    if (reply instanceof java.util.List<?> list) {
      return list.stream().map(ServerPersistenceTest::deep).toList();
    }
    if (reply instanceof Map.Entry<?, ?> entry) {
      return deep(entry.getKey()) + "=" + deep(entry.getValue());
    }
    return text(reply);
  }

  @Test
  void aDamagedJournalRefusesTheStartNamingFileAndOffset() throws IOException {
    try (BloomeryServer server = start("--appendfsync", "always"); UnifiedJedis j = client(server.port())) {
      j.bfAdd("urls", "a");
    }
    Path snapshot = DataDirectory.snapshots(dir).firstEntry().getValue();
    byte[] bytes = Files.readAllBytes(snapshot);
    bytes[bytes.length / 2] ^= 0x20;
    Files.write(snapshot, bytes);
    assertThatThrownBy(this::start).isInstanceOf(PersistenceCorruptionException.class)
        .hasMessageContaining(snapshot.getFileName().toString()).hasMessageContaining(" at offset ");
  }

  @Test
  void aJournalRecordTheServerCannotApplyRefusesTheStartNamingItsOffset() throws IOException {
    try (BloomeryServer server = start("--appendfsync", "always"); UnifiedJedis j = client(server.port())) {
      j.bfAdd("urls", "a");
    }
    // A well-framed record (CRC and RESP valid) holding something no command layer would journal.
    long segment = DataDirectory.segments(dir).lastKey();
    Path file = DataDirectory.segments(dir).lastEntry().getValue();
    long offset = Files.size(file);
    Files.write(file, JournalFormat.encode(TestKeyspace.argv("NOSUCHCOMMAND", "x"), 1_000_000), java.nio.file.StandardOpenOption.APPEND);
    assertThat(segment).isPositive();
    assertThatThrownBy(this::start).isInstanceOf(PersistenceCorruptionException.class)
        .hasMessageStartingWith(file.toAbsolutePath() + " at offset " + offset + ": record could not be replayed");
  }

  @Test
  void appendOnlyNoWithoutStateStartsWithoutTouchingTheDirectory() throws IOException {
    Path unused = dir.resolve("unused");
    try (BloomeryServer server = BloomeryServer.start(ServerConfig.parse(Map.of(), "--port", "0", "--http-port", "0",
        "--dir", unused.toString(), "--appendonly", "no")); UnifiedJedis j = client(server.port())) {
      j.bfAdd("k", "v");
      assertThat(text(j.sendCommand(Protocol.Command.INFO, "persistence"))).contains("aof_enabled:0");
    }
    assertThat(unused).doesNotExist();
  }
}
