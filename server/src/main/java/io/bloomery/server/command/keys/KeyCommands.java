package io.bloomery.server.command.keys;

import static io.bloomery.server.command.CommandSpec.Flag.FAST;
import static io.bloomery.server.command.CommandSpec.Flag.GLOBAL;
import static io.bloomery.server.command.CommandSpec.Flag.READONLY;
import static io.bloomery.server.command.CommandSpec.Flag.WRITE;
import static io.bloomery.server.command.CommandSpec.flags;

import io.bloomery.server.command.Args;
import io.bloomery.server.command.CommandException;
import io.bloomery.server.command.CommandTable;
import io.bloomery.server.command.Errors;
import io.bloomery.server.keyspace.Glob;
import io.bloomery.server.command.Invocation;
import io.bloomery.server.keyspace.Key;
import io.bloomery.server.keyspace.Keyspace;
import io.bloomery.server.keyspace.ValueType;
import io.bloomery.server.resp.Reply;
import java.util.ArrayList;
import java.util.List;

/**
 * The generic keyspace commands: DBSIZE EXISTS DEL UNLINK TYPE KEYS SCAN RENAME, expiry (EXPIRE PEXPIRE EXPIREAT
 * PEXPIREAT TTL PTTL EXPIRETIME PEXPIRETIME PERSIST, journaled as absolute PEXPIREAT so that replay is exact) and
 * FLUSHDB / FLUSHALL.
 */
public final class KeyCommands {
  private KeyCommands() {}

  /** Adds this family's commands to {@code t}. */
  public static void register(CommandTable t) {
    t.add("dbsize", 1, flags(READONLY, FAST), 0, 0, 0, "keyspace", "Returns the number of keys in the database.",
        inv -> Reply.integer(inv.keyspace().size() + inv.server().guards().count()));
    t.add("exists", -2, flags(READONLY, FAST), 1, -1, 1, "keyspace", "Determines whether one or more keys exist.",
        KeyCommands::exists);
    t.add("del", -2, flags(WRITE), 1, -1, 1, "keyspace", "Deletes one or more keys.", KeyCommands::del);
    t.add("unlink", -2, flags(WRITE, FAST), 1, -1, 1, "keyspace", "Deletes one or more keys.", KeyCommands::del);
    t.add("type", 2, flags(READONLY, FAST), 1, 1, 1, "keyspace", "Determines the type of value stored at a key.",
        inv -> {
          ValueType type = typeOf(inv, inv.key(1));
          return new Reply.Simple(type != null ? type.typeReply() : "none");
        });
    t.add("keys", 2, flags(READONLY), 0, 0, 0, "keyspace", "Returns all key names that match a pattern.",
        KeyCommands::keys);
    t.add("scan", -2, flags(READONLY), 0, 0, 0, "keyspace", "Iterates over the key names in the database.",
        KeyCommands::scan);
    t.add("rename", 3, flags(WRITE), 1, 2, 1, "keyspace", "Renames a key and overwrites the destination.",
        KeyCommands::rename);
    t.add("expire", -3, flags(WRITE, FAST), 1, 1, 1, "keyspace", "Sets the expiration time of a key in seconds.",
        inv -> expire(inv, 1000, false));
    t.add("pexpire", -3, flags(WRITE, FAST), 1, 1, 1, "keyspace",
        "Sets the expiration time of a key in milliseconds.", inv -> expire(inv, 1, false));
    t.add("expireat", -3, flags(WRITE, FAST), 1, 1, 1, "keyspace",
        "Sets the expiration time of a key to a Unix timestamp.", inv -> expire(inv, 1000, true));
    t.add("pexpireat", -3, flags(WRITE, FAST), 1, 1, 1, "keyspace",
        "Sets the expiration time of a key to a Unix milliseconds timestamp.", inv -> expire(inv, 1, true));
    t.add("ttl", 2, flags(READONLY, FAST), 1, 1, 1, "keyspace", "Returns the expiration time in seconds of a key.",
        inv -> ttl(inv, false));
    t.add("pttl", 2, flags(READONLY, FAST), 1, 1, 1, "keyspace",
        "Returns the expiration time in milliseconds of a key.", inv -> ttl(inv, true));
    t.add("expiretime", 2, flags(READONLY, FAST), 1, 1, 1, "keyspace",
        "Returns the expiration time of a key as a Unix timestamp.", inv -> expireTime(inv, false));
    t.add("pexpiretime", 2, flags(READONLY, FAST), 1, 1, 1, "keyspace",
        "Returns the expiration time of a key as a Unix milliseconds timestamp.", inv -> expireTime(inv, true));
    t.add("persist", 2, flags(WRITE, FAST), 1, 1, 1, "keyspace", "Removes the expiration time of a key.",
        KeyCommands::persist);
    t.add("flushdb", -1, flags(WRITE, GLOBAL), 0, 0, 0, "server", "Removes all keys from the current database.",
        KeyCommands::flush);
    t.add("flushall", -1, flags(WRITE, GLOBAL), 0, 0, 0, "server", "Removes all keys from all databases.",
        KeyCommands::flush);
  }

