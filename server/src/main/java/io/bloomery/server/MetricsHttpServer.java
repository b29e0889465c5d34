package io.bloomery.server;

import io.bloomery.server.command.guard.GuardSets;
import io.bloomery.server.command.guard.GuardedKeyHealth;
import io.bloomery.server.dashboard.Dashboard;
import io.bloomery.server.http.Endpoint;
import io.bloomery.server.http.HttpAccess;
import io.bloomery.server.http.HttpLimits;
import io.bloomery.server.http.HttpListener;
import io.bloomery.server.http.Request;
import io.bloomery.server.http.Response;
import io.bloomery.server.keyspace.ValueType;
import io.bloomery.server.state.CommandStats;
import io.bloomery.server.state.ServerContext;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.prometheus.metrics.model.registry.MultiCollector;
import io.prometheus.metrics.model.snapshots.ClassicHistogramBuckets;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * {@code --http-port}: Prometheus {@code /metrics} (Micrometer's Prometheus registry), {@code /health} and the
 * {@link Dashboard}, served by an {@link HttpListener}. {@code /health} is open to every client and answered on the
 * listener's I/O thread, so neither a stalled client nor a slow page delays it; {@code /metrics} and the dashboard
 * are behind {@link HttpAccess} ({@code requirepass}, protected mode) and computed on the page threads.
 *
 * <p>Server metrics: commands by name (a latency histogram and an error counter, from {@link CommandStats}), connected clients, rejected
 * connections, filter bytes. Per key, refreshed at each scrape: kind, items, capacity, fill ratio, estimated
 * false-positive rate, layers and bytes. Persistence metrics are registered by the persistence layer through
 * {@link #registry()}.
 */
public final class MetricsHttpServer implements AutoCloseable {
  /** Keys beyond this many are left out of the per-key metrics (the scrape would grow without bound). */
  static final int MAX_KEYS_REPORTED = 1000;

  private final PrometheusMeterRegistry registry;
  private final ServerContext context;
  private final GuardSets guards;
  private final Dashboard dashboard;
  private final MultiGauge keyItems;
  private final MultiGauge keyCapacity;
  private final MultiGauge keyFill;
  private final MultiGauge keyFpr;
  private final MultiGauge keyLayers;
  private final MultiGauge keyBytes;
  private final ConcurrentHashMap<String, MultiGauge> guardGauges = new ConcurrentHashMap<>();
  private HttpListener http;

  private MetricsHttpServer(ServerContext context, GuardSets guards, Dashboard dashboard) {
    this.context = context;
    this.guards = guards;
    this.dashboard = dashboard;
    this.registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    Gauge.builder("bloomery_connected_clients", context, ServerContext::clientCount)
        .description("Connected RESP clients").register(registry);
    Gauge.builder("bloomery_rejected_connections", context, c -> c.stats().rejectedConnections.sum())
        .description("Connections refused (maxclients, protected mode)").register(registry);
    Gauge.builder("bloomery_commands_processed", context, c -> c.stats().commandsProcessed.sum())
        .register(registry);
    Gauge.builder("bloomery_keys", context, c -> c.servedKeyspace().size()).register(registry);
    Gauge.builder("bloomery_filter_bytes", context, c -> c.usedMemory())
        .description("Bytes held by filters, the figure maxmemory is compared with").register(registry);
    Gauge.builder("bloomery_maxmemory_bytes", context, c -> c.settings().maxmemory()).register(registry);
    Gauge.builder("bloomery_output_buffer_disconnections", context,
        c -> c.stats().outputBufferDisconnections.sum()).register(registry);
    Gauge.builder("bloomery_protocol_error_disconnections", context,
        c -> c.stats().protocolErrorDisconnections.sum()).register(registry);
    keyItems = MultiGauge.builder("bloomery_key_items").description("Items counted by the filter").register(registry);
    keyCapacity = MultiGauge.builder("bloomery_key_capacity").description("Items the filter is sized for")
        .register(registry);
    keyFill = MultiGauge.builder("bloomery_key_fill_ratio").description("Share of capacity used")
        .register(registry);
    keyFpr = MultiGauge.builder("bloomery_key_estimated_fpr").description("Estimated false-positive rate")
        .register(registry);
    keyLayers = MultiGauge.builder("bloomery_key_layers").description("Layers or sub-filters").register(registry);
    keyBytes = MultiGauge.builder("bloomery_key_bytes").description("Bytes held").register(registry);
    registry.getPrometheusRegistry().register(new CommandCollector(context.stats().commands));
  }

  /**
   * {@code bloomery_command_latency_seconds} (a histogram per command, fixed power-of-two buckets from 1 µs) and
   * {@code bloomery_command_errors_total}, read at each scrape from {@link CommandStats}, which records them on the
   * command path without Micrometer's per-command timer (its histogram search, window max and clock reads were
   * about 5 % of the server's CPU per BF.ADD).
   */
  private static final class CommandCollector implements MultiCollector {
    private static final double[] UPPER_BOUNDS = new double[CommandStats.FINITE_BUCKETS + 1];

    static {
      for (int i = 0; i < CommandStats.FINITE_BUCKETS; i++) {
        UPPER_BOUNDS[i] = CommandStats.bucketUpperBoundSeconds(i);
      }
      UPPER_BOUNDS[CommandStats.FINITE_BUCKETS] = Double.POSITIVE_INFINITY;
    }

    private final CommandStats stats;

    CommandCollector(CommandStats stats) {
      this.stats = stats;
    }

    @Override
    public MetricSnapshots collect() {
      HistogramSnapshot.Builder latency = HistogramSnapshot.builder().name("bloomery_command_latency_seconds")
          .help("Command execution time (the wait for the journal excluded), by command");
      CounterSnapshot.Builder errors = CounterSnapshot.builder().name("bloomery_command_errors")
          .help("Error replies, by command");
      stats.latencies().forEach((command, l) -> {
        Labels labels = Labels.of("command", command);
        latency.dataPoint(HistogramSnapshot.HistogramDataPointSnapshot.builder().labels(labels)
            .classicHistogramBuckets(ClassicHistogramBuckets.of(UPPER_BOUNDS, l.buckets())).sum(l.sumSeconds())
            .build());
        errors.dataPoint(CounterSnapshot.CounterDataPointSnapshot.builder().labels(labels).value(l.errors()).build());
      });
      return MetricSnapshots.of(latency.build(), errors.build());
    }

    @Override
    public List<String> getPrometheusNames() {
      return List.of("bloomery_command_latency_seconds", "bloomery_command_errors");
    }
  }

  /** Starts the endpoint on {@code host:port} (0: ephemeral). */
  static MetricsHttpServer start(ServerContext context, GuardSets guards, String host, int port, HttpLimits limits)
      throws IOException {
    MetricsHttpServer server = new MetricsHttpServer(context, guards, Dashboard.start(context, guards));
    HttpAccess access = new HttpAccess(context.settings(), context.acl());
    try {
      server.http = HttpListener.start(host, port, limits, access, List.of(
          Endpoint.open("/health", server::health),
          Endpoint.guarded("/metrics", server::metrics),
          Endpoint.guarded(null, server.dashboard::serve)));
    } catch (IOException | RuntimeException e) {
      server.close();
      throw e;
    }
    HttpListener http = server.http;
    Gauge.builder("bloomery_http_connections", http, HttpListener::connections)
        .description("HTTP connections being served").register(server.registry);
    FunctionCounter.builder("bloomery_http_rejected_connections", http, HttpListener::rejectedConnections)
        .description("HTTP connections refused over http-maxclients").register(server.registry);
    FunctionCounter.builder("bloomery_http_request_timeouts", http, HttpListener::requestTimeouts)
        .description("HTTP connections closed because a request did not arrive whole within http-request-timeout")
        .register(server.registry);
    FunctionCounter.builder("bloomery_http_protected_mode_denials", access, HttpAccess::denied)
        .description("HTTP requests refused by protected mode").register(server.registry);
    return server;
  }

  /** The registry, for metrics other layers add (persistence). */
  public PrometheusMeterRegistry registry() {
    return registry;
  }

  int port() {
    return http.port();
  }

  /** One scrape at a time: the per-key gauges are refreshed for it, then read. */
  private synchronized Response metrics(Request request) {
    refreshKeys();
    return Response.of(200, "text/plain; version=0.0.4; charset=utf-8", registry.scrape());
  }

  private Response health(Request request) {
    return Response.of(200, "application/json", "{\"status\":\"ok\",\"keys\":" + context.servedKeyspace().size()
        + ",\"clients\":" + context.clientCount() + "}\n");
  }

  /** The per-key series of guarded keys beside the plain keys' ones (tags key and store; state for replication). */
  private static final List<String> GUARD_SERIES = List.of("ready", "generation", "store_lookups_made",
      "store_lookups_avoided", "realized_false_positives", "insert_failures", "freshness_lag_ms",
      "replication_state");

  private static void guardRow(Map<String, List<MultiGauge.Row<?>>> rows, String name, GuardedKeyHealth g,
      double value) {
    rows.computeIfAbsent(name, n -> new ArrayList<>())
        .add(MultiGauge.Row.of(Tags.of("key", g.key(), "store", g.store()), value));
  }

  private void refreshKeys() {
    List<MultiGauge.Row<?>> items = new ArrayList<>();
    List<MultiGauge.Row<?>> capacity = new ArrayList<>();
    List<MultiGauge.Row<?>> fill = new ArrayList<>();
    List<MultiGauge.Row<?>> fpr = new ArrayList<>();
    List<MultiGauge.Row<?>> layers = new ArrayList<>();
    List<MultiGauge.Row<?>> bytes = new ArrayList<>();
    int[] reported = {0};
    context.servedKeyspace().forEach((key, value) -> {
      ValueType type = ValueType.of(value);
      if (reported[0]++ >= MAX_KEYS_REPORTED || !type.concurrentReads()) {
        return;
      }
      Tags tags = Tags.of("key", key.toString(), "kind", type.label());
      ValueType.Figures f = type.figures(value);
      items.add(MultiGauge.Row.of(tags, f.items()));
      capacity.add(MultiGauge.Row.of(tags, f.capacity()));
      fill.add(MultiGauge.Row.of(tags, f.capacity() == 0 ? 0 : (double) f.items() / f.capacity()));
      fpr.add(MultiGauge.Row.of(tags, f.fpr()));
      layers.add(MultiGauge.Row.of(tags, f.layers()));
      bytes.add(MultiGauge.Row.of(tags, type.memoryUsage(value)));
    });
    List<GuardedKeyHealth> guarded = guards.health(Math.max(0, MAX_KEYS_REPORTED - reported[0]));
    Map<String, List<MultiGauge.Row<?>>> guardRows = new HashMap<>();
    for (GuardedKeyHealth g : guarded) {
      if (!g.built()) {
        guardRow(guardRows, "ready", g, 0);
        continue;
      }
      Tags tags = Tags.of("key", g.key(), "kind", ValueType.GUARDED_SET.label());
      items.add(MultiGauge.Row.of(tags, g.filterItems()));
      capacity.add(MultiGauge.Row.of(tags, g.filterCapacity()));
      fill.add(MultiGauge.Row.of(tags, g.filterCapacity() == 0 ? 0 : (double) g.filterItems() / g.filterCapacity()));
      fpr.add(MultiGauge.Row.of(tags, g.modelFalsePositiveRate()));
      layers.add(MultiGauge.Row.of(tags, 1));
      bytes.add(MultiGauge.Row.of(tags, g.filterBits() / 8));
      guardRow(guardRows, "ready", g, 1);
      guardRow(guardRows, "generation", g, g.generation());
      guardRow(guardRows, "store_lookups_made", g, g.storeLookupsMade());
      guardRow(guardRows, "store_lookups_avoided", g, g.storeLookupsAvoided());
      guardRow(guardRows, "realized_false_positives", g, g.realizedFalsePositives());
      guardRow(guardRows, "insert_failures", g, g.insertFailures());
      guardRow(guardRows, "freshness_lag_ms", g, g.freshnessLagMillis());
      guardRows.computeIfAbsent("replication_state", n -> new ArrayList<>()).add(MultiGauge.Row.of(
          Tags.of("key", g.key(), "store", g.store(), "state", g.replicationState()), 1));
    }
    for (String name : GUARD_SERIES) {
      guardGauges.computeIfAbsent(name, n -> MultiGauge.builder("bloomery_guard_" + n)
          .description("Guarded keys: " + n.replace('_', ' ')).register(registry))
          .register(guardRows.getOrDefault(name, List.of()), true);
    }
    keyItems.register(items, true);
    keyCapacity.register(capacity, true);
    keyFill.register(fill, true);
    keyFpr.register(fpr, true);
    keyLayers.register(layers, true);
    keyBytes.register(bytes, true);
  }

  @Override
  public void close() {
    if (http != null) {
      http.close();
    }
    dashboard.close();
    registry.close();
  }
}
