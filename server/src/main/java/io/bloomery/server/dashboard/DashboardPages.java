package io.bloomery.server.dashboard;

import io.bloomery.server.keyspace.ValueType;
import io.bloomery.server.resp.RespEncoder;

import io.bloomery.server.state.ServerContext;
import io.bloomery.server.command.guard.GuardedKeyHealth;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The dashboard's HTML. Every figure sits in an element with a {@code data-field} name and its exact value in
 * {@code data-value}, so scripts (and the browser test) read numbers, not formatted text.
 */
final class DashboardPages {
  private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss 'UTC'")
      .withZone(ZoneOffset.UTC);
  private static final DateTimeFormatter SHORT_TIME = DateTimeFormatter.ofPattern("MM-dd HH:mm:ss").withZone(ZoneOffset.UTC);
  private static final String STYLE = """
      body{font-family:sans-serif;margin:1.5em;color:#1f2328}
      table{border-collapse:collapse;margin:0.5em 0 1.5em;font-size:0.92em}
      th,td{padding:4px 7px;border-bottom:1px solid #d0d7de;text-align:right;white-space:nowrap}
      th:first-child,td:first-child,.text{text-align:left}
      th{background:#f6f8fa;white-space:normal;vertical-align:bottom}
      td:first-child{white-space:normal}
      .warn{background:#fff8c5;color:#7d4e00;font-weight:bold}
      .over{background:#ffebe9;color:#a40e26;font-weight:bold}
      .muted{color:#656d76}
      .charts{display:flex;flex-wrap:wrap;align-items:flex-start}
      .charts svg{border:1px solid #d0d7de;margin:0 1em 1em 0}
      """;

  private DashboardPages() {}

  static String overview(List<KeyHealth> keys, List<GuardedKeyHealth> guarded, List<HealthHistory.Rates> rates,
      ServerContext context) {
    StringBuilder html = head("Bloomery dashboard", true);
    html.append("<h1>Bloomery</h1><p class=\"muted\">")
        .append(field("keys", context.servedKeyspace().size(), Html.count(context.servedKeyspace().size()))).append(" keys, ");
    if (!guarded.isEmpty()) { // not in the keyspace's count, but keys all the same (DBSIZE counts them)
      html.append(field("guarded_keys", guarded.size(), Html.count(guarded.size()))).append(" guarded keys, ");
    }
    html
        .append(field("clients", context.clientCount(), Html.count(context.clientCount()))).append(" clients, ")
        .append(field("ops_per_sec", latestTotal(rates), Html.number(latestTotal(rates)))).append(" ops/s, as of ")
        .append(TIME.format(Instant.now())).append(" (refreshes every 5 s)</p>");
    html.append("<table id=\"keys\"><thead><tr><th>key</th><th class=\"text\">kind</th><th>items</th><th>capacity</th>"
        + "<th>capacity used</th><th>fill ratio</th><th>est. FPR now</th><th>target FPR</th>"
        + "<th>layers</th><th>bytes</th><th>expiry (UTC)</th></tr></thead><tbody>");
    for (KeyHealth key : keys) {
      html.append("<tr data-key=\"").append(Html.escape(key.key())).append("\"><td><a href=\"/key?name=")
          .append(URLEncoder.encode(key.key(), StandardCharsets.UTF_8)).append("\">").append(Html.escape(key.key()))
          .append("</a></td><td class=\"text\">").append(field("kind", key.kind(), key.kind())).append("</td>");
      figures(html, key);
      html.append("</tr>");
    }
    html.append("</tbody></table>");
    if (keys.isEmpty()) {
      html.append("<p class=\"muted\">").append(guarded.isEmpty() ? "No keys yet." : "No keys but guarded ones (below).")
          .append("</p>");
    }
    if (!guarded.isEmpty()) {
      html.append("<h2>Guarded keys</h2>");
      guardedTable(html, "guarded", guarded, true);
    }
    opsTable(html, rates);
    return html.append("</body></html>\n").toString();
  }

