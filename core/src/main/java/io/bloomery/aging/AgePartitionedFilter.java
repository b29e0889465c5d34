package io.bloomery.aging;

import io.bloomery.filter.BloomFilter;
import io.bloomery.filter.BoundedFilter;
import io.bloomery.filter.FilterKind;
import io.bloomery.filter.IncompatibleFilterException;
import io.bloomery.filter.MembershipFilter;
import io.bloomery.filter.Mergeable;
import io.bloomery.hash.DoubleHashingPlacement;
import io.bloomery.hash.EnhancedDoubleHashing;
import io.bloomery.hash.HashProtocol;
import io.bloomery.hash.ProtocolId;
import io.bloomery.hash.Protocols;
import io.bloomery.internal.FilterCompatibility;
import io.bloomery.internal.KindAccess;
import io.bloomery.sizing.BloomMath;
import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongSupplier;

/*
 * A time-decaying membership filter built from g rotating classic Bloom filters ("generations"),
 * the segmented-aging idea of Yoon, "Aging Bloom Filter with Two Active Buffers for Dynamic Sets"
 * (IEEE TKDE 22(1), 2010) and of the age-partitioned Bloom filter (Shtul, Baquero, Almeida,
 * "Age-Partitioned Bloom Filters", arXiv 2001.03147), here in its simplest form: whole generations.
 *
 * Time is cut into spans of s = ceil(window / (g - 1)) milliseconds, aligned to the Unix epoch:
 * generation e covers [e·s, (e+1)·s). The filter keeps the g newest generations
 * c - g + 1 .. c, where c is the generation of the latest time seen; adds go to generation c;
 * queries OR all g, hashing the item once (every generation shares one placement). When the clock
 * enters a new span, the oldest generations are dropped and empty ones appended: the new state is
 * built aside and published with one compare-and-set, so a reader sees either the old or the new
 * set of generations, never a mix.
 *
 * Guarantees, for an item added at time t (its generation e = floor(t / s)):
 *  - no false negative while now < (e + g)·s, which is > t + (g - 1)·s >= t + window: the item is
 *    reported maybe-present for at least the whole window;
 *  - forgotten once now >= (e + g)·s, which is <= t + window + s (+ g - 1 ms of rounding): after
 *    window plus one span, it is reported only by false positives.
 *
 * FPR over the window: a non-member is a false positive if any live generation says maybe, so
 * p = 1 - prod_i (1 - p_i) over the g live generations (p_i the FPR of generation i). Sizing each
 * generation for p_gen = 1 - (1 - p)^(1/g) makes the bound exactly p when every generation is at
 * its design load; at a steady rate of N adds per window, a generation receives N / (g - 1) adds
 * (one span's share), which is what create(...) sizes it for. Bursts overfill a generation and
 * raise its p_i; estimatedFpp() reports the product from the generations' actual fill.
 *
 * Merging (union) is supported for identical parameters (protocol, seed, m, k, g, s): spans are
 * aligned to the epoch, so generation e means the same interval in both filters, and the union
 * ORs matching generations after both are advanced to the same newest generation.
 */
/**
 * A membership filter whose members expire: "was this seen in the last {@code window}?".
 *
 * <p><b>The contract.</b> An item added at time t is reported maybe-present ({@link #mightContain}
 * is {@code true}) at every time up to at least t + window: no false negatives within the window.
 * From t + window + one {@linkplain #generationSpanMillis() generation span} on, it is reported
 * present only as a false positive. In between it may still be reported. {@code false} is definite
 * ("not added within the window"); {@code true} means "maybe, go and check". The false-positive rate
 * over the window is at most 1 − Π(1 − pᵢ) over the {@link #generations()} live generations; see
 * {@link #estimatedFpp()} and {@link #create(Duration, int, long, double, LongSupplier)} for sizing.
 *
 * <p><b>Time.</b> Time comes from an injected source of milliseconds (a {@link Clock} or a {@link
 * LongSupplier}); there is no global clock. Generations rotate lazily when an add or query sees a
 * time in a new span. A clock that goes backwards never brings a dropped generation back; adds are
 * then placed in the newest generation, which keeps them at least as long as their own time would.
 *
 * <p><b>No delete.</b> Items leave only by expiry.
 *
 * <p><b>Thread-safety.</b> Thread-safe and lock-free: adds and queries may run on any number of
 * threads. A rotation publishes the new set of generations atomically. An add that returns before a
 * query starts is seen by it (until the item expires).
 */
