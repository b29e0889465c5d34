package io.bloomery.server.command.guard;

import static io.bloomery.server.command.CommandSpec.Flag.DENYOOM;
import static io.bloomery.server.command.CommandSpec.Flag.FAST;
import static io.bloomery.server.command.CommandSpec.Flag.NOMULTI;
import static io.bloomery.server.command.CommandSpec.Flag.READONLY;
import static io.bloomery.server.command.CommandSpec.Flag.WRITE;
import static io.bloomery.server.command.CommandSpec.flags;

import io.bloomery.filter.FilterKind;
import io.bloomery.guard.DigestCollisionException;
import io.bloomery.guard.Guard;
import io.bloomery.guard.GuardStats;
import io.bloomery.guard.ReadOnlyStoreException;
import io.bloomery.guard.ReplicationStatus;
import io.bloomery.guard.StoreUnavailableException;
import io.bloomery.guard.Verdict;
import io.bloomery.server.command.Args;
import io.bloomery.server.command.CommandException;
import io.bloomery.server.command.CommandFamily;
import io.bloomery.server.command.CommandSpec;
import io.bloomery.server.command.CommandTable;
import io.bloomery.server.command.Errors;
import io.bloomery.server.command.Invocation;
import io.bloomery.server.command.Memory;
import io.bloomery.server.keyspace.Key;
import io.bloomery.server.keyspace.Keyspace;
import io.bloomery.server.resp.Reply;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The GUARD.* family: guarded sets on stores the operator declared (documented in docs/COMMANDS.md). Every store
 * call runs on the store's threads and answers through {@link Invocation#defer}; a store that fails or does not
 * answer in time answers {@code -STOREDOWN store 'NAME' is unavailable: ...}, never 0/1.
 */
public final class GuardCommands {
  private static final Logger LOG = LoggerFactory.getLogger(GuardCommands.class);
  private static final long MAX_CAPACITY = 10_000_000_000L;
  /** A classic filter's bits come in arrays of at most 1 GiB. */
  private static final long CLASSIC_SEGMENT_BYTES = 1L << 30;
  static final int MAX_TOKEN_BYTES = 128;

  private GuardCommands() {}

  /** The GUARD.* family over {@code sets}: the guarded keys and declared stores its commands act on. */
  public static CommandFamily over(GuardSets sets) {
    return t -> register(t, sets);
  }

  private static void register(CommandTable t, GuardSets sets) {
    add(t, "guard.reserve", 5, flags(WRITE, DENYOOM, NOMULTI),
        "Creates a guarded set on a declared store, its filter built from the store's rows.",
        inv -> reserve(sets, inv));
    add(t, "guard.add", 3, flags(WRITE, DENYOOM, NOMULTI, FAST),
        "Adds an item unless the store holds it: 1 new (committed now, exactly once), 0 duplicate.",
        inv -> add(sets, inv));
    add(t, "guard.madd", -3, flags(WRITE, DENYOOM, NOMULTI),
        "Adds items in one store transaction: 1 new or 0 duplicate per item.", inv -> madd(sets, inv));
    add(t, "guard.maddonce", -4, flags(WRITE, DENYOOM, NOMULTI),
        "GUARD.MADD whose reply is stored under a client token: a retry with the token gets the same reply.",
        inv -> maddOnce(sets, inv));
    add(t, "guard.exists", 3, flags(READONLY, NOMULTI, FAST),
        "The three-valued verdict for an item: maybe_present, exact_checked, duplicate.", inv -> exists(sets, inv));
    add(t, "guard.mexists", -3, flags(READONLY, NOMULTI),
        "The three-valued verdict for each item.", inv -> mexists(sets, inv));
    add(t, "guard.rebuild", 2, flags(WRITE, DENYOOM, NOMULTI),
        "Rebuilds the filter from a consistent snapshot of the store while adds continue.", inv -> rebuild(sets, inv));
    add(t, "guard.info", 2, flags(READONLY, NOMULTI, FAST),
        "Every figure of a guarded set: generation, lookups made and avoided, false positives, lag.",
        inv -> info(sets, inv));
    add(t, "guard.drop", 2, flags(WRITE, NOMULTI),
        "Drops a guarded set and its replication slot; the store's rows stay.", inv -> drop(sets, inv));
    t.add(new CommandSpec("guard.slots", -1, flags(NOMULTI), 0, 0, 0, "guard",
        "Lists the replication slots the server created in its PostgreSQL stores, or drops one no guarded key uses.",
        inv -> slots(sets, inv)));
  }

