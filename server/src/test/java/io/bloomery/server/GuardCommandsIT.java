package io.bloomery.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.bloomery.guard.PostgresCluster;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.commands.ProtocolCommand;
import redis.clients.jedis.exceptions.JedisDataException;

/** GUARD.* over RESP against a real PostgreSQL (wal_level=logical) and a real SQLite file, with Jedis and raw RESP. */
class GuardCommandsIT {
  /** A hang guard for one reply, not a timing claim: GUARD.RESERVE on a loaded 2-core machine can take seconds. */
  private static final int READ_TIMEOUT_MILLIS = 30_000;
  static final String SECRET = "s3cr3t-Pa55word";
  static PostgresCluster pg;
  static String url;
  static String foreignUrl;
  static BloomeryServer server;
  static ListAppender<ILoggingEvent> logs;
  @TempDir static Path tmp;

  @BeforeAll
  static void start() {
    logs = new ListAppender<>();
    logs.start();
    ((Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME)).addAppender(logs);
    pg = PostgresCluster.shared();
    url = pg.createDatabase();
    foreignUrl = pg.createDatabase();
    GuardFixtures.psql(foreignUrl, "CREATE TABLE links (id bigserial PRIMARY KEY, url text NOT NULL);"
        + " INSERT INTO links (url) SELECT 'https://example.org/page/' || g FROM generate_series(1, 500) g");
    server = GuardFixtures.server("--store", "pg=" + url + "&password=" + SECRET,
        "--store", "links=" + foreignUrl, "--store-table", "links=links.url",
        "--store", "lite=sqlite:" + tmp.resolve("guard.db"));
  }

  @AfterAll
  static void stop() {
    server.close();
    ((Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME)).detachAppender(logs);
  }

  static Object call(Jedis j, String... args) {
    String[] rest = java.util.Arrays.copyOfRange(args, 1, args.length);
    return j.sendCommand(cmd(args[0]), rest);
  }

  static ProtocolCommand cmd(String name) {
    return () -> name.getBytes(java.nio.charset.StandardCharsets.UTF_8);
  }

  @Test
  void maddOnceReplaysItsStoredReplyAndRefusesHostileTokens() {
    for (String store : List.of("pg", "lite")) {
      try (Jedis j = new Jedis("127.0.0.1", server.port(), READ_TIMEOUT_MILLIS)) {
        String key = "once-" + store;
        call(j, "GUARD.RESERVE", key, store, "0.01", "1000");
        assertThat(call(j, "GUARD.ADD", key, "old")).isEqualTo(1L);
        List<Long> first = List.of(1L, 0L, 1L, 0L);
        assertThat(call(j, "GUARD.MADDONCE", key, "client-1:1", "new-a", "old", "new-b", "new-a")).isEqualTo(first);
        // the retry of the committed request gets the identical reply, on any connection
        try (Jedis other = new Jedis("127.0.0.1", server.port(), READ_TIMEOUT_MILLIS)) {
          assertThat(call(other, "GUARD.MADDONCE", key, "client-1:1", "new-a", "old", "new-b", "new-a"))
              .isEqualTo(first);
        }
        assertThat(call(j, "GUARD.MADD", key, "new-a", "new-b")).isEqualTo(List.of(0L, 0L));
        assertThat(call(j, "GUARD.MADDONCE", key, "client-1:2", "new-a", "new-c")).isEqualTo(List.of(0L, 1L));
        assertThatThrownBy(() -> call(j, "GUARD.MADDONCE", key, "client-1:1", "new-d"))
            .isInstanceOf(JedisDataException.class)
            .hasMessageStartingWith("ERR store '" + store + "': the token was already used for other items");
        assertThat(call(j, "GUARD.ADD", key, "new-d")).isEqualTo(1L); // nothing of the refused request stayed
        assertThatThrownBy(() -> call(j, "GUARD.MADDONCE", key, "", "x"))
            .isInstanceOf(JedisDataException.class).hasMessage("ERR the token must be 1 to 128 bytes");
        assertThatThrownBy(() -> call(j, "GUARD.MADDONCE", key, "t".repeat(129), "x"))
            .isInstanceOf(JedisDataException.class).hasMessage("ERR the token must be 1 to 128 bytes");
        assertThatThrownBy(() -> call(j, "GUARD.MADDONCE", key, "only-a-token"))
            .isInstanceOf(JedisDataException.class).hasMessageContaining("wrong number of arguments");
        assertThatThrownBy(() -> call(j, "GUARD.MADDONCE", "no-such-key", "t", "x"))
            .isInstanceOf(JedisDataException.class).hasMessageStartingWith("ERR no such guarded key");
        call(j, "GUARD.DROP", key);
      }
    }
  }