public final class AgePartitionedFilter implements BoundedFilter, Mergeable<AgePartitionedFilter> {

  /** The fewest generations: one filling, one full. */
  public static final int MIN_GENERATIONS = 2;
  /** The most generations. */
  public static final int MAX_GENERATIONS = 1024;

  private final HashProtocol protocol;
  private final byte[] seed;
  private final long bitsPerGeneration;
  private final int hashes;
  private final int generations;
  private final long spanMillis;
  private final LongSupplier clockMillis;
  private final AtomicReference<State> state;
  /** Every generation's placement (they share protocol, seed, m and k): a query hashes once for all g. */
  private final HashProtocol.Placement placement;
  /** Non-null when positions can be walked from one hash without an array (the default protocol). */
  private final DoubleHashingPlacement doubleHashing;

  /** An immutable set of live generations: {@code filters[i]} is generation newest − g + 1 + i. */
  private static final class State {
    final long newestGeneration;
    final BloomFilter[] filters;

    State(long newestGeneration, BloomFilter[] filters) {
      this.newestGeneration = newestGeneration;
      this.filters = filters;
    }

    BloomFilter newest() {
      return filters[filters.length - 1];
    }
  }

  private AgePartitionedFilter(
      HashProtocol protocol,
      byte[] seed,
      long bitsPerGeneration,
      int hashes,
      int generations,
      long spanMillis,
      LongSupplier clockMillis,
      long newestGeneration,
      BloomFilter[] filters) {
    this.protocol = protocol;
    this.seed = seed;
    this.bitsPerGeneration = bitsPerGeneration;
    this.hashes = hashes;
    this.generations = generations;
    this.spanMillis = spanMillis;
    this.clockMillis = clockMillis;
    this.state = new AtomicReference<>(new State(newestGeneration, filters));
    this.placement = protocol.bind(bitsPerGeneration, hashes, seed);
    this.doubleHashing =
        placement instanceof DoubleHashingPlacement ? (DoubleHashingPlacement) placement : null;
  }

  /**
   * A filter for "seen in the last {@code window}", sized so that the false-positive rate over the
   * window is at most {@code fppOverWindow} when at most {@code expectedInsertionsPerWindow} adds
   * fall in any window at a steady rate: each of the g generations gets
   * ⌈N / (g − 1)⌉ expected insertions at p_gen = 1 − (1 − p)^(1/g). Default protocol, empty seed.
   *
   * @param generations g, at least 2; more generations forget more promptly (the overshoot is one
   *     span, window / (g − 1)) at the cost of more memory and slower queries
   * @param clockMillis the time source, in milliseconds (for example {@code clock::millis})
   */
  public static AgePartitionedFilter create(
      Duration window, int generations, long expectedInsertionsPerWindow, double fppOverWindow, LongSupplier clockMillis) {
    checkGenerations(generations);
    if (expectedInsertionsPerWindow < 1) {
      throw new IllegalArgumentException("expected insertions per window must be >= 1, was " + expectedInsertionsPerWindow);
    }
    double generationFpp = generationFpp(fppOverWindow, generations);
    long perGeneration = (expectedInsertionsPerWindow + generations - 2) / (generations - 1);
    long bits = BloomMath.optimalBits(perGeneration, generationFpp);
    int k = BloomMath.optimalHashes(perGeneration, bits);
    return create(Protocols.defaultProtocol(), new byte[0], bits, k, generations, spanFor(window, generations), clockMillis);
  }

  /** As {@link #create(Duration, int, long, double, LongSupplier)} with a {@link Clock}. */
  public static AgePartitionedFilter create(
      Duration window, int generations, long expectedInsertionsPerWindow, double fppOverWindow, Clock clock) {
    Objects.requireNonNull(clock, "clock");
    return create(window, generations, expectedInsertionsPerWindow, fppOverWindow, clock::millis);
  }

