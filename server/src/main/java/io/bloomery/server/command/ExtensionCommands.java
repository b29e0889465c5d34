package io.bloomery.server.command;

import static io.bloomery.server.command.CommandSpec.Flag.DENYOOM;
import static io.bloomery.server.command.CommandSpec.Flag.WRITE;
import static io.bloomery.server.command.CommandSpec.flags;

import io.bloomery.filter.IncompatibleFilterException;
import io.bloomery.redisbloom.ScalableBloomFilter;
import io.bloomery.server.keyspace.Key;
import io.bloomery.server.keyspace.Keyspace;
import io.bloomery.server.resp.Reply;
import java.util.ArrayList;
import java.util.List;

/** Commands beyond RedisBloom (documented in docs/COMMANDS.md). */
final class ExtensionCommands {
  private ExtensionCommands() {}

  static void register(CommandTable t) {
    t.add("bf.merge", -3, flags(WRITE, DENYOOM), 1, -1, 1, "bf",
        "Unions Bloom filters of identical parameters into the destination (Bloomery extension).",
        ExtensionCommands::merge);
  }

  /**
   * {@code BF.MERGE dest src [src ...]}: every source must be a Bloom filter with the same parameters and layers as
   * the destination; a missing destination starts as a copy of the first source.
   */
  private static Reply merge(Invocation inv) {
    List<Key> keys = new ArrayList<>();
    for (int i = 1; i < inv.argc(); i++) {
      keys.add(inv.key(i));
    }
    Key dest = keys.get(0);
    try (Keyspace.Write w = inv.write(keys)) {
      List<ScalableBloomFilter> sources = new ArrayList<>();
      for (int i = 1; i < keys.size(); i++) {
        sources.add(BloomCommands.bloomOrNotFound(w.peek(keys.get(i))));
      }
      ScalableBloomFilter target = BloomCommands.bloomOrNull(w.get(dest));
      int from = 0;
      if (target == null) {
        Memory.admit(inv, sources.get(0).memoryUsage());
        target = sources.get(0).copy();
        w.put(dest, target);
        w.get(dest);
        from = 1;
      }
      for (int i = from; i < sources.size(); i++) {
        if (!target.isCompatible(sources.get(i)) && sources.get(i) != target) {
          throw new CommandException("ERR filters differ: " + keys.get(i + 1) + " cannot be merged into " + dest);
        }
      }
      Memory.admit(inv, 0);
      for (int i = from; i < sources.size(); i++) {
        ScalableBloomFilter src = sources.get(i);
        if (src == target) {
          continue; // merging a filter into itself changes no bit
        }
        try {
          target.mergeFrom(src);
        } catch (IncompatibleFilterException e) {
          throw new CommandException("ERR filters differ: " + e.getMessage());
        }
      }
      inv.journalVerbatim(w);
    }
    return Reply.OK;
  }
}
