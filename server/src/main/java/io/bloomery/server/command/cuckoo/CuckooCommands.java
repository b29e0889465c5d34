package io.bloomery.server.command.cuckoo;

import static io.bloomery.server.command.CommandSpec.Flag.DENYOOM;
import static io.bloomery.server.command.CommandSpec.Flag.FAST;
import static io.bloomery.server.command.CommandSpec.Flag.READONLY;
import static io.bloomery.server.command.CommandSpec.Flag.WRITE;
import static io.bloomery.server.command.CommandSpec.flags;

import io.bloomery.cuckoo.CuckooFilter;
import io.bloomery.filter.DumpRejectedException;
import io.bloomery.filter.FilterFullException;
import io.bloomery.filter.FilterTooLargeException;
import io.bloomery.format.RedisBloomDump;
import io.bloomery.server.command.Args;
import io.bloomery.server.command.CommandException;
import io.bloomery.server.command.CommandTable;
import io.bloomery.server.command.Invocation;
import io.bloomery.server.command.Kinds;
import io.bloomery.server.command.Memory;
import io.bloomery.server.command.RedisBloomErrors;
import io.bloomery.server.keyspace.Key;
import io.bloomery.server.keyspace.Keyspace;
import io.bloomery.server.keyspace.ValueType;
import io.bloomery.server.resp.Reply;
import io.bloomery.server.state.Settings;
import java.util.ArrayList;
import java.util.List;

/**
 * RedisBloom's {@code CF.*} commands over {@link CuckooFilter}, in RedisBloom's validation order with its error
 * texts: EXISTS/MEXISTS/COUNT on a missing or wrong-type key answer 0, DEL on one answers "Not found",
 * INSERT/INSERTNX answer -1 (RESP3: false for INSERT) for an item that did not fit, INSERTNX stays integers in RESP3.
 */
public final class CuckooCommands {
  private CuckooCommands() {}

  static final String GROUP = "cf";

  /** Adds this family's commands to {@code t}. */
  public static void register(CommandTable t) {
    t.add("cf.reserve", -3, flags(WRITE, DENYOOM), 1, 1, 1, GROUP, "Creates a new Cuckoo Filter.",
        CuckooCommands::reserve);
    t.add("cf.add", 3, flags(WRITE, DENYOOM), 1, 1, 1, GROUP, "Adds an item to a Cuckoo Filter.",
        CuckooCommands::add);
    t.add("cf.addnx", 3, flags(WRITE, DENYOOM), 1, 1, 1, GROUP,
        "Adds an item to a Cuckoo Filter if the item did not exist previously.", CuckooCommands::add);
    t.add("cf.insert", -4, flags(WRITE, DENYOOM), 1, 1, 1, GROUP,
        "Adds one or more items to a Cuckoo Filter. A filter will be created if it does not exist.",
        CuckooCommands::insert);
    t.add("cf.insertnx", -4, flags(WRITE, DENYOOM), 1, 1, 1, GROUP,
        "Adds one or more items to a Cuckoo Filter if the items did not exist previously.",
        CuckooCommands::insert);
    t.add("cf.exists", 3, flags(READONLY, FAST), 1, 1, 1, GROUP,
        "Checks if an item exists in a Cuckoo Filter.", CuckooCommands::exists);
    t.add("cf.mexists", -3, flags(READONLY, FAST), 1, 1, 1, GROUP,
        "Checks if one or more items exist in a Cuckoo Filter.", CuckooCommands::mexists);
    t.add("cf.count", 3, flags(READONLY, FAST), 1, 1, 1, GROUP,
        "Return the number of times an item might be in a Cuckoo Filter.", CuckooCommands::count);
    t.add("cf.del", 3, flags(WRITE, FAST), 1, 1, 1, GROUP, "Deletes an item from a Cuckoo Filter.",
        CuckooCommands::del);
    t.add("cf.compact", 2, flags(WRITE), 1, 1, 1, GROUP,
        "Moves fingerprints to older sub-filters (undocumented RedisBloom command).", CuckooCommands::compact);
    t.add("cf.info", 2, flags(READONLY, FAST), 1, 1, 1, GROUP, "Returns information about a Cuckoo Filter.",
        CuckooCommands::info);
    t.add("cf.debug", 2, flags(READONLY, FAST), 1, 1, 1, GROUP,
        "Returns the shape of a Cuckoo Filter (undocumented RedisBloom command).", CuckooCommands::debug);
    t.add("cf.scandump", 3, flags(READONLY, FAST), 1, 1, 1, GROUP,
        "Begins an incremental save of the Cuckoo Filter.", CuckooCommands::scanDump);
    t.add("cf.loadchunk", 4, flags(WRITE, DENYOOM), 1, 1, 1, GROUP,
        "Restores a Cuckoo Filter previously saved using CF.SCANDUMP.", CuckooCommands::loadChunk);
  }

