package io.bloomery.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomery.guard.PostgresCluster;
import io.bloomery.server.command.guard.GuardSetsAccess;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.Map;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.exceptions.JedisDataException;

/**
 * GUARD.RESERVE, REBUILD and DROP are bounded by --guard-timeout like the adds and lookups: a store made slow by a
 * lock that another (real) connection holds answers STOREDOWN naming the store, the connection and the server keep
 * answering, and the work finishes by itself once the lock goes. PostgreSQL's statement_timeout (from
 * --guard-statement-timeout) ends a blocked add's statement instead of leaving it waiting; a stopped cluster answers
 * STOREDOWN to every GUARD command, RESERVE included.
 */
class GuardBoundsIT {
  private static Object call(Jedis j, String... args) {
    return GuardStoreFaultIT.call(j, args);
  }

  private static Connection lock(String url, String table) throws Exception {
    Connection c = DriverManager.getConnection(url);
    c.setAutoCommit(false);
    try (Statement st = c.createStatement()) {
      st.execute("LOCK TABLE " + table + " IN ACCESS EXCLUSIVE MODE");
    }
    return c;
  }

  private static void assertStoredown(Jedis j, String... args) {
    assertThatThrownBy(() -> call(j, args)).as(String.join(" ", args)).isInstanceOf(JedisDataException.class)
        .hasMessageStartingWith("STOREDOWN store 'main' is unavailable: ");
  }

  @Test
  void reserveAndRebuildBehindALockAnswerStoredownAndFinishWhenItGoes() throws Exception {
    PostgresCluster pg = PostgresCluster.shared();
    String url = pg.createDatabase();
    GuardFixtures.psql(url, "CREATE TABLE links (id bigserial PRIMARY KEY, url text NOT NULL);"
        + " INSERT INTO links (url) SELECT 'https://example.org/' || g FROM generate_series(1, 100) g");
    try (BloomeryServer server = GuardFixtures.server("--store", "main=" + url, "--store", "src=" + url,
        "--store-table", "src=links.url", "--guard-timeout", "300", "--guard-statement-timeout", "1000", "--guard-build-timeout", "500");
        Jedis j = new Jedis("127.0.0.1", server.port(), 30_000)) {
      // RESERVE on a source whose table is locked: the build's scan waits, the reply does not
      try (Connection locker = lock(url, "links")) {
        assertThatThrownBy(() -> call(j, "GUARD.RESERVE", "follow", "src", "0.01", "1000"))
            .isInstanceOf(JedisDataException.class)
            .hasMessageStartingWith("STOREDOWN store 'src' is unavailable: no answer within 500 ms (the build goes on");
        assertThat(j.ping()).isEqualTo("PONG");
        assertThat(GuardCommandsIT.infoOf(j, "follow").get("state")).isEqualTo("building");
      }
      awaitState(j, "follow", "ready");
      assertThat(call(j, "GUARD.EXISTS", "follow", "https://example.org/7")).isEqualTo(java.util.List.of(1L, 1L, 1L));

      reserve(j, "k");
      assertThat(call(j, "GUARD.ADD", "k", "a")).isEqualTo(1L);
      String table = "bloomery_seen_" + GuardSetsAccess.keyId("k");
      long generation = (Long) GuardCommandsIT.infoOf(j, "k").get("generation");
      try (Connection locker = lock(url, table)) {
        // a blocked add answers STOREDOWN on the guard timeout, and statement_timeout ends its statement
        assertStoredown(j, "GUARD.ADD", "k", "b");
        awaitNoServerStatementWaiting(url);
        assertStoredown(j, "GUARD.REBUILD", "k"); // its scan (exempt from statement_timeout) waits for the lock
        assertThat(j.ping()).isEqualTo("PONG");
      }
      for (int i = 0; i < 600 && (Long) GuardCommandsIT.infoOf(j, "k").get("generation") == generation; i++) {
        Thread.sleep(50);
      }
      assertThat((Long) GuardCommandsIT.infoOf(j, "k").get("generation")).isEqualTo(generation + 1);
      assertThat(call(j, "GUARD.ADD", "k", "b")).isEqualTo(1L); // its statement was cancelled: nothing had landed
      assertThat(call(j, "GUARD.ADD", "k", "a")).isEqualTo(0L);
    }
  }

  /** Waits until no backend of this database waits on a lock except the locker's (the server's were cancelled). */
  private static void awaitNoServerStatementWaiting(String url) throws InterruptedException {
    for (int i = 0; i < 600; i++) {
      String n = GuardFixtures.psql(url, "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
          + " AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()").strip();
      if (n.equals("0")) {
        return;
      }
      Thread.sleep(50);
    }
    throw new AssertionError("the server's blocked statement was never cancelled by statement_timeout");
  }

  /** GUARD.RESERVE on store main; a build slower than the build timeout is waited for through GUARD.INFO. */
  private static void reserve(Jedis j, String key) throws InterruptedException {
    try {
      call(j, "GUARD.RESERVE", key, "main", "0.01", "1000");
    } catch (JedisDataException e) {
      assertThat(e.getMessage()).contains("(the build goes on;");
      awaitState(j, key, "ready");
    }
  }

  private static void awaitState(Jedis j, String key, String state) throws InterruptedException {
    for (int i = 0; i < 600; i++) {
      Map<String, Object> info = GuardCommandsIT.infoOf(j, key);
      if (state.equals(info.get("state"))) {
        return;
      }
      Thread.sleep(50);
    }
    throw new AssertionError(key + " never reached state " + state);
  }

  @Test
  void aStoppedClusterAnswersStoredownToEveryGuardCommand() throws Exception {
    try (PostgresCluster pg = PostgresCluster.startNew()) {
      String url = pg.createDatabase();
      try (BloomeryServer server = GuardFixtures.server("--store", "main=" + url, "--guard-timeout", "1000", "--guard-build-timeout", "2000");
          Jedis j = new Jedis("127.0.0.1", server.port(), 30_000)) {
        reserve(j, "k");
        assertThat(call(j, "GUARD.ADD", "k", "a")).isEqualTo(1L);
        pg.stopImmediately();
        assertStoredown(j, "GUARD.RESERVE", "other", "main", "0.01", "1000");
        assertStoredown(j, "GUARD.ADD", "k", "b");
        assertStoredown(j, "GUARD.EXISTS", "k", "a");
        assertStoredown(j, "GUARD.REBUILD", "k");
        assertThat(j.ping()).isEqualTo("PONG");
        pg.start();
        Object added = null;
        for (int i = 0; i < 600 && added == null; i++) {
          try {
            added = call(j, "GUARD.ADD", "k", "b");
          } catch (JedisDataException e) {
            assertThat(e.getMessage()).startsWith("STOREDOWN store 'main'");
            Thread.sleep(50);
          }
        }
        assertThat(added).isEqualTo(1L);
      }
    }
  }
}
