package io.bloomery.server.command.admin;

import static io.bloomery.server.command.CommandSpec.Flag.FAST;
import static io.bloomery.server.command.CommandSpec.Flag.LOADING;
import static io.bloomery.server.command.CommandSpec.Flag.NOMULTI;
import static io.bloomery.server.command.CommandSpec.Flag.READONLY;
import static io.bloomery.server.command.CommandSpec.Flag.STALE;
import static io.bloomery.server.command.CommandSpec.flags;

import io.bloomery.guard.Credentials;
import io.bloomery.server.BloomeryServer;
import io.bloomery.server.command.Args;
import io.bloomery.server.command.CommandException;
import io.bloomery.server.command.CommandSpec;
import io.bloomery.server.command.CommandTable;
import io.bloomery.server.command.Dispatcher;
import io.bloomery.server.command.Errors;
import io.bloomery.server.command.Invocation;
import io.bloomery.server.command.connection.ConnectionCommands;
import io.bloomery.server.keyspace.Glob;
import io.bloomery.server.keyspace.Key;
import io.bloomery.server.keyspace.Keyspace;
import io.bloomery.server.keyspace.MemoryUsage;
import io.bloomery.server.keyspace.ValueType;
import io.bloomery.server.persistence.ConfigFileRewrite;
import io.bloomery.server.persistence.PersistenceControl;
import io.bloomery.server.persistence.load.FileLoads;
import io.bloomery.server.rdb.DumpPayload;
import io.bloomery.server.rdb.RdbFormatException;
import io.bloomery.server.resp.Reply;
import io.bloomery.server.state.GuardedKeys;
import io.bloomery.server.state.LogLevel;
import io.bloomery.server.state.ReplicaView;
import io.bloomery.server.state.ServerContext;
import io.bloomery.server.state.ServerStats;
import io.bloomery.server.state.Settings;
import io.bloomery.server.state.acl.AclCommands;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/** COMMAND, CONFIG, INFO, SAVE/BGSAVE/LASTSAVE/BGREWRITEAOF (through PersistenceControl), DEBUG, TIME, MEMORY. */
public final class ServerCommands {
  private ServerCommands() {}

  /** Adds this family's commands to {@code t}. */
  public static void register(CommandTable t) {
    t.add("command", -1, flags(LOADING, STALE), 0, 0, 0, "server", "Returns detailed information about all commands.",
        inv -> command(inv, t));
    t.add("config", -2, flags(LOADING, STALE), 0, 0, 0, "server", "A container for server configuration commands.",
        ServerCommands::config);
    t.add("info", -1, flags(LOADING, STALE), 0, 0, 0, "server",
        "Returns information and statistics about the server.", ServerCommands::info);
    t.add("save", 1, flags(NOMULTI), 0, 0, 0, "server", "Synchronously saves the database(s) to disk.", inv -> {
      try {
        inv.server().persistence().save();
        return Reply.OK;
      } catch (IOException e) {
        throw new CommandException("ERR " + e.getMessage());
      }
    });
    t.add("shutdown", -1, flags(NOMULTI, LOADING, STALE), 0, 0, 0, "server",
        "Synchronously saves the database(s) to disk and shuts down the server.", ServerCommands::shutdown);
    t.add("bgsave", -1, flags(NOMULTI), 0, 0, 0, "server", "Asynchronously saves the database(s) to disk.",
        inv -> inv.server().persistence().backgroundSave() ? new Reply.Simple("Background saving started")
            : Reply.error("ERR Background save already in progress or persistence is disabled"));
    t.add("bgrewriteaof", 1, flags(NOMULTI), 0, 0, 0, "server",
        "Asynchronously rewrites the append-only file to disk.",
        inv -> inv.server().persistence().backgroundRewrite()
            ? new Reply.Simple("Background append only file rewriting started")
            : Reply.error("ERR Background append only file rewriting already in progress or persistence is disabled"));
    t.add("lastsave", 1, flags(FAST, LOADING, STALE), 0, 0, 0, "server",
        "Returns the Unix timestamp of the last successful save to disk.",
        inv -> Reply.integer(inv.server().persistence().lastSaveUnixSeconds()));
    t.add("debug", -2, flags(NOMULTI), 0, 0, 0, "server", "A container for debugging commands.",
        ServerCommands::debug);
    t.add("time", 1, flags(FAST, LOADING, STALE), 0, 0, 0, "server", "Returns the server time.", inv -> {
      long micros = System.currentTimeMillis() * 1000;
      return Reply.arrayOf(Reply.bulk(Long.toString(micros / 1_000_000)), Reply.bulk(Long.toString(micros % 1_000_000)));
    });
    t.add("memory", -2, flags(READONLY), 0, 0, 0, "server", "A container for memory diagnostics commands.", inv -> {
      if (Args.is(inv.arg(1), "USAGE") && inv.argc() >= 3) {
        for (int j = 3; j < inv.argc(); j++) {
          if (!Args.is(inv.arg(j), "SAMPLES") || j + 1 == inv.argc()) {
            throw new CommandException(Errors.SYNTAX);
          }
          Long samples = Args.parseLong(inv.arg(++j));
          if (samples == null) {
            throw new CommandException(Errors.NOT_INTEGER);
          }
          if (samples < 0) {
            throw new CommandException(Errors.SYNTAX);
          }
        }
        Object v = inv.keyspace().peek(inv.key(2));
        if (v == null) {
          long guarded = inv.server().guards().usedBytes(inv.key(2));
          return guarded < 0 ? Reply.NIL : Reply.integer(guarded);
        }
        return Reply.integer(MemoryUsage.of(inv.key(2), v));
      }
      throw new CommandException(Errors.unknownSubcommand("memory", inv.arg(1)));
    });
    t.add("wait", 3, flags(), 0, 0, 0, "generic", "Blocks until writes are acknowledged by replicas (none here).",
        inv -> Reply.integer(0));
  }

