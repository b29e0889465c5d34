package io.bloomery.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.RedisClient;
import redis.clients.jedis.UnifiedJedis;

/**
 * The heap rule ({@code keyspace.HeapAdmission}) against a real server process whose heap holds garbage: filters of
 * deleted keys stay in the old generation of a serial collector until the next full collection, so the JVM's used
 * figure ({@code totalMemory - freeMemory}) counts them. A new filter that fits beside the live keys is admitted and
 * allocated (the allocation would collect the garbage if it needed the room), where an estimate of the free heap from
 * the used figure refused it as OOM.
 */
class HeapAdmissionIT {
  /**
   * A blocked filter of about 55 MB (1% error rate). Three of them, deleted, leave the JVM's used figure less than
   * twice a filter below the 256 MB heap: room a collection would give back, which the heap rule must not count.
   */
  private static final String CAPACITY = "44000000";

  @Test
  void garbageInTheHeapDoesNotRefuseAFilterThatFits(@TempDir Path dir) throws Exception {
    // the young generation is small, so a filter's array goes straight to the old one, where a deleted key's
    // array stays until a full collection
    ChildServer.Started started = ChildServer.start(List.of("-Xms256m", "-Xmx256m", "-Xmn16m", "-XX:+UseSerialGC",
        "-XX:TieredStopAtLevel=1"), List.of("--appendonly", "no", "--save", "", "--dir", dir.toString()),
        dir.resolve("server.log"));
    Process child = started.process();
    try (UnifiedJedis j = RedisClient.builder().hostAndPort(new HostAndPort("127.0.0.1", started.port()))
        .clientConfig(DefaultJedisClientConfig.builder().build()).build()) {
      for (String key : List.of("g1", "g2", "g3")) {
        assertThat(reserve(j, key)).isEqualTo("OK");
      }
      long filter = j.memoryUsage("g1");
      assertThat(filter).as("one filter's bytes").isBetween(40L << 20, 64L << 20);
      assertThat(j.del("g1", "g2", "g3")).isEqualTo(3L);
      // the heap now holds three filters of garbage: the JVM's used figure leaves less than twice a filter free,
      // while nothing the server holds stands in the way of a fourth
      assertThat(reserve(j, "h")).isEqualTo("OK");
      assertThat(j.memoryUsage("h")).isEqualTo(filter);
      assertThat(j.bfAdd("h", "x")).isTrue();
      assertThat(j.bfExists("h", "x")).isTrue();
    } finally {
      child.destroyForcibly().waitFor();
    }
  }

  private static String reserve(UnifiedJedis j, String key) {
    Object reply = j.sendCommand(() -> "BF.RESERVE".getBytes(StandardCharsets.UTF_8), key, "0.01", CAPACITY,
        "NONSCALING", "LAYOUT", "BLOCKED");
    return reply instanceof byte[] b ? new String(b, StandardCharsets.UTF_8) : String.valueOf(reply);
  }
}
