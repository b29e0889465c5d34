package io.bloomery.server.command.bloom;

import static io.bloomery.server.command.CommandSpec.Flag.DENYOOM;
import static io.bloomery.server.command.CommandSpec.Flag.FAST;
import static io.bloomery.server.command.CommandSpec.Flag.READONLY;
import static io.bloomery.server.command.CommandSpec.Flag.WRITE;
import static io.bloomery.server.command.CommandSpec.flags;

import io.bloomery.blocked.ScalableBlockedBloomFilter;
import io.bloomery.filter.DumpRejectedException;
import io.bloomery.filter.FilterFullException;
import io.bloomery.filter.FilterKind;
import io.bloomery.filter.FilterTooLargeException;
import io.bloomery.filter.MembershipFilter;
import io.bloomery.filter.Summary;
import io.bloomery.format.FilterFormat;
import io.bloomery.format.RedisBloomDump;
import io.bloomery.plan.FilterPlan;
import io.bloomery.scalable.ScalableBloomFilter;
import io.bloomery.server.command.Args;
import io.bloomery.server.command.CommandException;
import io.bloomery.server.command.CommandTable;
import io.bloomery.server.command.Errors;
import io.bloomery.server.command.Invocation;
import io.bloomery.server.command.Kinds;
import io.bloomery.server.command.Memory;
import io.bloomery.server.command.RedisBloomErrors;
import io.bloomery.server.keyspace.Key;
import io.bloomery.server.keyspace.Keyspace;
import io.bloomery.server.keyspace.ValueType;
import io.bloomery.server.persistence.load.FileLoads;
import io.bloomery.server.persistence.load.LoadCaller;
import io.bloomery.server.persistence.load.LoadException;
import io.bloomery.server.resp.Reply;
import io.bloomery.server.state.GuardedKeys;
import io.bloomery.server.state.Settings;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * RedisBloom's {@code BF.*} commands over {@link ScalableBloomFilter}, with RedisBloom's validation order, error
 * texts and quirks (src/rebloom.c): EXISTS on a missing or wrong-type key answers 0, CARD on a missing key 0,
 * MADD/INSERT carry per-item errors and stop after "non scaling filter is full", RESERVE finds its options anywhere
 * in argv, INSERT matches options by their first letters.
 */
public final class BloomCommands {
  private static final Logger LOG = LoggerFactory.getLogger(BloomCommands.class);

  private BloomCommands() {}

  static final String GROUP = "bf";

  /** Adds this family's commands to {@code t}. */
  public static void register(CommandTable t) {
    t.add("bf.reserve", -4, flags(WRITE, DENYOOM), 1, 1, 1, GROUP,
        "Creates a new Bloom filter.", BloomCommands::reserve);
    t.add("bf.add", 3, flags(WRITE, DENYOOM), 1, 1, 1, GROUP,
        "Adds an item to a Bloom filter.", BloomCommands::add);
    t.add("bf.madd", -3, flags(WRITE, DENYOOM), 1, 1, 1, GROUP,
        "Adds one or more items to a Bloom filter.", BloomCommands::madd);
    t.add("bf.insert", -4, flags(WRITE, DENYOOM), 1, 1, 1, GROUP,
        "Adds items to a Bloom filter, creating it with the given options if needed.", BloomCommands::insert);
    t.add("bf.exists", 3, flags(READONLY, FAST), 1, 1, 1, GROUP,
        "Checks whether an item exists in a Bloom filter.", BloomCommands::exists);
    t.add("bf.mexists", -3, flags(READONLY, FAST), 1, 1, 1, GROUP,
        "Checks whether one or more items exist in a Bloom filter.", BloomCommands::mexists);
    t.add("bf.info", -2, flags(READONLY, FAST), 1, 1, 1, GROUP,
        "Returns information about a Bloom filter.", BloomCommands::info);
    t.add("bf.card", 2, flags(READONLY, FAST), 1, 1, 1, GROUP,
        "Returns the cardinality of a Bloom filter.", BloomCommands::card);
    t.add("bf.scandump", 3, flags(READONLY, FAST), 1, 1, 1, GROUP,
        "Begins an incremental save of the Bloom filter.", BloomCommands::scanDump);
    t.add("bf.loadchunk", 4, flags(WRITE, DENYOOM), 1, 1, 1, GROUP,
        "Restores a filter previously saved using SCANDUMP.", BloomCommands::loadChunk);
    t.add("bf.shrink", -2, flags(WRITE), 1, 1, 1, GROUP,
        "Folds a fixed Bloom filter in half while its estimated rate stays under a target (Bloomery extension).",
        BloomCommands::shrink);
    t.add("bf.debug", 2, flags(READONLY, FAST), 1, 1, 1, GROUP,
        "Returns the layers of a Bloom filter (undocumented RedisBloom command).", BloomCommands::debug);
  }

