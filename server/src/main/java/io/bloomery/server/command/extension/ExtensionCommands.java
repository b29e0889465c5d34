package io.bloomery.server.command.extension;

import static io.bloomery.server.command.CommandSpec.Flag.DENYOOM;
import static io.bloomery.server.command.CommandSpec.Flag.WRITE;
import static io.bloomery.server.command.CommandSpec.flags;

import io.bloomery.filter.IncompatibleFilterException;
import io.bloomery.filter.Mergeable;
import io.bloomery.server.command.CommandException;
import io.bloomery.server.command.CommandTable;
import io.bloomery.server.command.Invocation;
import io.bloomery.server.command.Memory;
import io.bloomery.server.command.bloom.BloomCommands;
import io.bloomery.server.keyspace.Key;
import io.bloomery.server.keyspace.Keyspace;
import io.bloomery.server.keyspace.ValueType;
import io.bloomery.server.resp.Reply;
import java.util.ArrayList;
import java.util.List;

/** Commands beyond RedisBloom (documented in docs/COMMANDS.md). */
public final class ExtensionCommands {
  private ExtensionCommands() {}

  /** Adds this family's commands to {@code t}. */
  public static void register(CommandTable t) {
    t.add("bf.merge", -3, flags(WRITE, DENYOOM), 1, -1, 1, "bf",
        "Unions Bloom filters of identical parameters into the destination (Bloomery extension).",
        ExtensionCommands::merge);
  }

  /**
   * {@code BF.MERGE dest src [src ...]}: every source must be a Bloom filter of the destination's form (scalable, classic or
   * blocked) with the same parameters and layers; a missing destination starts as a copy of the first source.
   */
  @SuppressWarnings({"rawtypes", "unchecked"}) // sources are checked to be of the target's class before merging
  private static Reply merge(Invocation inv) {
    List<Key> keys = new ArrayList<>();
    for (int i = 1; i < inv.argc(); i++) {
      keys.add(inv.key(i));
    }
    Key dest = keys.get(0);
    try (Keyspace.Write w = inv.write(keys)) {
      List<Mergeable> sources = new ArrayList<>();
      for (int i = 1; i < keys.size(); i++) {
        sources.add((Mergeable) BloomCommands.anyBloomOrNotFound(w.peek(keys.get(i))));
      }
      Mergeable target = (Mergeable) BloomCommands.anyBloomOrNull(w.get(dest));
      int from = 0;
      if (target == null) {
        Memory.admit(inv, ValueType.of(sources.get(0)).memoryUsage(sources.get(0)));
        target = (Mergeable) ValueType.of(sources.get(0)).copy(sources.get(0));
        w.put(dest, target);
        w.get(dest);
        from = 1;
      }
      for (int i = from; i < sources.size(); i++) {
        if (sources.get(i) != target
            && (sources.get(i).getClass() != target.getClass() || !target.isCompatible(sources.get(i)))) {
          throw new CommandException("ERR filters differ: " + keys.get(i + 1) + " cannot be merged into " + dest);
        }
      }
      Memory.admit(inv, 0);
      for (int i = from; i < sources.size(); i++) {
        Mergeable src = sources.get(i);
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