  @Test
  void reserveAddMaddExistsOnPostgres() {
    try (Jedis j = new Jedis("127.0.0.1", server.port(), READ_TIMEOUT_MILLIS)) {
      assertThat(call(j, "GUARD.RESERVE", "crawl", "pg", "0.01", "10000")).isEqualTo("OK".getBytes());
      assertThat(call(j, "GUARD.ADD", "crawl", "https://a.example/1")).isEqualTo(1L);
      assertThat(call(j, "GUARD.ADD", "crawl", "https://a.example/1")).isEqualTo(0L);
      assertThat(call(j, "GUARD.MADD", "crawl", "https://a.example/2", "https://a.example/1", "https://a.example/2",
          "https://a.example/3")).isEqualTo(List.of(1L, 0L, 0L, 1L));
      assertThat(call(j, "GUARD.EXISTS", "crawl", "https://a.example/2")).isEqualTo(List.of(1L, 1L, 1L));
      awaitStreaming("crawl");
      assertThat(call(j, "GUARD.EXISTS", "crawl", "https://never.example/")).isEqualTo(List.of(0L, 0L, 0L));
      assertThat(call(j, "GUARD.MEXISTS", "crawl", "https://a.example/3", "https://never.example/x"))
          .isEqualTo(List.of(List.of(1L, 1L, 1L), List.of(0L, 0L, 0L)));
      assertThatThrownBy(() -> call(j, "GUARD.RESERVE", "crawl", "pg", "0.01", "10000"))
          .isInstanceOf(JedisDataException.class).hasMessage("ERR item exists");
    }
    assertThat(Long.parseLong(GuardFixtures.psql(url, "SELECT count(*) FROM pg_tables WHERE tablename LIKE "
        + "'bloomery_seen_%' AND tablename !~ '_(pending|replies)$'").strip()))
        .as("the guarded key's table exists in the store").isGreaterThanOrEqualTo(1);
  }

  @Test
  void resp3VerdictIsAMapAndResp2AnArrayOfThreeIntegers() {
    try (RawClient c = new RawClient(server.port())) {
      assertThat(c.call("GUARD.RESERVE", "r3", "pg", "0.01", "1000")).isEqualTo("+OK\r\n");
      assertThat(c.call("GUARD.ADD", "r3", "x")).isEqualTo(":1\r\n");
      awaitStreaming("r3");
      assertThat(c.call("GUARD.EXISTS", "r3", "x")).isEqualTo("*3\r\n:1\r\n:1\r\n:1\r\n");
      assertThat(c.call("GUARD.MEXISTS", "r3", "never-added", "x", "never-added-2")).as("one maybe: from the store")
          .isEqualTo("*3\r\n*3\r\n:0\r\n:0\r\n:0\r\n*3\r\n:1\r\n:1\r\n:1\r\n*3\r\n:0\r\n:0\r\n:0\r\n");
      assertThat(c.call("GUARD.MEXISTS", "r3", "never-added", "never-added-2")).as("answered on the event loop")
          .isEqualTo("*2\r\n*3\r\n:0\r\n:0\r\n:0\r\n*3\r\n:0\r\n:0\r\n:0\r\n");
      c.call("HELLO", "3");
      assertThat(c.call("GUARD.EXISTS", "r3", "x"))
          .isEqualTo("%3\r\n+maybe_present\r\n:1\r\n+exact_checked\r\n:1\r\n+duplicate\r\n:1\r\n");
      assertThat(c.call("GUARD.MEXISTS", "r3", "never-added")).isEqualTo(
          "*1\r\n%3\r\n+maybe_present\r\n:0\r\n+exact_checked\r\n:0\r\n+duplicate\r\n:0\r\n");
      assertThat(c.call("GUARD.MEXISTS", "r3", "x", "never-added")).isEqualTo("*2\r\n"
          + "%3\r\n+maybe_present\r\n:1\r\n+exact_checked\r\n:1\r\n+duplicate\r\n:1\r\n"
          + "%3\r\n+maybe_present\r\n:0\r\n+exact_checked\r\n:0\r\n+duplicate\r\n:0\r\n");
    }
  }

