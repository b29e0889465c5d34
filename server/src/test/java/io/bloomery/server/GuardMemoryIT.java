package io.bloomery.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomery.guard.PostgresCluster;
import io.bloomery.plan.FilterPlanner;
import io.bloomery.server.command.guard.GuardSetsAccess;
import java.util.Map;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.exceptions.JedisDataException;

/**
 * Guarded keys count against {@code maxmemory} as every key does: a guarded filter is admitted before anything is
 * allocated (or any slot created), counts in INFO's used_memory, MEMORY USAGE and GUARD.INFO, makes ordinary keys
 * answer OOM once the budget is spent, and gives its bytes back on GUARD.DROP.
 */
class GuardMemoryIT {
  private static final String OOM = "OOM command not allowed when used memory > 'maxmemory'.";
  /** The guarded filter's size: about 0.6 MiB, so one fits in a 1 MiB budget and two do not. */
  private static final long CAPACITY = 500_000;

  private static Object call(Jedis j, String... args) {
    return GuardStoreFaultIT.call(j, args);
  }

  @Test
  void guardedFiltersCountAgainstMaxmemoryAndAreRefusedUpFront() {
    long filter = FilterPlanner.plan(CAPACITY, 0.01).bitmapBytes();
    assertThat(filter).isGreaterThan(512L * 1024).isLessThan(1024L * 1024);
    String url = PostgresCluster.shared().createDatabase();
    try (BloomeryServer server = GuardFixtures.server("--store", "pg=" + url, "--maxmemory", "1mb");
        Jedis j = new Jedis("127.0.0.1", server.port(), 30_000)) {
      assertThat(used(j)).isZero();
      assertThat(call(j, "GUARD.RESERVE", "m1", "pg", "0.01", Long.toString(CAPACITY))).isEqualTo("OK".getBytes());
      assertThat(used(j)).as("INFO used_memory").isEqualTo(filter);
      assertThat(info(j, "guard").get("guard_filter_bytes")).isEqualTo(Long.toString(filter));
      assertThat(info(j, "guard").get("guarded_keys")).isEqualTo("1");
      assertThat(j.memoryUsage("m1")).isEqualTo(filter);
      assertThat(GuardCommandsIT.infoOf(j, "m1").get("memory_bytes")).isEqualTo(filter);

      // a second one does not fit: refused with the OOM every key gets, before a table, a slot or a filter exists
      assertThatThrownBy(() -> call(j, "GUARD.RESERVE", "m2", "pg", "0.01", Long.toString(CAPACITY)))
          .isInstanceOf(JedisDataException.class).hasMessage(OOM);
      assertThatThrownBy(() -> GuardCommandsIT.infoOf(j, "m2")).hasMessageContaining("no such guarded key");
      assertThat(GuardFixtures.psql(url, "SELECT count(*) FROM pg_replication_slots WHERE slot_name = 'bloomery_g"
          + GuardSetsAccess.keyId("m2") + "' AND database = current_database()").strip()).isEqualTo("0");
      assertThat(used(j)).isEqualTo(filter);
      // nor does an ordinary key that would take the server past the budget the guarded key uses
      assertThatThrownBy(() -> call(j, "BF.RESERVE", "plain", "0.01", Long.toString(CAPACITY)))
          .isInstanceOf(JedisDataException.class).hasMessage(OOM);
      assertThat(Long.parseLong(info(j, "stats").get("oom_rejections"))).isGreaterThanOrEqualTo(2);
      assertThat(call(j, "GUARD.ADD", "m1", "an item")).as("adds to a filter that fits go on").isEqualTo(1L);

      // GUARD.DROP gives the bytes back
      assertThat(call(j, "GUARD.DROP", "m1")).isEqualTo("OK".getBytes());
      assertThat(used(j)).isZero();
      assertThat(j.memoryUsage("m1")).isNull();
      assertThat(call(j, "GUARD.RESERVE", "m2", "pg", "0.01", Long.toString(CAPACITY))).isEqualTo("OK".getBytes());
      assertThat(used(j)).isEqualTo(filter);
      assertThat(call(j, "GUARD.DROP", "m2")).isEqualTo("OK".getBytes());
    }
  }

  @Test
  void aFilterLargerThanTheHeapIsRefusedAsOomNotAnInternalError() {
    String url = PostgresCluster.shared().createDatabase();
    try (BloomeryServer server = GuardFixtures.server("--store", "pg=" + url);
        Jedis j = new Jedis("127.0.0.1", server.port(), 30_000)) {
      // about 1.2 bytes per item at 0.01: larger than the test JVM's heap (-Xmx3g in the build)
      long capacity = Math.min(Runtime.getRuntime().maxMemory(), 10_000_000_000L);
      assertThatThrownBy(() -> call(j, "GUARD.RESERVE", "huge", "pg", "0.01", Long.toString(capacity)))
          .isInstanceOf(JedisDataException.class).hasMessage(OOM);
      assertThatThrownBy(() -> GuardCommandsIT.infoOf(j, "huge")).hasMessageContaining("no such guarded key");
      assertThat(used(j)).isZero();
    }
  }

  private static long used(Jedis j) {
    return Long.parseLong(info(j, "memory").get("used_memory"));
  }

  private static Map<String, String> info(Jedis j, String section) {
    Map<String, String> m = new java.util.HashMap<>();
    for (String line : j.info(section).split("\r\n")) {
      int colon = line.indexOf(':');
      if (colon > 0 && !line.startsWith("#")) {
        m.put(line.substring(0, colon), line.substring(colon + 1));
      }
    }
    return m;
  }
}
