package io.bloomery.cluster.chaos;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.LongSupplier;

/**
 * What concurrent clients did to a replicated keyspace, as they saw it: each operation's invocation and its
 * completion ({@code ok}, {@code fail} or {@code timeout}) with monotonic timestamps, for {@link HistoryChecker}.
 * Clients record through it from any thread; an operation never completed counts as timed out.
 *
 * <p>A write is a list of {@link Effect}s it has if it takes effect: items added to a set kind (BF.ADD, BF.MADD,
 * CF.ADD) and increments of a counted item (CMS.INCRBY, and CF.ADD as CF.COUNT counts it). A read is a
 * {@link Read}: membership or counts of items of one key, ordered against writes either in time (a linearizable read
 * on the leader) or by log index (a read on a replica once it applied a given index).
 *
 * <p>A {@code fail} or a {@code timeout} of a write means the client does not know whether it took effect: the
 * checker allows either. A failed or timed-out read says nothing and is not checked.
 */
public final class History {

  /** What a write does if it takes effect. */
  public sealed interface Effect permits Add, Increment {
    String key();

    String item();
  }

  /** {@code item} becomes a member of set {@code key} (a Bloom or cuckoo filter: members are never lost). */
  public record Add(String key, String item) implements Effect {}

  /** {@code item}'s count in {@code key} grows by {@code by} (positive). */
  public record Increment(String key, String item, long by) implements Effect {
    public Increment {
      if (by <= 0) {
        throw new IllegalArgumentException("increment " + by + " is not positive");
      }
    }
  }

  /** What a read asks of one key. */
  public enum Query {
    /** Membership: the answer per item is 1 (present) or 0 (absent). A Bloom kind may answer 1 falsely, never 0. */
    CONTAINS,
    /** Counts: the answer per item is its count. */
    COUNT
  }

  /** Sentinel {@link Read#atIndex} of a linearizable read. */
  public static final long LINEARIZABLE = -1;

  /**
   * A read of {@code items} of {@code key}.
   *
   * @param atIndex {@link #LINEARIZABLE}: the read sees every write acknowledged before it was invoked; otherwise a
   *     log index: the read sees every write acknowledged at that index or below, and perhaps later ones
   */
  public record Read(Query query, String key, List<String> items, long atIndex) {
    public Read {
      Objects.requireNonNull(query, "query");
      Objects.requireNonNull(key, "key");
      items = List.copyOf(items);
      if (atIndex < LINEARIZABLE) {
        throw new IllegalArgumentException("log index " + atIndex + " is negative");
      }
    }

    /** A linearizable read. */
    public static Read linearizable(Query query, String key, List<String> items) {
      return new Read(query, key, items, LINEARIZABLE);
    }

    /** A read that sees at least every write acknowledged at log index {@code index} or below. */
    public static Read atIndex(Query query, String key, List<String> items, long index) {
      if (index < 0) {
        throw new IllegalArgumentException("log index " + index + " is negative");
      }
      return new Read(query, key, items, index);
    }

    boolean linearizable() {
      return atIndex == LINEARIZABLE;
    }
  }

  /** How an operation ended. */
  public enum Outcome {
    /** Acknowledged: a write took effect, a read answered. */
    OK,
    /** An error: a write may or may not have taken effect. */
    FAIL,
    /** No answer in time (or none at all): a write may or may not have taken effect. */
    TIMEOUT
  }

  /**
   * One operation: a write ({@link #effects} not empty) or a read ({@link #read} not null). Complete it exactly once
   * with {@link #ok}, {@link #fail} or {@link #timeout}.
   */
  public final class Op {
    private final int id;
    private final String client;
    private final String description;
    private final List<Effect> effects;
    private final Read read;
    private final long invokedAt;
    private Outcome outcome;
    private long completedAt = Long.MAX_VALUE;
    private long logIndex = -1;
    private List<Long> answer;
    private String error;

    private Op(int id, String client, String description, List<Effect> effects, Read read, long invokedAt) {
      this.id = id;
      this.client = client;
      this.description = description;
      this.effects = effects;
      this.read = read;
      this.invokedAt = invokedAt;
    }

    /** A write was acknowledged at {@code logIndex}. */
    public void ok(long logIndex) {
      if (read != null) {
        throw new IllegalStateException("a read completes with its answer");
      }
      complete(Outcome.OK, logIndex, null, null);
    }

