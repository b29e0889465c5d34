package io.bloomery.server.command.tdigest;

import static io.bloomery.server.command.CommandSpec.Flag.DENYOOM;
import static io.bloomery.server.command.CommandSpec.Flag.FAST;
import static io.bloomery.server.command.CommandSpec.Flag.READONLY;
import static io.bloomery.server.command.CommandSpec.Flag.WRITE;
import static io.bloomery.server.command.CommandSpec.flags;

import io.bloomery.filter.FilterTooLargeException;
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
import io.bloomery.server.resp.Reply;
import io.bloomery.sketch.TDigest;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;

/**
 * RedisBloom's {@code TDIGEST.*} commands over core's {@link TDigest}, with RedisBloom's validation order and error
 * texts ({@code src/rm_tdigest.c} at b28c2945).
 *
 * <p>A t-digest's queries compress its buffered centroids, which changes the digest (INFO's node counts and every
 * later merge decision), so every command but MIN, MAX and INFO runs under the key's write lock; a read that did
 * compress is journaled verbatim, so recovery compresses at the same moments and the digest answers after a restart
 * exactly as before it.
 */
public final class TDigestCommands {
  private TDigestCommands() {}

  /** Adds this family's commands to {@code t}. */
  public static void register(CommandTable t) {
    t.add("tdigest.create", -2, flags(WRITE, DENYOOM), 1, 1, 1, "tdigest",
        "Allocates memory and initializes a new t-digest sketch", TDigestCommands::create);
    t.add("tdigest.reset", 2, flags(WRITE, DENYOOM), 1, 1, 1, "tdigest",
        "Resets a t-digest sketch: empty the sketch and re-initializes it.", TDigestCommands::reset);
    t.add("tdigest.add", -3, flags(WRITE, DENYOOM), 1, 1, 1, "tdigest",
        "Adds one or more observations to a t-digest sketch", TDigestCommands::add);
    t.add("tdigest.merge", -4, flags(WRITE, DENYOOM), 1, -1, 1, "tdigest",
        "Merges multiple t-digest sketches into a single sketch", TDigestCommands::merge);
    t.add("tdigest.min", 2, flags(READONLY, FAST), 1, 1, 1, "tdigest",
        "Returns the minimum observation value from a t-digest sketch", inv -> extreme(inv, false));
    t.add("tdigest.max", 2, flags(READONLY, FAST), 1, 1, 1, "tdigest",
        "Returns the maximum observation value from a t-digest sketch", inv -> extreme(inv, true));
    t.add("tdigest.quantile", -3, flags(READONLY, FAST), 1, 1, 1, "tdigest",
        "Returns, for each input fraction, an estimation of the value (floating point) that is smaller than the"
            + " given fraction of observations", TDigestCommands::quantile);
    t.add("tdigest.byrank", -3, flags(READONLY, FAST), 1, 1, 1, "tdigest",
        "Returns, for each input rank, an estimation of the value (floating-point) with that rank",
        inv -> byRank(inv, false));
    t.add("tdigest.byrevrank", -3, flags(READONLY, FAST), 1, 1, 1, "tdigest",
        "Returns, for each input reverse rank, an estimation of the value (floating-point) with that reverse rank",
        inv -> byRank(inv, true));
    t.add("tdigest.rank", -3, flags(READONLY, FAST), 1, 1, 1, "tdigest",
        "Returns, for each input value (floating-point), the estimated rank of the value (the number of"
            + " observations in the sketch that are smaller than the value + half the number of observations that"
            + " are equal to the value)", inv -> rank(inv, false));
    t.add("tdigest.revrank", -3, flags(READONLY, FAST), 1, 1, 1, "tdigest",
        "Returns, for each input value (floating-point), the estimated reverse rank of the value (the number of"
            + " observations in the sketch that are larger than the value + half the number of observations that"
            + " are equal to the value)", inv -> rank(inv, true));
    t.add("tdigest.cdf", -3, flags(READONLY, FAST), 1, 1, 1, "tdigest",
        "Returns, for each input value, an estimation of the floating-point fraction of (observations smaller than"
            + " the given value + half the observations equal to the given value). Multiple fractions can be"
            + " retrieved in a single call.", TDigestCommands::cdf);
    t.add("tdigest.trimmed_mean", 4, flags(READONLY), 1, 1, 1, "tdigest",
        "Returns an estimation of the mean value from the sketch, excluding observation values outside the low and"
            + " high cutoff quantiles", TDigestCommands::trimmedMean);
    t.add("tdigest.info", 2, flags(READONLY, FAST), 1, 1, 1, "tdigest",
        "Returns information and statistics about a t-digest sketch", TDigestCommands::info);
  }

