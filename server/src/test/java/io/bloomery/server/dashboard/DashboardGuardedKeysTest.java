package io.bloomery.server.dashboard;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomery.server.BloomeryServer;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jsoup.Jsoup;
import org.jsoup.nodes.Document;
import org.jsoup.nodes.Element;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.commands.ProtocolCommand;

/** Guarded keys (GUARD.*) on the dashboard, over real HTTP, checked against GUARD.INFO on a real SQLite store. */
class DashboardGuardedKeysTest {
  /** The page's figures and the GUARD.INFO field each must equal. */
  private static final List<String> SAME_AS_GUARD_INFO = List.of("store", "state", "generation", "built_at",
      "store_lookups_made", "store_lookups_avoided", "realized_false_positives", "insert_failures",
      "freshness_lag_ms", "replication_state");

  @TempDir Path tmp;

  static Object call(Jedis j, String command, String... args) {
    ProtocolCommand c = () -> command.getBytes(StandardCharsets.US_ASCII);
    return j.sendCommand(c, args);
  }

  static Map<String, String> guardInfo(Jedis j, String key) {
    @SuppressWarnings("unchecked")
    List<Object> flat = (List<Object>) call(j, "GUARD.INFO", key);
    Map<String, String> m = new LinkedHashMap<>();
    for (int i = 0; i + 1 < flat.size(); i += 2) {
      Object v = flat.get(i + 1);
      m.put(new String((byte[]) flat.get(i), StandardCharsets.UTF_8),
          v instanceof byte[] b ? new String(b, StandardCharsets.UTF_8) : String.valueOf(v));
    }
    return m;
  }

  static void assertRowMatchesGuardInfo(Element row, Map<String, String> info) {
    for (String name : SAME_AS_GUARD_INFO) {
      assertThat(DashboardTest.value(row, name)).as(name).isEqualTo(info.get(name));
    }
    for (String rate : List.of("realized_false_positive_rate", "model_false_positive_rate")) {
      assertThat(Double.parseDouble(DashboardTest.value(row, rate))).as(rate)
          .isEqualTo(Double.parseDouble(info.get(rate)));
    }
  }

  /** The value of the one series {@code name} whose labels include every {@code label="value"} given. */
  static double series(String metrics, String name, String... labels) {
    List<String> lines = metrics.lines().filter(l -> l.startsWith(name + "{"))
        .filter(l -> java.util.Arrays.stream(labels).allMatch(l::contains)).toList();
    assertThat(lines).as(name + " " + String.join(",", labels)).hasSize(1);
    String line = lines.get(0);
    return Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
  }

  @Test
  void metricsHaveTheGuardedKeysSeriesBesideThePlainKeysOnes() throws Exception {
    try (BloomeryServer server = DashboardTest.start("--store", "lite=sqlite:" + tmp.resolve("guard.db"));
        Jedis j = new Jedis("127.0.0.1", server.port())) {
      call(j, "GUARD.RESERVE", "seen", "lite", "0.01", "1000");
      call(j, "GUARD.MADD", "seen", "a", "b", "c", "a");
      call(j, "GUARD.MEXISTS", "seen", "a", "absent-1", "absent-2", "absent-3");
      call(j, "BF.ADD", "plain", "x");
      Map<String, String> info = guardInfo(j, "seen");
      String metrics = DashboardTest.get(server.httpPort(), "/metrics", null).body();
      String key = "key=\"seen\"";
      String guard = "kind=\"guard\"";
      assertThat(series(metrics, "bloomery_key_items", key, guard)).isEqualTo(3.0);
      assertThat(series(metrics, "bloomery_key_capacity", key, guard))
          .isEqualTo(Double.parseDouble(info.get("filter_capacity")));
      assertThat(series(metrics, "bloomery_key_fill_ratio", key, guard))
          .isEqualTo(3.0 / Double.parseDouble(info.get("filter_capacity")));
      assertThat(series(metrics, "bloomery_key_estimated_fpr", key, guard))
          .isEqualTo(Double.parseDouble(info.get("model_false_positive_rate")));
      assertThat(series(metrics, "bloomery_key_bytes", key, guard))
          .isEqualTo(Math.floor(Double.parseDouble(info.get("bits")) / 8));
      assertThat(series(metrics, "bloomery_key_items", "key=\"plain\"")).isEqualTo(1.0);
      String store = "store=\"lite\"";
      assertThat(series(metrics, "bloomery_guard_ready", key, store)).isEqualTo(1.0);
      for (String figure : List.of("generation", "store_lookups_made", "store_lookups_avoided",
          "realized_false_positives", "insert_failures", "freshness_lag_ms")) {
        assertThat(series(metrics, "bloomery_guard_" + figure, key, store)).as(figure)
            .isEqualTo(Double.parseDouble(info.get(figure)));
      }
      assertThat(Double.parseDouble(info.get("store_lookups_avoided"))).isPositive();
      assertThat(series(metrics, "bloomery_guard_replication_state", key, store, "state=\"off\"")).isEqualTo(1.0);
      assertThat(metrics).doesNotContain(tmp.toString()); // the store's location never appears
    }
  }

