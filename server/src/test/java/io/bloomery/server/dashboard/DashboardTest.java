package io.bloomery.server.dashboard;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomery.server.BloomeryServer;
import io.bloomery.server.ServerConfig;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import org.jsoup.Jsoup;
import org.jsoup.nodes.Document;
import org.jsoup.nodes.Element;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.RedisClient;
import redis.clients.jedis.UnifiedJedis;

/** The dashboard over real HTTP against a real server holding keys of several kinds. */
class DashboardTest {
  static BloomeryServer start(String... extra) throws Exception {
    List<String> args = new ArrayList<>(List.of("--port", "0", "--http-port", "0", "--appendonly", "no"));
    args.addAll(List.of(extra));
    return BloomeryServer.start(ServerConfig.parse(Map.of(), args.toArray(String[]::new)));
  }

  static UnifiedJedis jedis(BloomeryServer server, String password) {
    DefaultJedisClientConfig.Builder config = DefaultJedisClientConfig.builder();
    if (password != null) {
      config.password(password);
    }
    return RedisClient.builder().hostAndPort(new HostAndPort("127.0.0.1", server.port())).clientConfig(config.build())
        .build();
  }

  /** A few keys of different kinds: a Bloom filter past 80% of its capacity, a fresh one, cuckoo, counting, CMS. */
  static void populate(UnifiedJedis j) {
    j.bfReserve("urls", 0.01, 1000);
    for (int i = 0; i < 9; i++) {
      String[] items = new String[100];
      for (int k = 0; k < items.length; k++) {
        items[k] = "url-" + (i * 100 + k);
      }
      j.bfMAdd("urls", items);
    }
    j.bfReserve("fresh", 0.001, 5000);
    j.bfAdd("fresh", "one");
    j.cfReserve("carts", 1024);
    j.cfAdd("carts", "a");
    j.cfAdd("carts", "b");
    j.sendCommand(() -> "CBF.RESERVE".getBytes(StandardCharsets.US_ASCII), "sessions", "0.01", "1000");
    j.sendCommand(() -> "CBF.ADD".getBytes(StandardCharsets.US_ASCII), "sessions", "s1");
    j.cmsInitByDim("counts", 100, 4);
    j.expire("fresh", 3600);
  }