  private static void add(CommandTable t, String name, int arity, java.util.Set<CommandSpec.Flag> f,
      String summary, CommandSpec.Handler h) {
    t.add(new CommandSpec(name, arity, f, 1, 1, 1, "guard", summary, h));
  }

  // ------------------------------------------------------------------------------------------------ commands

  /** A GUARD.RESERVE whose arguments hold: its store, its filter's error rate and capacity. */
  private record Reservation(StoreDeclaration store, double rate, long capacity) {}

  /** GUARD.RESERVE key store error_rate capacity's arguments, checked; a {@link CommandException} if they fail. */
  private static Reservation reservation(GuardSets sets, List<byte[]> argv) {
    String storeName = new String(argv.get(2), java.nio.charset.StandardCharsets.UTF_8);
    StoreDeclaration store = sets.store(storeName);
    if (store == null) {
      throw new CommandException("ERR no store '" + clip(storeName) + "' is declared (the operator declares stores"
          + " with --store NAME=URL; declared: " + String.join(", ", sets.storeNames()) + ")");
    }
    if (store.sqlite() && sets.followsLog()) {
      throw new CommandException("ERR store '" + store.name() + "' is a SQLite file, which only this machine can"
          + " reach: a cluster's guarded keys need a PostgreSQL store every node reaches");
    }
    Double rate = Args.parseDouble(argv.get(3));
    if (rate == null) {
      throw new CommandException("ERR bad error rate");
    }
    if (!(rate > 0 && rate < 1)) {
      throw new CommandException("ERR (0 < error rate range < 1)");
    }
    Long capacity = Args.parseLong(argv.get(4));
    if (capacity == null) {
      throw new CommandException("ERR bad capacity");
    }
    if (capacity <= 0 || capacity > MAX_CAPACITY) {
      throw new CommandException("ERR (0 < capacity <= " + MAX_CAPACITY + ")");
    }
    return new Reservation(store, rate, capacity);
  }

  /**
   * On a cluster node, before GUARD.RESERVE key store error_rate capacity goes to the shard's log: the error the
   * command answers instead (bad arguments, an undeclared or SQLite store, a filter no heap holds), or
   * {@code null}. What the log applies then only checks that the name is free.
   */
  public static String reserveRefusal(GuardSets sets, List<byte[]> argv) {
    try {
      Reservation r = reservation(sets, argv);
      new GuardedSet(argv.get(1), r.store().name(), r.rate(), r.capacity(), Runnable::run);
      return null;
    } catch (CommandException e) {
      return e.reply();
    } catch (IllegalArgumentException e) { // the filter would pass the largest a kind holds: no heap takes it
      return Errors.OOM;
    }
  }

  private static Reply reserve(GuardSets sets, Invocation inv) {
    Key key = inv.key(1);
    Reservation r = reservation(sets, inv.argv());
    StoreDeclaration store = r.store();
    String storeName = store.name();
    double rate = r.rate();
    long capacity = r.capacity();
    GuardedSet set;
    try {
      set = new GuardedSet(key.bytes(), storeName, rate, capacity, sets.io(storeName));
    } catch (IllegalArgumentException e) { // the filter would pass the largest a kind holds: no heap takes it
      inv.server().stats().oomRejections.increment();
      throw new CommandException(Errors.OOM);
    }
    if (sets.isGuarded(key)) {
      throw new CommandException("ERR item exists");
    }
    try (Keyspace.Write w = inv.write(key)) { // under the name's write lock: a plain key cannot take it meanwhile
      if (w.get(key) != null) {
        throw new CommandException("ERR item exists (a key of another type has this name)");
      }
      if (!sets.claim(key, set)) {
        throw new CommandException("ERR item exists");
      }
      admit(inv, sets, key, set);
    }
    return inv.defer(onStore(sets, store, () -> {
      try {
        if (!sets.openAndInstall(set, true)) {
          return Reply.error("ERR the guarded key was dropped while it was being built");
        }
      } catch (RuntimeException | Error e) {
        sets.release(key, set);
        throw e;
      }
      sets.saveManifest();
      return Reply.OK;
    }, sets.buildTimeoutMillis(), "the build goes on; GUARD.INFO shows its state, and the key answers once it is ready"));
  }