  /** The filter at a key, or {@code null} if missing; WRONGTYPE for another kind. */
  static ScalableBloomFilter bloomOrNull(Object value) {
    return Kinds.orNull(value, ScalableBloomFilter.class);
  }

  static ScalableBloomFilter bloomOrNotFound(Object value) {
    return Kinds.required(value, ScalableBloomFilter.class, RedisBloomErrors.NOT_FOUND);
  }

  /** Whether {@code value} is a BF.* key of any form ({@link ValueType#isBloom}); {@code false} for none. */
  static boolean isBloom(Object value) {
    return value != null && ValueType.of(value).isBloom();
  }

  /** A BF.* key of any form ({@link #isBloom}), or {@code null}; WRONGTYPE else. */
  public static MembershipFilter anyBloomOrNull(Object value) {
    if (value == null || isBloom(value)) {
      return (MembershipFilter) value;
    }
    throw new CommandException(Errors.WRONGTYPE);
  }

  /** A BF.* key of any form; RedisBloom's "not found" error if missing, WRONGTYPE if another kind. */
  public static MembershipFilter anyBloomOrNotFound(Object value) {
    MembershipFilter f = anyBloomOrNull(value);
    if (f == null) {
      throw new CommandException(RedisBloomErrors.NOT_FOUND);
    }
    return f;
  }

  /**
   * Adds one item with BF semantics for any form of key. Callers hold the key's write lock, which serializes every
   * mutation of the value (and the snapshot walk's read of it), so the scaling filters' own writer locks are
   * skipped.
   */
  private static boolean addOne(Invocation inv, MembershipFilter f, byte[] item) {
    return switch (ValueType.of(f)) {
      case SCALABLE_BLOOM -> ((ScalableBloomFilter) f).addAsSoleWriter(item, 0, item.length);
      case SCALABLE_BLOCKED_BLOOM -> ScalingBlockedBloom.add(inv, (ScalableBlockedBloomFilter) f, item);
      default -> FixedBloom.add(f, item);
    };
  }

  // ------------------------------------------------------------------------------------------------ RESERVE

  private static Reply reserve(Invocation inv) {
    // RedisBloom's longest form is key error capacity EXPANSION n NONSCALING; LAYOUT x and FOLDABLE (ours) add three
    boolean foldable = Args.indexOf(inv.argv(), "FOLDABLE") >= 0;
    if (inv.argc() > (Args.indexOf(inv.argv(), "LAYOUT") >= 0 ? 9 : 7) + (foldable ? 1 : 0)) {
      throw inv.wrongArity();
    }
    Double rate = Args.parseDouble(inv.arg(2));
    if (rate == null) {
      throw new CommandException(RedisBloomErrors.BF_BAD_ERROR_RATE);
    }
    if (!(rate > 0 && rate < 1)) {
      throw new CommandException(RedisBloomErrors.BF_ERROR_RATE_RANGE);
    }
    Long capacity = Args.parseLong(inv.arg(3));
    if (capacity == null) {
      throw new CommandException(RedisBloomErrors.BF_BAD_CAPACITY);
    }
    if (capacity < 1 || capacity > ScalableBloomFilter.MAX_CAPACITY) {
      throw new CommandException(RedisBloomErrors.BF_CAPACITY_RANGE);
    }
    boolean nonScaling = Args.indexOf(inv.argv(), "NONSCALING") >= 0;
    FilterKind layout = layout(inv);
    long expansion = inv.settings().bfExpansion();
    int at = Args.indexOf(inv.argv(), "EXPANSION");
    if (at >= 0) {
      if (at == inv.argc() - 1) {
        throw new CommandException(RedisBloomErrors.BF_NO_EXPANSION);
      }
      Long parsed = Args.parseLong(inv.arg(at + 1));
      if (parsed == null) {
        throw new CommandException(RedisBloomErrors.BF_BAD_EXPANSION);
      }
      if (parsed == 0) {
        nonScaling = true;
      } else if (nonScaling) {
        throw new CommandException(RedisBloomErrors.BF_NONSCALING_CANNOT_EXPAND);
      }
      if (parsed < 0 || parsed > ScalableBloomFilter.MAX_EXPANSION) {
        throw new CommandException(RedisBloomErrors.BF_EXPANSION_RANGE);
      }
      expansion = parsed;
    }
    if (layout == FilterKind.CLASSIC_BLOOM && !nonScaling) {
      layout = null; // a scaling chain of classic layers is RedisBloom's own filter
    }
    if (layout != null && expansion == 0) {
      nonScaling = true; // bf-expansion-factor 0: no growth, so the fixed key of that layout
    }
    if (foldable && (layout == null || !nonScaling)) {
      throw new CommandException("ERR FOLDABLE needs NONSCALING LAYOUT CLASSIC or BLOCKED");
    }
    Key key = inv.key(1);
    try (Keyspace.Write w = inv.write(key)) {
      Object existing = w.peek(key);
      if (existing != null) {
        throw new CommandException(isBloom(existing) ? RedisBloomErrors.ITEM_EXISTS : RedisBloomErrors.WRONG_TYPE);
      }
      if (layout != null && !nonScaling) {
        w.put(key, ScalingBlockedBloom.create(inv, capacity, rate, (int) expansion));
        inv.journalVerbatim(w);
        return Reply.OK;
      }
      if (layout != null) {
        FilterPlan plan = FixedBloom.plan(layout, capacity, rate, foldable);
        Memory.admitFilter(inv, FixedBloom.bytes(plan), FixedBloom.largestArray(plan));
        w.put(key, plan.build());
        inv.journalVerbatim(w);
        return Reply.OK;
      }
      w.put(key, create(inv, capacity, rate, nonScaling, (int) expansion));
      inv.journalVerbatim(w);
    }
    return Reply.OK;
  }