  // ------------------------------------------------------------------------------------------------ COMMAND

  private static Reply command(Invocation inv, CommandTable t) {
    if (inv.argc() == 1) {
      List<Reply> all = new ArrayList<>();
      for (CommandSpec s : t.all()) {
        all.add(describe(s, inv.server().acl().commands()));
      }
      return Reply.array(all);
    }
    String sub = Args.lower(inv.arg(1));
    switch (sub) {
      case "count" -> {
        return Reply.integer(t.size());
      }
      case "list" -> {
        List<Reply> names = new ArrayList<>();
        for (CommandSpec s : t.all()) {
          names.add(Reply.bulk(s.name()));
        }
        return Reply.array(names);
      }
      case "info" -> {
        List<Reply> out = new ArrayList<>();
        if (inv.argc() == 2) {
          for (CommandSpec s : t.all()) {
            out.add(describe(s, inv.server().acl().commands()));
          }
        }
        for (int i = 2; i < inv.argc(); i++) {
          CommandSpec s = t.get(inv.text(i));
          out.add(s == null ? Reply.NIL_ARRAY : describe(s, inv.server().acl().commands()));
        }
        return Reply.array(out);
      }
      case "docs" -> {
        List<Reply> out = new ArrayList<>();
        List<CommandSpec> specs = new ArrayList<>();
        if (inv.argc() == 2) {
          specs.addAll(t.all());
        }
        for (int i = 2; i < inv.argc(); i++) {
          CommandSpec s = t.get(inv.text(i));
          if (s != null) {
            specs.add(s);
          }
        }
        for (CommandSpec s : specs) {
          out.add(Reply.bulk(s.name()));
          Reply redisBloom = CommandDocs.of(s.name());
          if (redisBloom != null) {
            out.add(redisBloom); // RedisBloom's own entry, arguments included
            continue;
          }
          Map<String, Object> doc = new LinkedHashMap<>();
          doc.put("summary", s.summary());
          doc.put("since", "1.0.0");
          doc.put("group", s.group());
          out.add(Reply.bulkMap(doc));
        }
        return new Reply.MapReply(out);
      }
      case "getkeys" -> {
        if (inv.argc() < 3) {
          throw new CommandException(Errors.arity("command|getkeys"));
        }
        CommandSpec s = t.get(inv.text(2));
        if (s == null) {
          throw new CommandException("ERR Invalid command specified");
        }
        List<Reply> keys = new ArrayList<>();
        for (var k : Dispatcher.keysOf(s, inv.argv().subList(2, inv.argc()))) {
          keys.add(Reply.bulk(k.bytes()));
        }
        if (keys.isEmpty()) {
          throw new CommandException("ERR The command has no key arguments");
        }
        return Reply.array(keys);
      }
      case "help" -> {
        return Reply.arrayOf(new Reply.Simple("COMMAND <subcommand> [<arg> [value] [opt] ...]. Subcommands are:"),
            new Reply.Simple("COUNT"), new Reply.Simple("DOCS [<command-name> ...]"),
            new Reply.Simple("INFO [<command-name> ...]"), new Reply.Simple("LIST"),
            new Reply.Simple("GETKEYS <full-command>"));
      }
      default -> throw new CommandException(Errors.unknownSubcommand("command", inv.arg(1)));
    }
  }