  /**
   * Admits a claimed key's planned filter under {@code maxmemory} (its bytes already count, since the claim) and in
   * the heap, which must also hold the copy each snapshot checkpoint takes; refused, the key is released.
   */
  private static void admit(Invocation inv, GuardSets sets, Key key, GuardedSet set) {
    long bytes = set.plan.bitmapBytes();
    long largestArray = set.plan.kind() == FilterKind.CLASSIC_BLOOM ? Math.min(bytes, CLASSIC_SEGMENT_BYTES) : bytes;
    try {
      Memory.admitReserved(inv, bytes, 2 * bytes, largestArray);
    } catch (CommandException e) {
      sets.release(key, set);
      throw e;
    }
  }

  private static Reply add(GuardSets sets, Invocation inv) {
    return added(sets, inv, List.of(inv.arg(2)), null, answers -> Reply.integer(answers[0] ? 1 : 0));
  }

  private static Reply madd(GuardSets sets, Invocation inv) {
    return added(sets, inv, inv.argv().subList(2, inv.argc()), null, GuardCommands::integers);
  }

  /** GUARD.MADDONCE key token item [item ...]: GUARD.MADD whose reply is stored under the token. */
  private static Reply maddOnce(GuardSets sets, Invocation inv) {
    byte[] token = inv.arg(2);
    if (token.length == 0 || token.length > MAX_TOKEN_BYTES) {
      throw new CommandException("ERR the token must be 1 to " + MAX_TOKEN_BYTES + " bytes");
    }
    return added(sets, inv, inv.argv().subList(3, inv.argc()), token, GuardCommands::integers);
  }

  /**
   * Adds through the key's group commit; the reply waits for the commit and, once written to the socket, clears
   * the items' "not yet acknowledged" marks (see {@link GuardedSet}). Bounded once, where the answer is delivered.
   */
  private static Reply added(GuardSets sets, Invocation inv, List<byte[]> items, byte[] token,
      java.util.function.Function<boolean[], Reply> render) {
    Key key = inv.key(1);
    GuardedSet set = ready(sets, key);
    StoreDeclaration store = sets.store(set.storeName);
    refuseReadOnly(store);
    GuardSets.Leadership leadership = sets.leadership();
    long term = leading(leadership, key);
    long t = sets.timeoutMillis();
    GuardedSet.Request request = set.add(set.guard(), items, token, t);
    if (!leadership.changes()) {
      return inv.defer(request.result.handle((answers, e) -> e == null ? render.apply(answers)
          : failure(store, e, t)), request::written);
    }
    // A cluster node answers only while it still leads the shard after the commit: a leader elected meanwhile
    // fenced its filter before the commit, and could answer a negative for the item until its stream brings the
    // row. Not answered, the items' marks stay, and a retry on the new leader answers 1 for an item new to all.
    java.util.concurrent.atomic.AtomicBoolean answered = new java.util.concurrent.atomic.AtomicBoolean();
    CompletableFuture<Reply> reply = request.result.handle((answers, e) -> e)
        .thenCompose(e -> e != null ? CompletableFuture.completedFuture(failure(store, e, t))
            : leadership.confirm(key, term).thenApply(still -> {
              if (!still) {
                return Reply.error(LOST_LEADERSHIP);
              }
              answered.set(true);
              return render.apply(request.result.join());
            }).toCompletableFuture());
    return inv.defer(reply, ok -> request.written(ok && answered.get()));
  }

