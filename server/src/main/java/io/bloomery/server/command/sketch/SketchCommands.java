package io.bloomery.server.command.sketch;

import static io.bloomery.server.command.CommandSpec.Flag.DENYOOM;
import static io.bloomery.server.command.CommandSpec.Flag.FAST;
import static io.bloomery.server.command.CommandSpec.Flag.READONLY;
import static io.bloomery.server.command.CommandSpec.Flag.WRITE;
import static io.bloomery.server.command.CommandSpec.flags;

import io.bloomery.filter.FilterTooLargeException;
import io.bloomery.server.command.Args;
import io.bloomery.server.command.CommandException;
import io.bloomery.server.command.CommandTable;
import io.bloomery.server.command.Invocation;
import io.bloomery.server.command.Kinds;
import io.bloomery.server.command.Memory;
import io.bloomery.server.command.RedisBloomErrors;
import io.bloomery.server.keyspace.Key;
import io.bloomery.server.keyspace.Keyspace;
import io.bloomery.server.keyspace.StateSeededDecay;
import io.bloomery.server.resp.Reply;
import io.bloomery.sketch.CountMinSketch;
import io.bloomery.sketch.TopK;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * RedisBloom's {@code CMS.*} and {@code TOPK.*} commands over core's {@link CountMinSketch} and {@link TopK}. Both
 * kinds are not thread-safe, so reads as well as writes run under the key's lock.
 */
public final class SketchCommands {
  private SketchCommands() {}

  /** Adds this family's commands to {@code t}. */
  public static void register(CommandTable t) {
    t.add("cms.initbydim", 4, flags(WRITE, DENYOOM), 1, 1, 1, "cms",
        "Initializes a Count-Min Sketch to dimensions specified by user.", SketchCommands::initByDim);
    t.add("cms.initbyprob", 4, flags(WRITE, DENYOOM), 1, 1, 1, "cms",
        "Initializes a Count-Min Sketch to accommodate requested tolerances.", SketchCommands::initByProb);
    t.add("cms.incrby", -4, flags(WRITE, DENYOOM), 1, 1, 1, "cms",
        "Increases the count of one or more items by increment.", SketchCommands::cmsIncrBy);
    t.add("cms.query", -3, flags(READONLY, FAST), 1, 1, 1, "cms",
        "Returns the count for one or more items in a sketch.", SketchCommands::cmsQuery);
    t.add("cms.merge", -4, flags(WRITE, DENYOOM), 1, -1, 1, "cms",
        "Merges several sketches into one sketch.", SketchCommands::cmsMerge);
    t.add("cms.info", 2, flags(READONLY, FAST), 1, 1, 1, "cms",
        "Returns information about a sketch.", SketchCommands::cmsInfo);
    t.add("topk.reserve", -3, flags(WRITE, DENYOOM), 1, 1, 1, "topk",
        "Initializes a TopK with specified parameters.", SketchCommands::topkReserve);
    t.add("topk.add", -3, flags(WRITE, DENYOOM), 1, 1, 1, "topk",
        "Increases the count of one or more items by increment.", SketchCommands::topkAdd);
    t.add("topk.incrby", -4, flags(WRITE, DENYOOM), 1, 1, 1, "topk",
        "Increases the count of one or more items by increment.", SketchCommands::topkIncrBy);
    t.add("topk.query", -3, flags(READONLY, FAST), 1, 1, 1, "topk",
        "Checks whether one or more items are in a sketch.", SketchCommands::topkQuery);
    t.add("topk.count", -3, flags(READONLY, FAST), 1, 1, 1, "topk",
        "Return the count for one or more items are in a sketch.", SketchCommands::topkCount);
    t.add("topk.list", -2, flags(READONLY, FAST), 1, 1, 1, "topk",
        "Return full list of items in Top K list.", SketchCommands::topkList);
    t.add("topk.info", 2, flags(READONLY, FAST), 1, 1, 1, "topk",
        "Returns information about a sketch.", SketchCommands::topkInfo);
  }

  // ------------------------------------------------------------------------------------------------ CMS

  private static CountMinSketch cms(Object value) {
    return Kinds.required(value, CountMinSketch.class, RedisBloomErrors.CMS_KEY_DOES_NOT_EXIST);
  }