  /**
   * An empty filter with explicit parameters.
   *
   * @param bitsPerGeneration m of each generation's classic filter
   * @param hashes k of each generation
   * @param spanMillis the generation span s in milliseconds; the window is (g − 1)·s
   */
  public static AgePartitionedFilter create(
      HashProtocol protocol,
      byte[] seed,
      long bitsPerGeneration,
      int hashes,
      int generations,
      long spanMillis,
      LongSupplier clockMillis) {
    Objects.requireNonNull(protocol, "protocol");
    Objects.requireNonNull(seed, "seed");
    Objects.requireNonNull(clockMillis, "clockMillis");
    checkGenerations(generations);
    checkSpan(spanMillis);
    long newest = Math.floorDiv(clockMillis.getAsLong(), spanMillis);
    BloomFilter[] filters = new BloomFilter[generations];
    for (int i = 0; i < generations; i++) {
      filters[i] = BloomFilter.create(protocol, seed, bitsPerGeneration, hashes);
    }
    return new AgePartitionedFilter(
        protocol, seed.clone(), bitsPerGeneration, hashes, generations, spanMillis, clockMillis, newest, filters);
  }

  /**
   * The generation span for a window: ⌈window / (g − 1)⌉ milliseconds, rounded up so that g − 1
   * spans cover the whole window.
   */
  public static long spanFor(Duration window, int generations) {
    Objects.requireNonNull(window, "window");
    checkGenerations(generations);
    long windowMillis = window.toMillis();
    if (windowMillis < 1) {
      throw new IllegalArgumentException("window must be at least 1 ms, was " + window);
    }
    long span = (windowMillis + generations - 2) / (generations - 1);
    checkSpan(span);
    return span;
  }

  /**
   * The per-generation false-positive rate that makes the rate over g generations exactly
   * {@code fppOverWindow}: 1 − (1 − p)^(1/g) (slightly above p / g).
   */
  public static double generationFpp(double fppOverWindow, int generations) {
    if (!(fppOverWindow > 0 && fppOverWindow < 1)) {
      throw new IllegalArgumentException("false-positive rate must be in (0, 1), was " + fppOverWindow);
    }
    checkGenerations(generations);
    return -Math.expm1(Math.log1p(-fppOverWindow) / generations);
  }

  static {
    KindAccess.register(AgePartitionedFilter.class, AgePartitionedFilter.Snapshot.class, new KindAccess.Aging<AgePartitionedFilter, AgePartitionedFilter.Snapshot>() {
      @Override
      public AgePartitionedFilter restore(HashProtocol protocol, byte[] seed, long bitsPerGeneration, int hashes,
          int generations, long spanMillis, long newestGeneration, LongSupplier clockMillis,
          KindAccess.GenerationSource source) throws IOException {
        return AgePartitionedFilter.restore(protocol, seed, bitsPerGeneration, hashes, generations, spanMillis,
            newestGeneration, clockMillis, source);
      }

      @Override
      public Snapshot liveGenerations(AgePartitionedFilter filter) {
        State s = filter.current();
        return new Snapshot(s.newestGeneration, s.filters.clone());
      }
    });
  }

  /** The generations' words, read on every query: a constant the JIT folds, not a lookup per bit. */
  private static final KindAccess.Classic<BloomFilter> GENERATIONS = KindAccess.classic(BloomFilter.class);

  /** The false-positive rate over the window given each live generation's rate: 1 − Π(1 − pᵢ). */
  public static double windowFpp(double... generationFpps) {
    double logAllNegative = 0;
    for (double p : generationFpps) {
      logAllNegative += Math.log1p(-p);
    }
    return -Math.expm1(logAllNegative);
  }

  private static void checkGenerations(int generations) {
    if (generations < MIN_GENERATIONS || generations > MAX_GENERATIONS) {
      throw new IllegalArgumentException(
          "generations must be in [" + MIN_GENERATIONS + ", " + MAX_GENERATIONS + "], was " + generations);
    }
  }

