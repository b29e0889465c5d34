package io.bloomery.server.dashboard;

import io.bloomery.server.command.guard.GuardSets;
import io.bloomery.server.command.guard.GuardedKeyHealth;
import io.bloomery.server.http.Request;
import io.bloomery.server.http.Response;
import io.bloomery.server.keyspace.Key;
import io.bloomery.server.keyspace.ValueType;
import io.bloomery.server.state.ServerContext;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * The web dashboard on the server's HTTP port: {@code /} lists every key's health and every guarded key's
 * (GUARD.*), {@code /key?name=K} shows one key over time, {@code /guard?name=K} one guarded key's figures. Pages are plain HTML with server-side SVG charts; nothing is fetched from anywhere else.
 *
 * <p>The HTTP port serves it as its fallback endpoint, behind {@link io.bloomery.server.http.HttpAccess} (the
 * password, protected mode); the listener answers anything but {@code GET} and {@code HEAD} before it is called.
 */
public final class Dashboard implements AutoCloseable {
  /** How often the history is sampled unless {@code bloomery.dashboard.sample-millis} says otherwise. */
  static final long DEFAULT_SAMPLE_MILLIS = 5000;

  private final ServerContext context;
  private final GuardSets guards;
  private final HealthHistory history;

  private Dashboard(ServerContext context, GuardSets guards, HealthHistory history) {
    this.context = context;
    this.guards = guards;
    this.history = history;
  }

  /**
   * A dashboard of {@code context}'s keys and {@code guards}' guarded keys, its history sampled from now on;
   * {@link #close()} stops the sampler.
   */
  public static Dashboard start(ServerContext context, GuardSets guards) {
    long interval = Long.getLong("bloomery.dashboard.sample-millis", DEFAULT_SAMPLE_MILLIS);
    return new Dashboard(context, guards, new HealthHistory(context, Math.max(100, interval)));
  }

  /** Every live key's health (at most {@code limit}), sorted by key. */
  static List<KeyHealth> healthOfAll(ServerContext context, int limit) {
    List<KeyHealth> all = new ArrayList<>();
    for (Key key : context.servedKeyspace().keys()) {
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
    long expireAt = context.servedKeyspace().expireAt(key);
    Object value = context.servedKeyspace().peek(key);
    if (value == null || expireAt == -2) {
      return null;
    }
    if (ValueType.of(value).concurrentReads()) {
      return KeyHealth.of(key.toString(), value, expireAt);
    }
    return context.servedKeyspace().readLocked(key, v -> v == null ? null : KeyHealth.of(key.toString(), v, expireAt));
  }

  /**
   * The page at {@code request}'s path: {@code /}, {@code /key?name=K} or {@code /guard?name=K} (404 for a key that
   * does not exist), else a plain-text 404. Safe to call from several threads.
   */
  public Response serve(Request request) {
    return switch (request.path()) {
      case "/" -> page(200, DashboardPages.overview(healthOfAll(context, HealthHistory.MAX_KEYS),
          guards.health(HealthHistory.MAX_KEYS), history.rates(), context));
      case "/guard" -> {
        String name = queryParameter(request.rawQuery(), "name");
        GuardedKeyHealth guarded = name == null ? null
            : guards.health(Key.of(name.getBytes(StandardCharsets.UTF_8)));
        yield guarded == null ? page(404, DashboardPages.notFound(name)) : page(200, DashboardPages.guarded(guarded));
      }
      case "/key" -> {
        String name = queryParameter(request.rawQuery(), "name");
        KeyHealth health = name == null ? null : healthOf(context, Key.of(name.getBytes(StandardCharsets.UTF_8)));
        yield health == null ? page(404, DashboardPages.notFound(name)) : page(200,
            DashboardPages.key(health, history.of(health.key()), history.rates(), history.intervalMillis()));
      }
      default -> headers(Response.text(404, "not found\n"));
    };
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

  private static Response page(int status, String html) {
    return headers(Response.of(status, "text/html; charset=utf-8", html));
  }

  /** The dashboard's headers: nothing cached, no type sniffing, nothing loaded but the page and its inline style. */
  private static Response headers(Response response) {
    return response.with("Cache-Control", "no-store").with("X-Content-Type-Options", "nosniff")
        .with("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'");
  }

  @Override
  public void close() {
    history.close();
  }
}
