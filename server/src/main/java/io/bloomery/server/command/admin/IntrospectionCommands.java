package io.bloomery.server.command.admin;

import static io.bloomery.server.command.CommandSpec.Flag.FAST;
import static io.bloomery.server.command.CommandSpec.Flag.LOADING;
import static io.bloomery.server.command.CommandSpec.Flag.NOMULTI;
import static io.bloomery.server.command.CommandSpec.Flag.READONLY;
import static io.bloomery.server.command.CommandSpec.Flag.STALE;
import static io.bloomery.server.command.CommandSpec.flags;

import io.bloomery.server.command.Args;
import io.bloomery.server.command.CommandException;
import io.bloomery.server.command.CommandTable;
import io.bloomery.server.command.Invocation;
import io.bloomery.server.command.connection.ConnectionCommands;
import io.bloomery.server.resp.Reply;
import io.bloomery.server.state.LatencyMonitor;
import io.bloomery.server.state.SlowLog;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * What clients and operators ask the server about itself, with Redis 8's replies: MODULE LIST (RedisBloom's
 * {@code bf}), ROLE, SLOWLOG, LATENCY LATEST/HISTORY/RESET and OBJECT.
 */
public final class IntrospectionCommands {
  private IntrospectionCommands() {}

  private static final Map<String, Integer> MODULE = Map.of("list", 2, "load", -3, "loadex", -3, "unload", 3,
      "help", 2);
  private static final Map<String, Integer> SLOWLOG = Map.of("get", -2, "len", 2, "reset", 2, "help", 2);
  private static final Map<String, Integer> LATENCY = Map.of("latest", 2, "history", 3, "reset", -2, "help", 2);
  private static final Map<String, Integer> OBJECT = Map.of("encoding", 3, "freq", 3, "idletime", 3, "refcount", 3,
      "help", 2);

  /** Adds MODULE, ROLE, SLOWLOG, LATENCY and OBJECT to {@code t}. */
  public static void register(CommandTable t) {
    t.add("module", -2, flags(NOMULTI), 0, 0, 0, "server", "A container for module commands.",
        IntrospectionCommands::module);
    t.add("role", 1, flags(FAST, LOADING, STALE), 0, 0, 0, "server", "Returns the replication role.",
        inv -> Reply.arrayOf(Reply.bulk("master"), Reply.integer(0), Reply.EMPTY_ARRAY));
    t.add("slowlog", -2, flags(LOADING, STALE), 0, 0, 0, "server", "A container for slow log commands.",
        IntrospectionCommands::slowlog);
    t.add("latency", -2, flags(LOADING, STALE), 0, 0, 0, "server",
        "A container for latency diagnostics commands.", IntrospectionCommands::latency);
    t.add("object", -2, flags(READONLY), 2, 2, 1, "generic", "A container for object introspection commands.",
        IntrospectionCommands::object);
  }

  private static Reply module(Invocation inv) {
    switch (AccessControlCommands.subcommand(inv, "module", MODULE)) {
      case "list" -> {
        return Reply.arrayOf(new Reply.MapReply(List.of(Reply.bulk("name"), Reply.bulk("bf"), Reply.bulk("ver"),
            Reply.integer(ConnectionCommands.BF_MODULE_VERSION), Reply.bulk("path"), Reply.bulk("bloomery"),
            Reply.bulk("args"), Reply.EMPTY_ARRAY)));
      }
      case "help" -> {
        return AccessControlCommands.help("MODULE",
            "LIST",
            "    Return a list of loaded modules.",
            "LOAD <path> [<arg> ...]",
            "    Load a module library from <path>, passing to it any optional arguments.",
            "LOADEX <path> [[CONFIG NAME VALUE] [CONFIG NAME VALUE]] [ARGS ...]",
            "    Load a module library from <path>, while passing it module configurations and optional arguments.",
            "UNLOAD <name>",
            "    Unload a module.");
      }
      case "unload" -> throw new CommandException(
          "ERR Error unloading module: " + (inv.text(2).equals("bf") ? "the module is built into Bloomery"
              : "no such module with that name"));
      default -> throw new CommandException(
          "ERR Error loading the extension. Please check the server logs.");
    }
  }

  /** {@code module:} line of INFO modules for the built-in RedisBloom module. */
  static String infoModuleLine() {
    return "name=bf,ver=" + ConnectionCommands.BF_MODULE_VERSION
        + ",api=1,filters=0,usedby=[],using=[],options=[handle-io-errors]";
  }

