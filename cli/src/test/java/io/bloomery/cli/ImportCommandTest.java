package io.bloomery.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomery.server.BloomeryServer;
import io.bloomery.server.ServerConfig;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import redis.clients.jedis.Jedis;

/**
 * {@code bloomery import} of the RDB file Redis 8.0.2 + RedisBloom wrote ({@code server/src/test/resources/rdb/}, see
 * its README) into a running server and a data directory, and of a live server by SCAN + DUMP.
 */
class ImportCommandTest {
  static final Path MIXED = Path.of("..", "server", "src", "test", "resources", "rdb", "mixed.rdb");
  static final String SKIPPED = "skipped 17: hash 4, list 2, set 3, stream 1, string 5, zset 2; "
      + "1 RedisBloom key in other databases (--db)";

  @TempDir Path dir;

  private static BloomeryServer start(String... extra) throws IOException {
    List<String> args = new ArrayList<>(List.of("--port", "0", "--http-port", "0", "--appendonly", "no"));
    args.addAll(List.of(extra));
    return BloomeryServer.start(ServerConfig.parse(Map.of(), args.toArray(String[]::new)));
  }

  private static void assertImported(Jedis j) {
    assertThat(j.dbSize()).isEqualTo(7);
    assertThat(j.type("bf")).isEqualTo("MBbloom--");
    assertThat(j.sendCommand(() -> "BF.EXISTS".getBytes(), "bf", "a")).isEqualTo(1L);
    assertThat(j.sendCommand(() -> "BF.EXISTS".getBytes(), "bf:scaled", "item42")).isEqualTo(1L);
    assertThat(j.sendCommand(() -> "CF.EXISTS".getBytes(), "cf", "a")).isEqualTo(1L);
    assertThat(j.sendCommand(() -> "CMS.QUERY".getBytes(), "cms", "a")).isEqualTo(List.of(5L));
    assertThat(j.type("td")).isEqualTo("TDIS-TYPE"); // TDIGEST.ADD td 1 2 3
    assertThat(j.sendCommand(() -> "TDIGEST.MAX".getBytes(), "td")).isEqualTo("3".getBytes());
    // PEXPIREAT 4102444800000 in the file: every import path keeps the absolute expiry to the millisecond
    assertThat(j.sendCommand(() -> "PEXPIRETIME".getBytes(), "bf:expiring")).isEqualTo(4102444800000L);
    assertThat(j.ttl("bf")).isEqualTo(-1);
    assertThat(j.exists("bf:db1")).isFalse();
  }

  @Test
  void anRdbFileImportsIntoARunningServerAndExistingKeysAreKeptUnlessReplaced() throws IOException {
    try (BloomeryServer server = start(); Jedis j = new Jedis("127.0.0.1", server.port())) {
      String port = String.valueOf(server.port());
      Cli.Result first = Cli.run("import", MIXED.toString(), "--port", port);
      assertThat(first.exitCode()).as(first.toString()).isZero();
      assertThat(first.out().strip()).isEqualTo("imported 7 keys into 127.0.0.1:" + port + "; " + SKIPPED);
      assertImported(j);

      Cli.Result again = Cli.run("import", MIXED.toString(), "--port", port);
      assertThat(again.out()).contains("imported 0 keys").contains("kept 7 existing keys (--replace overwrites)");
      Cli.Result replaced = Cli.run("import", MIXED.toString(), "--port", port, "--replace");
      assertThat(replaced.out()).startsWith("imported 7 keys");

      Cli.Result db1 = Cli.run("import", MIXED.toString(), "--port", port, "--db", "1");
      assertThat(db1.out()).startsWith("imported 1 key ");
      assertThat(j.exists("bf:db1")).isTrue();
    }
  }

  @Test
  void anRdbFileImportsIntoADataDirectoryTheServerThenServes() throws IOException {
    Path data = dir.resolve("data");
    Cli.Result result = Cli.run("import", MIXED.toString(), "--dir", data.toString());
    assertThat(result.exitCode()).as(result.toString()).isZero();
    assertThat(result.out().strip()).isEqualTo("imported 7 keys into " + data + "; " + SKIPPED);
    try (BloomeryServer server = start("--appendonly", "yes", "--dir", data.toString());
        Jedis j = new Jedis("127.0.0.1", server.port())) {
      assertImported(j);
    }
  }

  @Test
  void aLiveServerImportsBySCANAndDUMP() throws IOException {
    try (BloomeryServer source = start(); BloomeryServer target = start();
        Jedis s = new Jedis("127.0.0.1", source.port()); Jedis t = new Jedis("127.0.0.1", target.port())) {
      String sourcePort = String.valueOf(source.port());
      assertThat(Cli.run("import", MIXED.toString(), "--port", sourcePort).exitCode()).isZero();
      s.sendCommand(() -> "BF.RESERVE".getBytes(), "own", "0.01", "100", "NONSCALING", "LAYOUT", "BLOCKED");
      Cli.Result result = Cli.run("import", "--from", "redis://127.0.0.1:" + sourcePort, "--port",
          String.valueOf(target.port()));
      assertThat(result.exitCode()).as(result.toString()).isZero();
      assertThat(result.out().strip()).isEqualTo("imported 7 keys into 127.0.0.1:" + target.port()
          + "; skipped 1: module BLbloom 1");
      assertImported(t);
    }
  }

  @Test
  void aFileThatIsNotRdbOrIsCutShortFailsWithItsName() throws IOException {
    Path bogus = dir.resolve("bogus.rdb");
    Files.writeString(bogus, "not an rdb file at all");
    Path truncated = dir.resolve("truncated.rdb");
    byte[] mixed = Files.readAllBytes(MIXED);
    Files.write(truncated, java.util.Arrays.copyOf(mixed, mixed.length / 2));
    try (BloomeryServer server = start(); Jedis j = new Jedis("127.0.0.1", server.port())) {
      Cli.Result result = Cli.run("import", bogus.toString(), "--port", String.valueOf(server.port()));
      assertThat(result.exitCode()).isEqualTo(1);
      assertThat(result.err()).contains(bogus.toString()).contains("not an RDB file");
      Cli.Result cut = Cli.run("import", truncated.toString(), "--port", String.valueOf(server.port()));
      assertThat(cut.exitCode()).isEqualTo(1);
      assertThat(cut.err()).contains("unexpected end");
      Cli.Result neither = Cli.run("import", "--port", String.valueOf(server.port()));
      assertThat(neither.exitCode()).isEqualTo(2);
    }
  }
}
