package io.bloomery.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.Test;

/** /metrics and /health over real HTTP, idle timeout, CLIENT KILL, INFO sections. */
class OperationsTest {

  private static String get(int port, String path) throws Exception {
    HttpClient http = HttpClient.newHttpClient();
    HttpResponse<String> response = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
        .build(), HttpResponse.BodyHandlers.ofString());
    assertThat(response.statusCode()).isEqualTo(200);
    return response.body();
  }

  @Test
  void metricsShowCommandsClientsAndEveryKey() throws Exception {
    try (BloomeryServer server = TestServer.start(); RawClient c = new RawClient(server.port())) {
      c.call("BF.RESERVE", "urls", "0.01", "1000");
      c.call("BF.MADD", "urls", "a", "b", "c");
      c.call("CF.ADD", "cf", "x");
      c.call("NOPE");
      assertThat(get(server.httpPort(), "/health")).contains("\"status\":\"ok\"").contains("\"keys\":2");
      String metrics = get(server.httpPort(), "/metrics");
      assertThat(metrics).contains("bloomery_command_latency_seconds_count{command=\"bf.madd\"} 1")
          .contains("bloomery_command_latency_seconds_bucket{command=\"bf.madd\"")
          .contains("bloomery_command_errors_total{command=\"unknown\"} 1")
          .contains("bloomery_connected_clients 1")
          .contains("bloomery_key_items{key=\"urls\",kind=\"bloom\"} 3")
          .contains("bloomery_key_capacity{key=\"urls\",kind=\"bloom\"} 1000")
          .contains("bloomery_key_layers{key=\"urls\",kind=\"bloom\"} 1")
          .contains("bloomery_key_bytes{key=\"cf\",kind=\"cuckoo\"}")
          .contains("bloomery_key_estimated_fpr{key=\"urls\"")
          .contains("bloomery_key_fill_ratio{key=\"urls\",kind=\"bloom\"} 0.003")
          .contains("bloomery_rejected_connections 0");
      String info = c.call("INFO");
      for (String section : new String[] {"# Server", "# Clients", "# Memory", "# Persistence", "# Stats",
          "# Keyspace", "# Bloomery"}) {
        assertThat(info).contains(section);
      }
      assertThat(info).contains("db0:keys=2,expires=0").contains("aof_enabled:0").contains("connected_clients:1");
    }
  }

  @Test
  void idleClientsAreClosedAfterTheTimeout() {
    try (BloomeryServer server = TestServer.start("--timeout", "1"); RawClient c = new RawClient(server.port())) {
      assertThat(c.call("PING")).isEqualTo("+PONG\r\n");
      assertThat(c.closedByServer()).isTrue();
    }
  }

  @Test
  void clientKillClosesAnotherConnection() {
    try (BloomeryServer server = TestServer.start();
        RawClient killer = new RawClient(server.port());
        RawClient victim = new RawClient(server.port())) {
      String id = victim.call("CLIENT", "ID").replaceAll("[:\r\n]", "");
      assertThat(killer.call("CLIENT", "KILL", "ID", id)).isEqualTo(":1\r\n");
      assertThat(victim.closedByServer()).isTrue();
      assertThat(killer.call("CLIENT", "KILL", "ID", "999")).isEqualTo(":0\r\n");
    }
  }
}