  /** The reply of a cluster node that lost its shard's leadership while a command ran. */
  private static final String LOST_LEADERSHIP = "TRYAGAIN this node lost the leadership of the key's shard while the"
      + " command ran (an add may have committed; a retry answers 1 for an item no client was told is new)";

  /** The term this node leads the key's shard in; a {@link CommandException} if it no longer leads it. */
  private static long leading(GuardSets.Leadership leadership, Key key) {
    long term = leadership.term(key);
    if (term < 0) {
      throw new CommandException(LOST_LEADERSHIP);
    }
    return term;
  }

  private static Reply integers(boolean[] answers) {
    List<Reply> out = new ArrayList<>(answers.length);
    for (boolean b : answers) {
      out.add(Reply.integer(b ? 1 : 0));
    }
    return Reply.array(out);
  }

  private static Reply exists(GuardSets sets, Invocation inv) {
    return lookups(sets, inv, List.of(inv.arg(2)), true);
  }

  private static Reply mexists(GuardSets sets, Invocation inv) {
    return lookups(sets, inv, inv.argv().subList(2, inv.argc()), false);
  }

  /**
   * GUARD.EXISTS and MEXISTS: the filter answers on the connection's own thread; only if it leaves a "maybe" (or the
   * store must be consulted for negatives: a stream that is not fresh, a store that catches up with other writers)
   * does the call wait for the store, in one query together with the other connections' lookups of the key that
   * are waiting at the same time.
   */
  private static Reply lookups(GuardSets sets, Invocation inv, List<byte[]> items, boolean single) {
    GuardedSet set = ready(sets, inv.key(1));
    StoreDeclaration store = sets.store(set.storeName);
    int protocol = inv.client().protocol();
    long t = sets.timeoutMillis();
    Guard g = set.guard();
    if (sets.leadership().changes() && !replicaRead(sets, inv)) {
      return inv.defer(leaderLookups(sets, inv.key(1), set, g, items, t)
          .thenApply(vs -> vs == null ? Reply.error(LOST_LEADERSHIP) : verdicts(vs, protocol, single))
          .exceptionally(e -> failure(store, e, t, AFTER_LOOKUP_TIMEOUT)));
    }
    Guard.Lookup lookup;
    try {
      lookup = g.lookupInFilter(items);
      if (lookup.answered()) {
        return verdicts(lookup.verdicts(new boolean[0]), protocol, single);
      }
    } catch (RuntimeException e) {
      return failure(store, e, t, AFTER_LOOKUP_TIMEOUT);
    }
    return inv.defer(set.confirm(g, lookup, t).thenApply(vs -> verdicts(vs, protocol, single))
        .exceptionally(e -> failure(store, e, t, AFTER_LOOKUP_TIMEOUT)));
  }

  /**
   * Whether a cluster node answers a lookup as a follower of the key's shard: the client asked for replica reads
   * ({@code READONLY}, which the node's router checked) and this node does not lead the shard. Such a lookup reads
   * the follower's filter as it is, with no fence and no confirmation of leadership: a negative may miss a row
   * committed in the last moments (the follower's stream has not brought it yet), as any replica read may be
   * stale; a "maybe" is confirmed in the store as anywhere.
   */
  private static boolean replicaRead(GuardSets sets, Invocation inv) {
    return inv.client().replicaReads() && sets.leadership().term(inv.key(1)) < 0;
  }