  // ------------------------------------------------------------------------------------------------ SHRINK

  /**
   * {@code BF.SHRINK key [TARGETFPR r] [FOLDS n]} (ours): folds a fixed CLASSIC or BLOCKED filter in half, again and
   * again, while the folded filter's estimated false-positive rate (from its set bits) stays at most r, and at most n
   * times. Without TARGETFPR r is the filter's design rate (its model rate at capacity), unless FOLDS is given: FOLDS
   * alone folds n times, as far as the size allows. Replies with the number of folds made (0 when even one fold
   * would pass the target). Journaled as {@code FOLDS <folds made>}, so replay makes exactly the same filter
   * whatever the estimate. A scalable or other non-foldable key is refused.
   */
  private static Reply shrink(Invocation inv) {
    Double target = null;
    long limit = Long.MAX_VALUE;
    for (int i = 2; i < inv.argc(); i += 2) {
      String option = Args.lower(inv.arg(i));
      if (i + 1 == inv.argc() || !(option.equals("targetfpr") || option.equals("folds"))) {
        throw new CommandException(Errors.SYNTAX);
      }
      if (option.equals("targetfpr")) {
        target = Args.parseDouble(inv.arg(i + 1));
        if (target == null) {
          throw new CommandException(RedisBloomErrors.BF_BAD_ERROR_RATE);
        }
        if (!(target > 0 && target < 1)) {
          throw new CommandException(RedisBloomErrors.BF_ERROR_RATE_RANGE);
        }
      } else {
        Long folds = Args.parseLong(inv.arg(i + 1));
        if (folds == null || folds < 0) {
          throw new CommandException(Errors.NOT_INTEGER);
        }
        limit = folds;
      }
    }
    Key key = inv.key(1);
    try (Keyspace.Write w = inv.write(key)) {
      MembershipFilter f = anyBloomOrNotFound(w.peek(key));
      // FOLDS alone (the journal's form) folds as often as asked: no rate bounds it
      Double bound = target == null && limit != Long.MAX_VALUE ? Double.valueOf(1) : target;
      MembershipFilter shrunk = FixedBloom.shrink(inv, f, bound, limit);
      long folds = FixedBloom.foldsBetween(f, shrunk);
      if (folds > 0) {
        w.put(key, shrunk);
        inv.journal(w, List.of(Args.bytes("BF.SHRINK"), inv.arg(1), Args.bytes("FOLDS"),
            Args.bytes(Long.toString(folds))));
      }
      return Reply.integer(folds);
    }
  }

  /** {@code LAYOUT CLASSIC|BLOCKED} (a Bloomery extension), or {@code null} for RedisBloom's scalable filter. */
  private static FilterKind layout(Invocation inv) {
    int at = Args.indexOf(inv.argv(), "LAYOUT");
    if (at < 0) {
      return null;
    }
    if (at == inv.argc() - 1) {
      throw new CommandException("ERR LAYOUT needs CLASSIC or BLOCKED");
    }
    return switch (Args.lower(inv.arg(at + 1))) {
      case "classic" -> FilterKind.CLASSIC_BLOOM;
      case "blocked" -> FilterKind.BLOCKED_BLOOM;
      default -> throw new CommandException("ERR LAYOUT needs CLASSIC or BLOCKED");
    };
  }

