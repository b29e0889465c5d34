package io.bloomery.server.dashboard;

import com.sun.net.httpserver.Authenticator;
import com.sun.net.httpserver.HttpContext;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.bloomery.server.command.ServerContext;
import io.bloomery.server.command.guard.GuardedKeyHealth;
import io.bloomery.server.keyspace.Key;
import io.bloomery.server.keyspace.Values;
import java.io.IOException;
import java.io.OutputStream;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * The web dashboard on the server's HTTP port: {@code /} lists every key's health and every guarded key's
 * (GUARD.*), {@code /key?name=K} shows one key over time, {@code /guard?name=K} one guarded key's figures. Pages are plain HTML with server-side SVG charts; nothing is fetched from anywhere else.
 *
 * <p>With {@code requirepass} set, the dashboard and {@code /metrics} ask for the password ({@link HttpAuth});
 * {@code /health} stays open for load balancers and tells nothing about the keys beyond their number.
 */
public final class Dashboard implements AutoCloseable {
  /** How often the history is sampled unless {@code bloomery.dashboard.sample-millis} says otherwise. */
  static final long DEFAULT_SAMPLE_MILLIS = 5000;

  private final ServerContext context;
  private final HealthHistory history;

  private Dashboard(ServerContext context, HealthHistory history) {
    this.context = context;
    this.history = history;
  }

  /**
   * Registers the dashboard on {@code http} and puts {@code protect} (the {@code /metrics} context) behind the same
   * password check; the returned dashboard stops its sampler when closed.
   */
  public static Dashboard install(HttpServer http, ServerContext context, HttpContext... protect) {
    long interval = Long.getLong("bloomery.dashboard.sample-millis", DEFAULT_SAMPLE_MILLIS);
    Dashboard dashboard = new Dashboard(context, new HealthHistory(context, Math.max(100, interval)));
    Authenticator auth = new HttpAuth(context.settings());
    HttpContext root = http.createContext("/", dashboard::handle);
    root.setAuthenticator(auth);
    for (HttpContext other : protect) {
      other.setAuthenticator(auth);
    }
    return dashboard;
  }

  /** Every live key's health (at most {@code limit}), sorted by key. */
  static List<KeyHealth> healthOfAll(ServerContext context, int limit) {
    List<KeyHealth> all = new ArrayList<>();
    for (Key key : context.keyspace().keys()) {
      if (all.size() >= limit) {
        break;
      }
      KeyHealth health = healthOf(context, key);
      if (health != null) {
        all.add(health);
      }
    }
    all.sort(Comparator.comparing(KeyHealth::key));
    return all;
  }

  /** One key's health, {@code null} if it is gone; kinds unsafe for concurrent reads are read under the key lock. */
  static KeyHealth healthOf(ServerContext context, Key key) {
    long expireAt = context.keyspace().expireAt(key);
    Object value = context.keyspace().read(key);
    if (value == null || expireAt == -2) {
      return null;
    }
    if (Values.concurrentReads(value)) {
      return KeyHealth.of(key.toString(), value, expireAt);
    }
    return context.keyspace().readLocked(key, v -> v == null ? null : KeyHealth.of(key.toString(), v, expireAt));
  }

  private void handle(HttpExchange exchange) throws IOException {
    try (exchange) {
      if (!"GET".equals(exchange.getRequestMethod()) && !"HEAD".equals(exchange.getRequestMethod())) {
        respond(exchange, 405, "text/plain; charset=utf-8", "only GET\n");
        return;
      }
      String path = exchange.getRequestURI().getPath();
      switch (path) {
        case "/" -> respond(exchange, 200, "text/html; charset=utf-8",
            DashboardPages.overview(healthOfAll(context, HealthHistory.MAX_KEYS),
                context.guards().health(HealthHistory.MAX_KEYS), history.rates(), context));
        case "/guard" -> {
          String name = queryParameter(exchange.getRequestURI().getRawQuery(), "name");
          GuardedKeyHealth guarded = name == null ? null
              : context.guards().health(Key.of(name.getBytes(StandardCharsets.UTF_8)));
          if (guarded == null) {
            respond(exchange, 404, "text/html; charset=utf-8", DashboardPages.notFound(name));
          } else {
            respond(exchange, 200, "text/html; charset=utf-8", DashboardPages.guarded(guarded));
          }
        }
        case "/key" -> {
          String name = queryParameter(exchange.getRequestURI().getRawQuery(), "name");
          KeyHealth health = name == null ? null : healthOf(context, Key.of(name.getBytes(StandardCharsets.UTF_8)));
          if (health == null) {
            respond(exchange, 404, "text/html; charset=utf-8", DashboardPages.notFound(name));
          } else {
            respond(exchange, 200, "text/html; charset=utf-8",
                DashboardPages.key(health, history.of(health.key()), history.rates(), history.intervalMillis()));
          }
        }
        default -> respond(exchange, 404, "text/plain; charset=utf-8", "not found\n");
      }
    }
  }

  /** The first value of {@code name} in a raw query string, URL-decoded; {@code null} if absent or malformed. */
  static String queryParameter(String rawQuery, String name) {
    if (rawQuery == null) {
      return null;
    }
    for (String pair : rawQuery.split("&")) {
      int eq = pair.indexOf('=');
      String field = eq < 0 ? pair : pair.substring(0, eq);
      if (field.equals(name)) {
        try {
          return URLDecoder.decode(eq < 0 ? "" : pair.substring(eq + 1), StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
          return null;
        }
      }
    }
    return null;
  }

  static void respond(HttpExchange exchange, int status, String type, String body) throws IOException {
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    exchange.getResponseHeaders().set("Content-Type", type);
    exchange.getResponseHeaders().set("Cache-Control", "no-store");
    exchange.getResponseHeaders().set("X-Content-Type-Options", "nosniff");
    exchange.getResponseHeaders().set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'");
    boolean head = "HEAD".equals(exchange.getRequestMethod());
    exchange.sendResponseHeaders(status, head ? -1 : bytes.length);
    if (!head) {
      try (OutputStream out = exchange.getResponseBody()) {
        out.write(bytes);
      }
    }
  }

  @Override
  public void close() {
    history.close();
  }
}
