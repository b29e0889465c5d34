package io.bloomery.server.command;

import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/** Every command the server answers, by lower-case name. */
public final class CommandTable {
  private final Map<String, CommandSpec> specs = new LinkedHashMap<>();
  /** Open-addressing index by ASCII-case-folded name bytes, rebuilt on registration (lookups allocate nothing). */
  private CommandSpec[] index = new CommandSpec[0];
  private byte[][] indexNames = new byte[0][];

  /** Registers a command (public for the command families in subpackages, e.g. GUARD.*). */
  public void add(CommandSpec spec) {
    if (specs.putIfAbsent(spec.name(), spec) != null) {
      throw new IllegalStateException("command registered twice: " + spec.name());
    }
    reindex();
  }

  private void reindex() {
    int capacity = Integer.highestOneBit(Math.max(4, specs.size() * 4) - 1) << 1;
    CommandSpec[] table = new CommandSpec[capacity];
    byte[][] names = new byte[capacity][];
    for (CommandSpec spec : specs.values()) {
      byte[] name = spec.name().getBytes(java.nio.charset.StandardCharsets.ISO_8859_1);
      int i = foldedHash(name) & (capacity - 1);
      while (table[i] != null) {
        i = (i + 1) & (capacity - 1);
      }
      table[i] = spec;
      names[i] = name;
    }
    indexNames = names;
    index = table;
  }

  private static int foldedHash(byte[] name) {
    int h = 0;
    for (byte b : name) {
      h = 31 * h + fold(b);
    }
    return h ^ (h >>> 16);
  }

  private static int fold(byte b) {
    return b >= 'A' && b <= 'Z' ? b + ('a' - 'A') : b;
  }

  /** The spec for a name as typed (ASCII letters in any case), or {@code null}; allocates nothing. */
  public CommandSpec get(byte[] typed) {
    CommandSpec[] table = index;
    byte[][] names = indexNames;
    int mask = table.length - 1;
    for (int i = foldedHash(typed) & mask; table[i] != null; i = (i + 1) & mask) {
      byte[] name = names[i];
      if (name.length == typed.length && foldedEquals(name, typed)) {
        return table[i];
      }
    }
    return null;
  }

  private static boolean foldedEquals(byte[] lower, byte[] typed) {
    for (int j = 0; j < lower.length; j++) {
      if (lower[j] != fold(typed[j])) {
        return false;
      }
    }
    return true;
  }

  /** Registers a command; {@code name} lower case. */
  public void add(String name, int arity, java.util.Set<CommandSpec.Flag> flags, int firstKey, int lastKey, int step,
      String group, String summary, CommandSpec.Handler handler) {
    add(new CommandSpec(name, arity, flags, firstKey, lastKey, step, group, summary, handler));
  }

  /** The spec for a name in any case, or {@code null}. */
  public CommandSpec get(String name) {
    return specs.get(name.toLowerCase(Locale.ROOT));
  }

  public Collection<CommandSpec> all() {
    return Collections.unmodifiableCollection(specs.values());
  }

  public int size() {
    return specs.size();
  }
}