  /**
   * A new filter, refused before anything is allocated if its first layer would take the server past
   * {@code maxmemory}.
   */
  static ScalableBloomFilter create(Invocation inv, long capacity, double rate, boolean nonScaling, int expansion) {
    ScalableBloomFilter.Layer first;
    try {
      first = ScalableBloomFilter.plannedFirstLayer(capacity, rate, nonScaling);
    } catch (IllegalArgumentException e) { // the parameters passed the reply checks: no layer can be sized
      throw new CommandException(RedisBloomErrors.BF_COULD_NOT_CREATE);
    }
    Memory.admit(inv, first.bytes());
    try {
      return nonScaling ? ScalableBloomFilter.createNonScaling(capacity, rate)
          : ScalableBloomFilter.create(capacity, rate, expansion);
    } catch (FilterTooLargeException e) {
      throw new CommandException(RedisBloomErrors.BF_INSUFFICIENT_MEMORY);
    }
  }

  /** The journal record that recreates {@code f}'s creation deterministically. */
  static List<byte[]> reserveRecord(byte[] key, long capacity, double rate, boolean nonScaling, long expansion) {
    List<byte[]> r = new ArrayList<>(6);
    r.add(Args.bytes("BF.RESERVE"));
    r.add(key);
    r.add(Args.bytes(Double.toString(rate)));
    r.add(Args.bytes(Long.toString(capacity)));
    if (nonScaling) {
      r.add(Args.bytes("NONSCALING"));
    } else {
      r.add(Args.bytes("EXPANSION"));
      r.add(Args.bytes(Long.toString(expansion)));
    }
    return r;
  }

  // ------------------------------------------------------------------------------------------------ ADD / MADD

  /** BF.ADD: one item; journaled only if it changed the filter. */
  private static Reply add(Invocation inv) {
    Key key = inv.key(1);
    try (Keyspace.Write w = inv.write(key)) {
      boolean added = addOne(inv, getOrCreate(inv, w, key), inv.arg(2));
      if (added) {
        inv.journalVerbatim(w);
      }
      return Reply.bool(added);
    }
  }

  /** BF.MADD: the items one by one, as {@link #addAll} adds and journals them. */
  private static Reply madd(Invocation inv) {
    Key key = inv.key(1);
    try (Keyspace.Write w = inv.write(key)) {
      return addAll(inv, w, getOrCreate(inv, w, key), 2);
    }
  }

  /**
   * The BF.* filter at {@code key}; a missing one is created with the server's {@code bf-*} defaults and journaled
   * as the BF.RESERVE that makes it. WRONGTYPE for another kind.
   */
  private static MembershipFilter getOrCreate(Invocation inv, Keyspace.Write w, Key key) {
    MembershipFilter f = anyBloomOrNull(w.get(key));
    if (f == null) {
      Settings s = inv.settings();
      boolean nonScaling = s.bfExpansion() == 0;
      f = create(inv, s.bfInitialSize(), s.bfErrorRate(), nonScaling, (int) s.bfExpansion());
      w.put(key, f);
      inv.journal(w, reserveRecord(inv.arg(1), s.bfInitialSize(), s.bfErrorRate(), nonScaling, s.bfExpansion()));
      w.get(key);
    }
    return f;
  }

  /**
   * Adds argv[from..] in order and journals them: a boolean per item, an error element per failed item, stopping
   * when full. A new layer refused by {@code maxmemory} (scaling blocked keys, which admit each layer) also stops
   * the run with an OOM element; the journal then records only the items before it, so that a replay under another
   * budget cannot add more than this run did. A RedisBloom key takes the run through its batched add ({@link
   * ScalableBloomFilter#addAllAsSoleWriter}), which answers each item as {@link #addOne} would and hands back the
   * items that need the chain grown (or refused) to {@code addOne}.
   */
  private static Reply addAll(Invocation inv, Keyspace.Write w, MembershipFilter f, int from) {
    List<byte[]> argv = inv.argv();
    int end = argv.size();
    List<Reply> out = new ArrayList<>(end - from);
    ScalableBloomFilter batched = f instanceof ScalableBloomFilter s ? s : null;
    byte[][] items = batched == null ? null : items(argv, from);
    boolean[] added = batched == null ? null : new boolean[items.length];
    int i = from;
    while (i < end) {
      if (batched != null) {
        int stop = from + batched.addAllAsSoleWriter(items, i - from, items.length, added);
        for (; i < stop; i++) {
          out.add(Reply.bool(added[i - from]));
        }
        if (i == end) {
          break;
        }
      }
      try {
        out.add(Reply.bool(addOne(inv, f, argv.get(i))));
      } catch (FilterFullException e) {
        out.add(Reply.error(RedisBloomErrors.bloomFull(e)));
        if (e.reason() == FilterFullException.Reason.AT_CAPACITY) {
          break;
        }
      } catch (CommandException oom) {
        if (!Errors.OOM.equals(oom.reply())) {
          throw oom;
        }
        out.add(Reply.error(oom.reply()));
        if (i > from) {
          inv.journal(w, new ArrayList<>(argv.subList(0, i)));
        }
        return Reply.array(out);
      }
      i++;
    }
    inv.journalVerbatim(w);
    return Reply.array(out);
  }

