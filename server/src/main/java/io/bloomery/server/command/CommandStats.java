package io.bloomery.server.command;

import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * Per-command counters for {@code INFO commandstats}, in Redis's meaning: {@code calls} counts commands that ran
 * (a failed one included), {@code usec} their total execution time in microseconds, {@code failed_calls} those that
 * ran and answered an error, {@code rejected_calls} those refused before running (wrong arity, NOAUTH, OOM,
 * EXECABORT). Unknown commands are counted nowhere, as in Redis. Thread-safe; {@code CONFIG RESETSTAT} clears it.
 */
public final class CommandStats {
  private static final class Counters {
    final LongAdder calls = new LongAdder();
    final LongAdder nanos = new LongAdder();
    final LongAdder rejected = new LongAdder();
    final LongAdder failed = new LongAdder();
  }

  private final ConcurrentHashMap<String, Counters> byCommand = new ConcurrentHashMap<>();

  /** A command that ran for {@code nanos}; {@code failed} if its reply was an error. */
  void executed(String command, long nanos, boolean failed) {
    Counters c = byCommand.computeIfAbsent(command, k -> new Counters());
    c.calls.increment();
    c.nanos.add(Math.max(0, nanos));
    if (failed) {
      c.failed.increment();
    }
  }

  /** A command refused before it ran. */
  void rejected(String command) {
    if (!command.equals("unknown")) {
      byCommand.computeIfAbsent(command, k -> new Counters()).rejected.increment();
    }
  }

  void reset() {
    byCommand.clear();
  }

  /**
   * The section's fields, sorted by command: {@code cmdstat_<name>} to
   * {@code calls=N,usec=N,usec_per_call=F,rejected_calls=N,failed_calls=N} ({@code usec_per_call} with two
   * decimals, 0.00 when there were no calls).
   */
  Map<String, String> infoFields() {
    Map<String, String> out = new TreeMap<>();
    byCommand.forEach((name, c) -> {
      long calls = c.calls.sum();
      long usec = c.nanos.sum() / 1000;
      out.put("cmdstat_" + name, String.format(Locale.ROOT,
          "calls=%d,usec=%d,usec_per_call=%.2f,rejected_calls=%d,failed_calls=%d", calls, usec,
          calls == 0 ? 0.0 : (double) usec / calls, c.rejected.sum(), c.failed.sum()));
    });
    return out;
  }
}
