package io.bloomery.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.bloomery.guard.PostgresCluster;
import io.bloomery.server.command.guard.GuardSetsAccess;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.exceptions.JedisDataException;

/**
 * Replication slots the server creates never outlive their guarded key: a GUARD.RESERVE that fails after its slot
 * exists drops it, a GUARD.DROP while the key is still being built drops the slot once the build ends, and GUARD.SLOTS
 * lists (and INFO counts) the slots of the server's naming that no key uses, which GUARD.SLOTS DROP drops.
 */
class GuardSlotsIT {
  @TempDir Path dir;

  private static Object call(Jedis j, String... args) {
    return GuardStoreFaultIT.call(j, args);
  }

  private static String slotOf(String key) {
    return "bloomery_g" + GuardSetsAccess.keyId(key);
  }

  /**
   * The slots named {@code slot} of the URL's database: slot names are cluster-wide, and other tests on the shared
   * cluster guard keys of the same names in databases of their own.
   */
  private static long slotCount(String url, String slot) {
    return Long.parseLong(GuardFixtures.psql(url, "SELECT count(*) FROM pg_replication_slots WHERE slot_name = '"
        + slot + "' AND database = current_database()").strip());
  }

  @Test
  void aReserveThatFailsAfterCreatingItsSlotDropsIt() throws Exception {
    String url = PostgresCluster.shared().createDatabase();
    // the key's snapshot path is taken by a directory that is not empty: the build succeeds (slot created, rows
    // read), then writing the first snapshot fails
    Path blocker = dir.resolve("guard-" + GuardSetsAccess.keyId("slots-failed-reserve") + ".snapshot");
    Files.createDirectories(blocker.resolve("occupied"));
    try (BloomeryServer server = GuardFixtures.server("--store", "pg=" + url, "--appendonly", "yes",
        "--dir", dir.toString());
        Jedis j = new Jedis("127.0.0.1", server.port(), 30_000)) {
      Throwable failure = catchThrowable(() -> call(j, "GUARD.RESERVE", "slots-failed-reserve", "pg", "0.01", "1000"));
      assertThat(slotCount(url, slotOf("slots-failed-reserve"))).as("no slot retains WAL for the failed reserve").isZero();
      assertThat(failure).isInstanceOf(JedisDataException.class)
          .hasMessageStartingWith("ERR cannot write guard snapshot")
          .hasMessageNotContaining("internal error");
      assertThatThrownBy(() -> call(j, "GUARD.DROP", "slots-failed-reserve")).hasMessageContaining("no such guarded key");
      assertThat(slots(j)).isEmpty();
      assertThat(info(j).get("guard_orphan_slots")).isEqualTo("0");
      assertThat(Long.parseLong(info(j).get("guard_filter_bytes"))).isZero();

      // once the path is free the same reserve succeeds
      Files.delete(blocker.resolve("occupied"));
      Files.delete(blocker);
      assertThat(call(j, "GUARD.RESERVE", "slots-failed-reserve", "pg", "0.01", "1000")).isEqualTo("OK".getBytes());
      assertThat(slotCount(url, slotOf("slots-failed-reserve"))).isEqualTo(1);
      assertThat(call(j, "GUARD.DROP", "slots-failed-reserve")).isEqualTo("OK".getBytes());
      assertThat(slotCount(url, slotOf("slots-failed-reserve"))).isZero();
    }
  }