  private static TDigest digest(Object value) {
    return Kinds.required(value, TDigest.class, RedisBloomErrors.TDIGEST_KEY_DOES_NOT_EXIST);
  }

  private static Reply create(Invocation inv) {
    if (inv.argc() != 2 && inv.argc() != 4) {
      throw inv.wrongArity();
    }
    Key key = inv.key(1);
    try (Keyspace.Write w = inv.write(key)) {
      Object existing = w.peek(key);
      if (existing != null) {
        throw ValueType.T_DIGEST.holds(existing) ? new CommandException(RedisBloomErrors.TDIGEST_KEY_EXISTS) : new CommandException(Errors.WRONGTYPE);
      }
      long compression = TDigest.DEFAULT_COMPRESSION;
      if (inv.argc() == 4) {
        if (Args.indexOf(inv.argv().subList(2, 4), "COMPRESSION") < 0) {
          throw new CommandException(RedisBloomErrors.TDIGEST_WRONG_KEYWORD);
        }
        compression = compression(inv.arg(3));
      }
      Memory.admit(inv, compression > TDigest.MAX_COMPRESSION ? -1 : 80 + 16 * (6 * compression + 10));
      TDigest digest;
      try {
        digest = TDigest.create(compression);
      } catch (FilterTooLargeException e) {
        throw new CommandException(RedisBloomErrors.TDIGEST_ALLOCATION_FAILED);
      }
      w.put(key, digest);
      inv.journalVerbatim(w);
    }
    return Reply.OK;
  }

  /** RedisBloom's {@code _TDigest_ParseCompressionParameter}. */
  private static long compression(byte[] arg) {
    Long compression = Args.parseLong(arg);
    if (compression == null) {
      throw new CommandException(RedisBloomErrors.TDIGEST_PARSING_COMPRESSION);
    }
    if (compression <= 0) {
      throw new CommandException(RedisBloomErrors.TDIGEST_COMPRESSION_NOT_POSITIVE);
    }
    return compression;
  }

  private static Reply reset(Invocation inv) {
    Key key = inv.key(1);
    try (Keyspace.Write w = inv.write(key)) {
      digest(w.peek(key));
      digest(w.get(key)).reset();
      inv.journalVerbatim(w);
    }
    return Reply.OK;
  }

  private static Reply add(Invocation inv) {
    Key key = inv.key(1);
    try (Keyspace.Write w = inv.write(key)) {
      digest(w.peek(key));
      double[] values = new double[inv.argc() - 2];
      for (int i = 0; i < values.length; i++) {
        Double v = Args.parseDouble(inv.arg(2 + i));
        if (v == null) {
          throw new CommandException(RedisBloomErrors.TDIGEST_PARSING_VAL);
        }
        if (Double.isInfinite(v)) {
          throw new CommandException(RedisBloomErrors.TDIGEST_VAL_NOT_FINITE);
        }
        values[i] = v;
      }
      TDigest digest = digest(w.get(key));
      for (int i = 0; i < values.length; i++) {
        try {
          digest.add(values[i]);
        } catch (ArithmeticException overflow) {
          if (i > 0) { // the values before the overflow stay added, as in RedisBloom: journal exactly those
            inv.journal(w, inv.argv().subList(0, 2 + i));
          }
          throw new CommandException(RedisBloomErrors.TDIGEST_OVERFLOW);
        }
      }
      inv.journalVerbatim(w);
    }
    return Reply.OK;
  }