  static String key(KeyHealth key, List<HealthHistory.Sample> samples, List<HealthHistory.Rates> rates,
      long intervalMillis) {
    StringBuilder html = head("Bloomery: " + key.key(), true);
    html.append("<p><a href=\"/\">all keys</a></p><h1 data-key=\"").append(Html.escape(key.key())).append("\">")
        .append(Html.escape(key.key())).append(" <span class=\"muted\">(").append(Html.escape(key.kind()))
        .append(")</span></h1>");
    html.append("<table id=\"figures\"><thead><tr><th>items</th><th>capacity</th><th>capacity used</th>"
        + "<th>fill ratio</th><th>est. FPR now</th><th>target FPR</th><th>layers</th><th>bytes</th>"
        + "<th>expiry (UTC)</th></tr></thead><tbody><tr>");
    figures(html, key);
    html.append("</tr></tbody></table><div class=\"charts\">");
    if (key.model() != null) {
      html.append(curveChart(key));
    }
    if (key.quantiles() != null) {
      html.append(quantileChart(key.quantiles()));
    }
    html.append(historyChart("fpr-history", "estimated false-positive rate over time", samples, true));
    html.append(historyChart("fill-history", "fill ratio over time", samples, false));
    html.append(opsChart(rates));
    html.append("</div><p class=\"muted\">Sampled every ").append(intervalMillis / 1000.0)
        .append(" s; the last ").append(HealthHistory.CAPACITY).append(" samples are kept in memory.</p>");
    opsTable(html, rates);
    return html.append("</body></html>\n").toString();
  }

  /** One guarded key's page: every figure of {@link #guardedTable} and its sizing. */
  static String guarded(GuardedKeyHealth key) {
    StringBuilder html = head("Bloomery: " + key.key(), true);
    html.append("<p><a href=\"/\">all keys</a></p><h1 data-key=\"").append(Html.escape(key.key())).append("\">")
        .append(Html.escape(key.key())).append(" <span class=\"muted\">(guarded, store ")
        .append(Html.escape(key.store())).append(")</span></h1>");
    guardedTable(html, "guard-figures", List.of(key), false);
    html.append("<table id=\"guard-sizing\"><thead><tr><th>target FPR</th><th>capacity</th><th>items since rebuild"
        + "</th><th>fill ratio</th></tr></thead><tbody><tr>");
    cell(html, "error_rate", key.errorRate(), Html.rate(key.errorRate()), "");
    cell(html, "capacity", key.capacity(), Html.count(key.capacity()), "");
    cell(html, "items_since_rebuild", key.itemsSinceRebuild(), Html.count(key.itemsSinceRebuild()), "");
    cell(html, "fill_ratio", key.fillRatio(), Html.percent(key.fillRatio()), "");
    html.append("</tr></tbody></table><p class=\"muted\">The realized rate counts the filter's \"maybe\" answers "
        + "that the store did not hold, over every non-member seen; the model's rate is estimated from the filter's "
        + "fill.</p>");
    return html.append("</body></html>\n").toString();
  }