  @Test
  void aDropWhileTheKeyIsBuiltDropsTheSlotOnceTheBuildEnds() throws Exception {
    String url = PostgresCluster.shared().createDatabase();
    GuardFixtures.psql(url, "CREATE TABLE links (id bigserial PRIMARY KEY, url text NOT NULL);"
        + " INSERT INTO links (url) SELECT 'https://example.org/' || g FROM generate_series(1, 100) g");
    try (BloomeryServer server = GuardFixtures.server("--store", "src=" + url, "--store-table", "src=links.url",
        "--guard-build-timeout", "500");
        Jedis j = new Jedis("127.0.0.1", server.port(), 30_000)) {
      try (Connection locker = DriverManager.getConnection(url)) {
        locker.setAutoCommit(false);
        try (Statement st = locker.createStatement()) {
          st.execute("LOCK TABLE links IN ACCESS EXCLUSIVE MODE");
        }
        assertThatThrownBy(() -> call(j, "GUARD.RESERVE", "slots-drop-building", "src", "0.01", "1000"))
            .hasMessageStartingWith("STOREDOWN store 'src' is unavailable: no answer within 500 ms (the build goes on");
        assertThat(call(j, "GUARD.DROP", "slots-drop-building")).isEqualTo("OK".getBytes());
        assertThatThrownBy(() -> call(j, "GUARD.INFO", "slots-drop-building")).hasMessageContaining("no such guarded key");
      }
      // the build goes on once the lock goes and creates its slot, then sees the key dropped: it closes the guard
      // (every connection of it to the database) and drops the slot
      long deadline = System.currentTimeMillis() + 60_000;
      while (System.currentTimeMillis() < deadline && (connectionsOtherThanPsql(url) > 0
          || slotCount(url, slotOf("slots-drop-building")) > 0)) {
        Thread.sleep(100);
      }
      assertThat(slotCount(url, slotOf("slots-drop-building"))).as("the dropped key's slot is gone").isZero();
      assertThat(connectionsOtherThanPsql(url)).as("the dropped key's guard is closed").isZero();
      assertThat(slots(j)).isEmpty();
      assertThat(Long.parseLong(info(j).get("guard_filter_bytes"))).isZero();
    }
  }

  /** Connections to the URL's database from anything but psql (the server's store pool and replication). */
  private static long connectionsOtherThanPsql(String url) {
    return Long.parseLong(GuardFixtures.psql(url, "SELECT count(*) FROM pg_stat_activity WHERE datname ="
        + " current_database() AND application_name <> 'psql'").strip());
  }

  @Test
  void slotsListsTheServersSlotsAndDropsOnlyOrphans() throws Exception {
    String url = PostgresCluster.shared().createDatabase();
    String orphan = "bloomery_g0123456789abcdef";
    // an orphan as a crashed server or an older version leaves it, and a slot of someone else's naming
    GuardFixtures.psql(url, "SELECT pg_create_logical_replication_slot('" + orphan + "', 'pgoutput');"
        + " SELECT pg_create_logical_replication_slot('someone_elses', 'pgoutput')");
    try (BloomeryServer server = GuardFixtures.server("--store", "pg=" + url, "--store", "lite=sqlite:"
        + dir.resolve("lite.db"));
        BloomeryServer other = GuardFixtures.server("--store", "pg=" + url);
        Jedis j = new Jedis("127.0.0.1", server.port(), 30_000);
        Jedis o = new Jedis("127.0.0.1", other.port(), 30_000)) {
      awaitInfo(j, "guard_orphan_slots", "1"); // counted by the check after start
      assertThat(call(j, "GUARD.RESERVE", "slots-live", "pg", "0.01", "1000")).isEqualTo("OK".getBytes());
      // another server on the same database: its streaming key's slot is an orphan to this server, and in use
      assertThat(call(o, "GUARD.RESERVE", "slots-theirs", "pg", "0.01", "1000")).isEqualTo("OK".getBytes());
      awaitStreaming(o, "slots-theirs");

      Map<String, Map<String, Object>> bySlot = new LinkedHashMap<>();
      for (Map<String, Object> row : slots(j)) {
        bySlot.put((String) row.get("slot"), row);
      }
      assertThat(bySlot.keySet()).containsExactly(orphan, slotOf("slots-live"), slotOf("slots-theirs"));
      assertThat(bySlot.get(orphan)).containsEntry("store", "pg").containsEntry("key", null)
          .containsEntry("orphan", 1L).containsEntry("active", 0L);
      assertThat((Long) bySlot.get(orphan).get("retained_wal_bytes")).isGreaterThanOrEqualTo(0L);
      assertThat(bySlot.get(slotOf("slots-live"))).containsEntry("key", "slots-live").containsEntry("orphan", 0L);
      assertThat(bySlot.get(slotOf("slots-theirs"))).containsEntry("orphan", 1L).containsEntry("active", 1L);
      assertThat(info(j).get("guard_orphan_slots")).isEqualTo("2");
      assertThat(slots(j, "pg")).hasSize(3);

      assertThatThrownBy(() -> call(j, "GUARD.SLOTS", "DROP", "pg", slotOf("slots-live")))
          .hasMessage("ERR replication slot " + slotOf("slots-live") + " belongs to guarded key 'slots-live': GUARD.DROP the"
              + " key to drop it");
      assertThatThrownBy(() -> call(j, "GUARD.SLOTS", "DROP", "pg", "someone_elses"))
          .hasMessageStartingWith("ERR 'someone_elses' is not a slot this server creates");
      assertThatThrownBy(() -> call(j, "GUARD.SLOTS", "DROP", "pg", slotOf("slots-theirs")))
          .hasMessageStartingWith("ERR replication slot " + slotOf("slots-theirs") + " is in use");
      assertThatThrownBy(() -> call(j, "GUARD.SLOTS", "DROP", "lite", orphan))
          .hasMessage("ERR store 'lite' is a SQLite file: it has no replication slots");
      assertThatThrownBy(() -> call(j, "GUARD.SLOTS", "DROP", "nope", orphan))
          .hasMessage("ERR no store 'nope' is declared");
      assertThatThrownBy(() -> call(j, "GUARD.SLOTS", "pg", "extra"))
          .hasMessageStartingWith("ERR syntax error");
      assertThat(slotCount(url, slotOf("slots-live")) + slotCount(url, slotOf("slots-theirs"))).isEqualTo(2);

      assertThat(call(j, "GUARD.SLOTS", "DROP", "pg", orphan)).isEqualTo("OK".getBytes());
      assertThat(slotCount(url, orphan)).isZero();
      assertThat(slotCount(url, "someone_elses")).isEqualTo(1);
      assertThat(info(j).get("guard_orphan_slots")).isEqualTo("1");
      assertThatThrownBy(() -> call(j, "GUARD.SLOTS", "DROP", "pg", orphan))
          .hasMessage("ERR store 'pg' has no replication slot " + orphan);
      assertThat(call(j, "GUARD.EXISTS", "slots-live", "x")).isEqualTo(List.of(0L, 0L, 0L));

      List<?> spec = (List<?>) ((List<?>) call(j, "COMMAND", "INFO", "guard.slots")).get(0);
      assertThat(new String((byte[]) spec.get(0))).isEqualTo("guard.slots");
      assertThat(spec.get(1)).as("arity").isEqualTo(-1L);
      assertThat(List.copyOf(spec.subList(3, 6))).as("no key positions").isEqualTo(List.of(0L, 0L, 0L));
      call(j, "MULTI");
      assertThatThrownBy(() -> call(j, "GUARD.SLOTS")).hasMessageContaining("not allowed inside a transaction");
      call(j, "DISCARD");
    } finally {
      GuardFixtures.psql(url, "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots"
          + " WHERE slot_name = 'someone_elses'");
    }
  }

