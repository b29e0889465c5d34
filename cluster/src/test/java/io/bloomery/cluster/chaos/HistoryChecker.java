package io.bloomery.cluster.chaos;

import io.bloomery.cluster.chaos.History.Op;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/*
 * What the checker can decide exactly, and why.
 *
 * Sets: a Bloom or cuckoo filter that nobody deletes from never loses a member, and a filter has no false
 * negatives. So a read that answered 0 for an item is wrong exactly when some add of that item is known to have
 * taken effect before the read: acknowledged before the read was invoked (a linearizable read), or acknowledged at a
 * log index the read is known to include (a read at an index). A read answering 1 proves nothing (false positives),
 * but membership never goes from 1 back to 0, so a linearizable read invoked after another completed answers at
 * least what that one did.
 *
 * Counters: increments commute, so a count read is right exactly when it equals the increments known to have taken
 * effect before it (as above) plus some subset of the increments that may have: those invoked before the read
 * completed and not known to precede it — acknowledged ones concurrent with the read, and every failed or timed-out
 * one, which the client cannot tell apart from a success. Any other value is a lost acknowledged increment (too
 * small) or one applied twice or invented (too large, or a sum no subset makes). Linearizable count reads never go
 * down either.
 */

/**
 * Checks a {@link History} against what a linearizable keyspace of never-shrinking sets and counters allows:
 * <ul>
 *   <li>no read answered 0 for an item whose add is known to precede it (acknowledged before a linearizable read was
 *       invoked, or at or below the log index a read at an index includes);</li>
 *   <li>every count read equals the increments known to precede it plus a subset of those that may have (concurrent
 *       with it, or failed or timed out before it completed): an acknowledged increment counts exactly once, an
 *       unacknowledged one once or not at all, nothing else;</li>
 *   <li>linearizable reads of one item never go down (membership 1 then 0, a count that falls).</li>
 * </ul>
 */
public final class HistoryChecker {
  private HistoryChecker() {}

  private record Target(String key, String item) {
    @Override
    public String toString() {
      return key + " " + item;
    }
  }

  /** One write's total increment of one target. */
  private record Increment(Op op, long by) {}

  /** One read's answer for one target. */
  private record Seen(Op op, long value) {}

  /** Every violation in {@code history}, each naming the operations involved; empty when it is valid. */
  public static List<String> violations(History history) {
    List<Op> ops = history.ops();
    Map<Target, List<Op>> adds = new HashMap<>();
    Map<Target, List<Increment>> increments = new HashMap<>();
    Map<History.Query, Map<Target, List<Seen>>> seen = new EnumMap<>(History.Query.class);
    for (Op op : ops) {
      Map<Target, Long> sums = new HashMap<>();
      for (History.Effect e : op.effects()) {
        Target t = new Target(e.key(), e.item());
        switch (e) {
          case History.Add a -> adds.computeIfAbsent(t, k -> new ArrayList<>()).add(op);
          case History.Increment i -> sums.merge(t, i.by(), Long::sum);
        }
      }
      sums.forEach((t, by) -> increments.computeIfAbsent(t, k -> new ArrayList<>()).add(new Increment(op, by)));
      if (op.read() != null && op.ok()) {
        List<String> items = op.read().items();
        for (int i = 0; i < items.size(); i++) {
          seen.computeIfAbsent(op.read().query(), q -> new HashMap<>())
              .computeIfAbsent(new Target(op.read().key(), items.get(i)), k -> new ArrayList<>())
              .add(new Seen(op, op.answer().get(i)));
        }
      }
    }
    List<String> out = new ArrayList<>();
    seen.getOrDefault(History.Query.CONTAINS, Map.of()).forEach((t, reads) -> {
      for (Seen r : reads) {
        if (r.value() == 0) {
          adds.getOrDefault(t, List.of()).stream().filter(w -> knownBefore(w, r.op())).findFirst()
              .ifPresent(w -> out.add("read answered 0 for " + t + ", whose add was acknowledged before it:\n  "
                  + r.op() + "\n  " + w));
        } else if (r.value() != 1) {
          out.add("membership read answered " + r.value() + " for " + t + ": " + r.op());
        }
      }
      neverDecreases(t, reads, out);
    });
    seen.getOrDefault(History.Query.COUNT, Map.of()).forEach((t, reads) -> {
      List<Increment> all = increments.getOrDefault(t, List.of());
      for (Seen r : reads) {
        long known = 0;
        List<Increment> maybe = new ArrayList<>();
        for (Increment i : all) {
          if (knownBefore(i.op(), r.op())) {
            known += i.by();
          } else if (i.op().invokedAt() < r.op().completedAt()) {
            maybe.add(i);
          }
        }
        if (!subsetSum(r.value() - known, maybe)) {
          out.add("count of " + t + " read " + r.value() + ", but " + known + " was acknowledged before the read"
              + " and only these " + maybe.size() + " may also count " + byOf(maybe) + ":\n  " + r.op()
              + describe(maybe));
        }
      }
      neverDecreases(t, reads, out);
    });
    return out;
  }

