package io.bloomery.server.command.extension;

import static io.bloomery.server.command.CommandSpec.Flag.DENYOOM;
import static io.bloomery.server.command.CommandSpec.Flag.FAST;
import static io.bloomery.server.command.CommandSpec.Flag.READONLY;
import static io.bloomery.server.command.CommandSpec.Flag.WRITE;
import static io.bloomery.server.command.CommandSpec.flags;

import io.bloomery.aging.AgePartitionedFilter;
import io.bloomery.counting.CountingBloomFilter;
import io.bloomery.filter.MembershipFilter;
import io.bloomery.hash.Protocols;
import io.bloomery.server.command.Args;
import io.bloomery.server.command.CommandException;
import io.bloomery.server.command.CommandTable;
import io.bloomery.server.command.Errors;
import io.bloomery.server.command.Invocation;
import io.bloomery.server.command.Kinds;
import io.bloomery.server.command.Memory;
import io.bloomery.server.keyspace.CommandClock;
import io.bloomery.server.keyspace.Key;
import io.bloomery.server.keyspace.Keyspace;
import io.bloomery.server.resp.Reply;
import io.bloomery.sizing.BloomMath;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Bloomery's own kinds over RESP, under prefixes RedisBloom does not use: {@code CBF.*} for the counting Bloom
 * filter (deletes) and {@code AGE.*} for the age-partitioned filter ("seen in the last window"). Replies follow
 * the BF.* conventions: booleans (integers in RESP2), arrays for the multi-item forms, maps for INFO.
 */
public final class KindCommands {
  private KindCommands() {}

  /** Adds this family's commands to {@code t}. */
  public static void register(CommandTable t) {
    t.add("cbf.reserve", -4, flags(WRITE, DENYOOM), 1, 1, 1, "bloomery",
        "Creates a counting Bloom filter: key error_rate capacity [COUNTERBITS 4|8|16].", KindCommands::cbfReserve);
    t.add("cbf.add", -3, flags(WRITE, DENYOOM), 1, 1, 1, "bloomery",
        "Adds items to a counting Bloom filter.", inv -> update(inv, CountingBloomFilter.class, true));
    t.add("cbf.del", -3, flags(WRITE), 1, 1, 1, "bloomery",
        "Removes items from a counting Bloom filter.", inv -> update(inv, CountingBloomFilter.class, false));
    t.add("cbf.exists", -3, flags(READONLY, FAST), 1, 1, 1, "bloomery",
        "Checks items in a counting Bloom filter.", inv -> exists(inv, CountingBloomFilter.class));
    t.add("cbf.info", 2, flags(READONLY, FAST), 1, 1, 1, "bloomery",
        "Returns information about a counting Bloom filter.", KindCommands::cbfInfo);
    t.add("age.reserve", -5, flags(WRITE, DENYOOM), 1, 1, 1, "bloomery",
        "Creates an age-partitioned filter: key error_rate capacity_per_window window_seconds [GENERATIONS g].",
        KindCommands::ageReserve);
    t.add("age.add", -3, flags(WRITE, DENYOOM), 1, 1, 1, "bloomery",
        "Adds items to an age-partitioned filter.", KindCommands::ageAdd);
    t.add("age.addat", -4, flags(WRITE, DENYOOM), 1, 1, 1, "bloomery",
        "Adds items as of a Unix time in ms (the journal's form of AGE.ADD).", KindCommands::ageAddAt);
    t.add("age.exists", -3, flags(READONLY, FAST), 1, 1, 1, "bloomery",
        "Checks whether items were added within the window.", inv -> exists(inv, AgePartitionedFilter.class));
    t.add("age.info", 2, flags(READONLY, FAST), 1, 1, 1, "bloomery",
        "Returns information about an age-partitioned filter.", KindCommands::ageInfo);
  }

  private static <T> T as(Object value, Class<T> kind, boolean required) {
    return required ? Kinds.required(value, kind, "ERR not found") : Kinds.orNull(value, kind);
  }

  private static double errorRate(Invocation inv, int i) {
    Double rate = Args.parseDouble(inv.arg(i));
    if (rate == null || !(rate > 0 && rate < 1)) {
      throw new CommandException("ERR error rate must be in the range (0, 1)");
    }
    return rate;
  }

  private static long capacity(Invocation inv, int i) {
    Long capacity = Args.parseLong(inv.arg(i));
    if (capacity == null || capacity < 1 || capacity > (1L << 40)) {
      throw new CommandException("ERR capacity must be in the range [1, 1099511627776]");
    }
    return capacity;
  }

  private static void createUnder(Invocation inv, Key key, long bytes, java.util.function.Supplier<Object> factory) {
    try (Keyspace.Write w = inv.write(key)) {
      if (w.peek(key) != null) {
        throw new CommandException("ERR item exists");
      }
      Memory.admit(inv, bytes);
      Object value;
      try {
        value = factory.get();
      } catch (IllegalArgumentException e) {
        throw new CommandException("ERR " + e.getMessage());
      }
      w.put(key, value);
      inv.journalVerbatim(w);
    }
  }

