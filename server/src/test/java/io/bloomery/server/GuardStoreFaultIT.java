package io.bloomery.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomery.guard.PostgresCluster;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.exceptions.JedisDataException;

/**
 * PostgreSQL stopped with {@code pg_ctl -m immediate} while clients add: the guarded key answers STOREDOWN naming
 * its store (never 0/1), Bloom keys and the server keep answering, the key recovers by itself after the restart,
 * and no item is ever answered new twice. Then a server restart with the same directory reopens the key from its
 * snapshot and watermark.
 */
class GuardStoreFaultIT {
  @TempDir Path dir;

  static Object call(Jedis j, String... args) {
    return j.sendCommand(GuardCommandsIT.cmd(args[0]), java.util.Arrays.copyOfRange(args, 1, args.length));
  }

  @Test
  void storeDownAnswersStoredownAndRecoversWithoutAnsweringNewTwice() throws Exception {
    try (PostgresCluster pg = PostgresCluster.startNew()) {
      String url = pg.createDatabase();
      Map<String, Integer> news = new HashMap<>();
      List<String> storedown = new ArrayList<>();
      try (BloomeryServer server = GuardFixtures.server("--store", "main=" + url, "--guard-timeout", "500",
          "--appendonly", "yes", "--dir", dir.toString());
          Jedis j = new Jedis("127.0.0.1", server.port(), 30_000)) {
        call(j, "GUARD.RESERVE", "k", "main", "0.01", "10000");
        call(j, "BF.RESERVE", "plain", "0.01", "1000");
        for (int i = 0; i < 200; i++) {
          add(j, "item-" + i, news, storedown);
        }
        pg.stopImmediately();
        for (int i = 150; i < 175; i++) { // overlaps the items added before the fault
          add(j, "item-" + i, news, storedown);
          if (i % 5 == 0) {
            assertThat(call(j, "BF.ADD", "plain", "x" + i)).isEqualTo(1L); // other keys keep working
          }
        }
        assertThat(storedown).isNotEmpty();
        assertThat(storedown).allMatch(e -> e.startsWith("STOREDOWN store 'main' is unavailable: "));
        try {
          call(j, "GUARD.EXISTS", "k", "item-1");
        } catch (JedisDataException e) {
          assertThat(e.getMessage()).startsWith("STOREDOWN store 'main'");
        }
        assertThat(((Number) GuardCommandsIT.infoOf(j, "k").get("insert_failures")).longValue()).isPositive();
        pg.start();
        // recovers by itself: retry until the store answers again, then every item once more
        boolean back = false;
        for (int attempt = 0; attempt < 100 && !back; attempt++) {
          try {
            call(j, "GUARD.ADD", "k", "probe");
            back = true;
          } catch (JedisDataException e) {
            assertThat(e.getMessage()).startsWith("STOREDOWN");
            Thread.sleep(200);
          }
        }
        assertThat(back).as("guarded key answers again after the store restarted").isTrue();
        storedown.clear();
        for (int i = 0; i < 300; i++) {
          add(j, "item-" + i, news, storedown);
        }
        assertThat(storedown).isEmpty();
        assertThat(GuardCommandsIT.infoOf(j, "k").get("state")).isEqualTo("ready");
      }
      for (int i = 0; i < 300; i++) {
        assertThat(news.getOrDefault("item-" + i, 0)).as("item-%d answered new", i).isEqualTo(1);
      }

      // restart with the same directory: the key is listed and reopened from its snapshot + watermark
      try (BloomeryServer server = GuardFixtures.server("--store", "main=" + url, "--appendonly", "yes", "--dir",
          dir.toString()); Jedis j = new Jedis("127.0.0.1", server.port(), 30_000)) {
        Map<String, Object> info = Map.of();
        for (int i = 0; i < 200 && !"ready".equals(info.get("state")); i++) {
          info = GuardCommandsIT.infoOf(j, "k");
          Thread.sleep(50);
        }
        assertThat(info.get("state")).isEqualTo("ready");
        assertThat(info.get("recovery").toString()).contains("replayed");
        assertThat(call(j, "GUARD.ADD", "k", "item-5")).isEqualTo(0L);
        assertThat(call(j, "GUARD.ADD", "k", "item-300")).isEqualTo(1L);
        assertThat(call(j, "GUARD.EXISTS", "k", "item-7")).isEqualTo(List.of(1L, 1L, 1L));
      }
    }
  }