  /** COMMAND INFO's 10-element entry (Redis 7 layout), with the ACL categories {@code commands} gives it. */
  private static Reply describe(CommandSpec s, AclCommands commands) {
    List<Reply> flags = new ArrayList<>();
    for (CommandSpec.Flag f : s.flags()) {
      if (f != CommandSpec.Flag.GLOBAL) {
        flags.add(new Reply.Simple(f.redisName()));
      }
    }
    List<Reply> acl = new ArrayList<>();
    int id = commands.id(s.name());
    long categories = id < 0 ? 0 : commands.categories(id);
    for (int i = 0; i < AclCommands.CATEGORIES.size(); i++) {
      if ((categories & (1L << i)) != 0) {
        acl.add(new Reply.Simple("@" + AclCommands.CATEGORIES.get(i)));
      }
    }
    return Reply.arrayOf(Reply.bulk(s.name()), Reply.integer(s.arity()), new Reply.SetReply(flags),
        Reply.integer(s.firstKey()), Reply.integer(s.lastKey()), Reply.integer(s.keyStep()),
        new Reply.SetReply(acl), Reply.EMPTY_ARRAY, Reply.EMPTY_ARRAY, Reply.EMPTY_ARRAY);
  }

  // ------------------------------------------------------------------------------------------------ CONFIG

  private static Map<String, String> configValues(Settings s) {
    Map<String, String> m = new TreeMap<>();
    m.put("save", s.save());
    m.put("appendonly", s.appendonly() ? "yes" : "no");
    m.put("appendfsync", s.appendfsync());
    m.put("dir", s.dir());
    m.put("port", Long.toString(s.port()));
    m.put("bind", s.bind());
    m.put("requirepass", s.requirepass() == null ? "" : s.requirepass());
    m.put("maxmemory", Long.toString(s.maxmemory()));
    m.put("maxmemory-policy", "noeviction");
    m.put("maxclients", Long.toString(s.maxclients()));
    m.put("timeout", Long.toString(s.timeoutSeconds()));
    m.put("protected-mode", s.protectedMode() ? "yes" : "no");
    m.put("databases", "1");
    m.put("hz", Long.toString(s.hz()));
    m.put("slowlog-log-slower-than", Long.toString(s.slowlogLogSlowerThan()));
    m.put("slowlog-max-len", Long.toString(s.slowlogMaxLen()));
    m.put("latency-monitor-threshold", Long.toString(s.latencyMonitorThreshold()));
    m.put("loglevel", s.loglevel());
    m.putAll(s.moduleValues());
    m.putAll(s.defragValues());
    m.put("client-output-buffer-limit", "normal " + s.outputBufferLimit() + " " + s.outputBufferSoftLimit() + " "
        + s.outputBufferStallSeconds());
    m.put("client-query-buffer-limit", Long.toString(s.clientQueryBufferLimit()));
    m.put("maxmemory-clients", Long.toString(s.maxmemoryClients() == Long.MAX_VALUE ? 0 : s.maxmemoryClients()));
    return m;
  }