  /**
   * A cluster leader's lookups: once per term (and guard) the guard waits for a freshness fence through its stream,
   * so that its filter holds every row committed before this node led the shard (the adds earlier leaders
   * answered); then the filter, and the store for its "maybe"s; then the answer stands only if this node still led
   * the shard after it looked ({@code null} verdicts if not), as no other leader answered an add meanwhile.
   */
  private static CompletableFuture<List<Verdict>> leaderLookups(GuardSets sets, Key key, GuardedSet set, Guard g,
      List<byte[]> items, long t) {
    GuardSets.Leadership leadership = sets.leadership();
    long term = leading(leadership, key);
    GuardedSet.Fresh fresh = set.fresh;
    CompletableFuture<Void> fenced;
    if (fresh != null && fresh.guard() == g && fresh.term() == term) {
      fenced = CompletableFuture.completedFuture(null);
    } else {
      fenced = CompletableFuture.runAsync(() -> {
        try {
          if (!g.awaitFresh(java.time.Duration.ofMillis(t))) {
            throw new io.bloomery.guard.StoreUnavailableException("its replication stream did not confirm, within "
                + t + " ms, that the filter holds every row committed before this node led the shard", null);
          }
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new io.bloomery.guard.StoreUnavailableException("interrupted while fencing the filter", e);
        }
        set.fresh = new GuardedSet.Fresh(g, term);
      }, sets.io(set.storeName));
    }
    return fenced.thenCompose(v -> {
      Guard.Lookup lookup = g.lookupInFilter(items);
      return lookup.answered() ? CompletableFuture.completedFuture(lookup.verdicts(new boolean[0]))
          : set.confirm(g, lookup, t);
    }).thenCompose(vs -> leadership.confirm(key, term).thenApply(still -> still ? vs : null));
  }

  private static Reply verdicts(List<Verdict> vs, int protocol, boolean single) {
    if (single) {
      return verdict(vs.get(0), protocol);
    }
    Reply[] out = new Reply[vs.size()];
    for (int i = 0; i < out.length; i++) {
      out[i] = verdict(vs.get(i), protocol);
    }
    return Reply.array(java.util.Arrays.asList(out));
  }

  private static Reply rebuild(GuardSets sets, Invocation inv) {
    GuardedSet set = ready(sets, inv.key(1));
    Guard g = set.guard();
    long bytes = g.filterBytes(); // the next filter is sized as the current one unless the store outgrew it
    Memory.admitFilter(inv, bytes, bytes);
    return inv.defer(onStore(sets, sets.store(set.storeName), () -> {
      try {
        g.rebuild();
      } finally {
        sets.recount(set);
      }
      return Reply.OK;
    }, sets.buildTimeoutMillis(), "the rebuild goes on while adds continue; GUARD.INFO shows rebuilding 1 until it ends"));
  }

  private static Reply drop(GuardSets sets, Invocation inv) {
    Key key = inv.key(1);
    GuardedSet set = sets.get(key);
    if (set == null) {
      throw new CommandException(noSuchKey(sets, key));
    }
    return inv.defer(onStore(sets, sets.store(set.storeName), () -> {
      sets.drop(key, set);
      return Reply.OK;
    }, sets.buildTimeoutMillis(), "the drop goes on; the key is gone once its slot is dropped"));
  }