  /** GUARD.SLOTS over RESP2: each row a flat field/value array, turned into a map. */
  private static List<Map<String, Object>> slots(Jedis j, String... store) {
    String[] args = new String[store.length + 1];
    args[0] = "GUARD.SLOTS";
    System.arraycopy(store, 0, args, 1, store.length);
    List<Map<String, Object>> out = new ArrayList<>();
    for (Object row : (List<?>) call(j, args)) {
      List<?> flat = (List<?>) row;
      Map<String, Object> m = new LinkedHashMap<>();
      for (int i = 0; i < flat.size(); i += 2) {
        Object v = flat.get(i + 1);
        m.put(new String((byte[]) flat.get(i)), v instanceof byte[] b ? new String(b) : v);
      }
      out.add(m);
    }
    return out;
  }

  private static Map<String, String> info(Jedis j) {
    Map<String, String> m = new java.util.HashMap<>();
    for (String line : j.info("guard").split("\r\n")) {
      int colon = line.indexOf(':');
      if (colon > 0) {
        m.put(line.substring(0, colon), line.substring(colon + 1));
      }
    }
    return m;
  }

  private static void awaitInfo(Jedis j, String field, String value) throws InterruptedException {
    for (int i = 0; i < 600 && !value.equals(info(j).get(field)); i++) {
      Thread.sleep(50);
    }
    assertThat(info(j).get(field)).as(field).isEqualTo(value);
  }

  private static void awaitStreaming(Jedis j, String key) throws InterruptedException {
    for (int i = 0; i < 600 && !"streaming".equals(GuardCommandsIT.infoOf(j, key).get("replication_state")); i++) {
      Thread.sleep(50);
    }
    assertThat(GuardCommandsIT.infoOf(j, key).get("replication_state")).isEqualTo("streaming");
  }
}