  static HttpResponse<String> get(int port, String path, String authorization) throws Exception {
    HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path));
    if (authorization != null) {
      request.header("Authorization", authorization);
    }
    return HttpClient.newHttpClient().send(request.build(), HttpResponse.BodyHandlers.ofString());
  }

  /** The exact value of field {@code name} in {@code row}. */
  static String value(Element row, String name) {
    Element field = row.selectFirst("[data-field=" + name + "]");
    assertThat(field).as("field " + name + " in " + row).isNotNull();
    return field.attr("data-value");
  }

  /** Checks the overview's row of every Bloom filter against BF.INFO, and the near-capacity warning. */
  static void assertOverviewMatchesBfInfo(Document page, UnifiedJedis j) {
    for (String key : List.of("urls", "fresh")) {
      Element row = page.selectFirst("tr[data-key=" + key + "]");
      assertThat(row).as("row of " + key).isNotNull();
      Map<String, Object> info = j.bfInfo(key);
      assertThat(value(row, "kind")).isEqualTo("bloom");
      assertThat(value(row, "items")).isEqualTo(info.get("Number of items inserted").toString());
      assertThat(value(row, "capacity")).isEqualTo(info.get("Capacity").toString());
      assertThat(value(row, "layers")).isEqualTo(info.get("Number of filters").toString());
      assertThat(value(row, "bytes")).isEqualTo(info.get("Size").toString());
    }
    Element urls = page.selectFirst("tr[data-key=urls]");
    assertThat(Double.parseDouble(value(urls, "capacity_used"))).isEqualTo(0.9);
    assertThat(urls.selectFirst("td.warn").text()).isEqualTo("90.0% near capacity");
    assertThat(Double.parseDouble(value(urls, "target_fpr"))).isEqualTo(0.01);
    assertThat(Double.parseDouble(value(urls, "estimated_fpr"))).isBetween(0.0, 0.01);
    Element fresh = page.selectFirst("tr[data-key=fresh]");
    assertThat(fresh.select("td.warn")).isEmpty();
    assertThat(Long.parseLong(value(fresh, "expire_at_ms"))).isGreaterThan(System.currentTimeMillis());
    assertThat(value(urls, "expire_at_ms")).isEqualTo("-1");
    assertThat(value(page.selectFirst("tr[data-key=carts]"), "kind")).isEqualTo("cuckoo");
    assertThat(value(page.selectFirst("tr[data-key=sessions]"), "items")).isEqualTo("1");
    assertThat(value(page.selectFirst("tr[data-key=counts]"), "estimated_fpr")).isEmpty(); // a sketch: n/a
  }

  @Test
  void overviewShowsEveryKeyWithTheFiguresOfBfInfo() throws Exception {
    try (BloomeryServer server = start(); UnifiedJedis j = jedis(server, null)) {
      populate(j);
      HttpResponse<String> response = get(server.httpPort(), "/", null);
      assertThat(response.statusCode()).isEqualTo(200);
      assertThat(response.headers().firstValue("Content-Type")).hasValue("text/html; charset=utf-8");
      Document page = Jsoup.parse(response.body());
      assertThat(page.select("tr[data-key]")).extracting(e -> e.attr("data-key"))
          .containsExactly("carts", "counts", "fresh", "sessions", "urls");
      assertOverviewMatchesBfInfo(page, j);
      assertThat(page.select("script")).as("no script, nothing fetched").isEmpty();
      assertThat(response.body()).doesNotContain("http://", "https://").doesNotContain("src=");
    }
  }

  /** TDIGEST.INFO's reply as "field=value" pairs (Jedis hands back map entries of byte arrays). */
  private static String infoText(Object reply) {
    return ((java.util.List<?>) reply).stream().map(e -> {
      Map.Entry<?, ?> entry = (Map.Entry<?, ?>) e;
      return new String((byte[]) entry.getKey(), StandardCharsets.UTF_8) + "=" + entry.getValue();
    }).toList().toString();
  }

  @Test
  void aTDigestPageShowsItsQuantileChartWithoutCompressingTheDigest() throws Exception {
    try (BloomeryServer server = start(); UnifiedJedis j = jedis(server, null)) {
      j.sendCommand(() -> "TDIGEST.CREATE".getBytes(StandardCharsets.US_ASCII), "latency");
      String[] values = new String[201];
      values[0] = "latency";
      for (int i = 1; i <= 200; i++) {
        values[i] = Integer.toString(i * 5);
      }
      j.sendCommand(() -> "TDIGEST.ADD".getBytes(StandardCharsets.US_ASCII), values);
      Object infoBefore = j.sendCommand(() -> "TDIGEST.INFO".getBytes(StandardCharsets.US_ASCII), "latency");
      Document page = Jsoup.parse(get(server.httpPort(), "/key?name=latency", null).body());
      Element chart = page.getElementById("quantiles");
      assertThat(chart).isNotNull();
      assertThat(chart.select("path.series")).hasSize(1);
      assertThat(chart.select("circle.median")).hasSize(1);
      assertThat(chart.text()).contains("median 502.5"); // TDIGEST.QUANTILE latency 0.5 answers 502.5
      assertThat(page.getElementById("fpr-curve")).isNull();
      Object infoAfter = j.sendCommand(() -> "TDIGEST.INFO".getBytes(StandardCharsets.US_ASCII), "latency");
      assertThat(infoText(infoAfter)).isEqualTo(infoText(infoBefore)).contains("Unmerged nodes=200");
      j.sendCommand(() -> "TDIGEST.CREATE".getBytes(StandardCharsets.US_ASCII), "empty");
      Element empty = Jsoup.parse(get(server.httpPort(), "/key?name=empty", null).body()).getElementById("quantiles");
      assertThat(empty.text()).contains("fewer than two observations");
      assertThat(empty.select("path.series")).isEmpty();
    }
  }

  @Test
  void aGrownCuckooFilterCountsTheSlotsOfEverySubFilter() throws Exception {
    try (BloomeryServer server = start(); UnifiedJedis j = jedis(server, null)) {
      j.cfReserve("cf", 1000);
      for (int i = 0; i < 5_001; i++) {
        j.cfAdd("cf", "item-" + i);
      }
      Map<String, Object> info = j.cfInfo("cf");
      long filters = (Long) info.get("Number of filters");
      long slotsPerFilter = (Long) info.get("Number of buckets") * (Long) info.get("Bucket size");
      assertThat(filters).as("the filter grew").isGreaterThan(1);
      assertThat((Long) info.get("Expansion rate")).isEqualTo(1); // every sub-filter as large as the first
      long capacity = filters * slotsPerFilter;
      assertThat(capacity).isGreaterThan(5_001);

      Element row = Jsoup.parse(get(server.httpPort(), "/", null).body()).selectFirst("tr[data-key=cf]");
      assertThat(Long.parseLong(value(row, "capacity"))).isEqualTo(capacity);
      assertThat(Double.parseDouble(value(row, "capacity_used"))).isEqualTo(5_001.0 / capacity);
      assertThat(Double.parseDouble(value(row, "fill_ratio"))).isEqualTo(5_001.0 / capacity);
      assertThat(row.text()).doesNotContain("over capacity");
      assertThat(Integer.parseInt(value(row, "layers"))).isEqualTo(filters);

      Document page = Jsoup.parse(get(server.httpPort(), "/key?name=cf", null).body());
      assertThat(value(page.selectFirst("#figures tr:has(td)"), "capacity")).isEqualTo(Long.toString(capacity));
      assertThat(get(server.httpPort(), "/metrics", null).body())
          .containsPattern("bloomery_key_capacity\\{[^}]*key=\"cf\"[^}]*} " + capacity + "(\\.0)?\\b");
    }
  }

  @Test
  void keyPageShowsTheCurveWithPresentPositionAndCapacity_andTheHistory() throws Exception {
    try (BloomeryServer server = start(); UnifiedJedis j = jedis(server, null)) {
      populate(j);
      HttpResponse<String> response = get(server.httpPort(), "/key?name=urls", null);
      assertThat(response.statusCode()).isEqualTo(200);
      Document page = Jsoup.parse(response.body());
      Element curve = page.getElementById("fpr-curve");
      assertThat(curve).isNotNull();
      assertThat(curve.select("line.capacity")).hasSize(1);
      assertThat(curve.select("line.near-capacity")).hasSize(1);
      assertThat(curve.select("circle.present")).hasSize(1);
      assertThat(curve.select("path.series")).hasSize(1);
      assertThat(page.getElementById("fpr-history")).isNotNull();
      assertThat(page.getElementById("fill-history")).isNotNull();
      assertThat(page.getElementById("ops-history")).isNotNull();
      assertThat(value(page.selectFirst("#figures tr:has(td)"), "items")).isEqualTo("900");
      assertThat(get(server.httpPort(), "/key?name=missing", null).statusCode()).isEqualTo(404);
      assertThat(get(server.httpPort(), "/key", null).statusCode()).isEqualTo(404);
      assertThat(get(server.httpPort(), "/key?name=%E0%A4", null).statusCode()).isEqualTo(404); // not UTF-8
      assertThat(rawStatusLine(server.httpPort(), "GET /key?name=%zz HTTP/1.1")).startsWith("HTTP/1.1 4");
      assertThat(rawStatusLine(server.httpPort(), "POST / HTTP/1.1")).isEqualTo("HTTP/1.1 405 Method Not Allowed");
      assertThat(get(server.httpPort(), "/nope", null).statusCode()).isEqualTo(404);
    }
  }

  @Test
  void historyAndOpsPerCommandAreSampled() throws Exception {
    System.setProperty("bloomery.dashboard.sample-millis", "200");
    try (BloomeryServer server = start(); UnifiedJedis j = jedis(server, null)) {
      System.clearProperty("bloomery.dashboard.sample-millis");
      populate(j);
      Document page;
      do { // the sampler runs on its own thread; wait for two samples of the key and one measured interval
        Thread.sleep(100);
        j.bfAdd("urls", "more");
        page = Jsoup.parse(get(server.httpPort(), "/key?name=urls", null).body());
      } while (page.select("#fpr-history path.series").isEmpty() || page.select("#ops tr[data-command=bf.add]").isEmpty());
      assertThat(page.select("#fill-history path.series")).hasSize(1);
      assertThat(Double.parseDouble(value(page.selectFirst("#ops tr[data-command=bf.add]"), "ops_per_sec")))
          .isGreaterThanOrEqualTo(0);
    } finally {
      System.clearProperty("bloomery.dashboard.sample-millis");
    }
  }

  @Test
  void commandTableListsTheBusiestFirst_withoutIdleCommands() {
    StringBuilder html = new StringBuilder();
    DashboardPages.opsTable(html, List.of(new HealthHistory.Rates(1, Map.of("bf.add", 3.0)),
        new HealthHistory.Rates(2, Map.of("bf.add", 12.5, "auth", 0.0, "unknown", 0.5, "bf.exists", 1_500.0,
            "cf.add", 12.5, "ping", 0.01))));
    Document table = Jsoup.parse(html.toString());
    assertThat(table.select("#ops tr[data-command]")).extracting(e -> e.attr("data-command"))
        .containsExactly("bf.exists", "bf.add", "cf.add", "unknown", "ping");
    assertThat(table.select("#ops tr[data-command] td:eq(1)")).extracting(Element::text)
        .containsExactly("1,500.0", "12.5", "12.5", "0.5", "< 0.1");
    assertThat(table.selectFirst("#ops tr[data-command=unknown] td").text()).isEqualTo("(unknown commands)");

    StringBuilder idle = new StringBuilder();
    DashboardPages.opsTable(idle, List.of(new HealthHistory.Rates(1, Map.of("ping", 0.0))));
    assertThat(Jsoup.parse(idle.toString()).select("#ops tr[data-command]")).isEmpty();
    assertThat(idle).contains("No commands in the last interval.");
  }

  @Test
  void withRequirepass_thePageAndMetricsAskForThePassword_healthDoesNot() throws Exception {
    try (BloomeryServer server = start("--requirepass", "s3cret"); UnifiedJedis j = jedis(server, "s3cret")) {
      populate(j);
      int port = server.httpPort();
      for (String path : List.of("/", "/key?name=urls", "/metrics")) {
        HttpResponse<String> refused = get(port, path, null);
        assertThat(refused.statusCode()).as(path).isEqualTo(401);
        assertThat(refused.headers().firstValue("WWW-Authenticate")).hasValueSatisfying(v -> assertThat(v).startsWith("Basic realm="));
        assertThat(refused.body()).doesNotContain("urls");
        assertThat(get(port, path, basic("default", "wrong")).statusCode()).as(path).isEqualTo(401);
        assertThat(get(port, path, "Bearer wrong").statusCode()).as(path).isEqualTo(401);
        assertThat(get(port, path, "Basic !!notbase64").statusCode()).as(path).isEqualTo(401);
        assertThat(get(port, path, basic("anyone", "s3cret")).statusCode()).as(path).isEqualTo(200);
        assertThat(get(port, path, "Bearer s3cret").statusCode()).as(path).isEqualTo(200);
      }
      assertThat(get(port, "/health", null).statusCode()).isEqualTo(200);
      assertOverviewMatchesBfInfo(Jsoup.parse(get(port, "/", "Bearer s3cret").body()), j);
    }
  }

  @Test
  void httpAuthChoosesWhichCredentialsCarryThePassword() throws Exception {
    for (String mode : List.of("basic", "token", "both")) {
      try (BloomeryServer server = start("--requirepass", "s3cret", "--http-auth", mode)) {
        int port = server.httpPort();
        int basicStatus = "token".equals(mode) ? 401 : 200;
        int tokenStatus = "basic".equals(mode) ? 401 : 200;
        for (String path : List.of("/", "/metrics")) {
          assertThat(get(port, path, null).statusCode()).as(mode + " " + path).isEqualTo(401);
          assertThat(get(port, path, basic("default", "s3cret")).statusCode()).as(mode + " basic " + path)
              .isEqualTo(basicStatus);
          assertThat(get(port, path, "Bearer s3cret").statusCode()).as(mode + " token " + path)
              .isEqualTo(tokenStatus);
          assertThat(get(port, path, basic("default", "wrong")).statusCode()).as(mode + " " + path).isEqualTo(401);
          assertThat(get(port, path, "Bearer wrong").statusCode()).as(mode + " " + path).isEqualTo(401);
        }
        assertThat(get(port, "/", null).headers().firstValue("WWW-Authenticate"))
            .hasValueSatisfying(v -> assertThat(v).startsWith("token".equals(mode) ? "Bearer realm=" : "Basic realm="));
        assertThat(get(port, "/health", null).statusCode()).as(mode + " /health").isEqualTo(200);
      }
    }
  }

  @Test
  void httpAuthComesFromTheConfigFileTheEnvironmentOrAFlag_andABadValueIsOneLine() throws Exception {
    java.nio.file.Path file = java.nio.file.Files.createTempFile("bloomery", ".conf");
    try {
      java.nio.file.Files.writeString(file, "# dashboard\nhttp-auth token\n");
      assertThat(ServerConfig.parse(Map.of()).httpAuth()).isEqualTo("both");
      assertThat(ServerConfig.parse(Map.of(), file.toString()).httpAuth()).isEqualTo("token");
      assertThat(ServerConfig.parse(Map.of("BLOOMERY_HTTP_AUTH", "basic"), file.toString()).httpAuth())
          .isEqualTo("basic");
      assertThat(ServerConfig.parse(Map.of("BLOOMERY_HTTP_AUTH", "basic"), file.toString(), "--http-auth", "BOTH")
          .httpAuth()).isEqualTo("both");
      for (String bad : List.of("digest", "", "basic,token", "bearer")) {
        org.assertj.core.api.Assertions.assertThatIllegalArgumentException()
            .isThrownBy(() -> ServerConfig.parse(Map.of(), "--http-auth", bad))
            .withMessageStartingWith("http-auth must be basic, token or both, not '")
            .satisfies(e -> assertThat(e.getMessage().lines()).hasSize(1));
      }
    } finally {
      java.nio.file.Files.delete(file);
    }
  }

  @Test
  void keyNamesAreEscaped() throws Exception {
    try (BloomeryServer server = start(); UnifiedJedis j = jedis(server, null)) {
      String hostile = "<script>alert(1)</script>&\"'";
      j.bfAdd(hostile, "x");
      String body = get(server.httpPort(), "/", null).body();
      assertThat(body).doesNotContain("<script>");
      Document page = Jsoup.parse(body);
      assertThat(page.select("tr[data-key]").get(0).attr("data-key")).isEqualTo(hostile);
      String link = page.selectFirst("tr[data-key] a").attr("href");
      HttpResponse<String> keyPage = get(server.httpPort(), link, null);
      assertThat(keyPage.statusCode()).isEqualTo(200);
      assertThat(Jsoup.parse(keyPage.body()).selectFirst("h1").attr("data-key")).isEqualTo(hostile);
    }
  }

  /** The status line of a request written by hand (for targets java.net.URI refuses to build). */
  static String rawStatusLine(int port, String requestLine) throws Exception {
    try (Socket socket = new Socket("127.0.0.1", port)) {
      socket.getOutputStream().write((requestLine + "\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
          .getBytes(StandardCharsets.US_ASCII));
      BufferedReader in = new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.US_ASCII));
      return in.readLine();
    }
  }

  static String basic(String user, String password) {
    return "Basic " + Base64.getEncoder().encodeToString((user + ":" + password).getBytes(StandardCharsets.UTF_8));
  }
}