  private static Reply config(Invocation inv) {
    String sub = Args.lower(inv.arg(1));
    Settings s = inv.settings();
    switch (sub) {
      case "get" -> {
        if (inv.argc() < 3) {
          throw new CommandException(Errors.arity("config|get"));
        }
        Map<String, String> values = configValues(s);
        Map<String, String> out = new LinkedHashMap<>();
        for (int i = 2; i < inv.argc(); i++) {
          byte[] pattern = Args.bytes(Args.lower(inv.arg(i)));
          for (Map.Entry<String, String> e : values.entrySet()) {
            if (Glob.matches(pattern, Args.bytes(e.getKey()))) {
              out.put(e.getKey(), e.getValue());
            }
          }
        }
        List<Reply> flat = new ArrayList<>();
        out.forEach((k, v) -> {
          flat.add(Reply.bulk(k));
          flat.add(Reply.bulk(v));
        });
        return new Reply.MapReply(flat);
      }
      case "set" -> {
        if (inv.argc() < 4 || inv.argc() % 2 != 0) {
          throw new CommandException(Errors.arity("config|set"));
        }
        for (int i = 2; i < inv.argc(); i += 2) {
          set(inv, s, Args.lower(inv.arg(i)), inv.text(i + 1));
        }
        return Reply.OK;
      }
      case "resetstat" -> {
        inv.server().stats().commands.reset();
        return Reply.OK;
      }
      case "rewrite" -> {
        return rewrite(s);
      }
      default -> throw new CommandException(Errors.unknownSubcommand("config", inv.arg(1)));
    }
  }

  /**
   * CONFIG REWRITE: writes the options CONFIG SET can change into the file the server started with (Redis's
   * error when there is none), through {@link ConfigFileRewrite}; a value equal to a fresh server's is appended only
   * where the file already names the option.
   */
  private static Reply rewrite(Settings s) {
    Path file = s.configFile();
    if (file == null) {
      throw new CommandException("ERR The server is running without a config file");
    }
    try {
      ConfigFileRewrite.rewrite(file, rewritable(s), rewritable(new Settings()));
    } catch (IOException e) {
      throw new CommandException("ERR Rewriting config file: " + e.getMessage());
    }
    return Reply.OK;
  }

  /** The options CONFIG REWRITE writes, as config-file text, in the order new lines are appended. */
  private static Map<String, String> rewritable(Settings s) {
    Map<String, String> values = new LinkedHashMap<>();
    values.put("maxmemory", ConfigFileRewrite.bytes(s.maxmemory()));
    values.put("maxclients", Long.toString(s.maxclients()));
    values.put("timeout", Long.toString(s.timeoutSeconds()));
    values.put("requirepass", s.requirepass() == null ? "" : s.requirepass());
    values.put("save", s.save());
    values.put("loglevel", s.loglevel());
    values.putAll(s.moduleValues());
    return values;
  }

  private static void set(Invocation inv, Settings s, String name, String value) {
    try {
      switch (name) {
        case "maxmemory" -> s.maxmemory(Settings.parseBytes(value));
        case "maxclients" -> s.maxclients(Long.parseLong(value));
        case "timeout" -> s.timeoutSeconds(Long.parseLong(value));
        case "requirepass" -> {
          Credentials.remember(value); // masked in the log from now on
          s.requirepass(value);
          inv.server().acl().requirepass(value);
        }
        case "save" -> s.save(value);
        case "hz" -> s.hz(integer(value, 0, Integer.MAX_VALUE));
        case "slowlog-log-slower-than" -> s.slowlogLogSlowerThan(integer(value, -1, Long.MAX_VALUE));
        case "slowlog-max-len" -> {
          s.slowlogMaxLen(integer(value, 0, Long.MAX_VALUE));
          inv.server().stats().slowLog.maxLen(s.slowlogMaxLen());
        }
        case "latency-monitor-threshold" -> s.latencyMonitorThreshold(integer(value, 0, Long.MAX_VALUE));
        case "loglevel" -> {
          if (!LogLevel.NAMES.contains(value.toLowerCase(Locale.ROOT))) {
            throw new IllegalArgumentException("argument(s) must be one of the following: "
                + String.join(", ", LogLevel.NAMES));
          }
          String level = LogLevel.parse(value);
          LogLevel.apply(level);
          s.loglevel(level);
        }
        case "bf-error-rate", "bf-initial-size", "bf-expansion-factor", "cf-bucket-size", "cf-initial-size",
            "cf-max-iterations", "cf-expansion-factor", "cf-max-expansions" -> s.setModuleOption(name, value);
        default -> {
          if (!Settings.isDefragOption(name)) {
            throw new CommandException("ERR Unknown option or number of arguments for CONFIG SET - '" + name + "'");
          }
          s.setDefragOption(name, value);
        }
      }
    } catch (IllegalArgumentException e) {
      throw new CommandException("ERR CONFIG SET failed (possibly related to argument '" + name + "') - "
          + e.getMessage());
    }
  }