  private static void checkSpan(long spanMillis) {
    if (spanMillis < 1) {
      throw new IllegalArgumentException("generation span must be at least 1 ms, was " + spanMillis);
    }
  }

  /**
   * Rebuilds a filter from its persisted state: g generations, oldest first, each an inserted count
   * followed by ⌈m / 64⌉ words, the newest being generation {@code newestGeneration}. Time then
   * comes from {@code clockMillis}; generations that are already expired by its current time are
   * dropped at the next add or query.
   */
  static AgePartitionedFilter restore(
      HashProtocol protocol,
      byte[] seed,
      long bitsPerGeneration,
      int hashes,
      int generations,
      long spanMillis,
      long newestGeneration,
      LongSupplier clockMillis,
      KindAccess.GenerationSource source)
      throws IOException {
    Objects.requireNonNull(protocol, "protocol");
    Objects.requireNonNull(seed, "seed");
    Objects.requireNonNull(clockMillis, "clockMillis");
    checkGenerations(generations);
    checkSpan(spanMillis);
    if (newestGeneration > Long.MAX_VALUE / spanMillis || newestGeneration < Long.MIN_VALUE / spanMillis) {
      throw new IllegalArgumentException("newest generation " + newestGeneration + " is outside the time range for span " + spanMillis);
    }
    BloomFilter[] filters = new BloomFilter[generations];
    for (int i = 0; i < generations; i++) {
      long inserted = source.nextInsertedCount();
      filters[i] = GENERATIONS.restore(protocol, seed, bitsPerGeneration, hashes, inserted, source::nextWord);
    }
    return new AgePartitionedFilter(
        protocol, seed.clone(), bitsPerGeneration, hashes, generations, spanMillis, clockMillis, newestGeneration, filters);
  }

  /** Returns the current state, first rotating to the generation of the current time if needed. */
  private State current() {
    long generation = Math.floorDiv(clockMillis.getAsLong(), spanMillis);
    while (true) {
      State seen = state.get();
      if (generation <= seen.newestGeneration) {
        return seen;
      }
      State rotated = rotate(seen, generation);
      if (state.compareAndSet(seen, rotated)) {
        return rotated;
      }
    }
  }

  private State rotate(State from, long newestGeneration) {
    long shift = newestGeneration - from.newestGeneration;
    BloomFilter[] filters = new BloomFilter[generations];
    for (int i = 0; i < generations; i++) {
      long source = i + shift;
      filters[i] = source < generations ? from.filters[(int) source] : BloomFilter.create(protocol, seed, bitsPerGeneration, hashes);
    }
    return new State(newestGeneration, filters);
  }

  @Override
  public FilterKind kind() {
    return FilterKind.AGE_PARTITIONED_BLOOM;
  }

  /**
   * Adds an item to the current generation.
   *
   * @return {@code true} if the current generation changed (the item was not already in it)
   */
  @Override
  public boolean add(byte[] item) {
    Objects.requireNonNull(item, "item");
    return current().newest().add(item);
  }

  /**
   * {@code false} if the item was definitely not added within the window; {@code true} if it may
   * have been.
   */
  @Override
  public boolean mightContain(byte[] item) {
    Objects.requireNonNull(item, "item");
    BloomFilter[] filters = current().filters;
    if (doubleHashing != null) {
      long hash = doubleHashing.hash(item, 0, item.length);
      for (int i = filters.length - 1; i >= 0; i--) {
        if (allSet(filters[i], hash)) {
          return true;
        }
      }
      return false;
    }
    long[] positions = new long[hashes];
    placement.positions(item, 0, item.length, positions);
    for (int i = filters.length - 1; i >= 0; i--) {
      if (allSet(filters[i], positions)) {
        return true;
      }
    }
    return false;
  }

  /** {@code generation.mightContain} of the item whose default-protocol hash is {@code hash}. */
  private boolean allSet(BloomFilter generation, long hash) {
    long x = hash;
    long y = EnhancedDoubleHashing.stride(x);
    long d = EnhancedDoubleHashing.CUBIC_SCALE;
    for (int i = 0; i < hashes; i++) {
      if (!isSet(generation, EnhancedDoubleHashing.reduce(x, bitsPerGeneration))) {
        return false;
      }
      x += y;
      y += d;
      d += EnhancedDoubleHashing.CUBIC_SCALE;
    }
    return true;
  }

