package io.bloomery.server.persistence;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomery.server.ChildServer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.exceptions.JedisDataException;

/**
 * A real server process whose data directory lies on an 8 MB tmpfs that the test fills up. A write the journal
 * cannot take is refused before it applies (MISCONF, "not applied") and leaves no trace, in memory or after a
 * rewrite, kill -9 and restart; every acknowledged write survives; writes resume on their own once space is free;
 * INFO's persistence statuses follow every attempt (a BGSAVE that failed on the full disk reports {@code err}).
 */
class FullDiskIT {
  private static final long WAIT_NANOS = TimeUnit.SECONDS.toNanos(30);

  @TempDir Path dir;
  private SmallDisk disk;
  private Process server;

  @BeforeEach
  void mount() throws Exception {
    disk = SmallDisk.mount(dir.resolve("disk"), "8m");
  }

  @AfterEach
  void unmount() throws Exception {
    try {
      if (server != null) {
        server.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
      }
    } finally {
      if (disk != null) { // null when mounting was not allowed and the test was skipped
        disk.close();
      }
    }
  }

  private UnifiedJedis start(String fsync) throws Exception {
    ChildServer.Started started = ChildServer.start(List.of("-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"),
        List.of("--dir", disk.root().resolve("data").toString(), "--appendfsync", fsync), dir.resolve("server.log"));
    server = started.process();
    return ServerPersistenceTest.client(started.port());
  }

  /** The reply as text (a boolean as 1 or 0), an error as {@code -TEXT}. */
  private static String call(UnifiedJedis j, String... argv) {
    String[] args = Arrays.copyOfRange(argv, 1, argv.length);
    try {
      Object reply = j.sendCommand(() -> argv[0].getBytes(StandardCharsets.US_ASCII), args);
      return reply instanceof Boolean b ? (b ? "1" : "0") : ServerPersistenceTest.text(reply);
    } catch (JedisDataException e) {
      return "-" + e.getMessage();
    }
  }

  /** CF.INFO's exact count of the items inserted into {@code cf} (CF.EXISTS of one item may be a false positive). */
  private static long inserted(UnifiedJedis j) {
    return ((Number) j.cfInfo("cf").get("Number of items inserted")).longValue();
  }

  private static String info(UnifiedJedis j) {
    return call(j, "INFO", "persistence");
  }

  /** Repeats {@code command} until its reply passes {@code done}; returns that reply. */
  private static String await(UnifiedJedis j, Predicate<String> done, String... command) throws InterruptedException {
    long deadline = System.nanoTime() + WAIT_NANOS;
    String reply = call(j, command);
    while (!done.test(reply)) {
      assertThat(System.nanoTime()).as("waiting for %s, last reply %s", List.of(command), reply).isLessThan(deadline);
      Thread.sleep(20);
      reply = call(j, command);
    }
    return reply;
  }

  /** INFO's count of snapshot attempts ({@code rdb_saves}) in {@code info}. */
  private static long saves(String info) {
    Matcher m = Pattern.compile("rdb_saves:(\\d+)").matcher(info);
    assertThat(m.find()).as(info).isTrue();
    return Long.parseLong(m.group(1));
  }

  /** Runs {@code command} (BGSAVE, BGREWRITEAOF) and returns INFO persistence once that attempt has ended. */
  private static String backgroundSave(UnifiedJedis j, String command, String started) throws InterruptedException {
    long before = saves(info(j));
    assertThat(call(j, command)).startsWith(started);
    return await(j, r -> saves(r) > before && r.contains("rdb_bgsave_in_progress:0"), "INFO", "persistence");
  }

  /**
   * Fills the disk, then adds items to {@code cf} (recording each acknowledged one in {@code acked}) until one is
   * refused; returns that reply.
   */
  private String fillAndWriteUntilRefused(UnifiedJedis j, List<String> acked) throws Exception {
    disk.fill();
    // Records fill the journal's last allocated page, then one finds the disk full; from then writes are refused.
    for (int n = 0; n < 100_000; n++) {
      String reply = call(j, "CF.ADD", "cf", "item-" + n);
      if (!reply.equals("1")) {
        return reply;
      }
      acked.add("item-" + n);
    }
    throw new AssertionError("100000 writes on a full disk were all acknowledged");
  }