  /**
   * {@code GUARD.SLOTS [store]}: the server's replication slots in its PostgreSQL stores (or the one named), each a
   * map of store, slot, key (nil for an orphan), orphan, active, retained_wal_bytes. {@code GUARD.SLOTS DROP store
   * slot}: drops an orphan slot; refuses a slot the server does not name, one a guarded key uses, one in use.
   */
  private static Reply slots(GuardSets sets, Invocation inv) {
    if (inv.argc() == 4 && Args.is(inv.arg(1), "DROP")) {
      StoreDeclaration store = postgresStore(sets, inv.text(2));
      String slot = inv.text(3);
      if (!sets.isServerSlotName(slot)) {
        throw new CommandException("ERR '" + clip(slot) + "' is not a slot this server creates (its slots are named "
            + sets.slotNaming() + "): drop it in PostgreSQL");
      }
      return inv.defer(onStore(sets, store, () -> {
        Key owner = sets.slotOwner(slot);
        if (owner != null) {
          return Reply.error("ERR replication slot " + slot + " belongs to guarded key '" + clip(owner.toString())
              + "': GUARD.DROP the key to drop it");
        }
        try {
          return sets.dropOrphan(store, slot) ? Reply.OK
              : Reply.error("ERR store '" + store.name() + "' has no replication slot " + slot);
        } catch (IllegalStateException e) {
          return Reply.error("ERR " + e.getMessage());
        }
      }, sets.buildTimeoutMillis(), "the drop goes on; GUARD.SLOTS shows whether the slot is gone"));
    }
    if (inv.argc() > 2) {
      throw new CommandException("ERR syntax error (GUARD.SLOTS [store] or GUARD.SLOTS DROP store slot)");
    }
    List<StoreDeclaration> stores = new ArrayList<>();
    if (inv.argc() == 2) {
      stores.add(postgresStore(sets, inv.text(1)));
    } else {
      for (String name : sets.storeNames()) {
        if (!sets.store(name).sqlite()) {
          stores.add(sets.store(name));
        }
      }
    }
    CompletableFuture<List<Reply>> all = CompletableFuture.completedFuture(new ArrayList<>());
    for (StoreDeclaration store : stores) {
      CompletableFuture<Reply> one = onStore(sets, store, () -> {
        List<Reply> rows = new ArrayList<>();
        for (GuardSets.SlotRow r : sets.slots(store)) {
          Map<String, Object> f = new LinkedHashMap<>();
          f.put("store", store.name());
          f.put("slot", r.slot().name());
          f.put("key", r.key() == null ? null : r.key().bytes());
          f.put("orphan", r.key() == null ? 1L : 0L);
          f.put("active", r.slot().active() ? 1L : 0L);
          f.put("retained_wal_bytes", r.slot().retainedWalBytes());
          rows.add(Reply.map(f));
        }
        return Reply.array(rows);
      }, sets.timeoutMillis(), AFTER_LOOKUP_TIMEOUT);
      all = all.thenCombine(one, (acc, r) -> {
        acc.add(r);
        return acc;
      });
    }
    return inv.defer(all.thenApply(GuardCommands::slotRows));
  }

  /** The rows of every store's answer, or the first store's error. */
  private static Reply slotRows(List<Reply> perStore) {
    List<Reply> rows = new ArrayList<>();
    for (Reply r : perStore) {
      if (!(r instanceof Reply.Array a)) {
        return r;
      }
      rows.addAll(a.elements());
    }
    return Reply.array(rows);
  }

  private static StoreDeclaration postgresStore(GuardSets sets, String name) {
    StoreDeclaration store = sets.store(name);
    if (store == null) {
      throw new CommandException("ERR no store '" + clip(name) + "' is declared");
    }
    if (store.sqlite()) {
      throw new CommandException("ERR store '" + store.name() + "' is a SQLite file: it has no replication slots");
    }
    return store;
  }