  /**
   * Throws an {@link AssertionError} listing the first violations (and {@code context}, such as a seed) unless the
   * history is valid.
   */
  public static void assertValid(History history, String context) {
    List<String> violations = violations(history);
    if (!violations.isEmpty()) {
      StringBuilder message = new StringBuilder(context).append(": ").append(violations.size())
          .append(" violations in a history of ").append(summary(history)).append('\n');
      violations.stream().limit(20).forEach(v -> message.append(v).append('\n'));
      throw new AssertionError(message.toString());
    }
  }

  /** Operations by kind and outcome, for messages: {@code 812 writes (790 ok, 3 fail, 19 timeout), 240 reads (…)}. */
  public static String summary(History history) {
    Map<History.Outcome, Integer> writes = new EnumMap<>(History.Outcome.class);
    Map<History.Outcome, Integer> reads = new EnumMap<>(History.Outcome.class);
    for (Op op : history.ops()) {
      (op.read() == null ? writes : reads).merge(op.outcome(), 1, Integer::sum);
    }
    return count("writes", writes) + ", " + count("reads", reads);
  }

  private static String count(String what, Map<History.Outcome, Integer> byOutcome) {
    int total = byOutcome.values().stream().mapToInt(Integer::intValue).sum();
    StringBuilder out = new StringBuilder().append(total).append(' ').append(what).append(" (");
    for (History.Outcome o : History.Outcome.values()) {
      out.append(o == History.Outcome.OK ? "" : ", ").append(byOutcome.getOrDefault(o, 0)).append(' ')
          .append(o.name().toLowerCase(java.util.Locale.ROOT));
    }
    return out.append(')').toString();
  }

  /** Whether {@code write} is known to have taken effect before {@code read} began or at the index it includes. */
  private static boolean knownBefore(Op write, Op read) {
    if (!write.ok()) {
      return false;
    }
    History.Read r = read.read();
    return r.linearizable() ? write.completedAt() < read.invokedAt() : write.logIndex() <= r.atIndex();
  }

  /** Linearizable reads of {@code t}: one invoked after another completed answers at least what that one did. */
  private static void neverDecreases(Target t, List<Seen> reads, List<String> out) {
    List<Seen> linearizable = reads.stream().filter(r -> r.op().read().linearizable()).toList();
    List<Seen> byInvocation = linearizable.stream().sorted(Comparator.comparingLong(r -> r.op().invokedAt())).toList();
    List<Seen> byCompletion = linearizable.stream().sorted(Comparator.comparingLong(r -> r.op().completedAt()))
        .toList();
    Seen highest = null;
    int done = 0;
    for (Seen later : byInvocation) {
      while (done < byCompletion.size() && byCompletion.get(done).op().completedAt() < later.op().invokedAt()) {
        Seen earlier = byCompletion.get(done++);
        if (highest == null || earlier.value() > highest.value()) {
          highest = earlier;
        }
      }
      if (highest != null && later.value() < highest.value()) {
        out.add(t + " went down from " + highest.value() + " to " + later.value() + " between reads:\n  "
            + highest.op() + "\n  " + later.op());
      }
    }
  }

  /** Whether some subset of {@code maybe}'s increments sums to {@code target}. */
  private static boolean subsetSum(long target, List<Increment> maybe) {
    long total = maybe.stream().mapToLong(Increment::by).sum();
    if (target < 0 || target > total) {
      return false;
    }
    if (maybe.stream().allMatch(i -> i.by() == 1)) {
      return true;
    }
    if (target > 50_000_000) {
      throw new IllegalArgumentException("a count of " + target + " above what was known is too large to check");
    }
    boolean[] reachable = new boolean[(int) target + 1];
    reachable[0] = true;
    for (Increment i : maybe) {
      for (int s = (int) target; s >= i.by(); s--) {
        reachable[s] |= reachable[(int) (s - i.by())];
      }
    }
    return reachable[(int) target];
  }

  private static String byOf(List<Increment> increments) {
    return increments.stream().map(i -> Long.toString(i.by())).toList().toString();
  }

  private static String describe(List<Increment> increments) {
    StringBuilder out = new StringBuilder();
    increments.stream().limit(10).forEach(i -> out.append("\n  may count: ").append(i.op()));
    if (increments.size() > 10) {
      out.append("\n  … and ").append(increments.size() - 10).append(" more");
    }
    return out.toString();
  }
}