  @ParameterizedTest
  @ValueSource(strings = {"everysec", "always"})
  void aWriteTheFullDiskRefusesLeavesNoTraceEvenAfterARewriteAndKillNine(String fsync) throws Exception {
    List<String> acked = new ArrayList<>();
    try (UnifiedJedis j = start(fsync)) {
      assertThat(call(j, "CF.ADD", "cf", "acked-item")).isEqualTo("1");
      acked.add("acked-item");
      String refused = fillAndWriteUntilRefused(j, acked);
      assertThat(inserted(j)).as("items in cf after a refused CF.ADD (%s)", refused).isEqualTo(acked.size());
      assertThat(refused).startsWith("-MISCONF Errors writing to the AOF file: No space left on device")
          .contains("not applied");
      assertThat(call(j, "DEL", "cf")).startsWith("-MISCONF").contains("not applied");
      assertThat(call(j, "EXISTS", "cf")).as("cf after a refused DEL").isEqualTo("1");
      assertThat(call(j, "CF.ADD", "other", "x")).as("every key is refused alike").startsWith("-MISCONF");
      assertThat(call(j, "EXISTS", "other")).isEqualTo("0");
      assertThat(call(j, "MULTI")).isEqualTo("OK");
      assertThat(call(j, "DEL", "cf")).isEqualTo("QUEUED");
      assertThat(call(j, "EXEC")).startsWith("-EXECABORT").contains("MISCONF");
      assertThat(call(j, "EXISTS", "cf")).as("cf after a refused transaction").isEqualTo("1");
      for (String item : acked) {
        assertThat(call(j, "CF.EXISTS", "cf", item)).as("acknowledged %s", item).isEqualTo("1");
      }
      disk.free();
      assertThat(await(j, "1"::equals, "CF.ADD", "cf", "after-free")).isEqualTo("1");
      acked.add("after-free");
      assertThat(backgroundSave(j, "BGREWRITEAOF", "Background append only file rewriting"))
          .contains("aof_last_bgrewrite_status:ok");
      assertThat(inserted(j)).isEqualTo(acked.size());
    }
    server.destroyForcibly().waitFor(30, TimeUnit.SECONDS); // kill -9
    try (UnifiedJedis j = start(fsync)) {
      for (String item : acked) {
        assertThat(call(j, "CF.EXISTS", "cf", item)).as("acknowledged %s after kill -9", item).isEqualTo("1");
      }
      assertThat(inserted(j)).as("items in cf after kill -9").isEqualTo(acked.size());
      assertThat(call(j, "EXISTS", "other")).isEqualTo("0");
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"everysec", "always"})
  void writesResumeWithoutARestartOnceSpaceIsFree(String fsync) throws Exception {
    try (UnifiedJedis j = start(fsync)) {
      assertThat(fillAndWriteUntilRefused(j, new ArrayList<>())).startsWith("-");
      assertThat(info(j)).contains("aof_last_write_status:err");
      assertThat(call(j, "CF.ADD", "cf", "while-full")).startsWith("-");
      disk.free();
      assertThat(await(j, "1"::equals, "CF.ADD", "cf", "after-free")).isEqualTo("1");
      assertThat(info(j)).contains("aof_last_write_status:ok");
      assertThat(call(j, "BF.ADD", "bf", "x")).isEqualTo("1");
      assertThat(call(j, "DEL", "bf")).isEqualTo("1");
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"everysec", "always"})
  void infoReportsTheLastSnapshotAttemptAlsoWhenItFailedOnTheFullDisk(String fsync) throws Exception {
    try (UnifiedJedis j = start(fsync)) {
      assertThat(call(j, "BF.ADD", "bf", "x")).isEqualTo("1");
      disk.fill();
      assertThat(backgroundSave(j, "BGSAVE", "Background saving started")).contains("rdb_last_bgsave_status:err", "aof_last_bgrewrite_status:err",
          "rdb_current_bgsave_time_sec:-1", "aof_rewrite_in_progress:0");
      assertThat(call(j, "SAVE")).startsWith("-ERR");
      assertThat(info(j)).contains("rdb_last_bgsave_status:err", "rdb_bgsave_in_progress:0");
      disk.free();
      assertThat(backgroundSave(j, "BGREWRITEAOF", "Background append only file rewriting"))
          .contains("rdb_last_bgsave_status:ok", "aof_last_bgrewrite_status:ok");
    }
  }
}