  /** A CONFIG SET integer in {@code [min, max]}, with Redis's texts for one that does not parse or is out of range. */
  private static long integer(String value, long min, long max) {
    long v;
    try {
      v = Long.parseLong(value);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("argument couldn't be parsed into an integer");
    }
    if (v < min || v > max) {
      throw new IllegalArgumentException("argument must be between " + min + " and " + max + " inclusive");
    }
    return v;
  }

  // ------------------------------------------------------------------------------------------------ INFO

  private static Reply info(Invocation inv) {
    List<String> wanted = new ArrayList<>();
    for (int i = 1; i < inv.argc(); i++) {
      wanted.add(Args.lower(inv.arg(i)));
    }
    boolean all = wanted.isEmpty() || wanted.contains("all") || wanted.contains("everything")
        || wanted.contains("default");
    StringBuilder sb = new StringBuilder();
    // as in Redis, commandstats is left out of plain INFO and INFO default, shown for all, everything or by name
    boolean everything = wanted.contains("all") || wanted.contains("everything");
    for (Map.Entry<String, Map<String, String>> section : sections(inv).entrySet()) {
      boolean named = wanted.contains(section.getKey());
      if (!all && !named || section.getKey().equals("commandstats") && !everything && !named) {
        continue;
      }
      if (sb.length() > 0) {
        sb.append("\r\n");
      }
      String title = section.getKey();
      sb.append("# ").append(Character.toUpperCase(title.charAt(0))).append(title.substring(1)).append("\r\n");
      section.getValue().forEach((k, v) -> sb.append(k).append(':').append(v).append("\r\n"));
    }
    return new Reply.Verbatim("txt", sb.toString());
  }