  @Test
  void repliesKeepTheirOrderWhenDeferredAndPlainCommandsArePipelined() {
    try (RawClient c = new RawClient(server.port())) {
      c.call("GUARD.RESERVE", "order", "pg", "0.01", "1000");
      ByteArrayBuilder b = new ByteArrayBuilder();
      for (int i = 0; i < 50; i++) {
        b.add(RawClient.encode("GUARD.ADD", "order", "item-" + (i % 25)));
        b.add(RawClient.encode("ECHO", "e" + i));
      }
      c.send(b.bytes());
      for (int i = 0; i < 50; i++) {
        assertThat(c.reply()).isEqualTo(i < 25 ? ":1\r\n" : ":0\r\n");
        String echo = "e" + i;
        assertThat(c.reply()).isEqualTo("$" + echo.length() + "\r\n" + echo + "\r\n");
      }
    }
  }

  @Test
  void infoHasEveryFigureAndNoCredential() {
    try (Jedis j = new Jedis("127.0.0.1", server.port(), READ_TIMEOUT_MILLIS)) {
      call(j, "GUARD.RESERVE", "figures", "pg", "0.001", "5000");
      call(j, "GUARD.MADD", "figures", "a", "b", "c");
      call(j, "GUARD.MEXISTS", "figures", "a", "zz", "yy");
      Map<String, Object> info = infoOf(j, "figures");
      assertThat(info).containsKeys("store", "state", "source", "generation", "built_at", "recovery",
          "items_since_rebuild", "store_lookups_made", "store_lookups_avoided", "realized_false_positives",
          "realized_false_positive_rate", "model_false_positive_rate", "fill_ratio", "insert_failures",
          "freshness_lag_ms", "replication_state", "replication_slot", "group_commits", "rebuild_advised");
      assertThat(info.get("state")).isEqualTo("ready");
      assertThat(info.get("generation")).isEqualTo(1L);
      assertThat(info.get("items_since_rebuild")).isEqualTo(3L);
      assertThat((Long) info.get("store_lookups_avoided")).isGreaterThanOrEqualTo(2L);
      assertThat(info.get("replication_state").toString()).isIn("starting", "catching-up", "streaming");
      assertThat(info.toString()).doesNotContain(SECRET);
      assertThat(call(j, "GUARD.REBUILD", "figures")).isEqualTo("OK".getBytes());
      assertThat(infoOf(j, "figures").get("generation")).isEqualTo(2L);
      assertThat(call(j, "GUARD.EXISTS", "figures", "b")).isEqualTo(List.of(1L, 1L, 1L));
    }
    for (ILoggingEvent e : logs.list) {
      assertThat(e.getFormattedMessage()).doesNotContain(SECRET);
    }
    assertThat(server.config().toString()).doesNotContain(SECRET).contains("password=***");
  }

