package io.bloomery.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomery.guard.PostgresCluster;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import redis.clients.jedis.Jedis;

/**
 * The "maybe"s of concurrent GUARD.EXISTS / GUARD.MEXISTS calls of several connections on one key are confirmed
 * together in one store query: against a real PostgreSQL (and SQLite, which catches up with other writers before
 * a negative is trusted), with known duplicates, every verdict must be exact however the lookups were merged.
 */
class GuardCoalescedLookupIT {
  @TempDir Path tmp;

  static String seen(int i) {
    return "https://crawl.example.com/seen/" + i + "?page=" + (i % 9);
  }

  static String fresh(int i) {
    return "https://crawl.example.com/new/" + i + "#" + (i % 13);
  }

  @Test
  void concurrentLookupsOfManyConnectionsAreExact() throws Exception {
    long seed = System.nanoTime();
    System.out.println("GuardCoalescedLookupIT seed=" + seed);
    String url = PostgresCluster.shared().createDatabase();
    try (BloomeryServer server = GuardFixtures.server("--store", "pg=" + url, "--store",
        "lite=sqlite:" + tmp.resolve("guard.db"), "--guard-timeout", "60000")) {
      GuardCommandsIT.server = server;
      for (String store : List.of("pg", "lite")) {
        String key = "links-" + store;
        try (Jedis j = new Jedis("127.0.0.1", server.port(), 60_000)) {
          GuardCommandsIT.call(j, "GUARD.RESERVE", key, store, "0.05", "4000");
          List<String> adds = new ArrayList<>(List.of("GUARD.MADD", key));
          for (int i = 0; i < 1000; i++) {
            adds.add(seen(i));
          }
          GuardCommandsIT.call(j, adds.toArray(String[]::new));
        }
        if (store.equals("pg")) {
          GuardCommandsIT.awaitStreaming(key);
        }
        Random random = new Random(seed);
        int connections = 8;
        ExecutorService pool = Executors.newFixedThreadPool(connections);
        try {
          List<CompletableFuture<Integer>> done = new ArrayList<>();
          for (int c = 0; c < connections; c++) {
            long clientSeed = random.nextLong();
            done.add(CompletableFuture.supplyAsync(() -> lookups(server.port(), key, clientSeed), pool));
          }
          int checked = 0;
          for (CompletableFuture<Integer> f : done) {
            checked += f.get(120, TimeUnit.SECONDS);
          }
          try (Jedis j = new Jedis("127.0.0.1", server.port(), 60_000)) {
            Map<String, Object> info = GuardCommandsIT.infoOf(j, key);
            assertThat((Long) info.get("confirm_lookups")).as("seed %d", seed).isPositive();
            assertThat((Long) info.get("confirm_queries")).as("seed %d", seed)
                .isBetween(1L, (Long) info.get("confirm_lookups"));
            assertThat(checked).isEqualTo(connections * 40 * 51);
          }
        } finally {
          pool.shutdownNow();
        }
      }
    }
  }

