package io.bloomery.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.bloomery.server.command.Errors;
import io.bloomery.server.http.HttpLimits;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * The HTTP port against hostile and careless clients, over real sockets to a real server: a stalled client holds
 * nothing but its own connection, requests that do not arrive in time or are too large are closed, connections
 * over the cap are refused without harm to the others, and protected mode covers the port.
 */
class HttpPortTest {
  /** A generous bound for an answer that must come (liveness, not speed). */
  private static final Duration ANSWER = Duration.ofSeconds(10);
  /** How long a test waits for the server to close a connection whose deadline (1 or 2 s) has passed. */
  private static final int CLOSE_WAIT_MILLIS = 15_000;

  static HttpResponse<String> get(String host, int port, String path, String authorization) throws Exception {
    HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://" + host + ":" + port + path))
        .timeout(ANSWER);
    if (authorization != null) {
      request.header("Authorization", authorization);
    }
    try (HttpClient client = HttpClient.newBuilder().connectTimeout(ANSWER).build()) {
      return client.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }
  }

  static HttpResponse<String> get(int port, String path) throws Exception {
    return get("127.0.0.1", port, path, null);
  }

  /** One HTTP response as read off a socket. */
  record Reply(int status, Map<String, String> headers, String body) {
    String header(String name) {
      return headers.get(name.toLowerCase(Locale.ROOT));
    }
  }

  /** Reads one response (its body by Content-Length; none for the answer to a HEAD). */
  static Reply read(InputStream in, boolean head) throws IOException {
    String statusLine = line(in);
    Map<String, String> headers = new TreeMap<>();
    for (String h = line(in); !h.isEmpty(); h = line(in)) {
      int colon = h.indexOf(':');
      headers.put(h.substring(0, colon).trim().toLowerCase(Locale.ROOT), h.substring(colon + 1).trim());
    }
    int length = head ? 0 : Integer.parseInt(headers.getOrDefault("content-length", "0"));
    byte[] body = in.readNBytes(length);
    assertThat(body).as("body of " + statusLine).hasSize(length);
    return new Reply(Integer.parseInt(statusLine.split(" ")[1]), headers, new String(body, StandardCharsets.UTF_8));
  }