  private static Reply cbfReserve(Invocation inv) {
    double rate = errorRate(inv, 2);
    long capacity = capacity(inv, 3);
    int counterBits = CountingBloomFilter.DEFAULT_COUNTER_BITS;
    for (int i = 4; i < inv.argc(); i += 2) {
      if (!Args.is(inv.arg(i), "COUNTERBITS") || i + 1 >= inv.argc()) {
        throw new CommandException(Errors.SYNTAX);
      }
      Long bits = Args.parseLong(inv.arg(i + 1));
      if (bits == null || (bits != 4 && bits != 8 && bits != 16)) {
        throw new CommandException("ERR COUNTERBITS must be 4, 8 or 16");
      }
      counterBits = bits.intValue();
    }
    long m = BloomMath.optimalBits(capacity, rate);
    int k = BloomMath.optimalHashes(capacity, m);
    int bits = counterBits;
    createUnder(inv, inv.key(1), m * bits / 8, () -> CountingBloomFilter.create(
        Protocols.defaultProtocol(), new byte[0], m, k, bits));
    return Reply.OK;
  }

  private static Reply update(Invocation inv, Class<? extends MembershipFilter> kind, boolean add) {
    Key key = inv.key(1);
    try (Keyspace.Write w = inv.write(key)) {
      CountingBloomFilter f = (CountingBloomFilter) as(w.get(key), kind, true);
      List<Reply> out = new ArrayList<>(inv.argc() - 2);
      for (int i = 2; i < inv.argc(); i++) {
        out.add(Reply.bool(add ? f.add(inv.arg(i)) : f.remove(inv.arg(i))));
      }
      inv.journalVerbatim(w);
      return inv.argc() == 3 ? out.get(0) : Reply.array(out);
    }
  }

  private static Reply exists(Invocation inv, Class<? extends MembershipFilter> kind) {
    MembershipFilter f = as(inv.keyspace().read(inv.key(1)), kind, false);
    List<Reply> out = new ArrayList<>(inv.argc() - 2);
    for (int i = 2; i < inv.argc(); i++) {
      out.add(Reply.bool(f != null && f.mightContain(inv.arg(i))));
    }
    return inv.argc() == 3 ? out.get(0) : Reply.array(out);
  }

  private static Reply cbfInfo(Invocation inv) {
    CountingBloomFilter f = as(inv.keyspace().read(inv.key(1)), CountingBloomFilter.class, true);
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("Counters", f.counterCount());
    m.put("Counter bits", (long) f.counterBits());
    m.put("Hashes", (long) f.hashCount());
    m.put("Number of items inserted", f.insertedCount());
    m.put("Saturated counters", f.saturatedCounters());
    m.put("Size", f.counterBytes());
    m.put("Expected error rate", f.estimatedFpp());
    return Reply.map(m);
  }

  private static Reply ageReserve(Invocation inv) {
    double rate = errorRate(inv, 2);
    long capacity = capacity(inv, 3);
    Long window = Args.parseLong(inv.arg(4));
    if (window == null || window < 1) {
      throw new CommandException("ERR window must be a positive number of seconds");
    }
    int generations = 4;
    for (int i = 5; i < inv.argc(); i += 2) {
      if (!Args.is(inv.arg(i), "GENERATIONS") || i + 1 >= inv.argc()) {
        throw new CommandException(Errors.SYNTAX);
      }
      Long g = Args.parseLong(inv.arg(i + 1));
      if (g == null || g < AgePartitionedFilter.MIN_GENERATIONS || g > AgePartitionedFilter.MAX_GENERATIONS) {
        throw new CommandException("ERR GENERATIONS must be in the range [" + AgePartitionedFilter.MIN_GENERATIONS
            + ", " + AgePartitionedFilter.MAX_GENERATIONS + "]");
      }
      generations = g.intValue();
    }
    int g = generations;
    double perGeneration = AgePartitionedFilter.generationFpp(rate, g);
    long bytes = g * BloomMath.optimalBits((capacity + g - 2) / (g - 1), perGeneration) / 8;
    createUnder(inv, inv.key(1), bytes, () -> AgePartitionedFilter.create(Duration.ofSeconds(window), g, capacity,
        rate, CommandClock::now));
    return Reply.OK;
  }

  private static Reply ageAdd(Invocation inv) {
    long now = CommandClock.now();
    return CommandClock.at(now, () -> addAll(inv, 2, now));
  }

  private static Reply ageAddAt(Invocation inv) {
    Long at = Args.parseLong(inv.arg(2));
    if (at == null || at < 0) {
      throw new CommandException(Errors.NOT_INTEGER);
    }
    return CommandClock.at(at, () -> addAll(inv, 3, at));
  }

  private static Reply addAll(Invocation inv, int from, long at) {
    Key key = inv.key(1);
    try (Keyspace.Write w = inv.write(key)) {
      AgePartitionedFilter f = as(w.get(key), AgePartitionedFilter.class, true);
      List<Reply> out = new ArrayList<>(inv.argc() - from);
      List<byte[]> record = new ArrayList<>(inv.argc() + 1);
      record.add(Args.bytes("AGE.ADDAT"));
      record.add(key.bytes());
      record.add(Args.bytes(Long.toString(at)));
      for (int i = from; i < inv.argc(); i++) {
        out.add(Reply.bool(f.add(inv.arg(i))));
        record.add(inv.arg(i));
      }
      inv.journal(w, record);
      return inv.argc() == from + 1 ? out.get(0) : Reply.array(out);
    }
  }

  private static Reply ageInfo(Invocation inv) {
    AgePartitionedFilter f = as(inv.keyspace().read(inv.key(1)), AgePartitionedFilter.class, true);
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("Window seconds", f.window().toSeconds());
    m.put("Generations", (long) f.generations());
    m.put("Generation span ms", f.generationSpanMillis());
    m.put("Bits per generation", f.bitsPerGeneration());
    m.put("Hashes", (long) f.hashCount());
    m.put("Size", f.generations() * (f.bitsPerGeneration() / 8));
    m.put("Expected error rate", f.estimatedFpp());
    return Reply.map(m);
  }
}
