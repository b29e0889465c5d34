package io.bloomery.server.command.keys;

import static io.bloomery.server.command.CommandSpec.Flag.DENYOOM;
import static io.bloomery.server.command.CommandSpec.Flag.READONLY;
import static io.bloomery.server.command.CommandSpec.Flag.WRITE;
import static io.bloomery.server.command.CommandSpec.flags;

import io.bloomery.server.command.Args;
import io.bloomery.server.command.CommandException;
import io.bloomery.server.command.CommandTable;
import io.bloomery.server.command.Errors;
import io.bloomery.server.command.Invocation;
import io.bloomery.server.command.Memory;
import io.bloomery.server.keyspace.Key;
import io.bloomery.server.keyspace.Keyspace;
import io.bloomery.server.keyspace.ValueType;
import io.bloomery.server.rdb.DumpPayload;
import io.bloomery.server.rdb.RdbFormatException;
import io.bloomery.server.resp.Reply;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code DUMP} and {@code RESTORE}: a key's value as Redis's serialized payload ({@link DumpPayload}), so keys move
 * between Redis + RedisBloom and Bloomery in either direction. RESTORE checks its arguments in Redis's order (options,
 * an existing key, the TTL, the payload's footer, then its object) and answers Redis's errors; a restored key is
 * journaled as {@code RESTORE key <absolute ms or 0> payload REPLACE [ABSTTL]}, so replay recreates it exactly.
 * {@code IDLETIME} sets the key's last access that many seconds back ({@code OBJECT IDLETIME}); {@code FREQ} is
 * checked and then ignored, as Redis ignores it under a maxmemory policy that is not LFU (here always
 * {@code noeviction}). Neither is journaled: idle times start afresh on restart, as Redis's do after loading.
 */
public final class DumpCommands {
  static final String BAD_PAYLOAD = "ERR DUMP payload version or checksum are wrong";
  static final String BAD_DATA = "ERR Bad data format";
  static final String BUSYKEY = "BUSYKEY Target key name already exists.";
  static final String BAD_TTL = "ERR Invalid TTL value, must be >= 0";
  static final String BAD_IDLETIME = "ERR Invalid IDLETIME value, must be >= 0";
  static final String BAD_FREQ = "ERR Invalid FREQ value, must be >= 0 and <= 255";
  static final String GUARDED = "ERR a guarded set cannot be dumped: its members live in its store";

  private DumpCommands() {}

  /** Adds DUMP and RESTORE to {@code t}. */
  public static void register(CommandTable t) {
    t.add("dump", 2, flags(READONLY), 1, 1, 1, "keyspace",
        "Returns a serialized representation of the value stored at a key.", DumpCommands::dump);
    t.add("restore", -4, flags(WRITE, DENYOOM), 1, 1, 1, "keyspace",
        "Creates a key from the serialized representation of a value.", DumpCommands::restore);
  }

  private static Reply dump(Invocation inv) {
    Key key = inv.key(1);
    byte[] payload;
    try {
      payload = inv.keyspace().readLocked(key, value -> value == null ? null : DumpPayload.dump(value));
    } catch (IllegalArgumentException e) {
      throw new CommandException("ERR " + e.getMessage());
    }
    if (payload == null && inv.server().guards().isGuarded(key)) {
      throw new CommandException(GUARDED);
    }
    return payload == null ? Reply.NIL : Reply.bulk(payload);
  }

  private static Reply restore(Invocation inv) {
    boolean replace = false;
    boolean absoluteTtl = false;
    long idle = -1;
    boolean frequency = false;
    for (int j = 4; j < inv.argc(); j++) {
      boolean more = j + 1 < inv.argc();
      if (Args.is(inv.arg(j), "REPLACE")) {
        replace = true;
      } else if (Args.is(inv.arg(j), "ABSTTL")) {
        absoluteTtl = true;
      } else if (Args.is(inv.arg(j), "IDLETIME") && more && !frequency) {
        // Redis refuses IDLETIME after FREQ and FREQ after IDLETIME: each is a syntax error then
        Long seconds = Args.parseLong(inv.arg(++j));
        if (seconds == null) {
          throw new CommandException(Errors.NOT_INTEGER);
        }
        if (seconds < 0) {
          throw new CommandException(BAD_IDLETIME);
        }
        idle = seconds;
      } else if (Args.is(inv.arg(j), "FREQ") && more && idle < 0) {
        Long freq = Args.parseLong(inv.arg(++j));
        if (freq == null) {
          throw new CommandException(Errors.NOT_INTEGER);
        }
        if (freq < 0 || freq > 255) {
          throw new CommandException(BAD_FREQ);
        }
        frequency = true;
      } else {
        throw new CommandException(Errors.SYNTAX);
      }
    }
    Key key = inv.key(1);
    try (Keyspace.Write w = inv.write(key)) {
      if (!replace && w.exists(key)) {
        throw new CommandException(BUSYKEY);
      }
      Long ttl = Args.parseLong(inv.arg(2));
      if (ttl == null) {
        throw new CommandException(Errors.NOT_INTEGER);
      }
      if (ttl < 0) {
        throw new CommandException(BAD_TTL);
      }
      Object value;
      try {
        value = DumpPayload.restore(inv.arg(3));
      } catch (DumpPayload.VersionOrChecksumException e) {
        throw new CommandException(BAD_PAYLOAD);
      } catch (RdbFormatException e) {
        throw new CommandException(BAD_DATA);
      }
      long expireAt = ttl == 0 ? -1 : absoluteTtl ? ttl : inv.keyspace().now() + ttl;
      if (expireAt >= 0 && expireAt <= inv.keyspace().now() && !inv.replaying()) {
        if (replace && w.remove(key) != null) {
          inv.journal(w, List.of(Args.bytes("DEL"), key.bytes()));
        }
        return Reply.OK;
      }
      Memory.admit(inv, ValueType.of(value).memoryUsage(value));
      w.remove(key);
      w.put(key, value);
      if (expireAt >= 0) {
        w.expire(key, expireAt);
      }
      if (idle >= 0) {
        w.idle(key, idle);
      }
      List<byte[]> record = new ArrayList<>(List.of(Args.bytes("RESTORE"), key.bytes(),
          Args.bytes(Long.toString(Math.max(expireAt, 0))), inv.arg(3), Args.bytes("REPLACE")));
      if (expireAt >= 0) {
        record.add(Args.bytes("ABSTTL"));
      }
      inv.journal(w, record);
    }
    return Reply.OK;
  }
}