  /** {@code generation.mightContain} of the item at {@code positions}. */
  private static boolean allSet(BloomFilter generation, long[] positions) {
    for (long position : positions) {
      if (!isSet(generation, position)) {
        return false;
      }
    }
    return true;
  }

  private static boolean isSet(BloomFilter generation, long position) {
    return (GENERATIONS.word(generation, position >>> 6) & (1L << position)) != 0;
  }

  /**
   * The estimated false-positive rate now: 1 − Π(1 − pᵢ) over the live generations, each pᵢ
   * estimated from its fill ({@link BloomFilter#estimatedFpp()}).
   */
  public double estimatedFpp() {
    BloomFilter[] filters = current().filters;
    double[] rates = new double[filters.length];
    for (int i = 0; i < filters.length; i++) {
      rates[i] = filters[i].estimatedFpp();
    }
    return windowFpp(rates);
  }

  /**
   * Adds counted over the live generations (each generation counts the adds that changed it, as a classic
   * filter does), so an item added in two generations counts twice. O(g).
   */
  @Override
  public long insertedCount() {
    long total = 0;
    for (BloomFilter generation : current().filters) {
      total += generation.insertedCount();
    }
    return total;
  }

  /** The mean share of set bits over the live generations. O(g). */
  public double fillRatio() {
    BloomFilter[] filters = current().filters;
    double sum = 0;
    for (BloomFilter generation : filters) {
      sum += generation.fillRatio();
    }
    return sum / filters.length;
  }

  /**
   * The number of items the live generations hold together when each is at its classic capacity, {@code g ·}
   * {@link BloomMath#capacityForHashes capacityForHashes(m, k)}; items are spread over the window, one generation's share is {@code capacity() / g}.
   */
  @Override
  public long capacity() {
    return BloomMath.capacityForHashes(bitsPerGeneration, hashes) * generations;
  }

  /**
   * Whether the newest generation (the one taking adds) has reached 80% of its share of {@link #capacity()}
   * ({@link BloomFilter#isNearCapacity()} of that generation). O(1).
   */
  @Override
  public boolean isNearCapacity() {
    return current().newest().isNearCapacity();
  }

  /** The identifier of the hash protocol that places this filter's positions, as recorded in its format. */
  @Override
  public ProtocolId protocolId() {
    return protocol.id();
  }

  /** The implementation of {@link #protocolId()}: the position function, for callers that place items themselves. */
  public HashProtocol hashProtocol() {
    return protocol;
  }

  /** A copy of the protocol seed. */
  public byte[] seed() {
    return seed.clone();
  }

  /** m of each generation. */
  public long bitsPerGeneration() {
    return bitsPerGeneration;
  }

  /** k of each generation. */
  public int hashCount() {
    return hashes;
  }

  /** g, the number of live generations. */
  public int generations() {
    return generations;
  }

  /** The span s of one generation, in milliseconds. */
  public long generationSpanMillis() {
    return spanMillis;
  }

  /** The window (g − 1)·s within which added items are never reported absent. */
  public Duration window() {
    return Duration.ofMillis(spanMillis * (generations - 1));
  }

  /** The time source. */
  public LongSupplier clockMillis() {
    return clockMillis;
  }

  /**
   * A snapshot of the live generations after rotating to the current time: index 0 is the oldest. The
   * generations are independent copies, so later adds and rotations do not change the snapshot and changing a
   * snapshot's filter does not change this one. <b>Cost:</b> O(g·m) time and memory (every generation is
   * copied); for counts and fill use {@link #insertedCount()}, {@link #fillRatio()} and {@link #estimatedFpp()}.
   */
  public Snapshot snapshot() {
    State s = current();
    BloomFilter[] copies = new BloomFilter[s.filters.length];
    for (int i = 0; i < copies.length; i++) {
      copies[i] = s.filters[i].copy();
    }
    return new Snapshot(s.newestGeneration, copies);
  }