  private static Reply info(GuardSets sets, Invocation inv) {
    GuardedSet set = sets.get(inv.key(1));
    if (set == null) {
      throw new CommandException(noSuchKey(sets, inv.key(1)));
    }
    StoreDeclaration store = sets.store(set.storeName);
    sets.recount(set);
    Map<String, Object> f = new LinkedHashMap<>();
    f.put("store", store.name());
    f.put("state", set.state());
    f.put("error_rate", set.errorRate);
    f.put("capacity", set.capacity);
    f.put("memory_bytes", set.accountedBytes());
    Guard g = set.guard();
    if (g == null) {
      f.put("building_for_ms", System.currentTimeMillis() - set.reservedAtMillis);
      return Reply.map(f);
    }
    GuardStats s = g.stats();
    f.put("source", store.redact(g.store().identity()));
    f.put("read_only", g.store().isReadOnly() ? 1L : 0L);
    f.put("generation", s.generation());
    f.put("built_at", s.builtAt() == null ? "" : s.builtAt().toString());
    f.put("recovery", store.redact(s.recovery()));
    f.put("items_since_rebuild", s.itemsSinceRebuild());
    f.put("store_lookups_made", s.storeLookupsMade());
    f.put("store_lookups_avoided", s.storeLookupsAvoided());
    f.put("lookups_avoided_share", s.lookupsAvoidedShare());
    f.put("realized_false_positives", s.realizedFalsePositives());
    f.put("realized_false_positive_rate", s.realizedFalsePositiveRate());
    f.put("model_false_positive_rate", s.modelFalsePositiveRate());
    f.put("stale_negatives", s.staleNegatives());
    f.put("insert_failures", s.insertFailures());
    f.put("fill_ratio", s.fillRatio());
    f.put("bits", s.bits());
    f.put("hashes", (long) s.hashes());
    f.put("filter_capacity", s.capacity());
    f.put("near_capacity", s.nearCapacity() ? 1L : 0L);
    f.put("rebuilding", s.rebuilding() ? 1L : 0L);
    f.put("group_commits", set.groupCommits.sum());
    f.put("group_commit_rows", set.groupCommitRows.sum());
    f.put("unacknowledged_items", (long) set.unacknowledged());
    f.put("ack_transactions", set.ackTransactions.sum());
    f.put("confirm_queries", set.confirmQueries.sum());
    f.put("confirm_lookups", set.confirmLookups.sum());
    f.put("confirm_waiting", (long) set.confirmWaiting.get());
    ReplicationStatus r = s.replication();
    f.put("replication_state", r.state());
    f.put("replication_slot", r.slot());
    f.put("replication_detail", store.redact(r.detail()));
    f.put("freshness_lag_ms", r.freshnessLagMillis());
    f.put("last_commit_lag_ms", r.lastCommitLagMillis());
    f.put("max_commit_lag_ms", r.maxCommitLagMillis());
    f.put("applied_lsn", r.appliedLsn());
    f.put("confirmed_lsn", r.confirmedLsn());
    f.put("replication_transactions", r.transactions());
    f.put("replication_rows", r.rowsApplied());
    f.put("replication_updates", r.updates());
    f.put("replication_deletes", r.deletes());
    f.put("replication_truncates", r.truncates());
    f.put("replication_reconnects", r.reconnects());
    f.put("replication_resyncs", r.resyncs());
    f.put("rebuild_advised", r.rebuildAdvised() ? 1L : 0L);
    return Reply.map(f);
  }

  // ------------------------------------------------------------------------------------------------ helpers

  /** RESP3: a map {maybe_present, exact_checked, duplicate}; RESP2: an array of the three integers in that order. */
  static Reply verdict(Verdict v, int protocol) {
    return VERDICTS[protocol >= 3 ? 1 : 0][(v.maybePresent() ? 4 : 0) + (v.exactChecked() ? 2 : 0)
        + (v.duplicate() ? 1 : 0)];
  }

  /**
   * Every verdict's reply, built and encoded once ({@link Reply#constant}): [RESP2, RESP3][maybe*4 + checked*2 +
   * duplicate]. A GUARD.MEXISTS of 1000 links then writes 1000 copies of a 16-byte frame instead of encoding 4000.
   */
  private static final Reply[][] VERDICTS = new Reply[2][8];

  static {
    for (int bits = 0; bits < 8; bits++) {
      Reply a = Reply.integer((bits >> 2) & 1);
      Reply b = Reply.integer((bits >> 1) & 1);
      Reply c = Reply.integer(bits & 1);
      VERDICTS[0][bits] = Reply.constant(Reply.arrayOf(a, b, c));
      VERDICTS[1][bits] = Reply.constant(new Reply.MapReply(List.of(new Reply.Simple("maybe_present"), a,
          new Reply.Simple("exact_checked"), b, new Reply.Simple("duplicate"), c)));
    }
  }

  private static GuardedSet ready(GuardSets sets, Key key) {
    GuardedSet set = sets.get(key);
    if (set == null) {
      throw new CommandException(noSuchKey(sets, key));
    }
    if (set.guard() == null) {
      if (set.state().startsWith("reopening (store")) {
        throw new CommandException(storeDown(set.storeName, "the guarded key is waiting for its store to reopen"));
      }
      throw new CommandException("LOADING guarded key is being built from store '" + set.storeName + "' ("
          + set.state() + "; see GUARD.INFO)");
    }
    return set;
  }

  private static void refuseReadOnly(StoreDeclaration store) {
    if (store.readOnly()) {
      throw new CommandException("ERR store '" + store.name() + "' is a read-only source (someone else's table):"
          + " GUARD.ADD and GUARD.MADD are refused");
    }
  }