  private static Reply createCms(Invocation inv, java.util.function.Supplier<CountMinSketch> factory,
      long cells) {
    Key key = inv.key(1);
    try (Keyspace.Write w = inv.write(key)) {
      if (w.peek(key) != null) {
        throw new CommandException(RedisBloomErrors.CMS_KEY_EXISTS);
      }
      Memory.admit(inv, cells < 0 ? -1 : cells * 4);
      CountMinSketch s;
      try {
        s = factory.get();
      } catch (FilterTooLargeException e) {
        throw new CommandException(RedisBloomErrors.CMS_INSUFFICIENT_MEMORY);
      } catch (IllegalArgumentException e) { // width and depth are checked: their product overflows
        throw new CommandException(RedisBloomErrors.CMS_INVALID_INIT_ARGUMENTS);
      }
      w.put(key, s);
      inv.journalVerbatim(w);
    }
    return Reply.OK;
  }

  private static Reply initByDim(Invocation inv) {
    Key key = inv.key(1);
    if (inv.keyspace().read(key) != null) {
      throw new CommandException(RedisBloomErrors.CMS_KEY_EXISTS);
    }
    Long width = Args.parseLong(inv.arg(2));
    if (width == null || width < 1) {
      throw new CommandException(RedisBloomErrors.CMS_INVALID_WIDTH);
    }
    Long depth = Args.parseLong(inv.arg(3));
    if (depth == null || depth < 1) {
      throw new CommandException(RedisBloomErrors.CMS_INVALID_DEPTH);
    }
    long cells = width > Long.MAX_VALUE / depth ? -1 : width * depth;
    return createCms(inv, () -> CountMinSketch.initByDimensions(width, depth), cells);
  }

  private static Reply initByProb(Invocation inv) {
    Key key = inv.key(1);
    if (inv.keyspace().read(key) != null) {
      throw new CommandException(RedisBloomErrors.CMS_KEY_EXISTS);
    }
    Double error = Args.parseDouble(inv.arg(2));
    if (error == null || !(error > 0 && error < 1)) {
      throw new CommandException(RedisBloomErrors.CMS_INVALID_OVERESTIMATION);
    }
    Double prob = Args.parseDouble(inv.arg(3));
    if (prob == null || !(prob > 0 && prob < 1)) {
      throw new CommandException(RedisBloomErrors.CMS_INVALID_PROB);
    }
    long[] dims;
    try {
      dims = CountMinSketch.dimensionsForProbability(error, prob);
    } catch (IllegalArgumentException e) { // error and prob are checked: a dimension is below 1 or too large
      throw new CommandException(RedisBloomErrors.CMS_INVALID_INIT_ARGUMENTS);
    }
    long cells = dims[0] > Long.MAX_VALUE / Math.max(1, dims[1]) ? -1 : dims[0] * dims[1];
    return createCms(inv, () -> CountMinSketch.initByProbability(error, prob), cells);
  }

  private static Reply cmsIncrBy(Invocation inv) {
    if (inv.argc() % 2 != 0) {
      throw inv.wrongArity();
    }
    Key key = inv.key(1);
    try (Keyspace.Write w = inv.write(key)) {
      CountMinSketch s = cms(w.peek(key));
      long[] increments = new long[(inv.argc() - 2) / 2];
      for (int i = 0; i < increments.length; i++) {
        Long v = Args.parseLong(inv.arg(3 + 2 * i));
        if (v == null) {
          throw new CommandException(RedisBloomErrors.CMS_CANNOT_PARSE_NUMBER);
        }
        if (v < 0) {
          throw new CommandException(RedisBloomErrors.CMS_NEGATIVE_NUMBER);
        }
        increments[i] = v;
      }
      w.get(key);
      List<Reply> out = new ArrayList<>(increments.length);
      for (int i = 0; i < increments.length; i++) {
        long estimate = s.incrementBy(inv.arg(2 + 2 * i), increments[i]);
        out.add(estimate >= CountMinSketch.MAX_COUNTER ? Reply.error(RedisBloomErrors.CMS_INCRBY_OVERFLOW)
            : Reply.integer(estimate));
      }
      inv.journalVerbatim(w);
      return Reply.array(out);
    }
  }

  private static Reply cmsQuery(Invocation inv) {
    return inv.keyspace().readLocked(inv.key(1), value -> {
      CountMinSketch s = cms(value);
      List<Reply> out = new ArrayList<>(inv.argc() - 2);
      for (int i = 2; i < inv.argc(); i++) {
        out.add(Reply.integer(s.count(inv.arg(i))));
      }
      return Reply.array(out);
    });
  }