  /** {@code argv[from..]} as an array, for the filters' batched calls. */
  private static byte[][] items(List<byte[]> argv, int from) {
    byte[][] items = new byte[argv.size() - from][];
    for (int i = 0; i < items.length; i++) {
      items[i] = argv.get(from + i);
    }
    return items;
  }

  // ------------------------------------------------------------------------------------------------ INSERT

  private static Reply insert(Invocation inv) {
    Settings s = inv.settings();
    double rate = s.bfErrorRate();
    long capacity = s.bfInitialSize();
    long expansion = s.bfExpansion();
    boolean noCreate = false;
    boolean nonScaling = false;
    int items = -1;
    long scaleTo = -1;
    boolean valkey = false; // a valkey-bloom option makes this valkey-bloom's BF.INSERT, where ITEMS is optional
    int i = 2;
    while (i < inv.argc()) {
      String opt = Args.lower(inv.arg(i));
      char c = opt.isEmpty() ? '\0' : opt.charAt(0);
      if (ValkeyDialect.NAMES.contains(opt)) {
        valkey = true;
        if (i + 1 >= inv.argc()) {
          throw inv.wrongArity();
        }
        if (opt.equals("validatescaleto")) {
          scaleTo = ValkeyDialect.scaleTo(inv.arg(i + 1));
        } else {
          ValkeyDialect.check(opt, inv.arg(i + 1));
        }
        i += 2;
      } else if (c == 'i') {
        items = i + 1;
        break;
      } else if (c == 'e' && opt.length() > 1 && opt.charAt(1) == 'r') {
        Double v = i + 1 < inv.argc() ? Args.parseDouble(inv.arg(i + 1)) : null;
        if (i + 1 >= inv.argc()) {
          throw inv.wrongArity();
        }
        if (v == null || !(v > 0 && v < 1)) {
          throw new CommandException(RedisBloomErrors.BF_INSERT_BAD_ERROR_RATE);
        }
        rate = v;
        i += 2;
      } else if (c == 'e') {
        if (i + 1 >= inv.argc()) {
          throw inv.wrongArity();
        }
        Long v = Args.parseLong(inv.arg(i + 1));
        if (v == null || v < 0 || v > ScalableBloomFilter.MAX_EXPANSION) {
          throw new CommandException(RedisBloomErrors.BF_INSERT_BAD_EXPANSION);
        }
        expansion = v;
        i += 2;
      } else if (c == 'c') {
        if (i + 1 >= inv.argc()) {
          throw inv.wrongArity();
        }
        Long v = Args.parseLong(inv.arg(i + 1));
        if (v == null || v < 1 || v > ScalableBloomFilter.MAX_CAPACITY) {
          throw new CommandException(RedisBloomErrors.BF_INSERT_BAD_CAPACITY);
        }
        capacity = v;
        i += 2;
      } else if (c == 'n' && opt.length() > 2 && opt.charAt(2) == 'c') {
        noCreate = true;
        i++;
      } else if (c == 'n') {
        nonScaling = true;
        i++;
      } else {
        throw new CommandException(RedisBloomErrors.UNKNOWN_ARGUMENT);
      }
    }
    if (items < 0 && valkey) {
      items = inv.argc();
    } else if (items < 0 || items >= inv.argc()) {
      throw inv.wrongArity();
    }
    if (expansion == 0) {
      nonScaling = true;
    }
    if (scaleTo >= 0) {
      if (nonScaling) {
        throw new CommandException(ValkeyDialect.NONSCALING_AND_VALIDATESCALETO);
      }
      ValkeyDialect.validateScaleTo(capacity, rate, scaleTo, ScalableBloomFilter.ERROR_TIGHTENING_RATIO,
          expansion);
    }
    Key key = inv.key(1);
    try (Keyspace.Write w = inv.write(key)) {
      MembershipFilter f = anyBloomOrNull(w.get(key));
      if (f == null) {
        if (noCreate) {
          throw new CommandException(RedisBloomErrors.NOT_FOUND);
        }
        f = create(inv, capacity, rate, nonScaling, (int) expansion);
        w.put(key, f);
        inv.journal(w, reserveRecord(inv.arg(1), capacity, rate, nonScaling, expansion));
        w.get(key);
      }
      return addAll(inv, w, f, items);
    }
  }