  /**
   * The error for a key that is not guarded here: on a cluster node whose reshard just moved the key's slot away,
   * a command that passed the node's routing before the move can still get here; it is told to try again (the
   * node then redirects it), not that the key does not exist.
   */
  private static String noSuchKey(GuardSets sets, Key key) {
    return sets.movedAway(key) ? "TRYAGAIN the guarded key moved to another shard with its slot: try again"
        : noSuchKey();
  }

  private static String noSuchKey() {
    return "ERR no such guarded key (create it with GUARD.RESERVE key store error_rate capacity)";
  }

  static String storeDown(String store, String why) {
    return "STOREDOWN store '" + store + "' is unavailable: " + why;
  }

  private static final String AFTER_LOOKUP_TIMEOUT = "a retry is safe";
  private static final String AFTER_ADD_TIMEOUT =
      "if the add commits later, the next GUARD.ADD of the item answers 1; a retry is safe";

  /**
   * Runs {@code work} on the store's threads; past {@code timeoutMillis} the reply is {@code STOREDOWN ... no answer
   * within N ms (afterTimeout)} while the work goes on.
   */
  private static CompletableFuture<Reply> onStore(GuardSets sets, StoreDeclaration store, Supplier<Reply> work,
      long timeoutMillis, String afterTimeout) {
    CompletableFuture<Reply> f;
    try {
      f = CompletableFuture.supplyAsync(work, sets.io(store.name()));
    } catch (RejectedExecutionException e) {
      f = CompletableFuture.failedFuture(new StoreUnavailableException("the server is shutting down", e));
    }
    CompletableFuture<Reply> bounded = f.copy().orTimeout(timeoutMillis, TimeUnit.MILLISECONDS);
    return bounded.exceptionally(e -> failure(store, e, timeoutMillis, afterTimeout));
  }

  static Reply failure(StoreDeclaration store, Throwable e, long timeoutMillis) {
    return failure(store, e, timeoutMillis, AFTER_ADD_TIMEOUT);
  }

  private static Reply failure(StoreDeclaration store, Throwable e, long timeoutMillis, String afterTimeout) {
    Throwable t = e;
    while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
      t = t.getCause();
    }
    if (t instanceof TimeoutException) {
      return Reply.error(storeDown(store.name(), "no answer within " + timeoutMillis + " ms (" + afterTimeout + ")"));
    }
    if (t instanceof StoreUnavailableException) {
      return Reply.error(storeDown(store.name(), store.redact(GuardSets.oneLine(t))));
    }
    if (t instanceof ReadOnlyStoreException) {
      return Reply.error("ERR store '" + store.name() + "' is a read-only source: adds are refused");
    }
    if (t instanceof DigestCollisionException) {
      return Reply.error("ERR " + store.redact(GuardSets.oneLine(t)));
    }
    if (t instanceof IllegalStateException && "guard is closed".equals(t.getMessage())) {
      return Reply.error("ERR the guarded key was dropped or the server is shutting down");
    }
    if (t instanceof IllegalArgumentException) {
      return Reply.error("ERR store '" + store.name() + "': " + store.redact(GuardSets.oneLine(t)));
    }
    if (t instanceof java.io.UncheckedIOException io) {
      return Reply.error("ERR " + store.redact(GuardSets.oneLine(io) + ": " + GuardSets.oneLine(io.getCause())));
    }
    if (t instanceof OutOfMemoryError) {
      LOG.warn("GUARD command on store '{}' ran out of heap: {}", store.name(), t.toString());
      return Reply.error(Errors.OOM);
    }
    LOG.error("GUARD command on store '{}' failed: {}", store.name(), store.redact(String.valueOf(t)));
    return Reply.error("ERR internal error: " + t.getClass().getSimpleName());
  }

  private static String clip(String s) {
    String c = s.length() > 64 ? s.substring(0, 64) + "..." : s;
    return c.replace('\r', ' ').replace('\n', ' ');
  }
}