    /**
     * A read answered, one value per item: 1/0 for {@link Query#CONTAINS}, the count for {@link Query#COUNT}.
     */
    public void ok(List<Long> answer) {
      if (read == null) {
        throw new IllegalStateException("a write completes with its log index");
      }
      if (answer.size() != read.items().size()) {
        throw new IllegalArgumentException(answer.size() + " answers to " + read.items().size() + " items");
      }
      complete(Outcome.OK, -1, List.copyOf(answer), null);
    }

    /** An error, with what it said. */
    public void fail(String error) {
      complete(Outcome.FAIL, -1, null, error);
    }

    /** No answer in time. */
    public void timeout(String error) {
      complete(Outcome.TIMEOUT, -1, null, error);
    }

    private void complete(Outcome outcome, long logIndex, List<Long> answer, String error) {
      long now = clock.getAsLong();
      synchronized (History.this) {
        if (this.outcome != null) {
          throw new IllegalStateException(this + " completed twice");
        }
        this.outcome = outcome;
        this.completedAt = now;
        this.logIndex = logIndex;
        this.answer = answer;
        this.error = error;
      }
    }

    public int id() {
      return id;
    }

    public String client() {
      return client;
    }

    /** The command as the client sent it, for messages. */
    public String description() {
      return description;
    }

    /** A write's effects; empty for a read. */
    public List<Effect> effects() {
      return effects;
    }

    /** A read's question; {@code null} for a write. */
    public Read read() {
      return read;
    }

    public long invokedAt() {
      return invokedAt;
    }

    /** When it completed; {@link Long#MAX_VALUE} while it has not. */
    public long completedAt() {
      synchronized (History.this) {
        return completedAt;
      }
    }

    /** Its outcome; {@link Outcome#TIMEOUT} while it has not completed. */
    public Outcome outcome() {
      synchronized (History.this) {
        return outcome == null ? Outcome.TIMEOUT : outcome;
      }
    }

    /** An acknowledged write's log index; -1 otherwise. */
    public long logIndex() {
      synchronized (History.this) {
        return logIndex;
      }
    }

    /** An acknowledged read's answer; {@code null} otherwise. */
    public List<Long> answer() {
      synchronized (History.this) {
        return answer;
      }
    }

    /** Whether it was acknowledged. */
    public boolean ok() {
      return outcome() == Outcome.OK;
    }

    @Override
    public String toString() {
      synchronized (History.this) {
        StringBuilder out = new StringBuilder("#").append(id).append(' ').append(client).append(" \"")
            .append(description).append("\" invoked ").append(millis(invokedAt)).append(" ms, ");
        if (outcome == null) {
          out.append("never completed");
        } else {
          out.append(outcome.name().toLowerCase(java.util.Locale.ROOT)).append(' ').append(millis(completedAt))
              .append(" ms");
          if (logIndex >= 0) {
            out.append(" at index ").append(logIndex);
          }
          if (answer != null) {
            out.append(" answered ").append(answer);
          }
          if (error != null) {
            out.append(": ").append(error);
          }
        }
        return out.toString();
      }
    }
  }

  private final LongSupplier clock;
  private final long start;
  private final List<Op> ops = new ArrayList<>();

  /** A history timed by {@link System#nanoTime}. */
  public History() {
    this(System::nanoTime);
  }

  /** A history timed by {@code clock}, a monotonic clock in nanoseconds. */
  public History(LongSupplier clock) {
    this.clock = clock;
    this.start = clock.getAsLong();
  }

  /** Records the invocation of a write with {@code effects} (at least one). */
  public Op write(String client, String description, List<Effect> effects) {
    if (effects.isEmpty()) {
      throw new IllegalArgumentException("a write without effects");
    }
    return invoke(client, description, List.copyOf(effects), null);
  }

  /** Records the invocation of {@code read}. */
  public Op read(String client, String description, Read read) {
    return invoke(client, description, List.of(), Objects.requireNonNull(read, "read"));
  }

  private Op invoke(String client, String description, List<Effect> effects, Read read) {
    long now = clock.getAsLong();
    synchronized (this) {
      Op op = new Op(ops.size(), client, description, effects, read, now);
      ops.add(op);
      return op;
    }
  }

  /** Every operation so far, in order of invocation. */
  public synchronized List<Op> ops() {
    return List.copyOf(ops);
  }

  /** The clock's reading now, for a caller that marks a moment (a kill, a pause) on the history's time line. */
  public long now() {
    return clock.getAsLong();
  }

  /** Milliseconds since the history began, for messages. */
  public String millis(long nanos) {
    return nanos == Long.MAX_VALUE ? "never" : String.format(java.util.Locale.ROOT, "%.1f", (nanos - start) / 1e6);
  }
}
