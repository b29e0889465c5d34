package io.bloomery.guard;

import io.bloomery.filter.FilterKind;
import io.bloomery.filter.MembershipFilter;
import io.bloomery.plan.FilterPlan;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A Bloom filter in front of an authoritative {@link ExactStore}: a negative skips the store, a
 * "maybe" is confirmed by exact byte equality, and "is it new?" is decided atomically by the store.
 *
 * <pre>{@code
 * try (Guard guard = Guard.builder(PostgresStore.open(jdbcUrl))
 *     .expectedInsertions(50_000_000).fpp(0.01).snapshotFile(Path.of("seen.guard")).open()) {
 *   if (guard.addIfAbsent(url.getBytes(UTF_8))) crawl(url);   // exactly once, any number of callers
 *   Verdict v = guard.lookup(url.getBytes(UTF_8));             // {maybePresent, exactChecked, duplicate}
 * }
 * }</pre>
 *
 * <h2>The invariant: the filter contains every committed row</h2>
 *
 * Only then may a negative skip the store (rule 8 of the contract in docs/ARCHITECTURE.md). It is kept by four
 * rules:
 *
 * <ol>
 *   <li><b>Write order</b>: filter add → store insert → commit → acknowledge. A failed insert leaves at
 *       most an extra bit (a harmless false positive), is counted in
 *       {@link GuardStats#insertFailures()}, and reaches the caller as {@link
 *       StoreUnavailableException}: never as "absent", never as "duplicate". Bits are never cleared.
 *   <li><b>Write gate</b>: every insert holds a shared gate from its filter add through its commit.
 *       Taking the gate exclusively therefore waits out in-flight inserts, which lets a rebuild and a
 *       checkpoint draw a line that no insert straddles.
 *   <li><b>Gap-free rebuild</b> ({@link #rebuild(long, double)}): create an empty F′; take the gate
 *       exclusively and switch on dual-write (inserts add to F and F′); release; open a consistent
 *       snapshot of the store and stream every row into F′; swap F := F′ under the gate. Every
 *       committed row is either in the snapshot or was dual-written into F′. Inserts never stop.
 *   <li><b>Snapshot + watermark</b> ({@link #checkpoint()}): under the exclusive gate read the store
 *       watermark W (its largest committed row position) and copy the filter; write both atomically.
 *       On {@link Builder#open()} the guard loads the snapshot and replays the rows after W (adds are
 *       idempotent), or rebuilds from the store if the snapshot is missing, corrupt, for another
 *       store, differently sized, or ahead of the store. It logs which: {@code replayed N rows after
 *       watermark W} or {@code rebuilt from store: reason}. It never answers from a filter that may
 *       lag the store.
 * </ol>
 *
 * <h2>Several writers</h2>
 *
 * {@link #addIfAbsent} is exactly-once across any number of threads and processes, because the
 * store's unique index decides. A guard's <em>negatives</em>, however, know only about rows written
 * through this guard and rows present when it was built or recovered: if other processes write the
 * same store, {@link #lookup} may answer "absent" for their recent items until the next
 * {@link #rebuild()}. Such writes show up as {@link GuardStats#staleNegatives()} when this guard
 * later inserts the same item. A read-only source (someone else's table) is always rebuilt on open.
 * Two followers close this gap: {@link Builder#replication} (PostgreSQL logical replication:
 * foreign rows become "maybe" within a bounded, measured lag; see {@link LogicalReplication}) and
 * {@link SqliteStore#openFollowingOtherWriters} (exact, before each negative).
 *
 * <p>Thread-safe (the filter itself is lock-free). Rebuilds are serialised; lookups and inserts
 * continue during a rebuild.
 */
public final class Guard implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(Guard.class);

  private final ExactStore store;
  private final Path snapshotFile;
  private final long configuredExpected;
  private final double configuredFpp;
  private final LogicalReplication replication;
  /** The configured kind; null: the kind the planner picks (blocked unless p is tiny). */
  private final FilterKind filterKind;
  /** The configured plan (a template for every filter at its rate), or null. */
  private final FilterPlan plan;
  private ReplicationFollower follower; // set once in recover(), before the guard is shared
  private boolean followStream; // the follower streams (false: off, or the fallback)

  private final ReentrantReadWriteLock gate = new ReentrantReadWriteLock();
  private final Object rebuildLock = new Object();
  private volatile GuardFilter current;
  private volatile GuardFilter rebuildTarget;
  private volatile long generation;
  private long snapshotGeneration; // of a readable snapshot found on open, else 0
  private volatile Instant builtAt;
  private volatile String recovery;
  private volatile LongAdder itemsSinceBuild = new LongAdder();
  private volatile LongAdder itemsSinceRebuildStart;
  private final AtomicBoolean nearCapacityWarned = new AtomicBoolean();
  private final AtomicBoolean staleNegativeWarned = new AtomicBoolean();
  private final AtomicBoolean closed = new AtomicBoolean();

  private final LongAdder insertFailures = new LongAdder();
  private final LongAdder storeLookupsMade = new LongAdder();
  private final LongAdder storeLookupsAvoided = new LongAdder();
  private final LongAdder realizedFalsePositives = new LongAdder();
  private final LongAdder staleNegatives = new LongAdder();

  private Guard(Builder builder) {
    this.store = builder.store;
    this.snapshotFile = builder.snapshotFile;
    this.configuredExpected = builder.expectedInsertions;
    this.configuredFpp = builder.fpp;
    this.replication = builder.replication;
    this.filterKind = builder.filterKind;
    this.plan = builder.plan;
  }

  /** Starts configuring a guard in front of {@code store}; the guard closes the store on close. */
  public static Builder builder(ExactStore store) {
    return new Builder(Objects.requireNonNull(store, "store"));
  }

  /** Configuration of a {@link Guard}. */
  public static final class Builder {
    private final ExactStore store;
    private long expectedInsertions = 1_000_000;
    private double fpp = 0.01;
    private Path snapshotFile;
    private LogicalReplication replication;
    private FilterKind filterKind;
    private FilterPlan plan;
    private boolean sized; // expectedInsertions, fpp or filterKind was set

    private Builder(ExactStore store) {
      this.store = store;
    }

    /**
     * Items the filter is sized for (default 1 000 000). A rebuild sizes for twice the store's rows
     * when the store already holds 80% of this.
     *
     * @throws IllegalStateException if a {@link #plan} was set (it fixes n)
     */
    public Builder expectedInsertions(long expectedInsertions) {
      requireNoPlan("expectedInsertions");
      if (expectedInsertions <= 0) {
        throw new IllegalArgumentException("expectedInsertions must be > 0, got "
            + expectedInsertions);
      }
      this.expectedInsertions = expectedInsertions;
      sized = true;
      return this;
    }

    /**
     * Target false-positive rate in (0, 1) (default 0.01).
     *
     * @throws IllegalStateException if a {@link #plan} was set (it fixes p)
     */
    public Builder fpp(double fpp) {
      requireNoPlan("fpp");
      if (!(fpp > 0 && fpp < 1)) {
        throw new IllegalArgumentException("fpp must be in (0, 1), got " + fpp);
      }
      this.fpp = fpp;
      sized = true;
      return this;
    }

    /**
     * The kind of filter the guard builds: {@link FilterKind#CLASSIC_BLOOM}, {@link
     * FilterKind#BLOCKED_BLOOM} or {@link FilterKind#SPLIT_BLOCK_BLOOM}, each sized for {@link
     * #expectedInsertions} at {@link #fpp} by its own model. By default the guard builds what {@code
     * FilterPlanner.plan(n, p)} plans: a blocked filter (one cache line per lookup) unless p is so low
     * that blocked needs more than 15% more memory than classic. A snapshot of another kind is then
     * still loaded (the snapshot says its kind; the next rebuild builds the planned kind); with a kind
     * set here, a snapshot of another kind is rebuilt from the store on open. To fix the shape as well as the
     * kind, give a {@link #plan} instead.
     *
     * @throws IllegalArgumentException for any other kind
     * @throws IllegalStateException if a {@link #plan} was set (it fixes the kind)
     */
    public Builder filterKind(FilterKind kind) {
      requireNoPlan("filterKind");
      if (!GuardFilter.KINDS.contains(Objects.requireNonNull(kind, "kind"))) {
        throw GuardFilter.unsupported(kind);
      }
      this.filterKind = kind;
      sized = true;
      return this;
    }

    /**
     * Builds the guard's filters from {@code plan}, a {@link io.bloomery.plan.FilterPlanner} plan of the classic
     * or blocked kind, used as a template: the plan fixes the kind, k and the bits per key, hence the model rate,
     * and each build is sized for its own n. The guard's n is the plan's ({@code bits / bitsPerKey}) and its p the
     * plan's model rate. A build for that n is {@code plan.build()} itself; when the store already holds 80% of n
     * (see {@link #expectedInsertions}) a build is for twice the store's rows, with m = ⌈n · bitsPerKey⌉ rounded
     * up to a whole word or block, so the rate stays the plan's as the store grows (a plan made within a memory
     * budget grows past that budget). {@link Guard#rebuild(long, double)} at another rate sizes the plan's kind for
     * it by the kind's own model, as {@link #filterKind} does. A snapshot is loaded only if it has the plan's kind,
     * k, n and rate; otherwise the guard rebuilds from the store on open.
     *
     * @throws IllegalArgumentException for a binary fuse plan (a static filter takes no adds) or a plan whose
     *     figures cannot build a filter (no bits, no hashes, a blocked plan of partial blocks, a rate outside (0, 1))
     * @throws IllegalStateException if {@link #expectedInsertions}, {@link #fpp} or {@link #filterKind} was set:
     *     the plan fixes all three
     */
    public Builder plan(FilterPlan plan) {
      GuardFilter.checkPlan(plan);
      if (sized || this.plan != null) {
        throw new IllegalStateException("a plan fixes the kind, expectedInsertions and fpp: set either a plan or"
            + " those, once");
      }
      this.plan = plan;
      this.filterKind = plan.kind();
      this.expectedInsertions = GuardFilter.plannedItems(plan);
      this.fpp = plan.modelFpp();
      return this;
    }

    private void requireNoPlan(String setting) {
      if (plan != null) {
        throw new IllegalStateException("a plan fixes the kind, expectedInsertions and fpp: cannot also set "
            + setting);
      }
    }

    /**
     * Where the filter snapshot and its watermark are persisted (atomic replace). Without one the
     * guard rebuilds from the store on every open.
     */
    public Builder snapshotFile(Path snapshotFile) {
      this.snapshotFile = snapshotFile;
      return this;
    }

    /**
     * Follows the store's table through PostgreSQL logical replication, so that rows written by
     * any program become "maybe" within a bounded lag (see {@link LogicalReplication}); needs a
     * {@link PostgresStore}. When logical replication is unavailable the guard says so in one log
     * line and {@link GuardStats#replication()}, and falls back to through-the-guard writes plus
     * scheduled rebuilds.
     */
    public Builder replication(LogicalReplication replication) {
      if (!(store instanceof PostgresStore)) {
        throw new IllegalArgumentException("logical replication needs a PostgresStore, not "
            + store.identity());
      }
      this.replication = Objects.requireNonNull(replication, "replication");
      return this;
    }

    /**
     * Builds or recovers the filter so that it contains every committed row, and returns the
     * guard. Logs how: {@code replayed N rows after watermark W} or {@code rebuilt from store: …}.
     *
     * <p>A failed open (the store, the snapshot file, even {@link OutOfMemoryError}) closes the store and drops
     * the replication slot if it created one, so that nothing retains WAL for a guard that never opened; a slot
     * that existed before (a reopen) stays for the next open to resume.
     *
     * @throws StoreUnavailableException if the store cannot be read
     */
    public Guard open() {
      Guard guard = new Guard(this);
      try {
        guard.recover();
        if (guard.snapshotFile != null && !store.isReadOnly()) {
          guard.checkpoint(false); // from now on a crash is detectable as an unclean stop
        }
        if (guard.followStream) {
          guard.follower.start();
        }
        return guard;
      } catch (RuntimeException | Error e) {
        if (guard.follower != null) {
          guard.follower.stop();
          if (guard.follower.createdSlot()) {
            guard.follower.discardCreatedSlot(e);
          }
        }
        store.close();
        throw e;
      }
    }
  }

  // ---------------------------------------------------------------- recovery and rebuild

  private void recover() {
    if (replication != null) {
      follower = new ReplicationFollower(replication, (PostgresStore) store,
          snapshotFile != null && !store.isReadOnly());
      try {
        follower.prepare(new FollowerHost());
        followStream = true;
      } catch (ReplicationFollower.UnavailableException e) {
        String reason = snapshotUnusableReason();
        if (reason != null) {
          buildAtOpen(reason);
        }
        follower.startFallback(e.getMessage());
        return;
      }
    }
    String reason = snapshotUnusableReason();
    if (reason != null) {
      if (followStream) {
        try {
          buildFromNewSlot(reason);
        } catch (ReplicationFollower.UnavailableException e) {
          followStream = false;
          buildAtOpen(reason);
          follower.startFallback(e.getMessage());
        }
      } else {
        buildAtOpen(reason);
      }
    }
  }

  /** Builds from the snapshot a new replication slot exports: the stream starts where it ends. */
  private void buildFromNewSlot(String reason) {
    long expected = sizeFor(configuredExpected);
    GuardFilter filter = newFilter(expected, configuredFpp);
    long started = System.nanoTime();
    long rows;
    try {
      rows = follower.createSlotAndScan(filter::add);
    } catch (SQLException e) {
      String state = e.getSQLState() == null ? "" : e.getSQLState();
      if (state.startsWith("53") || state.startsWith("42") || state.startsWith("55")) {
        // all slots in use, no privilege, slot held elsewhere: replication is not available here
        throw new ReplicationFollower.UnavailableException("cannot create replication slot "
            + follower.slotName() + ": " + ReplicationFollower.oneLine(e));
      }
      throw new StoreUnavailableException("guard " + store.identity() + ": cannot create"
          + " replication slot " + follower.slotName() + " and read its snapshot: "
          + ReplicationFollower.oneLine(e), e);
    }
    install(filter, 1, Instant.now(), "built from the snapshot of new replication slot "
        + follower.slotName() + " at " + follower.consistentPoint() + ": " + reason);
    LOG.info("guard {}: built from the snapshot of new replication slot {} at {}: {} ({} rows in"
            + " {} ms; n={} p={} m={} k={})", store.identity(), follower.slotName(),
        follower.consistentPoint(), reason, rows, millisSince(started), expected, configuredFpp,
        filter.bitSize(), filter.hashCount());
  }

  /** Adds an item some other writer committed (seen in the replication stream). */
  private void observe(byte[] item) {
    gate.readLock().lock();
    try {
      current.add(item);
      GuardFilter target = rebuildTarget;
      if (target != null) {
        target.add(item);
      }
    } finally {
      gate.readLock().unlock();
    }
  }

  private final class FollowerHost implements ReplicationFollower.Host {
    @Override
    public void add(byte[] item) {
      observe(item);
    }

    @Override
    public void checkpoint() {
      if (!closed.get()) {
        Guard.this.checkpoint(false);
      }
    }

    @Override
    public void rebuild() {
      if (!closed.get()) {
        Guard.this.rebuild();
      }
    }

    @Override
    public long filterItems() {
      return current.insertedCount();
    }
  }

  /** Loads and replays the snapshot; returns why it cannot be used, or null once loaded. */
  private String snapshotUnusableReason() {
    if (store.isReadOnly()) {
      return "read-only source " + store.identity() + " has no watermark";
    }
    if (snapshotFile == null) {
      return "no snapshot file configured";
    }
    if (!Files.exists(snapshotFile)) {
      return "no snapshot at " + snapshotFile;
    }
    FilterSnapshotFile.Snapshot snapshot;
    try {
      snapshot = FilterSnapshotFile.read(snapshotFile);
    } catch (IOException | RuntimeException e) {
      return "snapshot " + snapshotFile + " is unreadable (" + e.getMessage() + ")";
    }
    if (snapshot.storeIdentity().equals(store.identity())) {
      snapshotGeneration = snapshot.generation(); // a rebuild on open continues this history
    }
    if (!snapshot.storeIdentity().equals(store.identity())) {
      return "snapshot belongs to store " + snapshot.storeIdentity() + ", not " + store.identity();
    }
    if (snapshot.expectedInsertions() != configuredExpected || snapshot.fpp() != configuredFpp) {
      return String.format(Locale.ROOT, "sizing changed from n=%d p=%s to n=%d p=%s",
          snapshot.expectedInsertions(), snapshot.fpp(), configuredExpected, configuredFpp);
    }
    if (filterKind != null && snapshot.filter().kind() != filterKind) {
      return "filter kind changed from " + snapshot.filter().kind().kindName() + " to " + filterKind.kindName();
    }
    if (plan != null && snapshot.filter().hashCount() != plan.hashes()) {
      return "the plan's k is " + plan.hashes() + ", the snapshot's filter has k=" + snapshot.filter().hashCount();
    }
    if (followStream) {
      String refusal = follower.resumeRefusal(snapshot.replicationLsn());
      if (refusal != null) {
        return refusal;
      }
    }
    long storeWatermark = store.watermark();
    if (snapshot.watermark() > storeWatermark) {
      return "store watermark " + storeWatermark + " is behind the snapshot's "
          + snapshot.watermark() + " (store restored or replaced?)";
    }
    GuardFilter filter = snapshot.filter();
    long started = System.nanoTime();
    long replayed = store.scanAfter(snapshot.watermark(), filter::add);
    install(filter, snapshot.generation(), snapshot.builtAt(), String.format(Locale.ROOT,
        "replayed %d rows after watermark %d (%s stop)", replayed, snapshot.watermark(),
        snapshot.clean() ? "clean" : "unclean"));
    LOG.info("guard {}: replayed {} rows after watermark {} in {} ms ({} stop; generation {})",
        store.identity(), replayed, snapshot.watermark(), millisSince(started),
        snapshot.clean() ? "clean" : "unclean", snapshot.generation());
    return null;
  }

  private void buildAtOpen(String reason) {
    long expected = sizeFor(configuredExpected);
    GuardFilter filter = newFilter(expected, configuredFpp);
    long started = System.nanoTime();
    ExactStore.ScanResult scan = store.scan(filter::add);
    install(filter, snapshotGeneration + 1, Instant.now(), "rebuilt from store: " + reason);
    LOG.info("guard {}: rebuilt from store: {} ({} rows streamed in {} ms, {} rows/s;"
            + " {} n={} p={} m={} k={})", store.identity(), reason, scan.rows(), millisSince(started),
        rowsPerSecond(scan.rows(), started), filter.kind().kindName(), expected, configuredFpp, filter.bitSize(),
        filter.hashCount());
  }

  private void install(GuardFilter filter, long newGeneration, Instant when, String how) {
    current = filter;
    generation = newGeneration;
    builtAt = when;
    recovery = how;
    nearCapacityWarned.set(false);
    warnIfNearCapacity(filter);
  }

  /** An empty filter for n items at rate p: the plan scaled to n at its own rate, else the kind (or planner's) for (n, p). */
  private GuardFilter newFilter(long n, double p) {
    return plan != null && p == plan.modelFpp() ? GuardFilter.fromPlan(plan, n) : GuardFilter.create(filterKind, n, p);
  }

  /** Grows the sizing when the store already holds 80% of it. */
  private long sizeFor(long expected) {
    long rows = store.estimatedRows();
    if (rows >= expected * 0.8) {
      long grown = Math.max(expected, 2 * rows);
      LOG.info("guard {}: store holds ~{} rows, {}% of n={}; sizing the filter for n={}",
          store.identity(), rows, rows * 100 / expected, expected, grown);
      return grown;
    }
    return expected;
  }

  /**
   * The bytes of the filter bit arrays this guard holds now: its filter's, plus the next filter's while a
   * {@link #rebuild} fills it (headers and object overhead not counted).
   */
  public long filterBytes() {
    GuardFilter target = rebuildTarget;
    return (current.bitSize() + 7) / 8 + (target == null ? 0 : (target.bitSize() + 7) / 8);
  }

  /** {@link #rebuild(long, double)} with the configured sizing. */
  public void rebuild() {
    rebuild(configuredExpected, configuredFpp);
  }

  /**
   * Rebuilds the filter from a consistent snapshot of the store while inserts continue (resize,
   * new FPR, reclaim false positives), then swaps it in atomically. There is no gap: inserts
   * between the snapshot and the swap are dual-written into the new filter. If the store fails,
   * the old filter stays in place and the exception propagates.
   */
  public void rebuild(long expectedInsertions, double fpp) {
    requireOpen();
    synchronized (rebuildLock) {
      long expected = sizeFor(expectedInsertions);
      GuardFilter next = newFilter(expected, fpp);
      LongAdder nextItems = new LongAdder();
      gate.writeLock().lock(); // waits out inserts that added to F only
      try {
        rebuildTarget = next;
        itemsSinceRebuildStart = nextItems;
      } finally {
        gate.writeLock().unlock();
      }
      long started = System.nanoTime();
      ExactStore.ScanResult scan;
      try {
        scan = store.scan(next::add);
      } catch (RuntimeException e) {
        gate.writeLock().lock();
        try {
          rebuildTarget = null;
          itemsSinceRebuildStart = null;
        } finally {
          gate.writeLock().unlock();
        }
        LOG.warn("guard {}: rebuild failed, keeping generation {}: {}", store.identity(),
            generation, Credentials.redact(String.valueOf(e.getMessage())));
        throw e;
      }
      gate.writeLock().lock();
      try {
        rebuildTarget = null;
        itemsSinceRebuildStart = null;
        itemsSinceBuild = nextItems;
        install(next, generation + 1, Instant.now(), String.format(Locale.ROOT,
            "rebuilt under load from a snapshot of %d rows (watermark %d)", scan.rows(),
            scan.watermark()));
      } finally {
        gate.writeLock().unlock();
      }
      LOG.info("guard {}: rebuild generation {}: {} rows from a consistent snapshot in {} ms ({}"
              + " rows/s), {} inserts dual-written; n={} p={} m={} k={}", store.identity(),
          generation, scan.rows(), millisSince(started), rowsPerSecond(scan.rows(), started),
          nextItems.sum(), expected, fpp, next.bitSize(), next.hashCount());
    }
  }

  /**
   * Persists the filter with the store watermark it covers (atomic file replace). Runs while
   * inserts continue; they pause only for the watermark read and the in-memory copy.
   *
   * @throws IllegalStateException if no snapshot file is configured or the store is read-only
   * @throws StoreUnavailableException if the watermark cannot be read
   */
  public void checkpoint() {
    requireOpen();
    checkpoint(false);
  }

  private void checkpoint(boolean clean) {
    if (snapshotFile == null || store.isReadOnly()) {
      throw new IllegalStateException("checkpoint needs a snapshot file and a writable store");
    }
    FilterSnapshotFile.Snapshot snapshot;
    gate.writeLock().lock();
    try {
      long watermark = store.watermark(); // no insert is in flight: every row <= W is in F
      // Nor is a streamed add: every transaction ending at or before the LSN is in F.
      long lsn = followStream ? follower.appliedLsn() : 0;
      GuardFilter filter = current;
      GuardFilter copy = filter.copy();
      snapshot = new FilterSnapshotFile.Snapshot(clean, watermark, generation, builtAt,
          configuredExpected, configuredFpp, store.identity(), copy, lsn);
    } finally {
      gate.writeLock().unlock();
    }
    try {
      FilterSnapshotFile.write(snapshotFile, snapshot);
    } catch (IOException e) {
      throw new java.io.UncheckedIOException("cannot write guard snapshot " + snapshotFile, e);
    }
    if (followStream) {
      follower.confirm(snapshot.replicationLsn()); // the server may now recycle WAL before it
    }
    LOG.debug("guard {}: checkpoint at watermark {} ({})", store.identity(),
        snapshot.watermark(), clean ? "clean" : "running");
  }

  // ---------------------------------------------------------------- lookups and inserts

  /**
   * The three-valued verdict for an item. A filter negative returns {@code {false, false, false}}
   * without touching the store; a "maybe" is confirmed by byte equality in the store.
   *
   * <p>With {@link Builder#replication} the negatives are trusted only while the stream is known
   * fresh ({@link ReplicationStatus#isStreaming()}); while it is catching up, reconnecting or
   * resyncing a lost slot, a filter negative is confirmed in the store too and answered as a
   * "maybe" that was checked ({@code {true, true, duplicate}}).
   *
   * @throws StoreUnavailableException if a "maybe" could not be confirmed
   */
  public Verdict lookup(byte[] item) {
    Objects.requireNonNull(item, "item");
    requireOpen();
    GuardFilter filter = current;
    if (!filter.mightContain(item)
        && !(store.catchUp(this::observe) > 0 && current.mightContain(item))) {
      if (!followStream || !follower.negativesNeedConfirmation()) {
        storeLookupsAvoided.increment();
        return Verdict.ABSENT;
      }
      boolean present = store.contains(item); // the stream may not have delivered it yet
      storeLookupsMade.increment();
      if (present) {
        staleNegatives.increment();
        observe(item);
      }
      return new Verdict(true, true, present);
    }
    boolean present = store.contains(item);
    storeLookupsMade.increment();
    if (!present) {
      realizedFalsePositives.increment();
    }
    return new Verdict(true, true, present);
  }

  /**
   * {@link #lookup(byte[])} of each item, in order, with the same verdicts and counters, but every
   * "maybe" of the call is confirmed in one store round trip ({@link ExactStore#containsAll}).
   *
   * @throws StoreUnavailableException if the "maybe"s could not be confirmed
   */
  public List<Verdict> lookup(List<byte[]> items) {
    Lookup lookup = lookupInFilter(items);
    if (lookup.answered()) {
      return lookup.verdicts(new boolean[0]);
    }
    List<byte[]> asked = lookup.toConfirm();
    return lookup.verdicts(asked.isEmpty() ? new boolean[0] : confirm(asked));
  }

  /**
   * The first half of {@link #lookup(List)}: the filter's answers, without touching the store, so
   * that a caller on a thread that must not block (a network event loop) can answer at once when
   * every verdict is known ({@link Lookup#answered()}), and otherwise confirm the "maybe"s of
   * several lookups in one store round trip ({@link #confirm}, {@link Lookup#verdicts}).
   */
  public Lookup lookupInFilter(List<byte[]> items) {
    requireOpen();
    return new Lookup(items);
  }

  /**
   * Whether each item is in the store, byte for byte, in one round trip: the confirmation of the
   * "maybe"s of one or more {@link Lookup}s ({@link Lookup#toConfirm()}, possibly merged).
   *
   * @throws StoreUnavailableException if the store could not answer
   */
  public boolean[] confirm(List<byte[]> items) {
    requireOpen();
    return store.containsAll(items);
  }

  /**
   * One {@link #lookup(List)} in two steps: the filter's answers (made when it is created), then
   * the store's for the items it could not answer ({@link #toConfirm()}, {@link #verdicts}).
   * Counters are those of {@link #lookup(List)}. Not thread-safe; use each once.
   */
  public final class Lookup {
    private final List<byte[]> items;
    private final boolean[] negative;
    private final Verdict[] out;
    private boolean catchUpPending;
    private boolean confirmNegatives;
    private int[] ask;

    private Lookup(List<byte[]> items) {
      this.items = items;
      int n = items.size();
      out = new Verdict[n];
      negative = new boolean[n];
      GuardFilter filter = current;
      boolean anyNegative = false;
      for (int i = 0; i < n; i++) {
        byte[] item = items.get(i);
        if (item == null) { // the message is built only here: per item it cost more than the probe
          throw new NullPointerException("items[" + i + "]");
        }
        negative[i] = !filter.mightContain(item);
        anyNegative |= negative[i];
      }
      catchUpPending = anyNegative && store.catchesUp();
      if (!catchUpPending) {
        decideAsked();
      }
    }

    /** The items the filter cannot answer, and the negatives that are trusted (counted avoided). */
    private void decideAsked() {
      confirmNegatives = followStream && follower.negativesNeedConfirmation();
      int[] asked = new int[out.length];
      int count = 0;
      for (int i = 0; i < out.length; i++) {
        if (negative[i] && !confirmNegatives) {
          out[i] = Verdict.ABSENT;
        } else {
          asked[count++] = i;
        }
      }
      if (count < out.length) {
        storeLookupsAvoided.add(out.length - count); // once per call, not per item
      }
      ask = java.util.Arrays.copyOf(asked, count);
    }

    /** Whether every verdict is known without the store ({@link #verdicts} then takes {}). */
    public boolean answered() {
      return !catchUpPending && ask.length == 0;
    }

    /**
     * The items whose verdict needs the store, in order. Where the store follows other writers
     * ({@link SqliteStore#openFollowingOtherWriters}) and the filter said "never seen" to some
     * item, this first reads the rows others committed (a store call: blocking).
     *
     * @throws StoreUnavailableException if that catch-up failed
     */
    public List<byte[]> toConfirm() {
      if (catchUpPending) {
        catchUpPending = false;
        if (store.catchUp(Guard.this::observe) > 0) {
          GuardFilter now = current;
          for (int i = 0; i < negative.length; i++) {
            negative[i] = negative[i] && !now.mightContain(items.get(i));
          }
        }
        decideAsked();
      }
      List<byte[]> asked = new java.util.ArrayList<>(ask.length);
      for (int i : ask) {
        asked.add(items.get(i));
      }
      return asked;
    }

    /**
     * The verdicts, in the order of the items, given whether each item of {@link #toConfirm()} is
     * in the store ({@link #confirm}).
     */
    public List<Verdict> verdicts(boolean[] present) {
      if (catchUpPending || present.length != ask.length) {
        throw new IllegalArgumentException("expected " + (catchUpPending ? "toConfirm() first"
            : ask.length + " store answers, got " + present.length));
      }
      for (int a = 0; a < present.length; a++) {
        int i = ask[a];
        storeLookupsMade.increment();
        if (negative[i]) {
          if (present[a]) { // the stream may not have delivered it yet
            staleNegatives.increment();
            observe(items.get(i));
          }
        } else if (!present[a]) {
          realizedFalsePositives.increment();
        }
        out[i] = present[a] ? Verdict.DUPLICATE : Verdict.CHECKED_ABSENT;
      }
      return List.of(out);
    }
  }

  /** {@link #lookup(byte[])} of the UTF-8 bytes of {@code item} (no normalisation). */
  public Verdict lookup(CharSequence item) {
    return lookup(utf8(item));
  }

  /**
   * Adds the item unless the store already holds it; exactly one of any number of concurrent
   * callers (threads or processes sharing the store) gets {@code true}.
   *
   * @return {@code true} if the item was new and is now committed
   * @throws StoreUnavailableException if the store failed; the outcome is unknown, and a retry
   *     is safe
   * @throws ReadOnlyStoreException if the store is someone else's read-only table
   */
  public boolean addIfAbsent(byte[] item) {
    return addIfAbsent(List.of(Objects.requireNonNull(item, "item")))[0];
  }

  /** {@link #addIfAbsent(byte[])} of the UTF-8 bytes of {@code item} (no normalisation). */
  public boolean addIfAbsent(CharSequence item) {
    return addIfAbsent(utf8(item));
  }

  /**
   * Batch form of {@link #addIfAbsent(byte[])}: one store round trip (one transaction) for the
   * whole list. An item repeated inside the list is new at most once, at its first occurrence.
   *
   * @return for each item, in order, whether it was new
   * @throws StoreUnavailableException if the store failed; no item of the batch is reported, each
   *     outcome is unknown, and every item counts as an insert failure
   */
  public boolean[] addIfAbsent(List<byte[]> items) {
    try {
      return addIfAbsent(items, ExactStore.BeforeCommit.NONE);
    } catch (IOException e) {
      throw new AssertionError("BeforeCommit.NONE throws nothing", e);
    }
  }

  /**
   * {@link #addIfAbsent(List)} that hands the answers to {@code beforeCommit} while the batch is
   * still uncommitted; the batch commits only if it returns. This is how a caller delivers the new
   * items (writes them out) <em>before</em> the store records them as seen: if delivery fails,
   * nothing of the batch is recorded and a retry finds every item new again.
   *
   * @throws IOException what {@code beforeCommit} threw; no item of the batch was committed (the
   *     filter may keep their bits: harmless false positives)
   * @throws StoreUnavailableException as for {@link #addIfAbsent(List)}; if {@code beforeCommit}
   *     had already returned, only the commit's outcome is unknown
   * @throws DigestCollisionException if a stored row has an item's digest but other bytes; no
   *     item of the batch was committed
   */
  public boolean[] addIfAbsent(List<byte[]> items, ExactStore.BeforeCommit beforeCommit)
      throws IOException {
    Objects.requireNonNull(beforeCommit, "beforeCommit");
    return guarded(items, maybe -> items.size() == 1 && beforeCommit == ExactStore.BeforeCommit.NONE
        ? new boolean[] {store.insertIfAbsent(items.get(0), maybe[0])}
        : store.insertAllIfAbsent(items, beforeCommit), inserted -> inserted);
  }

  /**
   * {@link #addIfAbsent(List)} that keeps the store's acknowledgement ledger in the batch's
   * transaction ({@link LedgerStore#insertAllIfAbsent(List, LedgerStore.Ledger,
   * LedgerStore.Decide)}): items answered new stay marked pending until {@link
   * #acknowledge}d, or, with a token, the answers are stored under it and a repeat returns them.
   *
   * @throws StoreUnavailableException as for {@link #addIfAbsent(List)}
   * @throws IllegalArgumentException if the token was used for other items
   * @throws UnsupportedOperationException if the store is no {@link LedgerStore}
   */
  public LedgerStore.Recorded addIfAbsent(List<byte[]> items, LedgerStore.Ledger ledger,
      LedgerStore.Decide decide) {
    try {
      LedgerStore ledgers = ledgerStore();
      return guarded(items, maybe -> ledgers.insertAllIfAbsent(items, maybe, ledger, decide),
          LedgerStore.Recorded::inserted);
    } catch (IOException e) {
      throw new AssertionError("a ledger batch throws no IOException", e);
    }
  }

  /** Clears the pending marks of {@code owner} on items whose answers were delivered. */
  public void acknowledge(String owner, List<byte[]> items) {
    requireOpen();
    ledgerStore().acknowledge(owner, items);
  }

  /** The store as a {@link LedgerStore}, which the ledger calls need. */
  private LedgerStore ledgerStore() {
    if (store instanceof LedgerStore ledgers) {
      return ledgers;
    }
    throw new UnsupportedOperationException(store.identity() + " keeps no acknowledgement ledger");
  }

  /** One store call of an add (given the filter's "maybe"s), under the gate and the accounting. */
  @FunctionalInterface
  private interface StoreCall<T> {
    T run(boolean[] maybe) throws IOException;
  }

  private <T> T guarded(List<byte[]> items, StoreCall<T> call,
      java.util.function.Function<T, boolean[]> insertedOf) throws IOException {
    requireOpen();
    for (int i = 0; i < items.size(); i++) {
      if (items.get(i) == null) {
        throw new NullPointerException("items[" + i + "]");
      }
    }
    if (store.isReadOnly()) {
      throw new ReadOnlyStoreException("store " + store.identity() + " is a read-only source;"
          + " addIfAbsent is refused (the guard never writes someone else's table)");
    }
    boolean[] maybe = new boolean[items.size()];
    gate.readLock().lock();
    try {
      GuardFilter filter = current;
      GuardFilter target = rebuildTarget;
      for (int i = 0; i < maybe.length; i++) {
        maybe[i] = !filter.add(items.get(i)); // unchanged = every bit already set = "maybe"
      }
      if (target != null) {
        for (byte[] item : items) {
          target.add(item);
        }
      }
      T result;
      try {
        result = call.run(maybe);
      } catch (StoreUnavailableException e) {
        insertFailures.add(items.size());
        throw e;
      }
      account(maybe, insertedOf.apply(result));
      warnIfNearCapacity(filter);
      return result;
    } finally {
      gate.readLock().unlock();
    }
  }

  private void account(boolean[] maybe, boolean[] inserted) {
    long newItems = 0;
    for (int i = 0; i < maybe.length; i++) {
      if (inserted[i]) {
        newItems++;
      }
      if (!maybe[i]) {
        storeLookupsAvoided.increment();
        if (!inserted[i]) {
          staleNegatives.increment();
          if (staleNegativeWarned.compareAndSet(false, true)) {
            LOG.warn("guard {}: the store already held an item this guard's filter had not"
                + " seen; either two callers added the same new item at the same instant, or"
                + " another process writes the store (then lookup() negatives can be stale until"
                + " the next rebuild); see GuardStats.staleNegatives", store.identity());
          }
        }
      } else {
        storeLookupsMade.increment();
        if (inserted[i]) {
          realizedFalsePositives.increment();
        }
      }
    }
    itemsSinceBuild.add(newItems);
    LongAdder pending = itemsSinceRebuildStart;
    if (pending != null) {
      pending.add(newItems);
    }
  }

  private void warnIfNearCapacity(GuardFilter filter) {
    if (filter.isNearCapacity() && nearCapacityWarned.compareAndSet(false, true)) {
      LOG.warn("guard {}: filter generation {} holds {} items, >= 80% of its capacity {};"
              + " its false-positive rate is climbing (model {}): rebuild with a larger"
              + " expectedInsertions", store.identity(), generation, filter.insertedCount(),
          filter.capacity(), String.format(Locale.ROOT, "%.4g", filter.estimatedFpp()));
    }
  }

  // ---------------------------------------------------------------- figures and lifecycle

  /** Freshness and honesty figures at this moment. */
  public GuardStats stats() {
    GuardFilter filter = current;
    return new GuardStats(generation, builtAt, recovery, itemsSinceBuild.sum(),
        insertFailures.sum(), storeLookupsMade.sum(), storeLookupsAvoided.sum(),
        realizedFalsePositives.sum(), staleNegatives.sum(), filter.estimatedFpp(),
        filter.fillRatio(), filter.bitSize(), filter.hashCount(), filter.capacity(),
        nearCapacityWarned.get(), rebuildTarget != null,
        follower == null ? ReplicationStatus.OFF : follower.status());
  }

  /**
   * Waits until every row committed in the followed table before this call is in the filter
   * (a freshness fence sent now has come back through the replication stream).
   *
   * @return false if the guard follows no stream, the stream is unavailable, or the timeout passed
   */
  public boolean awaitFresh(Duration timeout) throws InterruptedException {
    requireOpen();
    return followStream && follower.awaitFresh(timeout.toMillis());
  }

  /** The kind of the current filter (classic, blocked or split-block; see {@link Builder#filterKind}). */
  public FilterKind filterKind() {
    return current.kind();
  }

  /** Items added to the current filter (rows of its build plus adds and replicated rows since). */
  public long filterItems() {
    return current.insertedCount();
  }

  /** The store this guard confirms against. */
  public ExactStore store() {
    return store;
  }

  /**
   * Writes a clean snapshot (if a snapshot file is configured and the store is reachable) and
   * closes the store. A failure to write the snapshot is logged; the next open then replays from
   * the previous snapshot's watermark or rebuilds.
   */
  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    try {
      if (snapshotFile != null && !store.isReadOnly()) {
        checkpoint(true);
      }
    } catch (RuntimeException e) {
      LOG.warn("guard {}: could not write the clean snapshot on close ({}); the next open will"
          + " replay or rebuild", store.identity(), Credentials.redact(String.valueOf(e.getMessage())));
    } finally {
      if (follower != null) {
        follower.stop(); // confirms the position the clean snapshot persisted; the slot stays
      }
      store.close();
    }
  }

  /**
   * Closes the guard for good: {@link #close()}, then drops its replication slot (and the
   * publication it created), so that the server retains no WAL for it. Without replication it is
   * {@link #close()}.
   *
   * @throws StoreUnavailableException if the slot could not be dropped (it then still retains WAL)
   */
  public void closeAndDropSlot() {
    close();
    if (follower != null) {
      follower.dropSlot();
    }
  }

  private void requireOpen() {
    if (closed.get()) {
      throw new IllegalStateException("guard is closed");
    }
  }

  private static long millisSince(long startedNanos) {
    return Duration.ofNanos(System.nanoTime() - startedNanos).toMillis();
  }

  private static long rowsPerSecond(long rows, long startedNanos) {
    long nanos = Math.max(1, System.nanoTime() - startedNanos);
    return (long) (rows * 1e9 / nanos);
  }

  /** UTF-8 bytes of {@code item}, without normalisation, as every kind's {@code CharSequence} overloads encode. */
  private static byte[] utf8(CharSequence item) {
    return Objects.requireNonNull(item, "item").toString().getBytes(StandardCharsets.UTF_8);
  }
}