  private static Reply exists(Invocation inv) {
    long n = 0;
    for (int i = 1; i < inv.argc(); i++) {
      if (inv.keyspace().peek(inv.key(i)) != null || guarded(inv, inv.key(i))) {
        n++;
      }
    }
    return Reply.integer(n);
  }

  private static Reply del(Invocation inv) {
    List<Key> keys = new ArrayList<>();
    for (int i = 1; i < inv.argc(); i++) {
      keys.add(inv.key(i));
    }
    long n = 0;
    try (Keyspace.Write w = inv.write(keys)) {
      for (Key k : keys) {
        if (w.remove(k) != null) {
          n++;
        }
      }
      if (n > 0) {
        inv.journalVerbatim(w);
      }
    }
    return Reply.integer(n);
  }

  private static Reply keys(Invocation inv) {
    byte[] pattern = inv.arg(1);
    List<Reply> out = new ArrayList<>();
    inv.keyspace().forEach((k, v) -> {
      if (Glob.matches(pattern, k.bytes())) {
        out.add(Reply.bulk(k.bytes()));
      }
    });
    for (Key k : inv.server().guards().names()) {
      if (Glob.matches(pattern, k.bytes())) {
        out.add(Reply.bulk(k.bytes()));
      }
    }
    return Reply.array(out);
  }

  /**
   * The type of the key {@code k}: its value's, {@link ValueType#GUARDED_SET} for a guarded key (which holds no value
   * in the keyspace), {@code null} if there is no such key.
   */
  private static ValueType typeOf(Invocation inv, Key k) {
    Object v = inv.keyspace().peek(k);
    return v != null ? ValueType.of(v) : guarded(inv, k) ? ValueType.GUARDED_SET : null;
  }

  private static boolean guarded(Invocation inv, Key k) {
    return inv.server().guards().isGuarded(k);
  }

  /**
   * SCAN cursor [MATCH p] [COUNT n] [TYPE t]. The cursor is the next unsigned key hash to visit, plus one, so a key
   * that exists for the whole iteration is returned exactly once however the keyspace changes meanwhile.
   */
  private static Reply scan(Invocation inv) {
    Long cursor = Args.parseLong(inv.arg(1));
    if (cursor == null || cursor < 0) {
      throw new CommandException("ERR invalid cursor");
    }
    byte[] match = null;
    long count = 10;
    String type = null;
    for (int i = 2; i < inv.argc(); i++) {
      if (i + 1 >= inv.argc()) {
        throw new CommandException(Errors.SYNTAX);
      }
      if (Args.is(inv.arg(i), "MATCH")) {
        match = inv.arg(++i);
      } else if (Args.is(inv.arg(i), "COUNT")) {
        Long c = Args.parseLong(inv.arg(++i));
        if (c == null) {
          throw new CommandException(Errors.NOT_INTEGER);
        }
        if (c < 1) {
          throw new CommandException(Errors.SYNTAX);
        }
        count = c;
      } else if (Args.is(inv.arg(i), "TYPE")) {
        type = inv.text(++i);
      } else {
        throw new CommandException(Errors.SYNTAX);
      }
    }
    long start = cursor == 0 ? 0 : cursor - 1;
    List<Key> candidates = new ArrayList<>();
    inv.keyspace().forEach((k, v) -> {
      if (Integer.toUnsignedLong(k.hashCode()) >= start) {
        candidates.add(k);
      }
    });
    for (Key k : inv.server().guards().names()) {
      if (Integer.toUnsignedLong(k.hashCode()) >= start) {
        candidates.add(k);
      }
    }
    candidates.sort((a, b) -> {
      int c = Integer.compareUnsigned(a.hashCode(), b.hashCode());
      return c != 0 ? c : a.compareTo(b);
    });
    List<Reply> found = new ArrayList<>();
    long next = 0;
    int visited = 0;
    for (int i = 0; i < candidates.size(); i++) {
      Key k = candidates.get(i);
      if (visited >= count && (i == 0 || candidates.get(i - 1).hashCode() != k.hashCode())) {
        next = Integer.toUnsignedLong(k.hashCode()) + 1;
        break;
      }
      visited++;
      ValueType t = typeOf(inv, k);
      if (t == null || (match != null && !Glob.matches(match, k.bytes()))
          || (type != null && !t.typeReply().equalsIgnoreCase(type))) {
        continue;
      }
      found.add(Reply.bulk(k.bytes()));
    }
    return Reply.arrayOf(Reply.bulk(Long.toString(next)), Reply.array(found));
  }

