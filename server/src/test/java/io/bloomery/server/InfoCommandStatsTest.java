package io.bloomery.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.exceptions.JedisDataException;

/** INFO commandstats in Redis's line format, counted over a real connection. */
class InfoCommandStatsTest {
  private static final Pattern LINE = Pattern.compile(
      "cmdstat_([a-z0-9.|_-]+):calls=(\\d+),usec=(\\d+),usec_per_call=(\\d+\\.\\d{2}),rejected_calls=(\\d+),"
          + "failed_calls=(\\d+)");

  /** The section's lines by command, each checked against Redis's exact format. */
  static Map<String, long[]> parse(String info) {
    Map<String, long[]> out = new LinkedHashMap<>();
    String[] lines = info.split("\r\n");
    assertThat(lines[0]).isEqualTo("# Commandstats");
    for (int i = 1; i < lines.length; i++) {
      Matcher m = LINE.matcher(lines[i]);
      assertThat(m.matches()).as("line '%s'", lines[i]).isTrue();
      long calls = Long.parseLong(m.group(2));
      long usec = Long.parseLong(m.group(3));
      assertThat(m.group(4)).isEqualTo(String.format(Locale.ROOT, "%.2f", calls == 0 ? 0.0 : (double) usec / calls));
      out.put(m.group(1), new long[] {calls, usec, Long.parseLong(m.group(5)), Long.parseLong(m.group(6))});
    }
    return out;
  }

  @Test
  void countsCallsFailuresAndRejectionsPerCommand() {
    try (BloomeryServer server = TestServer.start();
        Jedis j = new Jedis(new HostAndPort("127.0.0.1", server.port()), DefaultJedisClientConfig.builder().build())) {
      j.sendCommand(() -> "BF.ADD".getBytes(), "f", "a");
      j.sendCommand(() -> "BF.ADD".getBytes(), "f", "b");
      j.sendCommand(() -> "CF.ADD".getBytes(), "c", "a");
      assertThatThrownBy(() -> j.sendCommand(() -> "BF.ADD".getBytes(), "c", "x")) // WRONGTYPE: ran and failed
          .isInstanceOf(JedisDataException.class).hasMessageStartingWith("WRONGTYPE");
      assertThatThrownBy(() -> j.sendCommand(() -> "BF.ADD".getBytes(), "f")) // arity: refused before running
          .isInstanceOf(JedisDataException.class).hasMessageContaining("wrong number of arguments");
      assertThatThrownBy(() -> j.sendCommand(() -> "NOSUCH".getBytes(), "x")) // unknown: counted nowhere
          .isInstanceOf(JedisDataException.class);

      String section = j.info("commandstats");
      Map<String, long[]> stats = parse(section);
      assertThat(stats.get("bf.add")[0]).as("calls: two added, one failed; the refused one did not run").isEqualTo(3);
      assertThat(stats.get("bf.add")[2]).as("rejected").isEqualTo(1);
      assertThat(stats.get("bf.add")[3]).as("failed").isEqualTo(1);
      assertThat(stats.get("cf.add")[0]).isEqualTo(1);
      assertThat(stats.get("cf.add")[2] + stats.get("cf.add")[3]).isZero();
      assertThat(stats).doesNotContainKeys("nosuch", "unknown");
      assertThat(new java.util.ArrayList<>(stats.keySet())).isSorted();

      assertThat(j.info()).as("plain INFO leaves commandstats out, as Redis").doesNotContain("# Commandstats", "cmdstat_");
      assertThat(j.info("default")).doesNotContain("cmdstat_");
      assertThat(j.info("everything")).contains("# Commandstats\r\ncmdstat_bf.add:calls=");
      assertThat(j.info("all")).contains("cmdstat_cf.add:calls=1,");

      j.configResetStat();
      Map<String, long[]> afterReset = parse(j.info("commandstats"));
      assertThat(afterReset).as("only the CONFIG RESETSTAT itself, counted once it ran").containsOnlyKeys("config");
      assertThat(afterReset.get("config")[0]).isEqualTo(1);
    }
  }

  @Test
  void commandsRefusedForWantOfAPasswordAreRejectedCalls() {
    try (BloomeryServer server = TestServer.start("--requirepass", "pw");
        Jedis j = new Jedis(new HostAndPort("127.0.0.1", server.port()), DefaultJedisClientConfig.builder().build())) {
      assertThatThrownBy(() -> j.sendCommand(() -> "BF.ADD".getBytes(), "f", "a"))
          .isInstanceOf(JedisDataException.class).hasMessageStartingWith("NOAUTH");
      j.auth("pw");
      assertThat(j.info("commandstats")).contains("cmdstat_bf.add:calls=0,usec=0,usec_per_call=0.00,"
          + "rejected_calls=1,failed_calls=0\r\n");
    }
  }
}