  /**
   * Guarded keys' figures, one row each ({@code data-key}), as GUARD.INFO names them: generation, built at (and age),
   * store lookups made and avoided, realized false positives and rate beside the model's, insert failures, freshness
   * lag and replication state.
   */
  private static void guardedTable(StringBuilder html, String id, List<GuardedKeyHealth> keys, boolean links) {
    html.append("<table id=\"").append(id).append("\"><thead><tr>").append(links ? "<th>key</th>" : "")
        .append("<th class=\"text\">store</th><th class=\"text\">state</th><th>generation</th>"
            + "<th>built (UTC)</th><th>age</th><th>store lookups made</th><th>store lookups avoided</th>"
            + "<th>realized false positives</th><th>realized FPR</th><th>model FPR</th><th>insert failures</th>"
            + "<th>freshness lag</th><th class=\"text\">replication</th></tr></thead><tbody>");
    long now = System.currentTimeMillis();
    for (GuardedKeyHealth key : keys) {
      html.append("<tr data-key=\"").append(Html.escape(key.key())).append("\">");
      if (links) {
        html.append("<td><a href=\"/guard?name=").append(URLEncoder.encode(key.key(), StandardCharsets.UTF_8))
            .append("\">").append(Html.escape(key.key())).append("</a></td>");
      }
      html.append("<td class=\"text\">").append(field("store", key.store(), key.store())).append("</td>");
      boolean ready = key.built() && key.state().equals("ready");
      cell(html, "state", key.state(), key.state(), ready ? "text" : "text warn");
      cell(html, "generation", key.generation(), Html.count(key.generation()), "");
      String builtAt = key.builtAt() == null ? "" : key.builtAt().toString();
      cell(html, "built_at", builtAt, key.builtAt() == null ? "n/a" : SHORT_TIME.format(key.builtAt()), "");
      long ageMillis = key.builtAt() == null ? -1 : Math.max(0, now - key.builtAt().toEpochMilli());
      cell(html, "age_ms", ageMillis, ageMillis < 0 ? "n/a" : Html.duration(ageMillis), "");
      cell(html, "store_lookups_made", key.storeLookupsMade(), Html.count(key.storeLookupsMade()), "");
      cell(html, "store_lookups_avoided", key.storeLookupsAvoided(), Html.count(key.storeLookupsAvoided()), "");
      cell(html, "realized_false_positives", key.realizedFalsePositives(), Html.count(key.realizedFalsePositives()),
          "");
      boolean above = key.realizedFalsePositiveRate() > Math.max(key.errorRate(), key.modelFalsePositiveRate());
      cell(html, "realized_false_positive_rate", key.realizedFalsePositiveRate(),
          Html.rate(key.realizedFalsePositiveRate()), above ? "warn" : "");
      cell(html, "model_false_positive_rate", key.modelFalsePositiveRate(), Html.rate(key.modelFalsePositiveRate()),
          "");
      cell(html, "insert_failures", key.insertFailures(), Html.count(key.insertFailures()),
          key.insertFailures() > 0 ? "over" : "");
      cell(html, "freshness_lag_ms", key.freshnessLagMillis(),
          key.freshnessLagMillis() < 0 ? "n/a" : Html.duration(key.freshnessLagMillis()), "");
      cell(html, "replication_state", key.replicationState(), key.replicationState().isEmpty() ? "n/a"
          : key.replicationState(), "text");
      html.append("</tr>");
    }
    html.append("</tbody></table>");
  }

  static String notFound(String name) {
    StringBuilder html = head("Bloomery: no such key", false);
    html.append("<p><a href=\"/\">all keys</a></p><p>No key ")
        .append(name == null ? "named (give ?name=KEY)" : "<code>" + Html.escape(name) + "</code>").append(".</p>");
    return html.append("</body></html>\n").toString();
  }

  private static StringBuilder head(String title, boolean refresh) {
    StringBuilder html = new StringBuilder(8192);
    html.append("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>").append(Html.escape(title))
        .append("</title>");
    if (refresh) {
      html.append("<meta http-equiv=\"refresh\" content=\"5\">");
    }
    return html.append("<style>").append(STYLE).append("</style></head><body>");
  }