  /**
   * One connection's 40 rounds: a GUARD.MEXISTS of 50 links (seen and new, some repeated, some asked by other
   * connections at the same time) and a GUARD.EXISTS; every verdict is checked. Returns how many were.
   */
  private static int lookups(int port, String key, long seed) {
    Random r = new Random(seed);
    int checked = 0;
    try (Jedis j = new Jedis("127.0.0.1", port, 60_000)) {
      for (int round = 0; round < 40; round++) {
        List<String> links = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
          links.add(r.nextInt(4) == 0 ? seen(r.nextInt(1000)) : fresh(r.nextInt(3000)));
        }
        List<String> args = new ArrayList<>(List.of("GUARD.MEXISTS", key));
        args.addAll(links);
        List<?> verdicts = (List<?>) GuardCommandsIT.call(j, args.toArray(String[]::new));
        assertThat(verdicts).as("seed %d", seed).hasSize(links.size());
        for (int i = 0; i < links.size(); i++) {
          assertExact(links.get(i), (List<?>) verdicts.get(i), seed);
          checked++;
        }
        String one = r.nextBoolean() ? seen(r.nextInt(1000)) : fresh(r.nextInt(3000));
        assertExact(one, (List<?>) GuardCommandsIT.call(j, "GUARD.EXISTS", key, one), seed);
        checked++;
      }
    }
    return checked;
  }

  private static void assertExact(String link, List<?> verdict, long seed) {
    if (link.contains("/seen/")) {
      assertThat(verdict).as("%s (seed %d)", link, seed).isEqualTo(List.of(1L, 1L, 1L));
    } else {
      assertThat(verdict).as("%s (seed %d)", link, seed).isIn(List.of(0L, 0L, 0L), List.of(1L, 1L, 0L));
    }
  }

  /**
   * Deterministic merging: while a psql-style session holds the key's table locked, the first lookups' queries
   * wait for it and the next connections' lookups queue behind them; once the lock is gone, one query answers
   * every queued lookup, each exactly.
   */
  @Test
  void lookupsQueuedBehindABusyStoreShareOneQuery() throws Exception {
    String url = PostgresCluster.shared().createDatabase();
    try (BloomeryServer server = GuardFixtures.server("--store", "pg=" + url, "--guard-timeout", "60000")) {
      GuardCommandsIT.server = server;
      String key = "busy";
      try (Jedis j = new Jedis("127.0.0.1", server.port(), 60_000)) {
        GuardCommandsIT.call(j, "GUARD.RESERVE", key, "pg", "0.01", "1000");
        GuardCommandsIT.call(j, "GUARD.MADD", key, seen(1), seen(2), seen(3));
      }
      GuardCommandsIT.awaitStreaming(key);
      String table = GuardFixtures.psql(url, "SELECT tablename FROM pg_tables WHERE tablename LIKE"
          + " 'bloomery_seen_%' AND tablename !~ '_(pending|replies)$'").strip();
      int lookups = 10;
      ExecutorService pool = Executors.newFixedThreadPool(lookups);
      try (Connection lock = DriverManager.getConnection(url); Statement st = lock.createStatement();
          Jedis j = new Jedis("127.0.0.1", server.port(), 60_000)) {
        lock.setAutoCommit(false);
        st.execute("LOCK TABLE " + table + " IN ACCESS EXCLUSIVE MODE");
        List<CompletableFuture<List<?>>> replies = new ArrayList<>();
        for (int c = 0; c < lookups; c++) {
          int n = c;
          replies.add(CompletableFuture.supplyAsync(() -> {
            try (Jedis client = new Jedis("127.0.0.1", server.port(), 60_000)) {
              return (List<?>) GuardCommandsIT.call(client, "GUARD.MEXISTS", key, seen(1 + n % 3), fresh(n),
                  seen(2));
            }
          }, pool));
        }
        // the (at most two) queries in flight wait for the lock; the other lookups wait in the key's queue
        for (int i = 0; i < 1200 && (Long) GuardCommandsIT.infoOf(j, key).get("confirm_waiting") < lookups; i++) {
          Thread.sleep(50);
        }
        assertThat(GuardCommandsIT.infoOf(j, key).get("confirm_waiting")).isEqualTo((long) lookups);
        lock.rollback();
        for (CompletableFuture<List<?>> f : replies) {
          List<?> v = f.get(60, TimeUnit.SECONDS);
          assertThat(v.get(0)).isEqualTo(List.of(1L, 1L, 1L));
          assertThat(v.get(1)).isIn(List.of(0L, 0L, 0L), List.of(1L, 1L, 0L));
          assertThat(v.get(2)).isEqualTo(List.of(1L, 1L, 1L));
        }
        Map<String, Object> info = GuardCommandsIT.infoOf(j, key);
        assertThat(info.get("confirm_lookups")).isEqualTo((long) lookups);
        // at most 2 blocked, then the queue in one (two if both blocked ones ended at once and split it)
        assertThat((Long) info.get("confirm_queries")).isLessThanOrEqualTo(4L);
        assertThat(info.get("confirm_waiting")).isEqualTo(0L);
      } finally {
        pool.shutdownNow();
      }
    }
  }
}
