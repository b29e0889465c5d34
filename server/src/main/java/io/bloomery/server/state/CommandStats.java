package io.bloomery.server.state;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

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
 * 2^24 µs (about 16.8 s) plus one above, so a command records with one bucket-index computation and a few
 * additions: no lock, no allocation, no clock read beyond the caller's.
 *
 * <p>Each thread that records (the event loops, a store's threads for deferred replies) has a shard of its own, which
 * only it writes, with plain reads and release stores ({@link LocalCounter#bump}): no atomic read-modify-write per
 * command, which on x86 would be a full fence behind the command's bit stores. Readers add up the shards (the shards
 * of threads that have ended are folded into one, as in {@link LocalCounter}); RESETSTAT,
 * which cannot write another thread's shard, records the INFO figures at that moment as a baseline that INFO
 * subtracts.
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

  /** One command's counters in one thread's shard: written by that thread only. */
  private static final class Counters {
    final AtomicLong calls = new AtomicLong();
    final AtomicLong nanos = new AtomicLong();
    final AtomicLong rejected = new AtomicLong();
    final AtomicLong failed = new AtomicLong();
    /** Monotonic, for /metrics. */
    final AtomicLongArray latency = new AtomicLongArray(FINITE_BUCKETS + 1);
    final AtomicLong latencyNanos = new AtomicLong();
    final AtomicLong errors = new AtomicLong();

    /** Adds this thread's counts to {@code total}, which only the caller writes. */
    void addTo(Counters total) {
      LocalCounter.bump(total.calls, calls.getAcquire());
      LocalCounter.bump(total.nanos, nanos.getAcquire());
      LocalCounter.bump(total.rejected, rejected.getAcquire());
      LocalCounter.bump(total.failed, failed.getAcquire());
      for (int i = 0; i < latency.length(); i++) {
        total.latency.setRelease(i, total.latency.getPlain(i) + latency.getAcquire(i));
      }
      LocalCounter.bump(total.latencyNanos, latencyNanos.getAcquire());
      LocalCounter.bump(total.errors, errors.getAcquire());
    }

    void observe(long nanos, boolean error) {
      int b = bucket(nanos);
      latency.setRelease(b, latency.getPlain(b) + 1);
      LocalCounter.bump(latencyNanos, nanos);
      if (error) {
        LocalCounter.bump(errors, 1);
      }
    }
  }

  /** INFO's four figures for one command, summed over the shards (or as of the last reset). */
  private record Info(long calls, long nanos, long rejected, long failed) {
    static final Info ZERO = new Info(0, 0, 0, 0);
  }

  /** One command's /metrics figures at a moment. */
  public record Latency(long[] buckets, long count, double sumSeconds, long errors) {}

  /** Each thread's counters, by command: written by that thread only, read by any thread. */
  private final ThreadShards<Map<String, Counters>> shards = new ThreadShards<>(ConcurrentHashMap::new,
      (ended, retired) -> ended.forEach((name, c) -> c.addTo(retired.computeIfAbsent(name, k -> new Counters()))));

  /** Every shard's counters, the ended threads' total among them, taken under the shards' lock. */
  private List<Map<String, Counters>> allCounters() {
    List<Map<String, Counters>> all = new ArrayList<>();
    shards.forEach(all::add);
    return all;
  }

  private final Map<String, Info> baseline = new ConcurrentHashMap<>();

  private Counters of(String command) {
    Map<String, Counters> mine = shards.mine();
    Counters c = mine.get(command);
    return c != null ? c : mine.computeIfAbsent(command, k -> new Counters());
  }

  /** A command that ran for {@code nanos}; {@code failed} if its reply was an error. */
  public void executed(String command, long nanos, boolean failed) {
    long n = Math.max(0, nanos);
    Counters c = of(command);
    LocalCounter.bump(c.calls, 1);
    LocalCounter.bump(c.nanos, n);
    if (failed) {
      LocalCounter.bump(c.failed, 1);
    }
    c.observe(n, failed);
  }

  /**
   * A command refused before it ran (its reply is an error), after {@code nanos} ({@code "unknown"}: a name that is
   * no command, which only /metrics counts).
   */
  public void rejected(String command, long nanos) {
    Counters c = of(command);
    if (!command.equals("unknown")) {
      LocalCounter.bump(c.rejected, 1);
    }
    c.observe(Math.max(0, nanos), true);
  }

  /** Every command's INFO figures summed over the shards, without the baseline. */
  private Map<String, Info> totals() {
    Map<String, Info> out = new TreeMap<>();
    for (Map<String, Counters> s : allCounters()) {
      s.forEach((name, c) -> out.merge(name, new Info(c.calls.getAcquire(), c.nanos.getAcquire(),
          c.rejected.getAcquire(), c.failed.getAcquire()), (a, b) -> new Info(a.calls + b.calls, a.nanos + b.nanos,
          a.rejected + b.rejected, a.failed + b.failed)));
    }
    return out;
  }

  /** CONFIG RESETSTAT: clears the INFO figures (the /metrics ones keep counting). */
  public void reset() {
    baseline.putAll(totals());
  }

  /**
   * The section's fields, sorted by command, for commands with calls or rejections since the last reset:
   * {@code cmdstat_<name>} to {@code calls=N,usec=N,usec_per_call=F,rejected_calls=N,failed_calls=N}
   * ({@code usec_per_call} with two decimals, 0.00 when there were no calls).
   */
  public Map<String, String> infoFields() {
    Map<String, String> out = new TreeMap<>();
    totals().forEach((name, total) -> {
      Info base = baseline.getOrDefault(name, Info.ZERO);
      long calls = total.calls - base.calls;
      long rejected = total.rejected - base.rejected;
      if (calls == 0 && rejected == 0) {
        return; // reset since, or only ever unknown
      }
      long usec = (total.nanos - base.nanos) / 1000;
      out.put("cmdstat_" + name, String.format(Locale.ROOT,
          "calls=%d,usec=%d,usec_per_call=%.2f,rejected_calls=%d,failed_calls=%d", calls, usec,
          calls == 0 ? 0.0 : (double) usec / calls, rejected, total.failed - base.failed));
    });
    return out;
  }

  /**
   * Every command's latency histogram (per-bucket counts, not cumulative) and error count, sorted by command; the
   * count is the sum of the buckets, so the two always agree.
   */
  public Map<String, Latency> latencies() {
    Map<String, long[]> buckets = new TreeMap<>();
    Map<String, long[]> sums = new TreeMap<>(); // latency nanos, errors
    for (Map<String, Counters> s : allCounters()) {
      s.forEach((name, c) -> {
        long[] b = buckets.computeIfAbsent(name, k -> new long[FINITE_BUCKETS + 1]);
        for (int i = 0; i < b.length; i++) {
          b[i] += c.latency.getAcquire(i);
        }
        long[] t = sums.computeIfAbsent(name, k -> new long[2]);
        t[0] += c.latencyNanos.getAcquire();
        t[1] += c.errors.getAcquire();
      });
    }
    Map<String, Latency> out = new TreeMap<>();
    buckets.forEach((name, b) -> {
      long count = 0;
      for (long n : b) {
        count += n;
      }
      out.put(name, new Latency(b, count, sums.get(name)[0] / 1e9, sums.get(name)[1]));
    });
    return out;
  }
}