  private static void figures(StringBuilder html, KeyHealth key) {
    cell(html, "items", key.items(), Html.count(key.items()), "");
    cell(html, "capacity", key.capacity(), Html.count(key.capacity()), "");
    double used = key.capacityUsed();
    String usedClass = used >= 1 ? "over" : key.nearCapacity() ? "warn" : "";
    String usedText = Html.percent(used)
        + (used > 1 ? " over capacity" : used == 1 ? " at capacity" : key.nearCapacity() ? " near capacity" : "");
    cell(html, "capacity_used", used, usedText, usedClass);
    cell(html, "fill_ratio", key.fillRatio(), Html.percent(key.fillRatio()), "");
    boolean above = key.estimatedFpr() > key.targetFpr();
    cell(html, "estimated_fpr", key.estimatedFpr(), Html.rate(key.estimatedFpr()), above ? "over" : "");
    cell(html, "target_fpr", key.targetFpr(), Html.rate(key.targetFpr()), "");
    cell(html, "layers", key.layers(), Integer.toString(key.layers()), "");
    cell(html, "bytes", key.bytes(), Html.count(key.bytes()), "");
    String expiry = key.expireAtMillis() < 0 ? "none" : SHORT_TIME.format(Instant.ofEpochMilli(key.expireAtMillis()));
    cell(html, "expire_at_ms", key.expireAtMillis(), expiry, "");
  }

  private static void cell(StringBuilder html, String name, Object value, String text, String cssClass) {
    html.append("<td").append(cssClass.isEmpty() ? "" : " class=\"" + cssClass + "\"").append('>')
        .append(field(name, value, text)).append("</td>");
  }

  private static String field(String name, Object value, String text) {
    String exact = value instanceof Double d ? (d.isNaN() ? "" : Double.toString(d)) : String.valueOf(value);
    return "<span data-field=\"" + name + "\" data-value=\"" + Html.escape(exact) + "\">" + Html.escape(text)
        + "</span>";
  }

  private static String curveChart(KeyHealth key) {
    long capacity = key.capacity() > 0 ? key.capacity() : Math.max(1, key.items());
    long xMax = Math.max(Math.round(capacity * 2.2), key.items());
    int samples = 200;
    // The log axis reaches down to the first point after 0, so no drawn point is flattened onto its bottom edge.
    double low = Math.max(1e-30, SvgChart.decadeBelow(key.model().applyAsDouble(Math.max(1, xMax / samples)), 1e-30));
    double high = SvgChart.decadeAbove(key.model().applyAsDouble(xMax));
    SvgChart chart = new SvgChart("fpr-curve", "model false-positive rate vs items", 560, 300, 0, xMax,
        Math.min(low, high / 10), high, true).xLabels("0", Html.count(xMax) + " items");
    for (int i = 0; i <= samples; i++) {
      long n = Math.round((double) xMax * i / samples);
      chart.point(n, key.model().applyAsDouble(n));
    }
    if (key.capacity() > 0) {
      chart.verticalMark(key.capacity() * KeyHealth.NEAR_CAPACITY, "80%", "#d29922", "mark near-capacity");
      chart.verticalMark(key.capacity(), "capacity " + Html.count(key.capacity()), "#cf222e", "mark capacity");
    }
    chart.dot(key.items(), key.model().applyAsDouble(key.items()), "now: " + Html.count(key.items()), "present");
    return chart.render();
  }

  /** A t-digest's estimated value against the fraction of observations below it, with the median marked. */
  private static String quantileChart(double[] values) {
    double low = Double.POSITIVE_INFINITY;
    double high = Double.NEGATIVE_INFINITY;
    for (double v : values) {
      if (Double.isFinite(v)) {
        low = Math.min(low, v);
        high = Math.max(high, v);
      }
    }
    boolean none = low > high;
    SvgChart chart = new SvgChart("quantiles", none ? "estimated value by quantile (fewer than two observations)"
        : "estimated value by quantile", 560, 300, 0, 1, none ? 0 : low, none ? 1 : high, false);
    chart.xLabels("q = 0", "q = 1");
    for (int i = 0; i < values.length; i++) {
      if (Double.isFinite(values[i])) {
        chart.point(ValueType.QUANTILE_FRACTIONS[i], values[i]);
      }
    }
    if (!none) {
      double median = values[values.length / 2];
      chart.dot(0.5, median, "median " + RespEncoder.formatDouble(median), "median");
    }
    return chart.render();
  }