  // ------------------------------------------------------------------------------------------------ reads

  private static Reply exists(Invocation inv) {
    MembershipFilter f = lookup(inv);
    return Reply.bool(f != null && f.mightContain(inv.arg(2)));
  }

  /** BF.MEXISTS: a RedisBloom key answers through its batched lookup, the other forms item by item. */
  private static Reply mexists(Invocation inv) {
    MembershipFilter f = lookup(inv);
    List<Reply> out = new ArrayList<>(inv.argc() - 2);
    if (f instanceof ScalableBloomFilter s) {
      byte[][] items = items(inv.argv(), 2);
      boolean[] found = new boolean[items.length];
      s.mightContainAll(items, 0, items.length, found);
      for (boolean answer : found) {
        out.add(Reply.bool(answer));
      }
      return Reply.array(out);
    }
    for (int i = 2; i < inv.argc(); i++) {
      out.add(Reply.bool(f != null && f.mightContain(inv.arg(i))));
    }
    return Reply.array(out);
  }

  /** The BF.* filter at argv[1] for a membership query, or {@code null} (missing or another kind: answers 0). */
  private static MembershipFilter lookup(Invocation inv) {
    Object value = inv.keyspace().read(inv.key(1));
    inv.countLookup(value);
    return isBloom(value) ? (MembershipFilter) value : null;
  }

  private static Reply info(Invocation inv) {
    if (inv.argc() > 3) {
      throw inv.wrongArity();
    }
    MembershipFilter f = anyBloomOrNotFound(inv.keyspace().read(inv.key(1)));
    Map<String, Long> all = switch (ValueType.of(f)) {
      case SCALABLE_BLOOM -> ((ScalableBloomFilter) f).info().asMap();
      case SCALABLE_BLOCKED_BLOOM -> ScalingBlockedBloom.info((ScalableBlockedBloomFilter) f);
      default -> FixedBloom.info(f);
    };
    if (inv.argc() == 2) {
      return Reply.map(all);
    }
    String asked = Args.lower(inv.arg(2));
    if (asked.equals("maxscaledcapacity") || asked.equals("tightening")) {
      // valkey-bloom's fields of a scaling key, answered as valkey-bloom does: a plain integer or double
      long max = maxScaledCapacity(f);
      if (max < 0) {
        throw new CommandException(RedisBloomErrors.BF_INVALID_INFO_VALUE);
      }
      return asked.equals("tightening") ? Reply.of(ScalableBloomFilter.ERROR_TIGHTENING_RATIO) : Reply.integer(max);
    }
    String field = switch (asked) {
      case "capacity" -> "Capacity";
      case "size" -> "Size";
      case "filters" -> "Number of filters";
      case "items" -> "Number of items inserted";
      case "expansion" -> "Expansion rate";
      default -> throw new CommandException(RedisBloomErrors.BF_INVALID_INFO_VALUE);
    };
    Map<String, Long> one = new LinkedHashMap<>();
    one.put(field, all.get(field));
    if (inv.client().protocol() >= 3) {
      return Reply.map(one);
    }
    return Reply.arrayOf(Reply.of(all.get(field)));
  }

  /**
   * valkey-bloom's {@code MAXSCALEDCAPACITY} of a scaling key ({@link ValkeyDialect}) from its first layer's capacity,
   * its error rate and expansion; -1 for a key that does not scale (valkey-bloom has no such field for it).
   */
  private static long maxScaledCapacity(MembershipFilter f) {
    double tightening = ScalableBloomFilter.ERROR_TIGHTENING_RATIO;
    return switch (ValueType.of(f)) {
      case SCALABLE_BLOOM -> {
        ScalableBloomFilter s = (ScalableBloomFilter) f;
        ScalableBloomFilter.Layer first = s.layers().getFirst();
        yield s.isScaling()
            ? ValkeyDialect.maxScaledCapacity(first.capacity(), first.errorRate() / tightening, tightening, s.growth())
            : -1;
      }
      case SCALABLE_BLOCKED_BLOOM -> {
        ScalableBlockedBloomFilter s = (ScalableBlockedBloomFilter) f;
        yield ValkeyDialect.maxScaledCapacity(s.layers().getFirst().capacity(), s.errorRate(), tightening,
            s.expansion());
      }
      default -> -1;
    };
  }

