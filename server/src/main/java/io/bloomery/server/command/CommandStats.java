package io.bloomery.server.command;

import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * Per-command counters, recorded once per command on the connection's thread, read by two consumers.
 *
 * <p>{@code INFO commandstats}, in Redis's meaning: {@code calls} counts commands that ran (a failed one included),
 * {@code usec} their total execution time in microseconds, {@code failed_calls} those that ran and answered an
 * error, {@code rejected_calls} those refused before running (wrong arity, NOAUTH, OOM, EXECABORT). Unknown commands
 * are counted nowhere there, as in Redis. {@code CONFIG RESETSTAT} clears these.
 *
 * <p>{@code /metrics} and the dashboard: a latency histogram per command over every command answered (refused and
 * unknown ones included, under {@code "unknown"} for the latter) and the error replies among them. These only grow
 * (Prometheus counters), so RESETSTAT leaves them alone. The histogram has fixed power-of-two buckets from 1 µs to
 * 2^24 µs (about 16.8 s) plus one above, so a command records with one bucket-index computation and three
 * {@link LongAdder} additions: no lock, no allocation, no clock read beyond the caller's.
 */
public final class CommandStats {
  /** Finite latency buckets; bucket {@code i} counts latencies in (2^(i-1), 2^i] µs (bucket 0: up to 1 µs). */
  public static final int FINITE_BUCKETS = 25;

  /** The upper bound of finite bucket {@code i}, in seconds. */
  public static double bucketUpperBoundSeconds(int i) {
    return (1L << i) / 1e6;
  }

  /** The bucket of a latency: 0..{@link #FINITE_BUCKETS} (the last one: above every finite bound). */
  static int bucket(long nanos) {
    if (nanos <= 1000) {
      return 0;
    }
    long micros = (nanos + 999) / 1000; // rounded up: a bound holds every latency up to and including it
    return Math.min(FINITE_BUCKETS, 64 - Long.numberOfLeadingZeros(micros - 1));
  }

  private static final class Counters {
    final LongAdder calls = new LongAdder();
    final LongAdder nanos = new LongAdder();
    final LongAdder rejected = new LongAdder();
    final LongAdder failed = new LongAdder();
    /** Monotonic, for /metrics. */
    final LongAdder[] latency = new LongAdder[FINITE_BUCKETS + 1];
    final LongAdder latencyNanos = new LongAdder();
    final LongAdder errors = new LongAdder();

    Counters() {
      for (int i = 0; i < latency.length; i++) {
        latency[i] = new LongAdder();
      }
    }

    void observe(long nanos, boolean error) {
      latency[bucket(nanos)].increment();
      latencyNanos.add(nanos);
      if (error) {
        errors.increment();
      }
    }
  }

  /** One command's /metrics figures at a moment. */
  public record Latency(long[] buckets, long count, double sumSeconds, long errors) {}

  private final ConcurrentHashMap<String, Counters> byCommand = new ConcurrentHashMap<>();

  private Counters of(String command) {
    Counters c = byCommand.get(command);
    return c != null ? c : byCommand.computeIfAbsent(command, k -> new Counters());
  }

  /** A command that ran for {@code nanos}; {@code failed} if its reply was an error. */
  void executed(String command, long nanos, boolean failed) {
    long n = Math.max(0, nanos);
    Counters c = of(command);
    c.calls.increment();
    c.nanos.add(n);
    if (failed) {
      c.failed.increment();
    }
    c.observe(n, failed);
  }

  /**
   * A command refused before it ran (its reply is an error), after {@code nanos} ({@code "unknown"}: a name that is
   * no command, which only /metrics counts).
   */
  void rejected(String command, long nanos) {
    Counters c = of(command);
    if (!command.equals("unknown")) {
      c.rejected.increment();
    }
    c.observe(Math.max(0, nanos), true);
  }

  /** CONFIG RESETSTAT: clears the INFO figures (the /metrics ones keep counting). */
  void reset() {
    byCommand.forEach((name, c) -> {
      c.calls.reset();
      c.nanos.reset();
      c.rejected.reset();
      c.failed.reset();
    });
  }

  /**
   * The section's fields, sorted by command, for commands with calls or rejections since the last reset:
   * {@code cmdstat_<name>} to {@code calls=N,usec=N,usec_per_call=F,rejected_calls=N,failed_calls=N}
   * ({@code usec_per_call} with two decimals, 0.00 when there were no calls).
   */
  Map<String, String> infoFields() {
    Map<String, String> out = new TreeMap<>();
    byCommand.forEach((name, c) -> {
      long calls = c.calls.sum();
      long rejected = c.rejected.sum();
      if (calls == 0 && rejected == 0) {
        return; // reset since, or only ever unknown
      }
      long usec = c.nanos.sum() / 1000;
      out.put("cmdstat_" + name, String.format(Locale.ROOT,
          "calls=%d,usec=%d,usec_per_call=%.2f,rejected_calls=%d,failed_calls=%d", calls, usec,
          calls == 0 ? 0.0 : (double) usec / calls, rejected, c.failed.sum()));
    });
    return out;
  }

  /**
   * Every command's latency histogram (per-bucket counts, not cumulative) and error count, sorted by command; the
   * count is the sum of the buckets, so the two always agree.
   */
  public Map<String, Latency> latencies() {
    Map<String, Latency> out = new TreeMap<>();
    byCommand.forEach((name, c) -> {
      long[] buckets = new long[c.latency.length];
      long count = 0;
      for (int i = 0; i < buckets.length; i++) {
        buckets[i] = c.latency[i].sum();
        count += buckets[i];
      }
      out.put(name, new Latency(buckets, count, c.latencyNanos.sum() / 1e9, c.errors.sum()));
    });
    return out;
  }
}