  static CuckooFilter cuckooOrNull(Object value) {
    return Kinds.orNull(value, CuckooFilter.class);
  }

  static CuckooFilter cuckooOrNotFound(Object value) {
    return Kinds.required(value, CuckooFilter.class, RedisBloomErrors.NOT_FOUND);
  }

  private static long option(Invocation inv, String name, String parseError, String rangeError, long min, long max,
      long fallback) {
    int at = Args.indexOf(inv.argv(), name);
    if (at < 0) {
      return fallback;
    }
    Long v = at + 1 < inv.argc() ? Args.parseLong(inv.arg(at + 1)) : null;
    if (v == null) {
      throw new CommandException(parseError);
    }
    if (v < min || v > max) {
      throw new CommandException(rangeError);
    }
    return v;
  }

  private static Reply reserve(Invocation inv) {
    if (inv.argc() % 2 == 0) {
      throw inv.wrongArity();
    }
    Long capacity = Args.parseLong(inv.arg(2));
    if (capacity == null) {
      throw new CommandException(RedisBloomErrors.CF_BAD_CAPACITY);
    }
    Settings s = inv.settings();
    long maxIterations = option(inv, "MAXITERATIONS", RedisBloomErrors.CF_PARSE_MAX_ITERATIONS,
        RedisBloomErrors.CF_MAX_ITERATIONS_RANGE, 1, CuckooFilter.MAX_ITERATIONS, s.cfMaxIterations());
    long bucketSize = option(inv, "BUCKETSIZE", RedisBloomErrors.CF_PARSE_BUCKET_SIZE,
        RedisBloomErrors.CF_BUCKET_SIZE_RANGE, 1, CuckooFilter.MAX_BUCKET_SIZE, s.cfBucketSize());
    long expansion = option(inv, "EXPANSION", RedisBloomErrors.CF_PARSE_EXPANSION,
        RedisBloomErrors.CF_EXPANSION_RANGE, 0, CuckooFilter.MAX_EXPANSION, s.cfExpansion());
    if (bucketSize * 2 > capacity || capacity > CuckooFilter.MAX_CAPACITY) {
      throw new CommandException(RedisBloomErrors.CF_CAPACITY_RANGE);
    }
    Key key = inv.key(1);
    try (Keyspace.Write w = inv.write(key)) {
      Object existing = w.peek(key);
      if (existing != null) {
        throw new CommandException(ValueType.CUCKOO.holds(existing)
            ? RedisBloomErrors.ITEM_EXISTS : RedisBloomErrors.WRONG_TYPE);
      }
      w.put(key, create(inv, capacity, (int) bucketSize, (int) maxIterations, (int) expansion));
      inv.journalVerbatim(w);
    }
    return Reply.OK;
  }

  private static CuckooFilter create(Invocation inv, long capacity, int bucketSize, int maxIterations,
      int expansion) {
    long buckets = Long.highestOneBit(Math.max(1, capacity / bucketSize) * 2 - 1);
    Memory.admit(inv, buckets * bucketSize);
    CuckooFilter f;
    try {
      f = CuckooFilter.create(capacity, bucketSize, maxIterations, expansion);
    } catch (FilterTooLargeException e) {
      throw new CommandException(RedisBloomErrors.CF_INSUFFICIENT_MEMORY_CREATE);
    } catch (IllegalArgumentException e) { // the parameters passed the reply checks
      throw new CommandException(RedisBloomErrors.CF_COULD_NOT_CREATE);
    }
    f.setMaxExpansions((int) inv.settings().cfMaxExpansions());
    return f;
  }