  private static Map<String, Map<String, String>> sections(Invocation inv) {
    ServerContext server = inv.server();
    ServerStats st = server.stats();
    Map<String, Map<String, String>> out = new LinkedHashMap<>();
    Map<String, String> srv = new LinkedHashMap<>();
    long uptime = (System.currentTimeMillis() - server.startMillis()) / 1000;
    srv.put("redis_version", ConnectionCommands.REDIS_VERSION);
    srv.put("bloomery_version", BloomeryServer.VERSION);
    srv.put("redis_mode", inv.settings().clusterEnabled() ? "cluster" : "standalone");
    srv.put("os", System.getProperty("os.name") + " " + System.getProperty("os.version") + " "
        + System.getProperty("os.arch"));
    srv.put("arch_bits", "64");
    srv.put("multiplexing_api", server.transport());
    srv.put("io_threads", Integer.toString(server.ioThreads()));
    srv.put("java_version", System.getProperty("java.version"));
    srv.put("process_id", Long.toString(ProcessHandle.current().pid()));
    srv.put("run_id", server.runId());
    srv.put("tcp_port", Integer.toString(server.tcpPort()));
    srv.put("uptime_in_seconds", Long.toString(uptime));
    srv.put("uptime_in_days", Long.toString(uptime / 86400));
    srv.put("executable", "bloomery");
    out.put("server", srv);
    Map<String, String> clients = new LinkedHashMap<>();
    clients.put("connected_clients", Integer.toString(server.clientCount()));
    clients.put("maxclients", Long.toString(inv.settings().maxclients()));
    clients.put("blocked_clients", "0");
    out.put("clients", clients);
    Map<String, String> memory = new LinkedHashMap<>();
    GuardedKeys guards = inv.server().guards();
    guards.recountAll();
    long used = inv.server().usedMemory();
    memory.put("used_memory", Long.toString(used));
    memory.put("used_memory_human", human(used));
    memory.put("used_memory_dataset", Long.toString(used));
    Runtime rt = Runtime.getRuntime();
    memory.put("jvm_heap_used", Long.toString(rt.totalMemory() - rt.freeMemory()));
    memory.put("jvm_heap_max", Long.toString(rt.maxMemory()));
    memory.put("maxmemory", Long.toString(inv.settings().maxmemory()));
    memory.put("maxmemory_human", human(inv.settings().maxmemory()));
    memory.put("maxmemory_policy", "noeviction");
    memory.put("mem_clients_query_buffers", Long.toString(inv.server().queryMemory().held()));
    out.put("memory", memory);
    Map<String, String> persistence = new LinkedHashMap<>(server.persistence().infoFields());
    out.put("persistence", persistence);
    Map<String, String> stats = new LinkedHashMap<>();
    stats.put("total_connections_received", Long.toString(st.connectionsReceived.sum()));
    stats.put("total_commands_processed", Long.toString(st.commandsProcessed.sum()));
    stats.put("rejected_connections", Long.toString(st.rejectedConnections.sum()));
    stats.put("expired_keys", Long.toString(st.expiredKeys.sum()));
    stats.put("keyspace_hits", Long.toString(st.keyspaceHits.sum()));
    stats.put("keyspace_misses", Long.toString(st.keyspaceMisses.sum()));
    stats.put("total_error_replies", Long.toString(st.errorReplies.sum()));
    stats.put("client_output_buffer_limit_disconnections", Long.toString(st.outputBufferDisconnections.sum()));
    stats.put("protocol_error_disconnections", Long.toString(st.protocolErrorDisconnections.sum()));
    stats.put("oom_rejections", Long.toString(st.oomRejections.sum()));
    stats.put("acl_access_denied_auth", Long.toString(st.authFailures.sum()));
    stats.put("auth_failures_delayed", Long.toString(st.authFailuresDelayed.sum()));
    out.put("stats", stats);
    out.put("commandstats", st.commands.infoFields());
    ReplicaView replica = server.replica();
    out.put("replication", replica != null ? replica.replicationInfo()
        : Map.of("role", "master", "connected_slaves", "0"));
    Map<String, String> cpu = new LinkedHashMap<>();
    cpu.put("used_cpu_user", String.format(Locale.ROOT, "%.6f",
        ManagementFactory.getRuntimeMXBean().getUptime() / 1000.0));
    out.put("cpu", cpu);
    out.put("modules", Map.of("module", IntrospectionCommands.infoModuleLine()));
    out.put("cluster", Map.of("cluster_enabled", inv.settings().clusterEnabled() ? "1" : "0"));
    Map<String, String> keyspace = new LinkedHashMap<>();
    Keyspace served = server.servedKeyspace();
    long keys = served.size() + (long) inv.server().guards().count(); // as DBSIZE counts them
    if (keys > 0) {
      keyspace.put("db0", "keys=" + keys + ",expires=" + served.expiringCount() + ",avg_ttl=0");
    }
    out.put("keyspace", keyspace);
    Map<String, String> bloomery = new LinkedHashMap<>();
    Map<String, Long> byKind = new TreeMap<>();
    served.forEach((k, v) -> byKind.merge(ValueType.of(v).label(), 1L, Long::sum));
    bloomery.put("filter_bytes", Long.toString(used));
    byKind.forEach((kind, n) -> bloomery.put("keys_" + kind, Long.toString(n)));
    bloomery.put("transport", server.transport());
    FileLoads loads = server.fileLoads();
    bloomery.put("file_loads_pending", Integer.toString(loads.pendingCount()));
    bloomery.put("file_loads_finishing", Integer.toString(loads.finishingCount()));
    bloomery.put("file_loads_staged_bytes", Long.toString(loads.stagedBytes()));
    bloomery.put("file_loads_reserved_bytes", Long.toString(loads.reservedBytes()));
    out.put("bloomery", bloomery);
    out.put("guard", guards.infoFields());
    return out;
  }

  private static String human(long bytes) {
    if (bytes < 1024) {
      return bytes + "B";
    }
    String[] units = {"K", "M", "G", "T"};
    double v = bytes;
    int u = -1;
    while (v >= 1024 && u < units.length - 1) {
      v /= 1024;
      u++;
    }
    return String.format(Locale.ROOT, "%.2f%s", v, units[u]);
  }

  // ------------------------------------------------------------------------------------------------ DEBUG