  private static Reply merge(Invocation inv) {
    Key destination = inv.key(1);
    Kinds.orNull(inv.keyspace().read(destination), TDigest.class);
    Long numKeys = Args.parseLong(inv.arg(2));
    if (numKeys == null) {
      throw new CommandException(RedisBloomErrors.TDIGEST_PARSING_NUMKEYS);
    }
    if (numKeys <= 0) {
      throw new CommandException(RedisBloomErrors.TDIGEST_NUMKEYS_NOT_POSITIVE);
    }
    if (numKeys > inv.argc() - 3) {
      throw inv.wrongArity();
    }
    int n = (int) (long) numKeys;
    List<byte[]> options = inv.argv().subList(3 + n, inv.argc());
    int compressionAt = Args.indexOf(options, "COMPRESSION");
    long explicitCompression = 0;
    if (compressionAt >= 0) {
      if (compressionAt + 1 >= options.size()) {
        throw inv.wrongArity();
      }
      explicitCompression = compression(options.get(compressionAt + 1));
    }
    boolean override = Args.indexOf(options, "OVERRIDE") >= 0;
    if (!options.isEmpty() && compressionAt < 0 && !override) {
      throw new CommandException(RedisBloomErrors.TDIGEST_WRONG_KEYWORD);
    }
    Set<Key> keys = new LinkedHashSet<>();
    keys.add(destination);
    for (int i = 0; i < n; i++) {
      keys.add(inv.key(3 + i));
    }
    try (Keyspace.Write w = inv.write(keys)) {
      TDigest existing = Kinds.orNull(w.peek(destination), TDigest.class);
      List<TDigest> sources = new ArrayList<>(n);
      for (int i = 0; i < n; i++) {
        sources.add(digest(w.peek(inv.key(3 + i))));
      }
      for (Key k : keys) { // merging compresses the existing destination and every source in place
        w.get(k);
      }
      long compression = compressionAt >= 0 ? explicitCompression : existing != null && !override
          ? existing.compression() : 0;
      TDigest merged;
      try {
        merged = TDigest.combine(existing, sources, compression, override);
      } catch (FilterTooLargeException e) {
        throw new CommandException(RedisBloomErrors.TDIGEST_DESTINATION_ALLOCATION_FAILED);
      } catch (ArithmeticException e) {
        throw new CommandException(RedisBloomErrors.TDIGEST_OVERFLOW);
      }
      w.put(destination, merged);
      inv.journalVerbatim(w);
    }
    return Reply.OK;
  }

  private static Reply extreme(Invocation inv, boolean max) {
    return inv.keyspace().readLocked(inv.key(1), value -> {
      TDigest digest = digest(value);
      return Reply.of(max ? digest.max() : digest.min());
    });
  }

  /**
   * Runs a query that may compress the digest, under the key's write lock: {@code query} parses its arguments
   * (errors first, as RedisBloom checks them before computing) and answers; if it compressed, the command is
   * journaled so that recovery compresses at the same moment. While the journal refuses writes (a full disk) the
   * query still answers, as a read must, and that one compression is not journaled.
   */
  private static Reply compressing(Invocation inv, Function<TDigest, Reply> query) {
    Key key = inv.key(1);
    try (Keyspace.Write w = inv.write(key)) {
      TDigest digest = digest(w.peek(key));
      long compressions = digest.totalCompressions();
      int unmerged = digest.unmergedNodes();
      if (unmerged > 0) {
        w.get(key); // a snapshot in progress keeps the digest as it was before this query compresses it
      }
      Reply reply = query.apply(digest);
      if (digest.totalCompressions() != compressions && inv.keyspace().journal().refusal() == null) {
        inv.journalVerbatim(w);
      }
      return reply;
    }
  }

  private static double[] doubles(Invocation inv, String parseError) {
    double[] values = new double[inv.argc() - 2];
    for (int i = 0; i < values.length; i++) {
      Double v = Args.parseDouble(inv.arg(2 + i));
      if (v == null) {
        throw new CommandException(parseError);
      }
      values[i] = v;
    }
    return values;
  }