  /** The existing filter, or a new one with the server's defaults (journaled as the CF.RESERVE it amounts to). */
  private static CuckooFilter getOrCreate(Invocation inv, Keyspace.Write w, Key key, long capacity) {
    CuckooFilter f = cuckooOrNull(w.get(key));
    if (f != null) {
      return f;
    }
    Settings s = inv.settings();
    f = create(inv, capacity, (int) s.cfBucketSize(), (int) s.cfMaxIterations(), (int) s.cfExpansion());
    w.put(key, f);
    inv.journal(w, List.of(Args.bytes("CF.RESERVE"), key.bytes(), Args.bytes(Long.toString(capacity)),
        Args.bytes("BUCKETSIZE"), Args.bytes(Long.toString(s.cfBucketSize())),
        Args.bytes("MAXITERATIONS"), Args.bytes(Long.toString(s.cfMaxIterations())),
        Args.bytes("EXPANSION"), Args.bytes(Long.toString(s.cfExpansion()))));
    w.get(key);
    return f;
  }

  private static boolean nx(Invocation inv) {
    byte[] name = inv.arg(0);
    return Character.toLowerCase((char) name[name.length - 1]) == 'x';
  }

  private static Reply add(Invocation inv) {
    Key key = inv.key(1);
    try (Keyspace.Write w = inv.write(key)) {
      CuckooFilter f = getOrCreate(inv, w, key, inv.settings().cfInitialSize());
      boolean added;
      try {
        // the key's write lock serializes every mutation of the value and the snapshot's copy of it
        added = f.addAsSoleWriter(inv.arg(2), nx(inv));
      } catch (FilterFullException e) {
        throw new CommandException(RedisBloomErrors.cuckooFull(e));
      }
      if (added) {
        inv.journalVerbatim(w);
      }
      return Reply.bool(added);
    }
  }

  private static Reply insert(Invocation inv) {
    boolean nx = nx(inv);
    Settings s = inv.settings();
    long capacity = s.cfInitialSize();
    boolean noCreate = false;
    int items = -1;
    int i = 2;
    while (i < inv.argc()) {
      String opt = Args.lower(inv.arg(i));
      char c = opt.isEmpty() ? '\0' : opt.charAt(0);
      if (c == 'c') {
        if (i + 1 >= inv.argc()) {
          throw inv.wrongArity();
        }
        Long v = Args.parseLong(inv.arg(i + 1));
        if (v == null) {
          throw new CommandException(RedisBloomErrors.CF_BAD_CAPACITY);
        }
        if (v < s.cfBucketSize() * 2 || v > CuckooFilter.MAX_CAPACITY) {
          throw new CommandException(RedisBloomErrors.CF_INSERT_CAPACITY_RANGE);
        }
        capacity = v;
        i += 2;
      } else if (c == 'i') {
        items = i + 1;
        break;
      } else if (c == 'n') {
        noCreate = true;
        i++;
      } else {
        throw new CommandException(RedisBloomErrors.UNKNOWN_ARGUMENT);
      }
    }
    if (items < 0 || items >= inv.argc()) {
      throw inv.wrongArity();
    }
    Key key = inv.key(1);
    try (Keyspace.Write w = inv.write(key)) {
      if (noCreate && w.peek(key) == null) {
        throw new CommandException(RedisBloomErrors.NOT_FOUND);
      }
      CuckooFilter f = getOrCreate(inv, w, key, capacity);
      List<CuckooFilter.InsertResult> results;
      try {
        results = f.insertAsSoleWriter(inv.argv().subList(items, inv.argc()), nx); // under the key's write lock
      } catch (FilterFullException e) {
        throw new CommandException(RedisBloomErrors.cuckooFull(e));
      }
      inv.journalVerbatim(w);
      boolean resp3 = inv.client().protocol() >= 3;
      List<Reply> out = new ArrayList<>(results.size());
      for (CuckooFilter.InsertResult r : results) {
        out.add(resp3 && !nx ? Reply.bool(r == CuckooFilter.InsertResult.INSERTED) : Reply.integer(r.reply()));
      }
      return Reply.array(out);
    }
  }

  private static Reply exists(Invocation inv) {
    CuckooFilter f = lookup(inv);
    return Reply.bool(f != null && f.mightContain(inv.arg(2)));
  }