  /**
   * {@code SHUTDOWN [NOSAVE|SAVE] [NOW] [FORCE]}, as Redis: with persistence on (or SAVE) a snapshot is written
   * first and a failure answers Redis's error and keeps the server running (unless FORCE); then the server closes
   * (journal flushed, final snapshot unless NOSAVE) and {@code bloomery serve} exits 0. No reply on success: the
   * connection closes with the server. NOW is accepted (there are no replicas to wait for); ABORT has no shutdown
   * in progress to abort. Refused before AUTH like every command without the no-auth flag.
   */
  private static Reply shutdown(Invocation inv) {
    boolean save = false;
    boolean nosave = false;
    boolean force = false;
    for (int i = 1; i < inv.argc(); i++) {
      byte[] a = inv.arg(i);
      if (Args.is(a, "NOSAVE")) {
        nosave = true;
      } else if (Args.is(a, "SAVE")) {
        save = true;
      } else if (Args.is(a, "FORCE")) {
        force = true;
      } else if (Args.is(a, "ABORT") && inv.argc() == 2) {
        throw new CommandException("ERR No shutdown in progress.");
      } else if (!Args.is(a, "NOW")) {
        throw new CommandException(Errors.SYNTAX);
      }
    }
    if (save && nosave) {
      throw new CommandException(Errors.SYNTAX);
    }
    var persistence = inv.server().persistence();
    boolean persistent = persistence != PersistenceControl.DISABLED;
    if (save && !persistent && !force) {
      org.slf4j.LoggerFactory.getLogger(ServerCommands.class)
          .warn("SHUTDOWN SAVE refused: persistence is off (start with --appendonly yes or --save to snapshot)");
      throw new CommandException(SHUTDOWN_FAILED);
    }
    boolean snapshot = persistent && !nosave;
    if (snapshot && !force) {
      try {
        persistence.save();
      } catch (IOException e) {
        org.slf4j.LoggerFactory.getLogger(ServerCommands.class).error("SHUTDOWN: snapshot failed: {}", e.getMessage());
        throw new CommandException(SHUTDOWN_FAILED);
      }
    }
    org.slf4j.LoggerFactory.getLogger(ServerCommands.class)
        .info("SHUTDOWN from client id={} addr={}", inv.client().id(), inv.client().address());
    inv.server().shutdown(snapshot);
    return inv.defer(new java.util.concurrent.CompletableFuture<>()); // answered by the connection closing
  }

  static final String SHUTDOWN_FAILED = "ERR Errors trying to SHUTDOWN. Check logs.";

  private static Reply debug(Invocation inv) {
    String sub = Args.lower(inv.arg(1));
    if (sub.equals("sleep") && inv.argc() == 3) {
      Double seconds = Args.parseDouble(inv.arg(2));
      if (seconds == null || seconds < 0) {
        throw new CommandException(Errors.NOT_FLOAT);
      }
      if (seconds > 0) {
        try {
          Thread.sleep((long) Math.min(seconds * 1000, 10_000));
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      return Reply.OK;
    }
    if (sub.equals("reload")) {
      return reload(inv);
    }
    throw new CommandException(Errors.unknownSubcommand("debug", inv.arg(1)));
  }

  /**
   * DEBUG RELOAD [MERGE] [NOFLUSH] [NOSAVE]: every key's value is written as its DUMP payload and read back in its
   * place, expiry kept, as Redis saves the dataset and loads it again; the options change nothing here (the dataset
   * is reloaded from the payloads just written, whatever the disk holds). Nothing changes unless every payload reads
   * back.
   */
  private static Reply reload(Invocation inv) {
    for (int j = 2; j < inv.argc(); j++) {
      if (!Args.is(inv.arg(j), "MERGE") && !Args.is(inv.arg(j), "NOFLUSH") && !Args.is(inv.arg(j), "NOSAVE")) {
        throw new CommandException(Errors.SYNTAX);
      }
    }
    try (Keyspace.Write w = inv.writeAll()) {
      Map<Key, Object> reloaded = new LinkedHashMap<>();
      for (Key k : inv.keyspace().keys()) {
        Object value = w.peek(k);
        if (value != null) {
          try {
            reloaded.put(k, DumpPayload.restore(DumpPayload.dump(value)));
          } catch (IllegalArgumentException e) {
            throw new CommandException("ERR " + e.getMessage());
          } catch (RdbFormatException e) {
            throw new IllegalStateException("key " + k + " does not read back from its own DUMP payload", e);
          }
        }
      }
      reloaded.forEach((k, value) -> {
        long expireAt = w.expireAt(k);
        w.put(k, value);
        if (expireAt >= 0) {
          w.expire(k, expireAt);
        }
      });
    }
    return Reply.OK;
  }
}