  private static Reply card(Invocation inv) {
    MembershipFilter f = anyBloomOrNull(inv.keyspace().read(inv.key(1)));
    if (f == null) {
      return Reply.integer(0);
    }
    return Reply.integer(switch (ValueType.of(f)) {
      case SCALABLE_BLOOM -> ((ScalableBloomFilter) f).insertedCount();
      case SCALABLE_BLOCKED_BLOOM -> ((ScalableBlockedBloomFilter) f).insertedCount();
      default -> FixedBloom.inserted(f);
    });
  }

  private static Reply scanDump(Invocation inv) {
    MembershipFilter any = anyBloomOrNotFound(inv.keyspace().read(inv.key(1)));
    Long iterator = Args.parseLong(inv.arg(2));
    if (iterator == null) {
      throw new CommandException(RedisBloomErrors.BF_SCANDUMP_NOT_NUMERIC);
    }
    if (!ValueType.SCALABLE_BLOOM.holds(any)) {
      return fileDump(inv, any, iterator);
    }
    ScalableBloomFilter f = (ScalableBloomFilter) any;
    RedisBloomDump.Chunk chunk;
    try {
      chunk = iterator < 0 ? new RedisBloomDump.Chunk(0, new byte[0]) : RedisBloomDump.scanDump(f, iterator);
    } catch (DumpRejectedException e) {
      throw new CommandException(RedisBloomErrors.bloomDump(e));
    }
    return Reply.arrayOf(Reply.integer(chunk.iterator()), Reply.bulk(chunk.data()));
  }

  /** SCANDUMP of a fixed or scaling blocked key: its Bloomery file, header first (see {@link FileLoads}). */
  private static Reply fileDump(Invocation inv, Summary f, long iterator) {
    int headerLength = FileLoads.headerLengthOf(f);
    long[] range = FileLoads.dumpRange(f, iterator, headerLength);
    if (range[2] > range[1] && range[2] == FilterFormat.serializedLength(f) && range[2] >= FileLoads.DUMP_OFF_LOOP
        && inv.mayDefer()) {
      // the last chunk of a big filter streams all of it for the CRC: off the event loop (in MULTI, here)
      long next = range[0];
      long from = range[1];
      long to = range[2];
      return inv.defer(offLoop(inv, "BF.SCANDUMP",
          () -> CompletableFuture.completedFuture(Reply.arrayOf(Reply.integer(next),
              Reply.bulk(FileLoads.slice(f, from, to)))),
          () -> {}));
    }
    byte[] data = range[2] == range[1] ? new byte[0] : FileLoads.slice(f, range[1], range[2]);
    return Reply.arrayOf(Reply.integer(range[0]), Reply.bulk(data));
  }

  private static Reply loadChunk(Invocation inv) {
    Long iterator = Args.parseLong(inv.arg(2));
    if (iterator == null) {
      throw new CommandException(RedisBloomErrors.BF_LOADCHUNK_NOT_NUMERIC);
    }
    try {
      return loadChunk(inv, iterator);
    } catch (LoadException e) {
      throw new CommandException(e.reply());
    }
  }