  /**
   * Waits until the key's replication stream is fresh: before that a filter negative is confirmed in the store
   * (answered {1, 1, 0}), after it a negative skips the store ({0, 0, 0}).
   */
  static void awaitStreaming(String key) {
    try (Jedis j = new Jedis("127.0.0.1", server.port(), READ_TIMEOUT_MILLIS)) {
      for (int i = 0; i < 600; i++) {
        if ("streaming".equals(infoOf(j, key).get("replication_state"))) {
          return;
        }
        Thread.sleep(50);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    throw new AssertionError("guarded key " + key + " is not streaming after 30 s");
  }

  static Map<String, Object> infoOf(Jedis j, String key) {
    @SuppressWarnings("unchecked")
    List<Object> flat = (List<Object>) call(j, "GUARD.INFO", key);
    Map<String, Object> m = new java.util.LinkedHashMap<>();
    for (int i = 0; i < flat.size(); i += 2) {
      Object v = flat.get(i + 1);
      m.put(new String((byte[]) flat.get(i)), v instanceof byte[] b ? new String(b) : v);
    }
    return m;
  }

  @Test
  void aForeignTableIsReadOnlyAndFollowsItsWriters() throws Exception {
    try (Jedis j = new Jedis("127.0.0.1", server.port(), READ_TIMEOUT_MILLIS)) {
      assertThat(call(j, "GUARD.RESERVE", "links", "links", "0.01", "10000")).isEqualTo("OK".getBytes());
      assertThat(call(j, "GUARD.EXISTS", "links", "https://example.org/page/7")).isEqualTo(List.of(1L, 1L, 1L));
      assertThatThrownBy(() -> call(j, "GUARD.ADD", "links", "https://example.org/new"))
          .hasMessageContaining("read-only source");
      String item = "https://example.org/foreign/" + System.nanoTime();
      GuardFixtures.psql(foreignUrl, "INSERT INTO links (url) VALUES ('" + item + "')");
      // the lag is bounded; the verdict is never a false "absent" for a row committed before the lag
      List<?> verdict = List.of();
      for (int i = 0; i < 200 && !verdict.equals(List.of(1L, 1L, 1L)); i++) {
        verdict = (List<?>) call(j, "GUARD.EXISTS", "links", item);
        Thread.sleep(50);
      }
      assertThat(verdict).isEqualTo(List.of(1L, 1L, 1L));
      assertThat((Long) infoOf(j, "links").get("replication_rows")).isGreaterThanOrEqualTo(0L);
    }
  }

  @Test
  void aForeignWriterToTheGuardsOwnTableBecomesADuplicate() throws Exception {
    try (Jedis j = new Jedis("127.0.0.1", server.port(), READ_TIMEOUT_MILLIS)) {
      call(j, "GUARD.RESERVE", "own", "pg", "0.01", "1000");
      call(j, "GUARD.ADD", "own", "first");
      String table = GuardFixtures.psql(url, "SELECT tablename FROM pg_tables WHERE tablename LIKE 'bloomery_seen_%' AND tablename !~ '_(pending|replies)$'"
          + " AND EXISTS (SELECT 1 FROM pg_tables) ORDER BY tablename").lines().filter(t -> {
            String n = GuardFixtures.psql(url, "SELECT count(*) FROM " + t + " WHERE item = 'first'::bytea").strip();
            return n.equals("1");
          }).findFirst().orElseThrow();
      GuardFixtures.psql(url, "INSERT INTO " + table + " (digest, item) VALUES (sha256('by-psql'::bytea),"
          + " 'by-psql'::bytea)");
      List<?> verdict = List.of();
      for (int i = 0; i < 200 && !verdict.equals(List.of(1L, 1L, 1L)); i++) {
        verdict = (List<?>) call(j, "GUARD.EXISTS", "own", "by-psql");
        Thread.sleep(50);
      }
      assertThat(verdict).isEqualTo(List.of(1L, 1L, 1L));
      assertThat(call(j, "GUARD.ADD", "own", "by-psql")).isEqualTo(0L);
    }
  }

  @Test
  void sqliteStoreWorks() {
    try (Jedis j = new Jedis("127.0.0.1", server.port(), READ_TIMEOUT_MILLIS)) {
      assertThat(call(j, "GUARD.RESERVE", "lite", "lite", "0.01", "1000")).isEqualTo("OK".getBytes());
      assertThat(call(j, "GUARD.MADD", "lite", "p", "q", "p")).isEqualTo(List.of(1L, 1L, 0L));
      assertThat(call(j, "GUARD.EXISTS", "lite", "q")).isEqualTo(List.of(1L, 1L, 1L));
      assertThat(infoOf(j, "lite").get("replication_state")).isEqualTo("off");
    }
    assertThat(Files.exists(tmp.resolve("guard.db"))).isTrue();
  }

  @Test
  void badInputAnswersOneLineErrorsAndChangesNothing() {
    try (Jedis j = new Jedis("127.0.0.1", server.port(), READ_TIMEOUT_MILLIS)) {
      List<String[]> bad = List.of(
          new String[] {"GUARD.RESERVE", "b", "nosuchstore", "0.01", "100"},
          new String[] {"GUARD.RESERVE", "b", "pg", "1.5", "100"},
          new String[] {"GUARD.RESERVE", "b", "pg", "nan", "100"},
          new String[] {"GUARD.RESERVE", "b", "pg", "0.01", "0"},
          new String[] {"GUARD.RESERVE", "b", "pg", "0.01", "-5"},
          new String[] {"GUARD.RESERVE", "b", "pg", "0.01", "99999999999999999999"},
          new String[] {"GUARD.RESERVE", "b", "pg", "0.000000001", "10000000000"},
          new String[] {"GUARD.RESERVE", "b", "pg", "0.01"},
          new String[] {"GUARD.ADD", "nokey", "x"},
          new String[] {"GUARD.EXISTS", "nokey", "x"},
          new String[] {"GUARD.INFO", "nokey"},
          new String[] {"GUARD.REBUILD", "nokey"},
          new String[] {"GUARD.DROP", "nokey"},
          new String[] {"GUARD.MADD", "nokey"});
      List<String> errors = new ArrayList<>();
      for (String[] cmd : bad) {
        try {
          call(j, cmd);
          errors.add("no error for " + String.join(" ", cmd));
        } catch (JedisDataException e) {
          assertThat(e.getMessage()).doesNotContain("\n").doesNotContain("internal error").doesNotContain(SECRET);
        }
      }
      assertThat(errors).isEmpty();
      assertThat(call(j, "MULTI")).isEqualTo("OK".getBytes());
      try {
        call(j, "GUARD.INFO", "x");
      } catch (JedisDataException e) {
        assertThat(e.getMessage()).contains("not allowed inside a transaction");
      }
      call(j, "DISCARD");
      assertThatThrownBy(() -> call(j, "GUARD.INFO", "b")).hasMessageContaining("no such guarded key");
    }
  }

  @Test
  void guardedKeysAreKeysForTypeExistsKeysScanAndRefuseOtherWrites() {
    try (Jedis j = new Jedis("127.0.0.1", server.port(), READ_TIMEOUT_MILLIS)) {
      long before = j.dbSize();
      assertThat(call(j, "GUARD.RESERVE", "fc:g", "lite", "0.01", "1000")).isEqualTo("OK".getBytes());
      assertThat(call(j, "BF.ADD", "fc:s", "v")).isEqualTo(1L); // a plain Bloom key beside it
      assertThat(j.dbSize()).isEqualTo(before + 2);
      // INFO keyspace once left guarded keys out (db0:keys one short of DBSIZE), as Redis's never does.
      assertThat(j.info("keyspace")).contains("db0:keys=" + j.dbSize() + ",");
      assertThat(j.type("fc:g")).isEqualTo("guard");
      assertThat(j.exists("fc:g", "fc:s", "fc:none")).isEqualTo(2L);
      assertThat(j.keys("fc:*")).containsExactlyInAnyOrder("fc:g", "fc:s");
      java.util.Set<String> scanned = new java.util.HashSet<>();
      String cursor = "0";
      do {
        redis.clients.jedis.resps.ScanResult<String> r = j.scan(cursor,
            new redis.clients.jedis.params.ScanParams().match("fc:*").count(3));
        scanned.addAll(r.getResult());
        cursor = r.getCursor();
      } while (!cursor.equals("0"));
      assertThat(scanned).containsExactlyInAnyOrder("fc:g", "fc:s");
      assertThat(j.scan("0", new redis.clients.jedis.params.ScanParams().match("fc:*").count(1000), "guard")
          .getResult()).containsExactly("fc:g");
      String wrongType = "WRONGTYPE Operation against a guarded key (only GUARD.* commands apply; remove it with"
          + " GUARD.DROP)";
      // DEL/UNLINK of a guarded key are refused whole (the plain key beside it stays), as are other writes
      assertThatThrownBy(() -> j.del("fc:s", "fc:g")).hasMessage(wrongType);
      assertThatThrownBy(() -> j.unlink("fc:g")).hasMessage(wrongType);
      assertThatThrownBy(() -> j.rename("fc:s", "fc:g")).hasMessage(wrongType);
      assertThatThrownBy(() -> call(j, "BF.ADD", "fc:g", "x")).hasMessage(wrongType);
      assertThat(call(j, "BF.EXISTS", "fc:s", "v")).isEqualTo(1L);
      assertThat(call(j, "GUARD.ADD", "fc:g", "still-works")).isEqualTo(1L);
      // a plain key's name cannot be reserved
      assertThatThrownBy(() -> call(j, "GUARD.RESERVE", "fc:s", "lite", "0.01", "1000"))
          .hasMessage("ERR item exists (a key of another type has this name)");
      assertThat(j.type("fc:s")).isEqualTo("MBbloom--");
      assertThat(call(j, "GUARD.DROP", "fc:g")).isEqualTo("OK".getBytes());
      assertThat(j.type("fc:g")).isEqualTo("none");
      assertThat(j.exists("fc:g")).isFalse();
      assertThat(call(j, "BF.ADD", "fc:g", "now a Bloom key")).isEqualTo(1L);
      assertThat(j.del("fc:g", "fc:s")).isEqualTo(2L);
    }
  }

  @Test
  void dropRemovesTheKeyAndItsReplicationSlot() {
    try (Jedis j = new Jedis("127.0.0.1", server.port(), READ_TIMEOUT_MILLIS)) {
      call(j, "GUARD.RESERVE", "gone", "pg", "0.01", "1000");
      call(j, "GUARD.ADD", "gone", "x");
      String slot = infoOf(j, "gone").get("replication_slot").toString();
      assertThat(slot).startsWith("bloomery_g");
      assertThat(call(j, "GUARD.DROP", "gone")).isEqualTo("OK".getBytes());
      assertThatThrownBy(() -> call(j, "GUARD.INFO", "gone")).hasMessageContaining("no such guarded key");
      assertThat(GuardFixtures.psql(url, "SELECT count(*) FROM pg_replication_slots WHERE slot_name = '" + slot
          + "' AND database = current_database()").strip()).isEqualTo("0");
    }
  }

  /** Concatenates pipelined commands. */
  static final class ByteArrayBuilder {
    private final java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();

    void add(byte[] b) {
      out.writeBytes(b);
    }

    byte[] bytes() {
      return out.toByteArray();
    }
  }
}