  private static Reply rename(Invocation inv) {
    Key from = inv.key(1);
    Key to = inv.key(2);
    try (Keyspace.Write w = inv.write(List.of(from, to))) {
      long expireAt = w.expireAt(from);
      Object value = w.get(from);
      if (value == null) {
        throw new CommandException(Errors.NO_SUCH_KEY);
      }
      if (!from.equals(to)) {
        w.remove(from);
        w.put(to, value);
        if (expireAt >= 0) {
          w.expire(to, expireAt);
        }
        w.get(to);
        inv.journalVerbatim(w);
      }
    }
    return Reply.OK;
  }

  private static Reply expire(Invocation inv, long unitMillis, boolean absolute) {
    Long amount = Args.parseLong(inv.arg(2));
    if (amount == null) {
      throw new CommandException(Errors.NOT_INTEGER);
    }
    boolean nx = false;
    boolean xx = false;
    boolean gt = false;
    boolean lt = false;
    for (int i = 3; i < inv.argc(); i++) {
      String opt = Args.lower(inv.arg(i));
      switch (opt) {
        case "nx" -> nx = true;
        case "xx" -> xx = true;
        case "gt" -> gt = true;
        case "lt" -> lt = true;
        default -> throw new CommandException("ERR Unsupported option " + inv.text(i));
      }
    }
    if (nx && (xx || gt || lt)) {
      throw new CommandException("ERR NX and XX, GT or LT options at the same time are not compatible");
    }
    if (gt && lt) {
      throw new CommandException("ERR GT and LT options at the same time are not compatible");
    }
    long now = inv.keyspace().now();
    long at;
    try {
      at = absolute ? Math.multiplyExact(amount, unitMillis)
          : Math.addExact(now, Math.multiplyExact(amount, unitMillis));
    } catch (ArithmeticException e) {
      throw new CommandException("ERR invalid expire time in '" + Args.lower(inv.arg(0)) + "' command");
    }
    Key key = inv.key(1);
    try (Keyspace.Write w = inv.write(key)) {
      long current = w.expireAt(key);
      if (current == -2) {
        return Reply.integer(0);
      }
      boolean hasTtl = current >= 0;
      if ((nx && hasTtl) || (xx && !hasTtl) || (gt && (!hasTtl || at <= current))
          || (lt && hasTtl && at >= current)) {
        return Reply.integer(0);
      }
      if (at <= now && !inv.replaying()) {
        w.remove(key);
        inv.journal(w, List.of(Args.bytes("DEL"), key.bytes()));
        return Reply.integer(1);
      }
      w.expire(key, Math.max(at, 0));
      inv.journal(w, List.of(Args.bytes("PEXPIREAT"), key.bytes(), Args.bytes(Long.toString(Math.max(at, 0)))));
      return Reply.integer(1);
    }
  }

  private static Reply ttl(Invocation inv, boolean millis) {
    long at = inv.keyspace().expireAt(inv.key(1));
    if (at < 0) {
      return Reply.integer(at);
    }
    long left = Math.max(0, at - inv.keyspace().now());
    return Reply.integer(millis ? left : (left + 500) / 1000);
  }

  /**
   * EXPIRETIME / PEXPIRETIME: the absolute expiry, which unlike a TTL does not move with the clock between two
   * reads; -1 without an expiry, -2 without the key. Seconds round as Redis rounds them, half up.
   */
  private static Reply expireTime(Invocation inv, boolean millis) {
    long at = inv.keyspace().expireAt(inv.key(1));
    return Reply.integer(at < 0 || millis ? at : (at + 500) / 1000);
  }

  private static Reply persist(Invocation inv) {
    Key key = inv.key(1);
    try (Keyspace.Write w = inv.write(key)) {
      if (w.expireAt(key) < 0) {
        return Reply.integer(0);
      }
      w.expire(key, -1);
      inv.journalVerbatim(w);
      return Reply.integer(1);
    }
  }

  private static Reply flush(Invocation inv) {
    if (inv.argc() > 2 || (inv.argc() == 2 && !Args.is(inv.arg(1), "ASYNC") && !Args.is(inv.arg(1), "SYNC"))) {
      throw new CommandException(Errors.SYNTAX);
    }
    try (Keyspace.Write w = inv.writeAll()) {
      w.clear();
      inv.journal(w, List.of(Args.bytes("FLUSHALL")));
    }
    return Reply.OK;
  }
}