  private static Reply mexists(Invocation inv) {
    CuckooFilter f = lookup(inv);
    List<Reply> out = new ArrayList<>(inv.argc() - 2);
    for (int i = 2; i < inv.argc(); i++) {
      out.add(Reply.bool(f != null && f.mightContain(inv.arg(i))));
    }
    return Reply.array(out);
  }

  /** The cuckoo filter at argv[1] for a membership query, or {@code null} (missing or another kind: answers 0). */
  private static CuckooFilter lookup(Invocation inv) {
    Object value = inv.keyspace().read(inv.key(1));
    inv.countLookup(value);
    return ValueType.CUCKOO.holds(value) ? (CuckooFilter) value : null;
  }

  private static Reply count(Invocation inv) {
    Object value = inv.keyspace().read(inv.key(1));
    return Reply.integer(ValueType.CUCKOO.holds(value) ? ((CuckooFilter) value).count(inv.arg(2)) : 0);
  }

  private static Reply del(Invocation inv) {
    Key key = inv.key(1);
    try (Keyspace.Write w = inv.write(key)) {
      if (!ValueType.CUCKOO.holds(w.peek(key))) {
        throw new CommandException(RedisBloomErrors.CF_DEL_NOT_FOUND);
      }
      CuckooFilter f = (CuckooFilter) w.get(key);
      boolean deleted = f.remove(inv.arg(2));
      if (deleted) {
        inv.journalVerbatim(w);
      }
      return Reply.bool(deleted);
    }
  }

  private static Reply compact(Invocation inv) {
    Key key = inv.key(1);
    try (Keyspace.Write w = inv.write(key)) {
      if (!ValueType.CUCKOO.holds(w.peek(key))) {
        throw new CommandException(RedisBloomErrors.CF_COMPACT_NOT_FOUND);
      }
      CuckooFilter f = (CuckooFilter) w.get(key);
      f.compact();
      inv.journalVerbatim(w);
      return Reply.OK;
    }
  }

  private static Reply info(Invocation inv) {
    CuckooFilter f = cuckooOrNotFound(inv.keyspace().read(inv.key(1)));
    return Reply.map(f.info().asMap());
  }

  private static Reply debug(Invocation inv) {
    return Reply.bulk(cuckooOrNotFound(inv.keyspace().read(inv.key(1))).debug());
  }

  private static Reply scanDump(Invocation inv) {
    Long position = Args.parseLong(inv.arg(2));
    if (position == null || position < 0) {
      throw new CommandException(RedisBloomErrors.CF_INVALID_POSITION);
    }
    CuckooFilter f = cuckooOrNotFound(inv.keyspace().read(inv.key(1)));
    RedisBloomDump.Chunk chunk;
    try {
      chunk = RedisBloomDump.scanDump(f, position);
    } catch (DumpRejectedException e) {
      throw new CommandException(RedisBloomErrors.cuckooDump(e));
    }
    return Reply.arrayOf(Reply.integer(chunk.iterator()), Reply.bulk(chunk.data()));
  }

  private static Reply loadChunk(Invocation inv) {
    Long position = Args.parseLong(inv.arg(2));
    if (position == null || position == 0) {
      throw new CommandException(RedisBloomErrors.CF_INVALID_POSITION);
    }
    Key key = inv.key(1);
    byte[] data = inv.arg(3);
    try (Keyspace.Write w = inv.write(key)) {
      Object existing = w.peek(key);
      if (position == 1) {
        if (existing != null) {
          throw new CommandException(ValueType.CUCKOO.holds(existing)
              ? RedisBloomErrors.ITEM_EXISTS : RedisBloomErrors.WRONG_TYPE);
        }
        CuckooFilter f;
        try {
          Memory.admit(inv, RedisBloomDump.cuckooPayloadBytes(data));
          f = RedisBloomDump.loadCuckooHeader(data);
        } catch (DumpRejectedException e) {
          throw new CommandException(RedisBloomErrors.cuckooDump(e));
        }
        f.setMaxExpansions((int) inv.settings().cfMaxExpansions());
        w.put(key, f);
      } else {
        CuckooFilter f = cuckooOrNotFound(w.get(key));
        try {
          RedisBloomDump.loadChunk(f, position, data);
        } catch (DumpRejectedException e) {
          throw new CommandException(RedisBloomErrors.cuckooDump(e));
        }
      }
      inv.journalVerbatim(w);
    }
    return Reply.OK;
  }
}