  private static String historyChart(String id, String title, List<HealthHistory.Sample> samples, boolean fpr) {
    long start = samples.isEmpty() ? 0 : samples.get(0).atMillis();
    long end = samples.isEmpty() ? 1 : samples.get(samples.size() - 1).atMillis();
    double low = 1;
    double high = 0;
    for (HealthHistory.Sample sample : samples) {
      double y = fpr ? sample.estimatedFpr() : sample.fillRatio();
      if (y > 0) {
        low = Math.min(low, y);
      }
      high = Math.max(high, y);
    }
    SvgChart chart = fpr
        ? new SvgChart(id, title, 560, 220, start, end, SvgChart.decadeBelow(Math.min(low, high), 1e-9),
            SvgChart.decadeAbove(high), true)
        : new SvgChart(id, title, 560, 220, start, end, 0, 1, false);
    chart.xLabels(samples.isEmpty() ? "no samples yet" : TIME.format(Instant.ofEpochMilli(start)),
        samples.isEmpty() ? "" : TIME.format(Instant.ofEpochMilli(end)));
    for (HealthHistory.Sample sample : samples) {
      double y = fpr ? sample.estimatedFpr() : sample.fillRatio();
      if (!Double.isNaN(y)) {
        chart.point(sample.atMillis(), y);
      }
    }
    return chart.render();
  }

  private static String opsChart(List<HealthHistory.Rates> rates) {
    long start = rates.isEmpty() ? 0 : rates.get(0).atMillis();
    long end = rates.isEmpty() ? 1 : rates.get(rates.size() - 1).atMillis();
    double high = 1;
    for (HealthHistory.Rates r : rates) {
      high = Math.max(high, r.total());
    }
    SvgChart chart = new SvgChart("ops-history", "commands per second (all commands)", 560, 220, start, end, 0,
        high * 1.1, false).xLabels(rates.isEmpty() ? "no samples yet" : TIME.format(Instant.ofEpochMilli(start)),
            rates.isEmpty() ? "" : TIME.format(Instant.ofEpochMilli(end)));
    for (HealthHistory.Rates r : rates) {
      chart.point(r.atMillis(), r.total());
    }
    return chart.render();
  }

  /**
   * The last interval's commands per second: the busiest first (ties by name), commands not called in it left out,
   * and {@code unknown} (names the server does not know, refused) shown as such.
   */
  static void opsTable(StringBuilder html, List<HealthHistory.Rates> rates) {
    List<Map.Entry<String, Double>> busy = rates.isEmpty() ? List.of()
        : rates.get(rates.size() - 1).perCommand().entrySet().stream()
            .filter(e -> e.getValue() > 0)
            .sorted(Map.Entry.<String, Double>comparingByValue().reversed().thenComparing(Map.Entry.comparingByKey()))
            .toList();
    html.append("<h2>Commands per second</h2><table id=\"ops\"><thead><tr><th>command</th><th>ops/s</th></tr>"
        + "</thead><tbody>");
    for (Map.Entry<String, Double> e : busy) {
      String command = e.getKey();
      double perSecond = e.getValue();
      html.append("<tr data-command=\"").append(Html.escape(command)).append("\"><td>")
          .append(command.equals("unknown") ? "(unknown commands)" : Html.escape(command)).append("</td><td>")
          .append(field("ops_per_sec", perSecond, perSecond < 0.05 ? "< 0.1" : String.format(Locale.ROOT, "%,.1f",
              perSecond))).append("</td></tr>");
    }
    html.append("</tbody></table>");
    if (rates.isEmpty()) {
      html.append("<p class=\"muted\">No interval measured yet.</p>");
    } else if (busy.isEmpty()) {
      html.append("<p class=\"muted\">No commands in the last interval.</p>");
    }
  }

  private static double latestTotal(List<HealthHistory.Rates> rates) {
    return rates.isEmpty() ? 0 : rates.get(rates.size() - 1).total();
  }
}
