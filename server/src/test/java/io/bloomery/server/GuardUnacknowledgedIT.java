package io.bloomery.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomery.guard.PostgresCluster;
import io.bloomery.server.command.guard.GuardSetsAccess;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.exceptions.JedisDataException;

/**
 * An error reply is not an acknowledgement: GUARD.ADD/MADD that answered STOREDOWN while their statement was
 * blocked on a lock (held by a real psql session) must not leave their items "seen but never answered 1". Whether
 * the blocked statement later commits (lock released) or dies (its backend terminated), retrying every item that
 * got an error answers each distinct item 1 exactly once over all attempts.
 */
class GuardUnacknowledgedIT {
  private static final String PSQL = "/usr/lib/postgresql/15/bin/psql";

  @Test
  void lateCommitsAfterStoredownAreAnsweredOneOnRetry() throws Exception {
    runAcrossLock(false);
  }

  @Test
  void terminatedStatementsAfterStoredownAreAnsweredOneOnRetry() throws Exception {
    runAcrossLock(true);
  }

  private void runAcrossLock(boolean terminate) throws Exception {
    PostgresCluster pg = PostgresCluster.shared();
    String url = pg.createDatabase();
    String database = url.substring(url.lastIndexOf('/') + 1, url.indexOf('?'));
    Map<String, Integer> ones = new HashMap<>();
    Set<String> unanswered = new LinkedHashSet<>();
    try (BloomeryServer server = GuardFixtures.server("--store", "main=" + url, "--guard-timeout", "300",
        "--guard-statement-timeout", "600000");
        Jedis j = new Jedis("127.0.0.1", server.port(), 30_000)) {
      call(j, "GUARD.RESERVE", "k", "main", "0.01", "10000");
      for (int i = 0; i < 20; i++) {
        add(j, "before-" + i, ones, unanswered);
      }
      String table = "bloomery_seen_" + GuardSetsAccess.keyId("k");
      Process locker = new ProcessBuilder(PSQL, "-X", "-q", "-h", "127.0.0.1", "-p", String.valueOf(pg.port()), "-U",
          "postgres", "-d", database, "-c", "BEGIN; LOCK TABLE " + table + " IN ACCESS EXCLUSIVE MODE; SELECT "
          + "pg_sleep(120); COMMIT;")
          .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
      try {
        awaitLockHeld(url, table);
        for (int i = 0; i < 10; i++) { // each blocks on the lock and answers STOREDOWN after 300 ms
          add(j, "during-" + i, ones, unanswered);
          add(j, "before-" + i, ones, unanswered); // duplicates too: never a second 1
        }
        madd(j, ones, unanswered, "during-m1", "during-m2", "before-15", "during-m1");
        assertThat(unanswered).contains("during-0", "during-9", "during-m1", "during-m2");
        if (terminate) { // kill the blocked statements first: nothing of them commits
          GuardFixtures.psql(url, "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = "
              + "current_database() AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()");
        }
        // end the lock holder: statements still blocked go on and commit, after their clients got STOREDOWN
        GuardFixtures.psql(url, "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = "
            + "current_database() AND query LIKE '%LOCK TABLE%' AND pid <> pg_backend_pid()");
      } finally {
        assertThat(locker.waitFor(150, TimeUnit.SECONDS)).isTrue();
      }
      // retry everything that got an error until it answers 0 or 1
      for (int round = 0; round < 100 && !unanswered.isEmpty(); round++) {
        for (String item : new ArrayList<>(unanswered)) {
          unanswered.remove(item);
          add(j, item, ones, unanswered);
        }
        if (!unanswered.isEmpty()) {
          Thread.sleep(100);
        }
      }
      assertThat(unanswered).as("items still answered STOREDOWN").isEmpty();
      for (int i = 0; i < 20; i++) {
        assertThat(ones.get("before-" + i)).as("before-%d answered 1", i).isEqualTo(1);
      }
      for (int i = 0; i < 10; i++) {
        assertThat(ones.get("during-" + i)).as("during-%d answered 1", i).isEqualTo(1);
      }
      assertThat(ones.get("during-m1")).isEqualTo(1);
      assertThat(ones.get("during-m2")).isEqualTo(1);
      assertThat(ones).hasSize(32);
      // once answered 1, the item is forgotten: every further add is a duplicate
      assertThat(call(j, "GUARD.ADD", "k", "during-3")).isEqualTo(0L);
      assertThat(call(j, "GUARD.MADD", "k", "during-m1", "during-m2")).isEqualTo(List.of(0L, 0L));
      assertThat(GuardCommandsIT.infoOf(j, "k").get("unacknowledged_items")).isEqualTo(0L);
      assertThat(GuardFixtures.psql(url, "SELECT count(*), count(DISTINCT item) FROM " + table).strip())
          .isEqualTo("32|32");
    }
  }

  private static void awaitLockHeld(String url, String table) throws InterruptedException {
    for (int i = 0; i < 200; i++) {
      String n = GuardFixtures.psql(url, "SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation"
          + " WHERE c.relname = '" + table + "' AND l.mode = 'AccessExclusiveLock' AND l.granted").strip();
      if (n.equals("1")) {
        return;
      }
      Thread.sleep(50);
    }
    throw new AssertionError("the psql session never took the lock");
  }

  private static Object call(Jedis j, String... args) {
    return GuardStoreFaultIT.call(j, args);
  }

  private static void add(Jedis j, String item, Map<String, Integer> ones, Set<String> unanswered) {
    List<String> errors = new ArrayList<>();
    GuardStoreFaultIT.add(j, item, ones, errors);
    if (!errors.isEmpty()) {
      assertThat(errors.get(0)).startsWith("STOREDOWN store 'main' is unavailable: ");
      unanswered.add(item);
    }
  }

  private static void madd(Jedis j, Map<String, Integer> ones, Set<String> unanswered, String... items) {
    String[] args = new String[items.length + 2];
    args[0] = "GUARD.MADD";
    args[1] = "k";
    System.arraycopy(items, 0, args, 2, items.length);
    try {
      @SuppressWarnings("unchecked")
      List<Object> r = (List<Object>) call(j, args);
      for (int i = 0; i < items.length; i++) {
        if (r.get(i).equals(1L)) {
          ones.merge(items[i], 1, Integer::sum);
        }
      }
    } catch (JedisDataException e) {
      assertThat(e.getMessage()).startsWith("STOREDOWN store 'main' is unavailable: ");
      unanswered.addAll(List.of(items));
    }
  }
}