  private static Reply cmsMerge(Invocation inv) {
    cms(inv.keyspace().read(inv.key(1)));
    Long numKeys = Args.parseLong(inv.arg(2));
    if (numKeys == null) {
      throw new CommandException(RedisBloomErrors.CMS_INVALID_NUMKEYS);
    }
    if (numKeys < 1) {
      throw new CommandException(RedisBloomErrors.CMS_NUMKEYS_NOT_POSITIVE);
    }
    int n = (int) Math.min(numKeys, Integer.MAX_VALUE - 8);
    if (inv.argc() < 3L + numKeys) {
      throw new CommandException(RedisBloomErrors.CMS_WRONG_NUMBER_OF_KEYS);
    }
    long[] weights = null;
    if (inv.argc() > 3 + n) {
      if (!Args.is(inv.arg(3 + n), "WEIGHTS")) {
        throw new CommandException(RedisBloomErrors.CMS_WRONG_NUMBER_OF_KEYS);
      }
      if (inv.argc() != 4 + 2L * n) {
        throw new CommandException(RedisBloomErrors.CMS_WRONG_NUMBER_OF_KEYS_WEIGHTS);
      }
      weights = new long[n];
      for (int i = 0; i < n; i++) {
        Long v = Args.parseLong(inv.arg(4 + n + i));
        if (v == null) {
          throw new CommandException(RedisBloomErrors.CMS_INVALID_WEIGHT);
        }
        weights[i] = v;
      }
    }
    List<Key> keys = new ArrayList<>(n + 1);
    keys.add(inv.key(1));
    for (int i = 0; i < n; i++) {
      keys.add(inv.key(3 + i));
    }
    try (Keyspace.Write w = inv.write(keys)) {
      CountMinSketch dest = cms(w.peek(keys.get(0)));
      List<CountMinSketch> sources = new ArrayList<>(n);
      for (int i = 1; i <= n; i++) {
        CountMinSketch source = cms(w.peek(keys.get(i)));
        if (source.width() != dest.width() || source.depth() != dest.depth()) {
          throw new CommandException(RedisBloomErrors.CMS_DIMENSIONS_NOT_EQUAL);
        }
        sources.add(source);
      }
      w.get(keys.get(0));
      try {
        dest.replaceWithWeightedSum(sources, weights);
      } catch (ArithmeticException e) {
        throw new CommandException(RedisBloomErrors.CMS_MERGE_OVERFLOW);
      }
      inv.journalVerbatim(w);
    }
    return Reply.OK;
  }

  private static Reply cmsInfo(Invocation inv) {
    return inv.keyspace().readLocked(inv.key(1), value -> {
      CountMinSketch s = cms(value);
      Map<String, Long> m = new LinkedHashMap<>();
      m.put("width", s.width());
      m.put("depth", s.depth());
      m.put("count", s.insertedCount());
      return Reply.map(m);
    });
  }

  // ------------------------------------------------------------------------------------------------ TOPK

  private static TopK topk(Object value) {
    return Kinds.required(value, TopK.class, RedisBloomErrors.TOPK_KEY_DOES_NOT_EXIST);
  }

  private static Reply topkReserve(Invocation inv) {
    if (inv.argc() != 3 && inv.argc() != 6) {
      throw inv.wrongArity();
    }
    Key key = inv.key(1);
    try (Keyspace.Write w = inv.write(key)) {
      if (w.peek(key) != null) {
        throw new CommandException(RedisBloomErrors.TOPK_KEY_EXISTS);
      }
      Long k = Args.parseLong(inv.arg(2));
      if (k == null) {
        throw new CommandException(RedisBloomErrors.TOPK_INVALID_K);
      }
      long width = TopK.DEFAULT_WIDTH;
      long depth = TopK.DEFAULT_DEPTH;
      double decay = TopK.DEFAULT_DECAY;
      if (inv.argc() == 6) {
        Long wv = Args.parseLong(inv.arg(3));
        if (wv == null) {
          throw new CommandException(RedisBloomErrors.TOPK_INVALID_WIDTH);
        }
        Long dv = Args.parseLong(inv.arg(4));
        if (dv == null) {
          throw new CommandException(RedisBloomErrors.TOPK_INVALID_DEPTH);
        }
        Double decayValue = Args.parseDouble(inv.arg(5));
        if (decayValue == null) {
          throw new CommandException(RedisBloomErrors.TOPK_INVALID_DECAY);
        }
        width = wv;
        depth = dv;
        decay = decayValue;
      }
      checkTopKParameters(k, width, depth, decay);
      if (k >= 1 && width >= 1 && depth >= 1 && width <= TopK.MAX_CELLS / depth) {
        Memory.admit(inv, 8 * width * depth + 16 * k);
      }
      TopK t;
      try {
        t = TopK.reserve(k, width, depth, decay, StateSeededDecay.INSTANCE);
      } catch (FilterTooLargeException e) {
        throw new CommandException(RedisBloomErrors.TOPK_INSUFFICIENT_MEMORY);
      }
      w.put(key, t);
      inv.journalVerbatim(w);
    }
    return Reply.OK;
  }