  @Test
  void aSlowStoreAnswersStoredownWithinTheTimeoutAndTheAddLandsOnce() throws Exception {
    String url = PostgresCluster.shared().createDatabase();
    try (BloomeryServer server = GuardFixtures.server("--store", "slow=" + url, "--guard-timeout", "300",
        "--guard-statement-timeout", "600000");
        Jedis j = new Jedis("127.0.0.1", server.port(), 30_000)) {
      call(j, "GUARD.RESERVE", "s", "slow", "0.01", "1000");
      call(j, "GUARD.RESERVE", "other", "slow", "0.01", "1000");
      String table = "bloomery_seen_" + io.bloomery.server.command.guard.GuardSetsAccess.keyId("s");
      String key = "s";
      // another session holds the key's table locked for 3 s: the store is up but does not answer
      Process locker = new ProcessBuilder("/usr/lib/postgresql/15/bin/psql", "-X", "-q", "-h", "127.0.0.1", "-p",
          String.valueOf(PostgresCluster.shared().port()), "-U", "postgres", "-d",
          url.substring(url.lastIndexOf('/') + 1, url.indexOf('?')), "-c",
          "BEGIN; LOCK TABLE " + table + " IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(3); COMMIT;")
          .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
      try {
        Thread.sleep(500);
        String error = null;
        try {
          call(j, "GUARD.ADD", key, "during-lock");
        } catch (JedisDataException e) {
          error = e.getMessage();
        }
        assertThat(error).isEqualTo("STOREDOWN store 'slow' is unavailable: no answer within 300 ms (if the add"
            + " commits later, the next GUARD.ADD of the item answers 1; a retry is safe)");
        assertThat(call(j, "PING")).isEqualTo("PONG".getBytes()); // the connection and server keep answering
        assertThat(call(j, "GUARD.ADD", "other", "x")).isEqualTo(1L); // another key on the same store too
      } finally {
        assertThat(locker.waitFor(30, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
      }
      // the first attempt commits once the lock is gone, unacknowledged: the retry answers 1, then 0
      long answer = -1;
      for (int i = 0; i < 50 && answer < 0; i++) {
        try {
          answer = (Long) call(j, "GUARD.ADD", key, "during-lock");
        } catch (JedisDataException e) {
          Thread.sleep(100);
        }
      }
      assertThat(answer).isEqualTo(1L);
      assertThat(GuardFixtures.psql(url, "SELECT count(*) FROM " + table + " WHERE item = 'during-lock'::bytea")
          .strip()).isEqualTo("1");
      assertThat(call(j, "GUARD.ADD", key, "during-lock")).isEqualTo(0L);
    }
  }

  /**
   * Many clients each sending single GUARD.ADDs (so that the server groups them into shared transactions), and
   * PostgreSQL stopped with {@code -m immediate} while groups are committing: each reply is 1, 0 or STOREDOWN; every
   * item answered 1 is in the store after the restart (nothing was acknowledged before its group committed); and
   * once each client has added its items again, every distinct item was answered 1 exactly once across all clients,
   * the ones whose group failed included.
   */
  @Test
  void aStoreStoppedWhileGroupsCommitFailsTheirClientsAndAcknowledgesNoRowThatDidNotCommit() throws Exception {
    int clients = 16;
    int perClient = 120;
    try (PostgresCluster pg = PostgresCluster.startNew()) {
      String url = pg.createDatabase();
      Map<String, Integer> news = new java.util.concurrent.ConcurrentHashMap<>();
      List<String> storedown = java.util.Collections.synchronizedList(new ArrayList<>());
      java.util.concurrent.atomic.AtomicInteger answered = new java.util.concurrent.atomic.AtomicInteger();
      List<String> late = java.util.Collections.synchronizedList(new ArrayList<>());
      try (BloomeryServer server = GuardFixtures.server("--store", "main=" + url, "--guard-timeout", "500");
          Jedis j = new Jedis("127.0.0.1", server.port(), 30_000)) {
        call(j, "GUARD.RESERVE", "k", "main", "0.01", "100000");
        String table = "bloomery_seen_" + io.bloomery.server.command.guard.GuardSetsAccess.keyId("k");
        try (var pool = java.util.concurrent.Executors.newFixedThreadPool(clients)) {
          List<java.util.concurrent.Future<?>> running = new ArrayList<>();
          for (int c = 0; c < clients; c++) {
            List<String> items = itemsOf(c, perClient);
            int id = c;
            running.add(pool.submit(() -> {
              List<String> mine = new ArrayList<>();
              try (Jedis client = new Jedis("127.0.0.1", server.port(), 30_000)) {
                // Until the store is seen down three times (the rest waits for the second round): a client that
                // runs out of its items before the stop takes effect goes on with fresh ones, so the fault always
                // lands while adds are in flight, however fast this machine is.
                for (int n = 0; mine.size() < 3 && n < 50 * perClient; n++) {
                  String item = n < items.size() ? items.get(n) : "late-" + id + "-" + n;
                  if (n >= items.size()) {
                    late.add(item);
                  }
                  add(client, item, news, mine);
                  answered.incrementAndGet();
                }
              }
              storedown.addAll(mine);
              return null;
            }));
          }
          Deadline.until(() -> answered.get() >= clients * perClient / 4, "a quarter of the adds answered");
          pg.stopImmediately();
          for (java.util.concurrent.Future<?> f : running) {
            f.get();
          }
        }
        assertThat(storedown).as("adds answered while the store was down").isNotEmpty();
        assertThat(storedown).allMatch(e -> e.startsWith("STOREDOWN store 'main' is unavailable: "));
        assertThat(((Number) GuardCommandsIT.infoOf(j, "k").get("group_commit_rows")).longValue())
            .as("rows committed in groups").isGreaterThan(((Number) GuardCommandsIT.infoOf(j, "k")
                .get("group_commits")).longValue());
        pg.start();
        Map<String, Integer> acknowledgedBefore = Map.copyOf(news);
        String stored = GuardFixtures.psql(url, "SELECT count(*) FROM " + table + " WHERE convert_from(item, 'UTF8')"
            + " = ANY('{" + String.join(",", acknowledgedBefore.keySet()) + "}'::text[])").strip();
        assertThat(Integer.parseInt(stored)).as("items answered 1 before the fault that are in the store")
            .isEqualTo(acknowledgedBefore.size());
        Deadline.until(() -> {
          try {
            call(j, "GUARD.ADD", "k", "probe");
            return true;
          } catch (JedisDataException e) {
            return false;
          }
        }, "the guarded key to answer again");
        storedown.clear();
        for (int c = 0; c < clients; c++) {
          for (String item : itemsOf(c, perClient)) {
            add(j, item, news, storedown);
          }
        }
        for (String item : late) {
          add(j, item, news, storedown);
        }
        assertThat(storedown).isEmpty();
      }
      java.util.Set<String> distinct = new java.util.HashSet<>();
      for (int c = 0; c < clients; c++) {
        distinct.addAll(itemsOf(c, perClient));
      }
      distinct.addAll(late);
      for (String item : distinct) {
        assertThat(news.getOrDefault(item, 0)).as("%s answered new", item).isEqualTo(1);
      }
      assertThat(news.keySet()).containsAll(distinct);
    }
  }

  /** Client c's items: its own, and every third one an item that every client adds. */
  private static List<String> itemsOf(int c, int perClient) {
    List<String> items = new ArrayList<>();
    for (int i = 0; i < perClient; i++) {
      items.add(i % 3 == 0 ? "shared-" + i : "own-" + c + "-" + i);
    }
    return items;
  }

  /** Polls a condition every 50 ms for up to 120 s (a deadline, not a timing assertion). */
  private static final class Deadline {
    static void until(java.util.function.BooleanSupplier condition, String what) throws InterruptedException {
      long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(120);
      while (!condition.getAsBoolean()) {
        if (System.nanoTime() > deadline) {
          throw new AssertionError("timed out waiting for " + what);
        }
        Thread.sleep(50);
      }
    }
  }

  static void add(Jedis j, String item, Map<String, Integer> news, List<String> storedown) {
    try {
      Object r = call(j, "GUARD.ADD", "k", item);
      assertThat(r).isIn(0L, 1L);
      if (r.equals(1L)) {
        news.merge(item, 1, Integer::sum);
      }
    } catch (JedisDataException e) {
      storedown.add(e.getMessage());
    }
  }
}