  @Test
  void overviewAndKeyPageShowTheGuardedKeysFiguresOfGuardInfo() throws Exception {
    try (BloomeryServer server = DashboardTest.start("--store", "lite=sqlite:" + tmp.resolve("guard.db"));
        Jedis j = new Jedis("127.0.0.1", server.port())) {
      String key = "seen <urls>&";
      assertThat(call(j, "GUARD.RESERVE", key, "lite", "0.01", "1000")).isEqualTo("OK".getBytes());
      assertThat(call(j, "GUARD.MADD", key, "a", "b", "c", "a")).isEqualTo(List.of(1L, 1L, 1L, 0L));
      call(j, "GUARD.MEXISTS", key, "a", "absent-1", "absent-2", "absent-3");
      call(j, "BF.ADD", "plain", "x");
      Map<String, String> info = guardInfo(j, key);
      assertThat(info.get("state")).isEqualTo("ready");
      assertThat(Long.parseLong(info.get("store_lookups_made"))).isPositive();
      assertThat(Long.parseLong(info.get("store_lookups_avoided"))).isPositive();
      assertThat(info.get("replication_state")).isEqualTo("off"); // SQLite follows no replication stream

      Document overview = Jsoup.parse(DashboardTest.get(server.httpPort(), "/", null).body());
      assertThat(overview.select("#keys tr[data-key]")).extracting(e -> e.attr("data-key")).containsExactly("plain");
      // The summary line once said "1 keys" here, though DBSIZE counts the guarded key too.
      assertThat(DashboardTest.value(overview.body(), "keys")).isEqualTo("1");
      assertThat(DashboardTest.value(overview.body(), "guarded_keys")).isEqualTo("1");
      Element row = overview.selectFirst("#guarded tr[data-key]");
      assertThat(row).isNotNull();
      assertThat(row.attr("data-key")).isEqualTo(key);
      assertRowMatchesGuardInfo(row, info);
      assertThat(Long.parseLong(DashboardTest.value(row, "age_ms"))).isNotNegative();

      String link = row.selectFirst("a").attr("href");
      assertThat(link).isEqualTo("/guard?name=" + URLEncoder.encode(key, StandardCharsets.UTF_8));
      var response = DashboardTest.get(server.httpPort(), link, null);
      assertThat(response.statusCode()).isEqualTo(200);
      Document page = Jsoup.parse(response.body());
      assertThat(page.selectFirst("h1").attr("data-key")).isEqualTo(key);
      assertRowMatchesGuardInfo(page.selectFirst("#guard-figures tr[data-key]"), info);
      Element sizing = page.selectFirst("#guard-sizing tr:has(td)");
      assertThat(Double.parseDouble(DashboardTest.value(sizing, "error_rate"))).isEqualTo(0.01);
      assertThat(DashboardTest.value(sizing, "capacity")).isEqualTo(info.get("capacity"));
      assertThat(DashboardTest.value(sizing, "items_since_rebuild")).isEqualTo(info.get("items_since_rebuild"))
          .isEqualTo("3");
      assertThat(response.body()).doesNotContain("sqlite:", tmp.toString()).doesNotContain("<urls>");

      assertThat(DashboardTest.get(server.httpPort(), "/guard?name=plain", null).statusCode()).isEqualTo(404);
      assertThat(DashboardTest.get(server.httpPort(), "/guard?name=nope", null).statusCode()).isEqualTo(404);
      assertThat(DashboardTest.get(server.httpPort(), "/guard", null).statusCode()).isEqualTo(404);
      assertThat(DashboardTest.get(server.httpPort(), "/guard?name=%E0%A4", null).statusCode()).isEqualTo(404);
    }
  }

  @Test
  void withRequirepass_theGuardedKeyPageAsksForThePassword() throws Exception {
    try (BloomeryServer server = DashboardTest.start("--requirepass", "pw", "--store",
        "lite=sqlite:" + tmp.resolve("guard.db"));
        Jedis j = new Jedis("127.0.0.1", server.port())) {
      j.auth("pw");
      call(j, "GUARD.RESERVE", "g", "lite", "0.01", "100");
      assertThat(DashboardTest.get(server.httpPort(), "/guard?name=g", null).statusCode()).isEqualTo(401);
      assertThat(DashboardTest.get(server.httpPort(), "/guard?name=g", "Bearer pw").statusCode()).isEqualTo(200);
    }
  }
}