  /** TOPK.RESERVE's parameter checks, in RedisBloom's order (core refuses the same values, in its own words). */
  private static void checkTopKParameters(long k, long width, long depth, double decay) {
    if (k < 1 || k > TopK.MAX_PARAMETER) {
      throw new CommandException(RedisBloomErrors.TOPK_INVALID_K);
    }
    if (width < 1 || width > TopK.MAX_PARAMETER) {
      throw new CommandException(RedisBloomErrors.TOPK_INVALID_WIDTH);
    }
    if (depth < 1 || depth > TopK.MAX_PARAMETER) {
      throw new CommandException(RedisBloomErrors.TOPK_INVALID_DEPTH);
    }
    if (!(decay > 0 && decay <= 1)) {
      throw new CommandException(RedisBloomErrors.TOPK_INVALID_DECAY);
    }
  }

  private static Reply topkAdd(Invocation inv) {
    Key key = inv.key(1);
    try (Keyspace.Write w = inv.write(key)) {
      TopK t = topk(w.get(key));
      List<Reply> out = new ArrayList<>(inv.argc() - 2);
      for (int i = 2; i < inv.argc(); i++) {
        out.add(Reply.bulk(t.add(inv.arg(i))));
      }
      inv.journalVerbatim(w);
      return Reply.array(out);
    }
  }

  private static Reply topkIncrBy(Invocation inv) {
    if (inv.argc() % 2 != 0) {
      throw inv.wrongArity();
    }
    Key key = inv.key(1);
    try (Keyspace.Write w = inv.write(key)) {
      TopK t = topk(w.get(key));
      List<Reply> out = new ArrayList<>((inv.argc() - 2) / 2);
      for (int i = 2; i + 1 < inv.argc(); i += 2) {
        Long v = Args.parseLong(inv.arg(i + 1));
        if (v == null || v < 0 || v > TopK.MAX_INCREMENT) {
          out.add(Reply.error(RedisBloomErrors.TOPK_INVALID_INCREMENT));
          break;
        }
        out.add(Reply.bulk(t.incrementBy(inv.arg(i), v)));
      }
      inv.journalVerbatim(w);
      return Reply.array(out);
    }
  }

  private static Reply topkQuery(Invocation inv) {
    return inv.keyspace().readLocked(inv.key(1), value -> {
      TopK t = topk(value);
      List<Reply> out = new ArrayList<>(inv.argc() - 2);
      for (int i = 2; i < inv.argc(); i++) {
        out.add(Reply.bool(t.query(inv.arg(i))));
      }
      return Reply.array(out);
    });
  }

  private static Reply topkCount(Invocation inv) {
    return inv.keyspace().readLocked(inv.key(1), value -> {
      TopK t = topk(value);
      List<Reply> out = new ArrayList<>(inv.argc() - 2);
      for (int i = 2; i < inv.argc(); i++) {
        out.add(Reply.integer(t.count(inv.arg(i))));
      }
      return Reply.array(out);
    });
  }

  private static Reply topkList(Invocation inv) {
    if (inv.argc() > 3) {
      throw inv.wrongArity();
    }
    boolean withCount = false;
    if (inv.argc() == 3) {
      String arg = Args.lower(inv.arg(2));
      if (!"withcount".startsWith(arg)) {
        throw new CommandException(RedisBloomErrors.TOPK_WITHCOUNT_EXPECTED);
      }
      withCount = true;
    }
    boolean counts = withCount;
    return inv.keyspace().readLocked(inv.key(1), value -> {
      TopK t = topk(value);
      List<Reply> out = new ArrayList<>();
      for (TopK.HeavyHitter h : t.list()) {
        out.add(Reply.bulk(h.item()));
        if (counts) {
          out.add(Reply.integer(h.count()));
        }
      }
      return Reply.array(out);
    });
  }

  private static Reply topkInfo(Invocation inv) {
    return inv.keyspace().readLocked(inv.key(1), value -> {
      TopK t = topk(value);
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("k", t.k());
      m.put("width", t.width());
      m.put("depth", t.depth());
      m.put("decay", t.decay());
      return Reply.map(m);
    });
  }
}
