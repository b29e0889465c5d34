package io.bloomery.cluster.shard;

import io.bloomery.server.keyspace.Key;
import io.bloomery.server.state.GuardedKeys;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The guarded keys a shard's log declared ({@code GUARD.RESERVE}, {@code GUARD.DROP} through {@link
 * ShardStateMachine#GUARD}): the same on every replica, kept in the replica's snapshot as metadata. What a guarded
 * key answers lives in each node's own guard (its filter, following the store); this is only which keys exist, so
 * that every replica opens the same ones and the shard's other commands refuse their names the same way
 * ({@link GuardedKeys#WRONGTYPE}).
 *
 * <p>Changed only by the thread that applies entries; read by any.
 */
public final class GuardDeclarations implements GuardedKeys {
  /** The snapshot metadata name of the declarations. */
  static final String METADATA = "cluster-guarded";

  /** A guarded key's declaration: the store it guards (a name the nodes declare) and its filter's sizing. */
  public record Declaration(String store, double errorRate, long capacity) {}

  /** What the node does with the declarations as the log applies them: opens and drops its own guards. */
  public interface Listener {
    /** {@code key} was declared (by an entry applied now). */
    void declared(Key key, Declaration declaration);

    /** {@code key} was dropped (by an entry applied now). */
    void dropped(Key key);

    /** {@code key} was dropped because a reshard moved its slot to another shard (by an entry applied now). */
    default void moved(Key key) {
      dropped(key);
    }

    /** {@code key}'s filter is to be rebuilt from the store (GUARD.REBUILD, by an entry applied now). */
    void rebuild(Key key);

    /** A snapshot replaced every declaration with {@code all}. */
    void replaced(Map<Key, Declaration> all);

    /** Whether this node's guard of a declared {@code key} is built: {@code ready}, or what it is doing instead. */
    default String state(Key key) {
      return READY;
    }

    /** A replica whose node serves no guarded keys (tests of one replica). */
    Listener NONE = new Listener() {
      @Override
      public void declared(Key key, Declaration declaration) {}

      @Override
      public void dropped(Key key) {}

      @Override
      public void rebuild(Key key) {}

      @Override
      public void replaced(Map<Key, Declaration> all) {}
    };
  }

  private final Map<Key, Declaration> keys = new ConcurrentHashMap<>();
  private final Listener listener;

  GuardDeclarations(Listener listener) {
    this.listener = listener;
  }

  /** The declaration of {@code key}, or {@code null}. */
  public Declaration get(Key key) {
    return keys.get(key);
  }

  void declare(Key key, Declaration d) {
    keys.put(key, d);
    listener.declared(key, d);
  }

  void drop(Key key) {
    keys.remove(key);
    listener.dropped(key);
  }

  /** Drops {@code key}, which a reshard moved to another shard. */
  void moved(Key key) {
    keys.remove(key);
    listener.moved(key);
  }

  void rebuild(Key key) {
    listener.rebuild(key);
  }

  /** {@link Listener#state} of a declared key that answers. */
  public static final String READY = "ready";

  /** Whether this node's guard of the declared {@code key} is built ({@link Listener#state}). */
  String state(Key key) {
    return listener.state(key);
  }

  /** The declared keys of the slots in {@code slots}. */
  List<Key> in(java.util.BitSet slots) {
    List<Key> out = new ArrayList<>();
    for (Key k : keys.keySet()) {
      if (slots.get(io.bloomery.cluster.slot.HashSlot.of(k.bytes()))) {
        out.add(k);
      }
    }
    return out;
  }

  /** The declarations as snapshot metadata, {@code null} for none: one line per key, sorted by key. */
  byte[] encode() {
    if (keys.isEmpty()) {
      return null;
    }
    TreeMap<String, Declaration> sorted = new TreeMap<>();
    keys.forEach((k, d) -> sorted.put(HexFormat.of().formatHex(k.bytes()), d));
    StringBuilder sb = new StringBuilder();
    sorted.forEach((hex, d) -> sb.append(hex).append('\t').append(d.store()).append('\t')
        .append(Double.toString(d.errorRate())).append('\t').append(d.capacity()).append('\n'));
    return sb.toString().getBytes(StandardCharsets.UTF_8);
  }

  /**
   * Replaces every declaration with those of a snapshot ({@code null}: none) and tells the listener.
   *
   * @throws IllegalArgumentException if {@code bytes} are not {@link #encode}'s
   */
  void replace(byte[] bytes) {
    Map<Key, Declaration> all = new java.util.HashMap<>();
    if (bytes != null) {
      for (String line : new String(bytes, StandardCharsets.UTF_8).split("\n")) {
        if (line.isEmpty()) {
          continue;
        }
        String[] f = line.split("\t");
        if (f.length != 4) {
          throw new IllegalArgumentException(METADATA + ": expected 4 tab-separated fields, not '" + line + "'");
        }
        try {
          all.put(Key.of(HexFormat.of().parseHex(f[0])), new Declaration(f[1], Double.parseDouble(f[2]),
              Long.parseLong(f[3])));
        } catch (IllegalArgumentException e) {
          throw new IllegalArgumentException(METADATA + ": '" + line + "': " + e.getMessage(), e);
        }
      }
    }
    keys.clear();
    keys.putAll(all);
    listener.replaced(Map.copyOf(all));
  }

  @Override
  public boolean isGuarded(Key key) {
    return keys.containsKey(key);
  }

  @Override
  public int count() {
    return keys.size();
  }

  @Override
  public List<Key> names() {
    return new ArrayList<>(keys.keySet());
  }

  /** Nothing: a node's guards count their filters against its {@code maxmemory}, not the shard's log. */
  @Override
  public long usedBytes() {
    return 0;
  }

  @Override
  public long usedBytes(Key key) {
    return keys.containsKey(key) ? 0 : -1;
  }

  @Override
  public long recountAll() {
    return 0;
  }

  @Override
  public Map<String, String> infoFields() {
    return Map.of();
  }
}
