package io.bloomery.server.state;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Redis's latency monitor: events (here {@code command} and {@code fast-command}) that took at least
 * {@code latency-monitor-threshold} milliseconds (0: monitoring off). Each event keeps its latest and its
 * all-time highest sample and a history of up to 160 samples, one per second (the highest in that second), as
 * Redis's LATENCY LATEST and HISTORY show them. Thread-safe.
 */
public final class LatencyMonitor {
  static final int HISTORY = 160;

  /** One sample: when (unix seconds) and how long (ms). */
  public record Sample(long unixSeconds, long millis) {}

  /** One event's figures. */
  public static final class Event {
    final List<Sample> history = new ArrayList<>();
    long max;

    public List<Sample> history() {
      return List.copyOf(history);
    }

    public Sample latest() {
      return history.getLast();
    }

    public long max() {
      return max;
    }
  }

  private final Map<String, Event> events = new TreeMap<>();

  /** Records that {@code event} took {@code millis} if monitoring is on and it reached the threshold. */
  public void observe(Settings settings, String event, long millis) {
    long threshold = settings.latencyMonitorThreshold();
    if (threshold <= 0 || millis < threshold) {
      return;
    }
    long now = System.currentTimeMillis() / 1000;
    synchronized (this) {
      Event e = events.computeIfAbsent(event, k -> new Event());
      e.max = Math.max(e.max, millis);
      if (!e.history.isEmpty() && e.history.getLast().unixSeconds() == now) {
        Sample last = e.history.removeLast();
        e.history.add(new Sample(now, Math.max(last.millis(), millis)));
      } else {
        e.history.add(new Sample(now, millis));
        if (e.history.size() > HISTORY) {
          e.history.removeFirst();
        }
      }
    }
  }

  /** Every event with samples, by name. */
  public synchronized Map<String, Event> events() {
    return new TreeMap<>(events);
  }

  /** The event's figures, or {@code null}. */
  public synchronized Event event(String name) {
    return events.get(name);
  }

  /** Forgets the named events (all when none is named); returns how many had samples. */
  public synchronized int reset(List<String> names) {
    if (names.isEmpty()) {
      int n = events.size();
      events.clear();
      return n;
    }
    int n = 0;
    for (String name : names) {
      if (events.remove(name) != null) {
        n++;
      }
    }
    return n;
  }
}