  private static Reply doubles(double[] values) {
    List<Reply> out = new ArrayList<>(values.length);
    for (double v : values) {
      out.add(Reply.of(v));
    }
    return Reply.array(out);
  }

  private static Reply quantile(Invocation inv) {
    return compressing(inv, digest -> {
      double[] fractions = new double[inv.argc() - 2];
      for (int i = 0; i < fractions.length; i++) {
        Double q = Args.parseDouble(inv.arg(2 + i));
        if (q == null) {
          throw new CommandException(RedisBloomErrors.TDIGEST_PARSING_QUANTILE);
        }
        if (q < 0 || q > 1.0) {
          throw new CommandException(RedisBloomErrors.TDIGEST_QUANTILE_RANGE);
        }
        fractions[i] = q;
      }
      return doubles(digest.quantiles(fractions));
    });
  }

  private static Reply cdf(Invocation inv) {
    return compressing(inv, digest -> {
      double[] values = doubles(inv, RedisBloomErrors.TDIGEST_PARSING_CDF);
      return doubles(Arrays.stream(values).map(digest::cdf).toArray());
    });
  }

  private static Reply rank(Invocation inv, boolean reverse) {
    return compressing(inv, digest -> {
      double[] values = doubles(inv, RedisBloomErrors.TDIGEST_PARSING_VALUE);
      List<Reply> out = new ArrayList<>(values.length);
      for (double v : values) {
        out.add(Reply.integer(reverse ? digest.revRank(v) : digest.rank(v)));
      }
      return Reply.array(out);
    });
  }

  private static Reply byRank(Invocation inv, boolean reverse) {
    return compressing(inv, digest -> {
      long[] ranks = new long[inv.argc() - 2];
      for (int i = 0; i < ranks.length; i++) {
        Long rank = Args.parseLong(inv.arg(2 + i));
        if (rank == null) {
          throw new CommandException(RedisBloomErrors.TDIGEST_PARSING_RANK);
        }
        if (rank < 0) {
          throw new CommandException(RedisBloomErrors.TDIGEST_RANK_NEGATIVE);
        }
        ranks[i] = rank;
      }
      double[] values = new double[ranks.length];
      for (int i = 0; i < ranks.length; i++) {
        values[i] = reverse ? digest.byRevRank(ranks[i]) : digest.byRank(ranks[i]);
      }
      return doubles(values);
    });
  }

  private static Reply trimmedMean(Invocation inv) {
    return compressing(inv, digest -> {
      Double low = Args.parseDouble(inv.arg(2));
      if (low == null) {
        throw new CommandException(RedisBloomErrors.TDIGEST_PARSING_LOW_CUT);
      }
      Double high = Args.parseDouble(inv.arg(3));
      if (high == null) {
        throw new CommandException(RedisBloomErrors.TDIGEST_PARSING_HIGH_CUT);
      }
      if (!(low >= 0.0 && low <= 1.0 && high >= 0.0 && high <= 1.0)) {
        throw new CommandException(RedisBloomErrors.TDIGEST_CUT_RANGE);
      }
      if (low >= high) {
        throw new CommandException(RedisBloomErrors.TDIGEST_CUT_ORDER);
      }
      return Reply.of(digest.trimmedMean(low, high));
    });
  }

  private static Reply info(Invocation inv) {
    return inv.keyspace().readLocked(inv.key(1), value -> {
      TDigest digest = digest(value);
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("Compression", digest.compression());
      m.put("Capacity", (long) digest.capacity());
      m.put("Merged nodes", (long) digest.mergedNodes());
      m.put("Unmerged nodes", (long) digest.unmergedNodes());
      m.put("Merged weight", digest.mergedWeight());
      m.put("Unmerged weight", digest.unmergedWeight());
      m.put("Observations", digest.insertedCount());
      m.put("Total compressions", digest.totalCompressions());
      m.put("Memory usage", digest.memoryUsage());
      return Reply.map(m);
    });
  }
}