  private static String line(InputStream in) throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (int b = in.read(); b != '\n'; b = in.read()) {
      if (b < 0) {
        throw new IOException("connection closed after '" + out + "'");
      }
      out.write(b);
    }
    String s = out.toString(StandardCharsets.US_ASCII);
    return s.endsWith("\r") ? s.substring(0, s.length() - 1) : s;
  }

  static Socket connect(int port) throws IOException {
    Socket socket = new Socket("127.0.0.1", port);
    socket.setSoTimeout(CLOSE_WAIT_MILLIS);
    return socket;
  }

  static void send(Socket socket, String text) throws IOException {
    OutputStream out = socket.getOutputStream();
    out.write(text.getBytes(StandardCharsets.ISO_8859_1));
    out.flush();
  }

  static String getRequest(String path) {
    return "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
  }

  /** Whether the server closes {@code socket} (its end of stream, or a reset) before the wait runs out. */
  static boolean closedByServer(Socket socket) throws IOException {
    try {
      InputStream in = socket.getInputStream();
      while (in.read() >= 0) {
        // discard anything still sent
      }
      return true;
    } catch (SocketTimeoutException e) {
      return false;
    } catch (IOException e) { // reset
      return true;
    }
  }

  /** The value of an unlabelled series in a Prometheus scrape. */
  static double metric(String scrape, String name) {
    return scrape.lines().filter(l -> l.startsWith(name + " ")).mapToDouble(l -> Double.parseDouble(
        l.substring(name.length() + 1))).findFirst().orElseThrow(() -> new AssertionError(name + " not in scrape"));
  }

  @Test
  void oneByteFromAStalledClient_delaysNeitherHealthNorMetricsNorTheDashboard() throws Exception {
    try (BloomeryServer server = TestServer.start(); Socket stalled = connect(server.httpPort());
        Socket silent = connect(server.httpPort())) {
      send(stalled, "G");
      HttpResponse<String> health = get(server.httpPort(), "/health");
      assertThat(health.statusCode()).isEqualTo(200);
      assertThat(health.body()).contains("\"status\":\"ok\"");
      assertThat(get(server.httpPort(), "/metrics").body()).contains("bloomery_http_connections");
      assertThat(get(server.httpPort(), "/").statusCode()).isEqualTo(200);
      send(stalled, "ET /health HTTP/1.1\r\nHost: x\r\n\r\n"); // the stalled request, finished, is still answered
      Reply reply = read(stalled.getInputStream(), false);
      assertThat(reply.status()).isEqualTo(200);
      assertThat(reply.body()).contains("\"status\":\"ok\"");
    }
  }

  @Test
  void aRequestThatDoesNotArriveWholeInTime_isClosed_andCounted() throws Exception {
    try (BloomeryServer server = TestServer.start("--http-request-timeout", "1")) {
      int port = server.httpPort();
      try (Socket oneByte = connect(port); Socket nothing = connect(port); Socket dribble = connect(port)) {
        send(oneByte, "G");
        send(dribble, "GET / HTTP/1.1\r\n");
        long end = System.nanoTime() + Duration.ofMillis(CLOSE_WAIT_MILLIS).toNanos();
        boolean dribbleClosed = false;
        while (!dribbleClosed && System.nanoTime() < end) { // a header byte every 100 ms: never whole
          try {
            send(dribble, "X");
            Thread.sleep(100);
          } catch (IOException e) {
            dribbleClosed = true;
          }
        }
        assertThat(dribbleClosed || closedByServer(dribble)).as("a request dribbled byte by byte is cut off").isTrue();
        assertThat(closedByServer(oneByte)).as("one byte and nothing more").isTrue();
        assertThat(closedByServer(nothing)).as("a connection that never sends").isTrue();
      }
      String scrape = get(port, "/metrics").body();
      assertThat(metric(scrape, "bloomery_http_request_timeouts_total")).isEqualTo(3);
    }
  }

  @Test
  void aKeptAliveConnection_isClosedAfterIdling_andServedUntilThen() throws Exception {
    try (BloomeryServer server = TestServer.start("--http-timeout", "2", "--http-request-timeout", "30");
        Socket socket = connect(server.httpPort())) {
      for (int i = 0; i < 3; i++) {
        send(socket, getRequest("/health"));
        Reply reply = read(socket.getInputStream(), false);
        assertThat(reply.status()).isEqualTo(200);
        assertThat(reply.header("Connection")).isNull(); // kept alive
      }
      assertThat(closedByServer(socket)).isTrue();
    }
  }

  @Test
  void connectionsOverTheCap_areAnswered503AndClosed_andTheServedOnesKeepWorking() throws Exception {
    try (BloomeryServer server = TestServer.start("--http-maxclients", "3")) {
      int port = server.httpPort();
      List<Socket> served = new ArrayList<>();
      try {
        for (int i = 0; i < 3; i++) {
          Socket s = connect(port);
          served.add(s);
          send(s, getRequest("/health"));
          assertThat(read(s.getInputStream(), false).status()).isEqualTo(200);
        }
        for (int i = 0; i < 2; i++) {
          try (Socket over = connect(port)) {
            send(over, getRequest("/health"));
            Reply refused = read(over.getInputStream(), false);
            assertThat(refused.status()).isEqualTo(503);
            assertThat(refused.header("Connection")).isEqualTo("close");
            assertThat(refused.body()).isEqualTo("too many HTTP connections (http-maxclients 3)\n");
            assertThat(closedByServer(over)).isTrue();
          }
        }
        for (Socket s : served) {
          send(s, getRequest("/metrics"));
          Reply metrics = read(s.getInputStream(), false);
          assertThat(metrics.status()).isEqualTo(200);
          assertThat(metric(metrics.body(), "bloomery_http_rejected_connections_total")).isEqualTo(2);
          assertThat(metric(metrics.body(), "bloomery_http_connections")).isEqualTo(3);
        }
        served.removeFirst().close();
        long end = System.nanoTime() + Duration.ofMillis(CLOSE_WAIT_MILLIS).toNanos();
        int status;
        do { // the server sees the close a moment later; then the freed place is given to the next connection
          try (Socket next = connect(port)) {
            send(next, getRequest("/health"));
            status = read(next.getInputStream(), false).status();
          }
        } while (status == 503 && System.nanoTime() < end);
        assertThat(status).isEqualTo(200);
      } finally {
        for (Socket s : served) {
          s.close();
        }
      }
    }
  }

  @Test
  void oversizedOrMalformedRequests_areRefusedAndClosed_andOthersStillServed() throws Exception {
    try (BloomeryServer server = TestServer.start()) {
      int port = server.httpPort();
      String[][] cases = {
          {"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\n" + "x".repeat(1000), "413"},
          {"GET / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n" + "4000\r\n" + "x".repeat(0x4000)
              + "\r\n4000\r\n" + "x".repeat(0x4000) + "\r\n0\r\n\r\n", "413"},
          {"GET /key?name=" + "k".repeat(HttpLimits.MAX_REQUEST_LINE_BYTES) + " HTTP/1.1\r\nHost: x\r\n\r\n", "414"},
          {"GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + "v".repeat(HttpLimits.MAX_HEADER_BYTES) + "\r\n\r\n", "431"},
          {"GET /%zz HTTP/1.1\r\nHost: x\r\n\r\n", "400"},
          {"\u0001\u0002 not http at all\r\n\r\n", "400"}};
      for (String[] c : cases) {
        try (Socket socket = connect(port)) {
          try {
            send(socket, c[0]);
          } catch (IOException e) {
            // the server may answer and close before the whole request is written: its answer is still read
          }
          Reply reply = read(socket.getInputStream(), false);
          assertThat(reply.status()).as(c[1]).isEqualTo(Integer.parseInt(c[1]));
          assertThat(reply.header("Connection")).as(c[1]).isEqualTo("close");
          assertThat(closedByServer(socket)).as(c[1]).isTrue();
        }
      }
      assertThat(get(port, "/health").statusCode()).isEqualTo(200);
    }
  }

  @Test
  void pipelinedRequests_areAnsweredInOrder_andHeadHasTheLengthButNoBody() throws Exception {
    try (BloomeryServer server = TestServer.start(); Socket socket = connect(server.httpPort())) {
      send(socket, getRequest("/metrics") + getRequest("http://127.0.0.1/health?x=1")
          + "HEAD / HTTP/1.1\r\nHost: x\r\n\r\n"
          + getRequest("/nope") + "POST /health HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nhi"
          + "GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n" + getRequest("/health"));
      InputStream in = socket.getInputStream();
      Reply metrics = read(in, false);
      assertThat(metrics.status()).isEqualTo(200);
      assertThat(metrics.header("Content-Type")).isEqualTo("text/plain; version=0.0.4; charset=utf-8");
      assertThat(metrics.body()).contains("bloomery_keys 0");
      Reply health = read(in, false);
      assertThat(health.header("Content-Type")).isEqualTo("application/json");
      assertThat(health.body()).isEqualTo("{\"status\":\"ok\",\"keys\":0,\"clients\":0}\n");
      Reply head = read(in, true);
      assertThat(head.status()).isEqualTo(200);
      assertThat(head.header("Content-Type")).isEqualTo("text/html; charset=utf-8");
      assertThat(head.header("Cache-Control")).isEqualTo("no-store");
      assertThat(Integer.parseInt(head.header("Content-Length")))
          .isEqualTo(get(server.httpPort(), "/").body().getBytes(StandardCharsets.UTF_8).length);
      Reply notFound = read(in, false);
      assertThat(notFound.status()).isEqualTo(404);
      assertThat(notFound.body()).isEqualTo("not found\n");
      Reply post = read(in, false);
      assertThat(post.status()).isEqualTo(405);
      assertThat(post.header("Allow")).isEqualTo("GET, HEAD");
      Reply lastOne = read(in, false);
      assertThat(lastOne.status()).isEqualTo(200);
      assertThat(lastOne.header("Connection")).isEqualTo("close");
      assertThat(in.read()).as("nothing after the request that asked to close").isEqualTo(-1);
    }
  }

  @Test
  void protectedMode_refusesClientsNotOnLoopback_untilAPasswordIsSetOrItIsOff() throws Exception {
    // a real client connecting to the machine's own non-loopback address, so the server sees a non-loopback peer
    String local = SecurityAndLimitsTest.nonLoopbackLocalAddress().orElse(null);
    assumeTrue(local != null, "no non-loopback IPv4 interface on this machine");
    try (BloomeryServer server = TestServer.start("--bind", "0.0.0.0")) {
      int port = server.httpPort();
      for (String path : List.of("/", "/metrics", "/key?name=urls", "/guard?name=g", "/nope")) {
        HttpResponse<String> denied = get(local, port, path, null);
        assertThat(denied.statusCode()).as(path).isEqualTo(403);
        assertThat(denied.body()).as(path).isEqualTo(Errors.DENIED + "\n");
        assertThat(get("127.0.0.1", port, path, null).statusCode()).as(path).isNotEqualTo(403);
      }
      HttpResponse<String> health = get(local, port, "/health", null);
      assertThat(health.statusCode()).isEqualTo(200);
      assertThat(health.body()).contains("\"status\":\"ok\"");
      assertThat(metric(get(port, "/metrics").body(), "bloomery_http_protected_mode_denials_total")).isEqualTo(5);
    }
    try (BloomeryServer server = TestServer.start("--bind", "0.0.0.0", "--requirepass", "pw")) {
      assertThat(get(local, server.httpPort(), "/metrics", null).statusCode()).isEqualTo(401);
      assertThat(get(local, server.httpPort(), "/metrics", "Bearer pw").statusCode()).isEqualTo(200);
    }
    try (BloomeryServer server = TestServer.start("--bind", "0.0.0.0", "--protected-mode", "no")) {
      assertThat(get(local, server.httpPort(), "/", null).statusCode()).isEqualTo(200);
    }
  }

  @Test
  void theHttpOptions_areCheckedWithOneLineErrors() {
    assertThat(ServerConfig.parse(Map.of()).httpLimits()).isEqualTo(new HttpLimits(128, 10_000, 60_000));
    assertThat(ServerConfig.parse(Map.of("BLOOMERY_HTTP_MAXCLIENTS", "7"), "--http-timeout", "5",
        "--http-request-timeout", "2").httpLimits()).isEqualTo(new HttpLimits(7, 2_000, 5_000));
    for (String[] bad : new String[][] {
        {"--http-maxclients", "0", "http-maxclients must be in [1, 100000], not 0"},
        {"--http-timeout", "0", "http-timeout must be in [1, 86400], not 0"},
        {"--http-request-timeout", "x", "http-request-timeout must be an integer, not 'x'"}}) {
      org.assertj.core.api.Assertions.assertThatIllegalArgumentException()
          .isThrownBy(() -> ServerConfig.parse(Map.of(), bad[0], bad[1])).withMessage(bad[2]);
    }
  }

  @Test
  void anIdleHttpPort_usesNoCpu() throws Exception {
    ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    assumeTrue(threads.isThreadCpuTimeSupported(), "no per-thread CPU time on this JVM");
    try (BloomeryServer server = TestServer.start(); Socket kept = connect(server.httpPort())) {
      send(kept, getRequest("/"));
      assertThat(read(kept.getInputStream(), false).status()).isEqualTo(200);
      long before = httpThreadsCpuNanos(threads);
      Thread.sleep(2000);
      long used = httpThreadsCpuNanos(threads) - before;
      assertThat(used).as("CPU of the HTTP threads over 2 s idle, ns").isLessThan(100_000_000L); // < 5 % of a core
    }
  }

  private static long httpThreadsCpuNanos(ThreadMXBean threads) {
    long sum = 0;
    for (Thread t : Thread.getAllStackTraces().keySet()) {
      if (t.getName().startsWith("bloomery-http")) {
        sum += Math.max(0, threads.getThreadCpuTime(t.threadId()));
      }
    }
    return sum;
  }
}
