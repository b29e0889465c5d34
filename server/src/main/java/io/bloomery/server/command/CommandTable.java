package io.bloomery.server.command;

import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/** Every command the server answers, by lower-case name. */
public final class CommandTable {
  private final Map<String, CommandSpec> specs = new LinkedHashMap<>();

  /** Registers a command (public for the command families in subpackages, e.g. GUARD.*). */
  public void add(CommandSpec spec) {
    if (specs.putIfAbsent(spec.name(), spec) != null) {
      throw new IllegalStateException("command registered twice: " + spec.name());
    }
  }

  /** Registers a command; {@code name} lower case. */
  void add(String name, int arity, java.util.Set<CommandSpec.Flag> flags, int firstKey, int lastKey, int step,
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