  /** Live generations at one instant. */
  public static final class Snapshot {
    private final long newestGeneration;
    private final BloomFilter[] filters;

    Snapshot(long newestGeneration, BloomFilter[] filters) {
      this.newestGeneration = newestGeneration;
      this.filters = filters;
    }

    /** The index (time / span) of the newest generation. */
    public long newestGeneration() {
      return newestGeneration;
    }

    /**
     * Generation {@code newestGeneration − g + 1 + i}, oldest first: this snapshot's copy, not the live one (a view
     * the format writer takes internally holds the live generations).
     */
    public BloomFilter generation(int i) {
      return filters[i];
    }

    /** g. */
    public int size() {
      return filters.length;
    }
  }

  /** An independent copy (the live generations copied) reading time from {@code clockMillis}. */
  public AgePartitionedFilter copy(LongSupplier clockMillis) {
    Objects.requireNonNull(clockMillis, "clockMillis");
    State s = state.get();
    BloomFilter[] filters = new BloomFilter[generations];
    for (int i = 0; i < generations; i++) {
      filters[i] = s.filters[i].copy();
    }
    return new AgePartitionedFilter(
        protocol, seed, bitsPerGeneration, hashes, generations, spanMillis, clockMillis, s.newestGeneration, filters);
  }

  /** An independent copy with the same time source. */
  public AgePartitionedFilter copy() {
    return copy(clockMillis);
  }

  /**
   * Whether {@link #mergeFrom} would accept {@code other}: same protocol, seed, m, k, generation
   * count and span (generations are aligned to the epoch, so equal spans are aligned).
   */
  public boolean isCompatible(AgePartitionedFilter other) {
    Objects.requireNonNull(other, "other");
    return other != this && incompatibility(other) == null;
  }

  private IncompatibleFilterException incompatibility(AgePartitionedFilter other) {
    IncompatibleFilterException mismatch = FilterCompatibility.mismatch(IncompatibleFilterException::new,
        "bit count m", protocol, seed, bitsPerGeneration, hashes, other.protocol, other.seed, other.bitsPerGeneration, other.hashes);
    if (mismatch != null) {
      return mismatch;
    }
    if (other.generations != generations) {
      return new IncompatibleFilterException("generations", generations, other.generations);
    }
    if (other.spanMillis != spanMillis) {
      return new IncompatibleFilterException("generation span (ms)", spanMillis, other.spanMillis);
    }
    return null;
  }

  /**
   * Union: afterwards this filter reports every item either filter reported, each with the expiry
   * of the generation it was in. Both are first advanced to the later of their newest generations
   * (this filter's clock included); generations that are live in both are OR-ed, and generations
   * of {@code other} that have already expired here are ignored.
   *
   * @throws IncompatibleFilterException if protocol, seed, m, k, g or span differ; nothing changes
   */
  public void mergeFrom(AgePartitionedFilter other) {
    Objects.requireNonNull(other, "other");
    if (other == this) {
      throw new IllegalArgumentException("cannot merge a filter into itself");
    }
    IncompatibleFilterException incompatible = incompatibility(other);
    if (incompatible != null) {
      throw incompatible;
    }
    State theirs = other.state.get();
    State ours = current();
    while (theirs.newestGeneration > ours.newestGeneration) {
      State rotated = rotate(ours, theirs.newestGeneration);
      if (state.compareAndSet(ours, rotated)) {
        ours = rotated;
      } else {
        ours = state.get();
      }
    }
    for (int i = 0; i < generations; i++) {
      long generation = ours.newestGeneration - generations + 1 + i;
      long theirIndex = generation - (theirs.newestGeneration - generations + 1);
      if (theirIndex >= 0 && theirIndex < generations) {
        ours.filters[i].mergeFrom(theirs.filters[(int) theirIndex]);
      }
    }
  }

  @Override
  public String toString() {
    State s = state.get();
    return "AgePartitionedFilter[window=" + window() + ", generations=" + generations + ", span=" + spanMillis
        + "ms, m=" + bitsPerGeneration + ", k=" + hashes + ", newestGeneration=" + s.newestGeneration + "]";
  }
}
