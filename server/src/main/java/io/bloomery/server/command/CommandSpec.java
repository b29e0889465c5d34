package io.bloomery.server.command;

import io.bloomery.server.resp.Reply;
import java.util.EnumSet;
import java.util.Set;

/**
 * One entry of the command table: name, Redis-style arity (n exact, -n at least n), flags, key positions (first,
 * last, step; last -1 means "to the end"; first 0 means no keys) and the handler.
 */
public record CommandSpec(String name, int arity, Set<Flag> flags, int firstKey, int lastKey, int keyStep,
    String group, String summary, Handler handler) {

  /** Redis's command flags that the dispatcher acts on (and COMMAND reports). */
  public enum Flag {
    WRITE("write"), READONLY("readonly"), DENYOOM("denyoom"), FAST("fast"), NOAUTH("no-auth"),
    /** Needs exclusive access to the whole keyspace (FLUSHALL); runs under {@code Keyspace.writeAll}. */
    GLOBAL("global"),
    /** Not allowed inside MULTI (it would change the connection, not the keyspace). */
    NOMULTI("no-multi"), LOADING("loading"), STALE("stale"),
    /**
     * Some of its keys lie outside the key range (MIGRATE's {@code KEYS}): the dispatcher checks only the ACL
     * command rules, and the handler checks the key patterns of the keys it finds.
     */
    MOVABLEKEYS("movablekeys");

    private final String redisName;

    Flag(String redisName) {
      this.redisName = redisName;
    }

    /** The flag's name in Redis's COMMAND reply. */
    public String redisName() {
      return redisName;
    }
  }

  /** Runs a command whose name, arity and permissions have been checked. */
  @FunctionalInterface
  public interface Handler {
    Reply run(Invocation inv);
  }

  public static Set<Flag> flags(Flag... flags) {
    return flags.length == 0 ? EnumSet.noneOf(Flag.class) : EnumSet.of(flags[0], flags);
  }

  public boolean has(Flag f) {
    return flags.contains(f);
  }

  /**
   * Whether the command may run under the connection's key-lock lease: a write of exactly one key (argv[1]) that
   * runs to completion on the connection's thread (not the guard commands, whose work continues elsewhere).
   */
  boolean leasable() {
    return flags.contains(Flag.WRITE) && firstKey == 1 && lastKey == 1 && !flags.contains(Flag.GLOBAL)
        && !flags.contains(Flag.NOMULTI) && !"guard".equals(group);
  }

  boolean arityOk(int argc) {
    return arity >= 0 ? argc == arity : argc >= -arity;
  }
}