  private static Reply loadChunk(Invocation inv, long iterator) {
    Key key = inv.key(1);
    byte[] data = inv.arg(3);
    LoadCaller caller = caller(inv);
    try (Keyspace.Write w = inv.write(key)) {
      Object existing = w.get(key);
      FileLoads loads = inv.server().fileLoads();
      if (inv.replaying() && FileLoads.isLoadedFileRecord(iterator, data)) {
        if (existing != null) {
          throw new CommandException(RedisBloomErrors.ITEM_EXISTS);
        }
        w.put(key, loads.replayLoaded(data, Memory.held(inv)));
        return Reply.OK;
      }
      boolean fileHeader = iterator == 1 && FileLoads.isFileHeader(data);
      if (fileHeader || (existing == null && iterator > 1 && loads.pending(key))) {
        if (existing != null) {
          loads.abandon(key); // the key appeared meanwhile: the load can never complete
          throw new CommandException(anyBloomOrNull(existing) != null ? RedisBloomErrors.ITEM_EXISTS : Errors.WRONGTYPE);
        }
        FileLoads.Step step = fileHeader ? loads.begin(caller, key, data) : loads.next(caller, key, iterator, data);
        if (step instanceof FileLoads.Done done) {
          // the file came whole in this chunk (at most proto-max-bulk-len): one record holds it
          w.put(key, done.filter());
          inv.journal(w, List.of(Args.bytes("BF.LOADCHUNK"), inv.arg(1), Args.bytes("1"), data));
        } else if (step instanceof FileLoads.Finish finish) {
          if (!inv.mayDefer()) {
            // inside MULTI/EXEC no reply can be deferred: read it back here, under the transaction's write
            loads.finishAndInstall(caller, finish, done -> installStaged(inv, w, finish, done));
            return Reply.OK;
          }
          // Reading a large file back takes seconds: a finishing thread does it, then installs the key under its lock
          // (this write, and the connection's lease, are let go when this command returns).
          FileLoads.Installer installer = done -> {
            try (Keyspace.Write later = inv.keyspace().write(key)) {
              GuardedKeys guards = inv.server().guards();
              if (guards != null && guards.isGuarded(key)) {
                throw new CommandException(GuardedKeys.WRONGTYPE);
              }
              Object now = later.get(key);
              if (now != null) { // another client created the key meanwhile
                throw new CommandException(anyBloomOrNull(now) != null ? RedisBloomErrors.ITEM_EXISTS
                    : Errors.WRONGTYPE);
              }
              return installStaged(inv, later, finish, done);
            }
          };
          return inv.defer(offLoop(inv, "finishing the file load of key '" + finish.key() + "'",
              () -> loads.finishAndInstall(caller, finish, installer).handle((ok, failure) -> failure == null
                  ? Reply.OK : Reply.error("ERR write not persisted: " + failure.getMessage())),
              () -> loads.drop(finish)));
        }
        return Reply.OK;
      }
      loads.abandon(key);
      try {
        if (existing == null && iterator == 1) {
          Memory.admit(inv, RedisBloomDump.bloomPayloadBytes(data));
          w.put(key, RedisBloomDump.loadHeader(data));
        } else {
          RedisBloomDump.loadChunk(bloomOrNotFound(existing), iterator, data);
        }
      } catch (DumpRejectedException e) {
        throw new CommandException(RedisBloomErrors.bloomDump(e));
      }
      inv.journalVerbatim(w);
    }
    return Reply.OK;
  }

  /**
   * Installs a staged load under {@code w} (its key's write lock): the record names the fsynced loaded file, which
   * stays until a snapshot holds the key. Without a journal (no name) the record only counts as a change towards the
   * snapshot policy and is never read.
   */
  private static CompletionStage<Void> installStaged(Invocation inv, Keyspace.Write w,
      FileLoads.Finish finish, FileLoads.Done done) {
    FileLoads loads = inv.server().fileLoads();
    loads.claim(finish);
    w.put(finish.key(), done.filter());
    String name = done.loadedFile() == null ? "" : done.loadedFile();
    inv.journal(w, List.of(Args.bytes("BF.LOADCHUNK"), finish.key().bytes(), Args.bytes("0"),
        FileLoads.loadedFileRecord(name)));
    if (done.loadedFile() != null) {
      loads.journaled(done.loadedFile());
    }
    return w.journaled();
  }

  /** The file loads' view of the command that sent a chunk. */
  private static LoadCaller caller(Invocation inv) {
    return new LoadCaller() {
      @Override
      public long clientId() {
        return inv.client().id();
      }

      @Override
      public boolean replaying() {
        return inv.replaying();
      }

      @Override
      public void admit(long bytes, long largestArray) {
        Memory.admitFilter(inv, bytes, largestArray);
      }

      @Override
      public void admitReserved(long bytes, long largestArray) {
        Memory.admitReserved(inv, bytes, bytes, largestArray);
      }
    };
  }

  /** {@link FileLoadReplies#offLoop} for a command of {@code inv}'s server. */
  private static CompletionStage<Reply> offLoop(Invocation inv, String what, Supplier<CompletionStage<Reply>> work,
      Runnable refused) {
    return FileLoadReplies.offLoop(inv.server().fileLoads(), what, work, refused,
        inv.server().stats().oomRejections::increment);
  }

  private static Reply debug(Invocation inv) {
    MembershipFilter any = anyBloomOrNotFound(inv.keyspace().read(inv.key(1)));
    List<String> text = switch (ValueType.of(any)) {
      case SCALABLE_BLOOM -> ((ScalableBloomFilter) any).debug();
      case SCALABLE_BLOCKED_BLOOM -> ScalingBlockedBloom.debug((ScalableBlockedBloomFilter) any);
      default -> List.of(FixedBloom.debug(any));
    };
    List<Reply> lines = new ArrayList<>();
    for (String line : text) {
      lines.add(Reply.bulk(line));
    }
    return Reply.array(lines);
  }
}
