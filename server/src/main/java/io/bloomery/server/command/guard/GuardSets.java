package io.bloomery.server.command.guard;

import io.bloomery.format.AtomicWrite;
import io.bloomery.guard.ExactStore;
import io.bloomery.guard.Guard;
import io.bloomery.guard.LogicalReplication;
import io.bloomery.guard.PostgresStore;
import io.bloomery.guard.ReplicationSlots;
import io.bloomery.guard.SqliteStore;
import io.bloomery.guard.StoreUnavailableException;
import io.bloomery.server.keyspace.Key;
import io.bloomery.server.state.GuardedKeys;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The guarded keys of a server and the stores the operator declared. Every store call runs on that store's own
 * threads (never on a network event loop), so a store that is down or slow holds up only its own keys.
 *
 * <p>Persistence: with a directory, the reserved keys are listed in {@code guarded-keys.tsv} and each key's filter
 * is checkpointed with its store watermark in {@code guard-<id>.snapshot}; on start every listed key is reopened
 * (snapshot plus replay of the rows after its watermark, or a rebuild, as {@link Guard} does), retrying by itself
 * while its store is down.
 *
 * <p>On a cluster node ({@link #followLog}) the shard's Raft log declares the keys instead ({@link #declare},
 * {@link #undeclare}): every replica opens each key of its shard with a replication slot of its own (named after the
 * node as well), so that each follows the store and a new leader's filter already holds all but the last rows; only
 * the shard's leader serves GUARD.* ({@link Leadership}), and before its first negative of a term it waits for a
 * freshness fence through its stream, which closes that gap (a follower answers lookups only to a client that asked
 * for replica reads, without a fence: they may be stale). No key list is written then: the log is the list.
 */
public final class GuardSets implements GuardedKeys, AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(GuardSets.class);
  static final String MANIFEST = "guarded-keys.tsv";
  private static final long REOPEN_RETRY_MILLIS = 2_000;
  /** What every replication slot (and publication) the server creates is named with, before the key's id. */
  static final String SLOT_PREFIX = "bloomery_g";
  private static final java.util.regex.Pattern SLOT_NAME =
      java.util.regex.Pattern.compile(SLOT_PREFIX + "[0-9a-f]{16}");

  /** No stores declared: every GUARD.RESERVE is refused. */
  public static GuardSets none() {
    return new GuardSets(List.of(), 5_000, null);
  }

  private final Map<String, StoreDeclaration> stores = new LinkedHashMap<>();
  private final Map<String, ExecutorService> io = new ConcurrentHashMap<>();
  private final ConcurrentHashMap<Key, GuardedSet> keys = new ConcurrentHashMap<>();
  /** Keys a reshard moved away from this node's shard ({@link #moved}), until declared here again. */
  private final java.util.Set<Key> movedAway = java.util.concurrent.ConcurrentHashMap.newKeySet();
  /** The sum of every key's {@link GuardedSet#accountedBytes()}: what guarded keys count against maxmemory. */
  private final AtomicLong filterBytes = new AtomicLong();
  /** Per PostgreSQL store, the server's slots no guarded key uses, as last seen (see {@link #orphanSlots}). */
  private final ConcurrentHashMap<String, List<String>> orphans = new ConcurrentHashMap<>();
  private final ScheduledExecutorService retries;
  private final long timeoutMillis;
  private final java.time.Duration statementTimeout;
  private final long buildTimeoutMillis;
  private final Path dir;
  private volatile boolean closed;
  private volatile Leadership leadership = Leadership.SINGLE;
  /** Appended to every slot name: empty on a single node, {@code _} and the node id's first 12 characters on one of a cluster. */
  private volatile String slotSuffix = "";
  private volatile java.util.regex.Pattern slotPattern = SLOT_NAME;

  /**
   * Whether this node leads the keys it serves, as a cluster node's shards decide: a single node always leads, in
   * one term that never changes.
   */
  public interface Leadership {
    /** A single node's: it leads every key, always in term 0. */
    Leadership SINGLE = new Leadership() {
      @Override
      public long term(Key key) {
        return 0;
      }

      @Override
      public java.util.concurrent.CompletionStage<Boolean> confirm(Key key, long term) {
        return java.util.concurrent.CompletableFuture.completedFuture(true);
      }

      @Override
      public boolean changes() {
        return false;
      }
    };

    /** The term in which this node leads the shard of {@code key}, or -1 if it does not lead it. */
    long term(Key key);

    /**
     * Whether this node still leads the shard of {@code key} in {@code term}, as a majority of the shard confirmed
     * it after this call (its leader lease, or a round of heartbeats).
     */
    java.util.concurrent.CompletionStage<Boolean> confirm(Key key, long term);

    /** Whether leadership moves (a cluster node): guards then fence once per term and confirm each answer. */
    boolean changes();
  }

  /**
   * @param timeoutMillis how long GUARD.ADD/MADD/EXISTS/MEXISTS wait for their store before answering STOREDOWN
   * @param dir where the key list and filter snapshots live, or {@code null} for none
   */
  public GuardSets(List<StoreDeclaration> declared, long timeoutMillis, Path dir) {
    this(declared, timeoutMillis, 2 * timeoutMillis, 60_000, dir);
  }

  /**
   * @param statementTimeoutMillis PostgreSQL {@code statement_timeout} of the stores' connections (scans exempt)
   * @param buildTimeoutMillis how long GUARD.RESERVE/REBUILD/DROP wait before answering STOREDOWN (the work goes on)
   */
  public GuardSets(List<StoreDeclaration> declared, long timeoutMillis, long statementTimeoutMillis,
      long buildTimeoutMillis, Path dir) {
    for (StoreDeclaration s : declared) {
      stores.put(s.name(), s);
    }
    this.timeoutMillis = timeoutMillis;
    this.statementTimeout = java.time.Duration.ofMillis(statementTimeoutMillis);
    this.buildTimeoutMillis = buildTimeoutMillis;
    this.dir = dir;
    this.retries = Executors.newSingleThreadScheduledExecutor(daemon("guard-reopen"));
  }

  public long timeoutMillis() {
    return timeoutMillis;
  }

  /**
   * Makes these guarded keys a cluster node's, before any is declared: the shard's log declares them ({@link
   * #declare}), {@code leadership} says which this node serves, and slot names carry {@code nodeId}'s first 12
   * characters, so that each replica streams from a slot of its own and lists only its own.
   */
  public void followLog(String nodeId, Leadership leadership) {
    this.slotSuffix = "_" + slotTag(nodeId);
    this.slotPattern = nodeSlotPattern(nodeId);
    this.leadership = java.util.Objects.requireNonNull(leadership, "leadership");
  }

  /** What the slot names of cluster node {@code nodeId} end with, after {@code _}: its id's first 12 characters. */
  public static String slotTag(String nodeId) {
    String tag = nodeId.toLowerCase(Locale.ROOT).replaceAll("[^0-9a-z]", "");
    return tag.substring(0, Math.min(12, tag.length()));
  }

  private static java.util.regex.Pattern nodeSlotPattern(String nodeId) {
    return java.util.regex.Pattern.compile(SLOT_PREFIX + "[0-9a-f]{16}"
        + java.util.regex.Pattern.quote("_" + slotTag(nodeId)));
  }

  /** Whether the keys follow a cluster shard's log ({@link #followLog}). */
  public boolean followsLog() {
    return leadership != Leadership.SINGLE;
  }

  Leadership leadership() {
    return leadership;
  }

  /**
   * A guarded key the shard's log declared ({@code GUARD.RESERVE} on its leader), opened here in the background,
   * retried while its store is down; a key already declared with the same sizing is left as it is (a snapshot that
   * repeats it). Never blocks: called on the thread that applies the log.
   */
  public void declare(Key key, String store, double errorRate, long capacity) {
    movedAway.remove(key);
    GuardedSet had = keys.get(key);
    if (had != null) {
      if (had.storeName.equals(store) && had.errorRate == errorRate && had.capacity == capacity) {
        return;
      }
      undeclare(key);
    }
    GuardedSet set;
    try {
      set = new GuardedSet(key.bytes(), store, errorRate, capacity, io(store));
    } catch (IllegalArgumentException e) {
      LOG.error("guarded key {}: the shard's log declares a filter this node cannot hold: {}", key, e.getMessage());
      return;
    }
    if (!claim(key, set)) {
      return;
    }
    StoreDeclaration s = stores.get(store);
    if (s == null || s.sqlite()) {
      set.state("failed: store '" + store + "' is " + (s == null ? "not declared on this node (--store " + store
          + "=URL)" : "a SQLite file, which only one machine can reach"));
      LOG.error("guarded key {}: {}", key, set.state());
      return;
    }
    set.state("reopening");
    reopen(set);
  }

  /**
   * A guarded key a reshard moved to another shard: closed and its slot dropped as {@link #undeclare} does, and
   * remembered as moved ({@link #movedAway}) until it is declared here again.
   */
  public void moved(Key key) {
    movedAway.add(key);
    undeclare(key);
  }

  /** Whether a reshard moved {@code key} away from this node's shard since it was last declared here. */
  public boolean movedAway(Key key) {
    return movedAway.contains(key);
  }

  /** A guarded key the shard's log dropped: closed here, its slot dropped, in the background. */
  public void undeclare(Key key) {
    GuardedSet set = keys.get(key);
    if (set == null) {
      return;
    }
    if (!keys.remove(key, set)) {
      return;
    }
    try {
      io(set.storeName).execute(() -> {
        try {
          dropRemoved(set);
        } catch (RuntimeException e) {
          LOG.warn("guarded key {}: dropping it left its replication slot behind (GUARD.SLOTS lists it): {}", key,
              oneLine(e));
        }
      });
    } catch (java.util.concurrent.RejectedExecutionException e) {
      set.discard(); // closing: the slot stays for GUARD.SLOTS
    }
  }

  /**
   * Rebuilds a guarded key's filter from the store, in the background, as the shard's log asks every replica
   * (GUARD.REBUILD on its leader); a key not built here yet is left as it is (its build reads the store anyway).
   * {@link #rebuilt} completes when it ends.
   */
  public void rebuildFromLog(Key key) {
    GuardedSet set = keys.get(key);
    Guard g = set == null ? null : set.guard();
    if (g == null) {
      return;
    }
    java.util.concurrent.CompletableFuture<Void> run;
    try {
      run = java.util.concurrent.CompletableFuture.runAsync(() -> {
        try {
          g.rebuild();
        } finally {
          recount(set);
        }
      }, io(set.storeName));
    } catch (java.util.concurrent.RejectedExecutionException e) {
      return; // closing
    }
    set.rebuild = run.handle((v, e) -> {
      if (e == null) {
        return null;
      }
      String why = stores.get(set.storeName).redact(oneLine(e.getCause() != null ? e.getCause() : e));
      LOG.warn("guarded key {}: the rebuild the shard's log asked for failed: {}", key, why);
      throw new java.util.concurrent.CompletionException(new IllegalStateException(why));
    });
  }

  /**
   * Completes when the last rebuild {@link #rebuildFromLog} started for {@code key} ends (at once if none did;
   * exceptionally if there is no such key or the rebuild failed).
   */
  public java.util.concurrent.CompletableFuture<Void> rebuilt(Key key) {
    GuardedSet set = keys.get(key);
    if (set == null) {
      return java.util.concurrent.CompletableFuture.failedFuture(new IllegalStateException("no such guarded key"));
    }
    java.util.concurrent.CompletableFuture<Void> run = set.rebuild;
    return run == null ? java.util.concurrent.CompletableFuture.completedFuture(null) : run;
  }

  /** Keeps only the guarded keys of {@code declared} (a snapshot replaced the shard's declarations). */
  public void retainOnly(java.util.Set<Key> declared) {
    for (Key k : new ArrayList<>(keys.keySet())) {
      if (!declared.contains(k)) {
        undeclare(k);
      }
    }
  }

  /** Completes once {@code key}'s guard is built (exceptionally if there is no such key or it is dropped first). */
  public java.util.concurrent.CompletableFuture<Void> built(Key key) {
    GuardedSet set = keys.get(key);
    return set == null ? java.util.concurrent.CompletableFuture.failedFuture(new IllegalStateException(
        "no such guarded key")) : set.ready;
  }

  /** How long GUARD.RESERVE, REBUILD and DROP wait before answering STOREDOWN while their work goes on. */
  public long buildTimeoutMillis() {
    return buildTimeoutMillis;
  }

  StoreDeclaration store(String name) {
    return stores.get(name);
  }

  Iterable<String> storeNames() {
    return stores.keySet();
  }

  GuardedSet get(Key key) {
    return keys.get(key);
  }

  int size() {
    return keys.size();
  }

  /** Every guarded key's figures (at most {@code limit}), sorted by key; for the dashboard. */
  public List<GuardedKeyHealth> health(int limit) {
    List<GuardedKeyHealth> all = new ArrayList<>();
    for (GuardedSet set : keys.values()) {
      all.add(GuardedKeyHealth.of(set, stores.get(set.storeName)));
    }
    all.sort(java.util.Comparator.comparing(GuardedKeyHealth::key));
    return all.subList(0, Math.min(limit, all.size()));
  }

  /** One guarded key's figures, {@code null} if there is no such guarded key. */
  public GuardedKeyHealth health(Key key) {
    GuardedSet set = keys.get(key);
    return set == null ? null : GuardedKeyHealth.of(set, stores.get(set.storeName));
  }

  @Override
  public boolean isGuarded(Key key) {
    return keys.containsKey(key);
  }

  @Override
  public int count() {
    return keys.size();
  }

  @Override
  public List<Key> names() {
    return new ArrayList<>(keys.keySet());
  }

  /** The store's threads: bounded, daemon, named after the store (never its URL). */
  ExecutorService io(String store) {
    return io.computeIfAbsent(store, s -> Executors.newFixedThreadPool(16, daemon("guard-store-" + s)));
  }

  /** Registers a key being built, counting its planned filter against maxmemory; {@code false} if it exists. */
  boolean claim(Key key, GuardedSet set) {
    if (keys.putIfAbsent(key, set) != null) {
      return false;
    }
    recount(set);
    return true;
  }

  /** Unregisters a key whose reserve failed; a guard it opens meanwhile is closed, its slot dropped. */
  void release(Key key, GuardedSet set) {
    keys.remove(key, set);
    set.discard();
    recount(set);
  }

  /**
   * The bytes guarded keys count against {@code maxmemory}: each key's filters as last counted (on reserve,
   * build, rebuild and drop, and by {@link #recountAll}), the planned filter of a key still being built.
   */
  @Override
  public long usedBytes() {
    return filterBytes.get();
  }

  /** Recounts every key (a background rebuild may have resized a filter); {@link #usedBytes()} after. */
  @Override
  public long recountAll() {
    for (GuardedSet s : keys.values()) {
      recount(s);
    }
    return filterBytes.get();
  }

  void recount(GuardedSet set) {
    filterBytes.addAndGet(set.recount());
  }

  /** The bytes the guarded key counts against maxmemory, or -1 if there is no such guarded key (MEMORY USAGE). */
  @Override
  public long usedBytes(Key key) {
    GuardedSet set = keys.get(key);
    if (set == null) {
      return -1;
    }
    recount(set);
    return set.accountedBytes();
  }

  /**
   * The replication slot (and publication) of a guarded key here: {@link #SLOT_PREFIX}, its id, and on a cluster
   * node the node's tag ({@link #followLog}).
   */
  String slotName(byte[] key) {
    return SLOT_PREFIX + keyId(key) + slotSuffix;
  }

  /**
   * Opens the guard of a registered key and installs it (blocking, on a store thread): {@code true} once the key is
   * ready, {@code false} if it was dropped meanwhile (the guard just opened is then closed and its slot dropped).
   * A failed open leaves no slot of a {@code fresh} key (one being reserved); a reopened key keeps its slot for the
   * next attempt unless it was dropped meanwhile.
   */
  boolean openAndInstall(GuardedSet set, boolean fresh) {
    if (!set.startOpening()) {
      return false;
    }
    Guard g;
    try {
      g = open(set);
    } catch (RuntimeException | Error e) {
      if (set.openFailed() || fresh) {
        deleteSnapshot(set);
        dropSlotQuietly(set);
      }
      throw e;
    }
    if (!set.built(g)) {
      closeDropped(set, g);
      return false;
    }
    recount(set);
    forgetOrphan(set.storeName, slotName(set.key)); // an orphan of the same name was replaced by this key's
    return true;
  }

  /** Opens (builds or recovers) the guard of {@code set}; blocking, on a store thread. */
  private Guard open(GuardedSet set) {
    StoreDeclaration s = stores.get(set.storeName);
    String id = keyId(set.key);
    ExactStore store;
    if (s.sqlite()) {
      Path file = Path.of(s.url().substring("sqlite:".length()));
      String table = s.table() != null ? s.table() : "bloomery_seen_" + id;
      store = SqliteStore.openFollowingOtherWriters(file, table);
    } else if (s.readOnly()) {
      store = PostgresStore.openReadOnly(s.url(), s.table(), s.column(), statementTimeout);
    } else {
      store = PostgresStore.open(s.url(), s.table() != null ? s.table() : "bloomery_seen_" + id, statementTimeout);
    }
    Guard.Builder b = Guard.builder(store).expectedInsertions(set.capacity).fpp(set.errorRate);
    if (dir != null) {
      b.snapshotFile(dir.resolve("guard-" + id + ".snapshot"));
    }
    if (!s.sqlite()) {
      b.replication(LogicalReplication.slot(slotName(set.key)));
    }
    LOG.info("guarded key {} on store '{}': building its filter from the store's rows (n={} p={})",
        Key.of(set.key), s.name(), set.capacity, set.errorRate);
    Guard g = b.open();
    LOG.info("guarded key {} on store '{}': ready, {}", Key.of(set.key), s.name(),
        s.redact(g.stats().recovery()));
    return g;
  }

  /** 16 hex digits of SHA-256(key): the key's table, slot and snapshot names. */
  static String keyId(byte[] key) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(key), 0, 8);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  /**
   * Drops a key: closes its guard and drops its replication slot (no WAL kept for it); its rows stay in the store.
   * A key without a guard has its slot dropped by name (a reopen that failed or waits for its store), unless an open
   * attempt is running, which drops what it opens once it sees the key dropped.
   *
   * @throws StoreUnavailableException if the slot could not be dropped (the key is gone; the slot is then listed as
   *     an orphan by GUARD.SLOTS, which can drop it)
   */
  void drop(Key key, GuardedSet set) {
    keys.remove(key, set);
    saveManifest();
    dropRemoved(set);
  }

  /** {@link #drop}'s work once the key is no longer listed: its guard closed, its slot and snapshot dropped. */
  private void dropRemoved(GuardedSet set) {
    Guard g = set.discard();
    recount(set);
    if (g != null) {
      closeDropped(set, g);
    } else if (!set.opening()) {
      deleteSnapshot(set);
      StoreDeclaration store = stores.get(set.storeName);
      if (store != null && !store.sqlite()) {
        dropSlot(set);
      }
    }
  }

  /**
   * Closes the guard of a dropped key, drops its slot and deletes its snapshot (which the close wrote); a failure to
   * drop the slot is rethrown once recorded as an orphan.
   */
  private void closeDropped(GuardedSet set, Guard g) {
    try {
      g.closeAndDropSlot();
    } catch (RuntimeException e) {
      leftBehind(set, e);
      throw e;
    } finally {
      deleteSnapshot(set);
    }
  }

  /** Drops the key's slot by name (if it exists); a failure is rethrown once recorded as an orphan. */
  private void dropSlot(GuardedSet set) {
    try {
      dropSlotByName(set);
    } catch (RuntimeException e) {
      leftBehind(set, e);
      throw e;
    }
  }

  /**
   * After a failed open, whose own failure is what the client hears: drops the key's slot by name in case the
   * guard's own drop failed; a failure (the store is down, and with it most likely the slot was never made) is
   * logged, and GUARD.SLOTS lists the slot if it exists.
   */
  private void dropSlotQuietly(GuardedSet set) {
    StoreDeclaration s = stores.get(set.storeName);
    if (s.sqlite()) {
      return;
    }
    try {
      dropSlotByName(set);
    } catch (RuntimeException e) {
      LOG.warn("guarded key {}: cannot make sure replication slot {} is gone after the failed open (GUARD.SLOTS"
          + " lists it if it exists): {}", Key.of(set.key), slotName(set.key), s.redact(oneLine(e)));
    }
  }

  private void dropSlotByName(GuardedSet set) {
    ReplicationSlots.drop(stores.get(set.storeName).url(), slotName(set.key));
    forgetOrphan(set.storeName, slotName(set.key));
  }

  /** Records the slot of a dropped key that could not be dropped, so that INFO counts it. */
  private void leftBehind(GuardedSet set, RuntimeException e) {
    StoreDeclaration s = stores.get(set.storeName);
    String slot = slotName(set.key);
    orphans.compute(s.name(), (k, v) -> {
      List<String> l = v == null ? new ArrayList<>() : new ArrayList<>(v);
      if (!l.contains(slot)) {
        l.add(slot);
      }
      return List.copyOf(l);
    });
    LOG.error("guarded key {}: cannot drop replication slot {} in store '{}', which retains WAL until GUARD.SLOTS"
        + " DROP {} {} drops it: {}", Key.of(set.key), slot, s.name(), s.name(), slot, s.redact(oneLine(e)));
  }

  private void deleteSnapshot(GuardedSet set) {
    if (dir != null) {
      try {
        Files.deleteIfExists(dir.resolve("guard-" + keyId(set.key) + ".snapshot"));
      } catch (IOException e) {
        LOG.warn("guarded key {}: cannot delete its snapshot: {}", Key.of(set.key), e.getMessage());
      }
    }
  }

  // ------------------------------------------------------------------------------------------- persistence

  /** Rewrites the list of reserved keys (atomic replace); a no-op without a directory. */
  synchronized void saveManifest() {
    if (dir == null || followsLog()) {
      return;
    }
    StringBuilder sb = new StringBuilder("# guarded keys: hex(key) store error_rate capacity\n");
    for (GuardedSet s : keys.values()) {
      sb.append(HexFormat.of().formatHex(s.key)).append('\t').append(s.storeName).append('\t')
          .append(Double.toString(s.errorRate)).append('\t').append(s.capacity).append('\n');
    }
    try {
      Files.createDirectories(dir);
      AtomicWrite.write(dir.resolve(MANIFEST), sb.toString().getBytes(StandardCharsets.UTF_8));
    } catch (IOException e) {
      LOG.error("cannot write {}: guarded keys reserved since the last write are not listed for a restart: {}",
          dir.resolve(MANIFEST), e.getMessage());
    }
  }

  /**
   * Reopens the keys listed in the directory, each on its store's threads; a key whose store is down answers
   * STOREDOWN and is retried every two seconds until it opens. Then counts, in the background, each PostgreSQL
   * store's orphan slots for INFO ({@link #orphanSlots}).
   *
   * @throws IllegalArgumentException if the list is malformed or names a store that is not declared
   */
  public void reopenListed() {
    reopenListedKeys();
    for (StoreDeclaration s : stores.values()) {
      if (!s.sqlite()) {
        try {
          io(s.name()).execute(() -> {
            try {
              slots(s);
            } catch (RuntimeException e) {
              LOG.info("store '{}': cannot look for replication slots left behind: {}", s.name(),
                  s.redact(oneLine(e)));
            }
          });
        } catch (java.util.concurrent.RejectedExecutionException e) {
          return; // closed meanwhile
        }
      }
    }
  }

  private void reopenListedKeys() {
    if (dir == null || followsLog() || !Files.exists(dir.resolve(MANIFEST))) {
      return;
    }
    List<String> lines;
    try {
      lines = Files.readAllLines(dir.resolve(MANIFEST), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new IllegalArgumentException("cannot read " + dir.resolve(MANIFEST) + ": " + e.getMessage());
    }
    List<GuardedSet> sets = new ArrayList<>();
    int n = 0;
    for (String line : lines) {
      n++;
      if (line.isBlank() || line.startsWith("#")) {
        continue;
      }
      String[] f = line.split("\t");
      String where = dir.resolve(MANIFEST) + ":" + n;
      if (f.length != 4) {
        throw new IllegalArgumentException(where + ": expected 4 tab-separated fields");
      }
      if (!stores.containsKey(f[1])) {
        throw new IllegalArgumentException(where + ": guarded key on store '" + f[1]
            + "', which is not declared (--store " + f[1] + "=URL)");
      }
      try {
        sets.add(new GuardedSet(HexFormat.of().parseHex(f[0]), f[1], Double.parseDouble(f[2]),
            Long.parseLong(f[3]), io(f[1])));
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException(where + ": " + e.getMessage());
      }
    }
    for (GuardedSet s : sets) {
      keys.put(Key.of(s.key), s);
      recount(s);
      s.state("reopening");
      reopen(s);
    }
  }

  private void reopen(GuardedSet s) {
    io(s.storeName).execute(() -> {
      if (closed || keys.get(Key.of(s.key)) != s) {
        return;
      }
      try {
        openAndInstall(s, false);
      } catch (StoreUnavailableException e) {
        s.state("reopening (store unavailable; retrying)");
        LOG.warn("guarded key {}: store '{}' is unavailable, retrying in {} ms: {}", Key.of(s.key), s.storeName,
            REOPEN_RETRY_MILLIS, stores.get(s.storeName).redact(oneLine(e)));
        if (!closed) {
          retries.schedule(() -> reopen(s), REOPEN_RETRY_MILLIS, TimeUnit.MILLISECONDS);
        }
      } catch (RuntimeException e) {
        s.state("failed: " + stores.get(s.storeName).redact(oneLine(e)));
        LOG.error("guarded key {}: cannot reopen: {}", Key.of(s.key), stores.get(s.storeName).redact(oneLine(e)));
      }
    });
  }

  // ------------------------------------------------------------------------------------ replication slots

  /** A replication slot of the server's naming in a store: the guarded key that uses it, or {@code null}. */
  record SlotRow(StoreDeclaration store, ReplicationSlots.Slot slot, Key key) {}

  /**
   * The slots named like the server's ({@link #SLOT_PREFIX} and 16 hex digits) in the database of the PostgreSQL
   * store {@code s}, each with the guarded key that uses it or none (an orphan); blocking, on a store thread.
   * Refreshes the store's orphan count in INFO.
   *
   * @throws StoreUnavailableException if the store cannot be read
   */
  List<SlotRow> slots(StoreDeclaration s) {
    List<ReplicationSlots.Slot> found = ReplicationSlots.list(s.url(), SLOT_PREFIX);
    Map<String, Key> owners = slotOwners();
    List<SlotRow> rows = new ArrayList<>();
    List<String> orphaned = new ArrayList<>();
    for (ReplicationSlots.Slot slot : found) {
      if (!isServerSlotName(slot.name())) {
        continue;
      }
      Key key = owners.get(slot.name());
      rows.add(new SlotRow(s, slot, key));
      if (key == null) {
        orphaned.add(slot.name());
      }
    }
    orphans.put(s.name(), List.copyOf(orphaned));
    return rows;
  }

  /**
   * Whether {@code name} is a slot name this server gives ({@link #SLOT_PREFIX} and 16 hex digits, and on a cluster
   * node its tag): another node's slots are not its to list or drop.
   */
  boolean isServerSlotName(String name) {
    return slotPattern.matcher(name).matches();
  }

  /** How this server's slots are named, for errors. */
  String slotNaming() {
    return SLOT_PREFIX + " and 16 hex digits" + (slotSuffix.isEmpty() ? "" : ", then " + slotSuffix);
  }

  /** The guarded key (of any store) whose slot is named {@code slot}, or {@code null}. */
  Key slotOwner(String slot) {
    return slotOwners().get(slot);
  }

  private Map<String, Key> slotOwners() {
    Map<String, Key> owners = new java.util.HashMap<>();
    for (Key k : keys.keySet()) {
      owners.put(slotName(k.bytes()), k);
    }
    return owners;
  }

  /**
   * Drops the orphan slot {@code slot} of store {@code s} (blocking, on a store thread); {@code false} if the store
   * has no such slot. The caller checked that the name is the server's and that no guarded key uses it.
   *
   * @throws IllegalStateException if a connection streams from the slot
   * @throws StoreUnavailableException if the store cannot be reached or refuses
   */
  boolean dropOrphan(StoreDeclaration s, String slot) {
    boolean dropped = ReplicationSlots.drop(s.url(), slot);
    forgetOrphan(s.name(), slot);
    return dropped;
  }

  /**
   * Drops, in each PostgreSQL store, the replication slots (and their publications) that cluster node {@code nodeId}
   * named: what a node removed from its cluster while it was down leaves, retaining WAL, since it drops its own only
   * when it runs again. Each store's work runs on its threads, all at once. A slot in use is left: the node that
   * streams from it still runs, and drops it itself once it finds it was removed.
   *
   * @return per store that had any, what was dropped and what was left; completes exceptionally with the first
   *     store's failure ({@link StoreUnavailableException}) once every store answered
   * @throws IllegalStateException on this node's own id: its slots are its guarded keys'
   */
  public CompletableFuture<List<String>> dropSlotsOfNode(String nodeId) {
    java.util.regex.Pattern theirs = nodeSlotPattern(nodeId);
    if (theirs.pattern().equals(slotPattern.pattern())) {
      throw new IllegalStateException("these are this node's own replication slots");
    }
    List<CompletableFuture<String>> perStore = new ArrayList<>();
    for (StoreDeclaration s : stores.values()) {
      if (s.sqlite()) {
        continue;
      }
      perStore.add(CompletableFuture.supplyAsync(() -> {
        List<String> dropped = new ArrayList<>();
        List<String> inUse = new ArrayList<>();
        try {
          for (ReplicationSlots.Slot slot : ReplicationSlots.list(s.url(), SLOT_PREFIX)) {
            if (!theirs.matcher(slot.name()).matches()) {
              continue;
            }
            try {
              if (ReplicationSlots.drop(s.url(), slot.name())) {
                dropped.add(slot.name());
              }
            } catch (IllegalStateException e) {
              inUse.add(slot.name());
            }
          }
        } catch (RuntimeException e) {
          throw new StoreUnavailableException("store '" + s.name() + "'" + (dropped.isEmpty() ? ""
              : " (after dropping " + dropped + ")") + ": " + s.redact(oneLine(e)), e);
        }
        if (!dropped.isEmpty() || !inUse.isEmpty()) {
          LOG.info("store '{}': dropped the replication slots {} of removed cluster node {}{}", s.name(), dropped,
              nodeId, inUse.isEmpty() ? "" : "; left " + inUse + ", in use (the node still runs)");
        }
        return dropped.isEmpty() && inUse.isEmpty() ? null : "store '" + s.name() + "': dropped " + dropped.size()
            + (inUse.isEmpty() ? "" : ", left " + inUse.size() + " in use (" + String.join(" ", inUse) + ")");
      }, io(s.name())));
    }
    return CompletableFuture.allOf(perStore.toArray(new CompletableFuture<?>[0]))
        .thenApply(done -> perStore.stream().map(CompletableFuture::join)
            .filter(java.util.Objects::nonNull).toList());
  }

  private void forgetOrphan(String store, String slot) {
    orphans.computeIfPresent(store, (k, v) -> v.stream().filter(n -> !n.equals(slot)).toList());
  }

  /**
   * How many of the server's slots no guarded key uses, as last seen: by the check after start, by the last
   * GUARD.SLOTS of each store, and for each GUARD.DROP whose slot could not be dropped since.
   */
  public int orphanSlots() {
    int n = 0;
    for (List<String> l : orphans.values()) {
      n += l.size();
    }
    return n;
  }

  @Override
  public Map<String, String> infoFields() {
    Map<String, String> m = new LinkedHashMap<>();
    m.put("guarded_keys", Integer.toString(keys.size()));
    m.put("guard_filter_bytes", Long.toString(recountAll()));
    m.put("guard_orphan_slots", Integer.toString(orphanSlots()));
    return m;
  }

  /**
   * The message of failure {@code e} (of its cause, for a {@link java.util.concurrent.CompletionException} that wraps
   * one) on one line: for a reply or a log line.
   */
  public static String oneLine(Throwable e) {
    Throwable t = e instanceof java.util.concurrent.CompletionException && e.getCause() != null ? e.getCause() : e;
    String m = t.getMessage() == null ? t.getClass().getSimpleName() : t.getMessage();
    return m.replace('\r', ' ').replace('\n', ' ');
  }

  /** Closes every guard (each writes its clean snapshot) and stops the store threads. Idempotent. */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    retries.shutdownNow();
    for (GuardedSet s : keys.values()) {
      Guard g = s.guard();
      if (g != null) {
        try {
          s.flushAcknowledgements();
          g.close();
        } catch (RuntimeException e) {
          LOG.warn("guarded key {}: close failed: {}", Key.of(s.key),
              stores.get(s.storeName).redact(oneLine(e)));
        }
      }
    }
    for (ExecutorService e : io.values()) {
      e.shutdownNow();
    }
  }

  private static ThreadFactory daemon(String prefix) {
    AtomicInteger n = new AtomicInteger();
    return r -> {
      Thread t = new Thread(r, prefix + "-" + n.incrementAndGet());
      t.setDaemon(true);
      return t;
    };
  }

  @Override
  public String toString() {
    return String.format(Locale.ROOT, "%d stores, %d guarded keys", stores.size(), keys.size());
  }
}