  private static Reply slowlog(Invocation inv) {
    SlowLog log = inv.server().stats().slowLog;
    switch (AccessControlCommands.subcommand(inv, "slowlog", SLOWLOG)) {
      case "get" -> {
        long count = 10;
        if (inv.argc() > 3) {
          throw new CommandException("ERR unknown subcommand or wrong number of arguments for '" + inv.text(1)
              + "'. Try SLOWLOG HELP.");
        }
        if (inv.argc() == 3) {
          Long n = Args.parseLong(inv.arg(2));
          if (n == null || n < -1) {
            throw new CommandException("ERR count should be greater than or equal to -1");
          }
          count = n;
        }
        List<Reply> entries = new ArrayList<>();
        for (SlowLog.Entry e : log.newest(count)) {
          List<Reply> args = new ArrayList<>();
          for (byte[] a : e.args()) {
            args.add(Reply.bulk(a));
          }
          entries.add(Reply.arrayOf(Reply.integer(e.id()), Reply.integer(e.unixSeconds()), Reply.integer(e.micros()),
              Reply.array(args), Reply.bulk(e.address()), Reply.bulk(e.clientName())));
        }
        return Reply.array(entries);
      }
      case "len" -> {
        return Reply.integer(log.size());
      }
      case "reset" -> {
        log.reset();
        return Reply.OK;
      }
      default -> {
        return AccessControlCommands.help("SLOWLOG",
            "GET [<count>]",
            "    Return top <count> entries from the slowlog (default: 10, -1 mean all).",
            "    Entries are made of:",
            "    id, timestamp, time in microseconds, arguments array, client IP and port,",
            "    client name",
            "LEN",
            "    Return the length of the slowlog.",
            "RESET",
            "    Reset the slowlog.");
      }
    }
  }

  private static Reply latency(Invocation inv) {
    LatencyMonitor monitor = inv.server().stats().latency;
    switch (AccessControlCommands.subcommand(inv, "latency", LATENCY)) {
      case "latest" -> {
        List<Reply> out = new ArrayList<>();
        monitor.events().forEach((name, e) -> out.add(Reply.arrayOf(Reply.bulk(name),
            Reply.integer(e.latest().unixSeconds()), Reply.integer(e.latest().millis()), Reply.integer(e.max()))));
        return Reply.array(out);
      }
      case "history" -> {
        LatencyMonitor.Event e = monitor.event(inv.text(2));
        List<Reply> out = new ArrayList<>();
        if (e != null) {
          for (LatencyMonitor.Sample s : e.history()) {
            out.add(Reply.arrayOf(Reply.integer(s.unixSeconds()), Reply.integer(s.millis())));
          }
        }
        return Reply.array(out);
      }
      case "reset" -> {
        List<String> names = new ArrayList<>();
        for (int i = 2; i < inv.argc(); i++) {
          names.add(inv.text(i));
        }
        return Reply.integer(monitor.reset(names));
      }
      default -> {
        return AccessControlCommands.help("LATENCY",
            "HISTORY <event>",
            "    Return time-latency samples for the <event> class.",
            "LATEST",
            "    Return the latest latency samples for all events.",
            "RESET [<event> ...]",
            "    Reset latency data of one or more <event> classes.",
            "    (default: reset all data for all event classes)");
      }
    }
  }

  private static Reply object(Invocation inv) {
    String sub = AccessControlCommands.subcommand(inv, "object", OBJECT);
    if (sub.equals("help")) {
      return AccessControlCommands.help("OBJECT",
          "ENCODING <key>",
          "    Return the kind of internal representation used in order to store the value",
          "    associated with a <key>.",
          "FREQ <key>",
          "    Return the access frequency index of the <key>. The returned integer is",
          "    proportional to the logarithm of the recent access frequency of the key.",
          "IDLETIME <key>",
          "    Return the idle time of the <key>, that is the approximated number of",
          "    seconds elapsed since the last access to the key.",
          "REFCOUNT <key>",
          "    Return the number of references of the value associated with the specified",
          "    <key>.");
    }
    boolean exists = inv.keyspace().peek(inv.key(2)) != null || inv.server().guards().usedBytes(inv.key(2)) >= 0;
    if (!exists) {
      return Reply.NIL;
    }
    return switch (sub) {
      case "encoding" -> Reply.bulk("raw"); // what Redis answers for every module type's value
      case "refcount" -> Reply.integer(1);
      // the maxmemory policy is always noeviction, never LFU: access times are tracked (a guarded key: not here)
      case "idletime" -> Reply.integer(Math.max(0, inv.keyspace().idleSeconds(inv.key(2))));
      default -> throw new CommandException("ERR An LFU maxmemory policy is not selected, access frequency not "
          + "tracked. Please note that when switching between policies at runtime LRU and LFU data will take some "
          + "time to adjust.");
    };
  }
}
