package io.bloomery.server.dashboard;

import io.bloomery.server.state.ServerContext;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * The dashboard's memory: every few seconds a sample of each key's estimated false-positive rate and fill, and of
 * the commands executed (the counts of the per-command latency histograms of {@code /metrics}, so nothing is counted
 * twice).
 * Ring buffers of {@link #CAPACITY} samples, in memory only: a restart starts them afresh.
 */
final class HealthHistory implements AutoCloseable {
  /** Samples kept per key: half an hour at the default interval. */
  static final int CAPACITY = 360;
  /** Keys followed; beyond this many the rest are shown without history (as /metrics caps its keys). */
  static final int MAX_KEYS = 1000;

  /** One key's figures at one moment. */
  record Sample(long atMillis, long items, double fillRatio, double estimatedFpr) {}

  /** Commands per second over one interval, by command name. */
  record Rates(long atMillis, Map<String, Double> perCommand) {
    double total() {
      return perCommand.values().stream().mapToDouble(Double::doubleValue).sum();
    }
  }

  private final ServerContext context;
  private final long intervalMillis;
  private final ConcurrentHashMap<String, ArrayDeque<Sample>> keys = new ConcurrentHashMap<>();
  private final ArrayDeque<Rates> rates = new ArrayDeque<>();
  private Map<String, Long> lastCounts = Map.of();
  private long lastCountMillis;
  private final ScheduledExecutorService sampler;

  HealthHistory(ServerContext context, long intervalMillis) {
    this.context = context;
    this.intervalMillis = intervalMillis;
    this.sampler = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "bloomery-dashboard-sampler");
      t.setDaemon(true);
      return t;
    });
    sampler.scheduleAtFixedRate(this::sampleQuietly, 0, intervalMillis, TimeUnit.MILLISECONDS);
  }

  long intervalMillis() {
    return intervalMillis;
  }

  private void sampleQuietly() {
    try {
      sample();
    } catch (RuntimeException e) {
      // A key that changes kind mid-read is seen again at the next tick; the sampler must not die.
    }
  }

  synchronized void sample() {
    long now = System.currentTimeMillis();
    Set<String> live = new HashSet<>();
    for (KeyHealth health : Dashboard.healthOfAll(context, MAX_KEYS)) {
      live.add(health.key());
      ArrayDeque<Sample> ring = keys.computeIfAbsent(health.key(), k -> new ArrayDeque<>());
      synchronized (ring) {
        if (ring.size() == CAPACITY) {
          ring.removeFirst();
        }
        ring.addLast(new Sample(now, health.items(), health.fillRatio(), health.estimatedFpr()));
      }
    }
    keys.keySet().retainAll(live);
    Map<String, Long> counts = commandCounts();
    if (lastCountMillis != 0) {
      double seconds = Math.max(1e-3, (now - lastCountMillis) / 1000.0);
      Map<String, Double> perCommand = new TreeMap<>();
      counts.forEach((command, count) -> {
        long delta = count - lastCounts.getOrDefault(command, 0L);
        perCommand.put(command, delta / seconds);
      });
      synchronized (rates) {
        if (rates.size() == CAPACITY) {
          rates.removeFirst();
        }
        rates.addLast(new Rates(now, perCommand));
      }
    }
    lastCounts = counts;
    lastCountMillis = now;
  }

  private Map<String, Long> commandCounts() {
    Map<String, Long> counts = new TreeMap<>();
    context.stats().commands.latencies().forEach((command, latency) -> counts.put(command, latency.count()));
    return counts;
  }

  /** The samples of {@code key}, oldest first; empty if it has none yet. */
  List<Sample> of(String key) {
    ArrayDeque<Sample> ring = keys.get(key);
    if (ring == null) {
      return List.of();
    }
    synchronized (ring) {
      return new ArrayList<>(ring);
    }
  }

  /** Commands per second, oldest interval first. */
  List<Rates> rates() {
    synchronized (rates) {
      return new ArrayList<>(rates);
    }
  }

  @Override
  public void close() {
    sampler.shutdownNow();
  }
}
