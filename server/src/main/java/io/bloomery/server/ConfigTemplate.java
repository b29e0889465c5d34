package io.bloomery.server;

import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The server's config file as an operator first sees it (the Debian package's {@code /etc/bloomery/bloomery.conf}),
 * written from {@link ServerConfig#OPTIONS} and {@link ServerConfig#defaults()}, so that it lists every option the
 * server accepts with its default and what it does, as redis.conf does. Options given to {@link #render(Map)}
 * replace their default; options that are off by default ({@code requirepass}, {@code store}, ...) stand as a
 * commented example line. {@link ServerConfig#parse} reads the result back to the same settings.
 *
 * <p>{@code java -cp bloomery.jar io.bloomery.server.ConfigTemplate [name=value]...} prints it.
 */
public final class ConfigTemplate {
  private ConfigTemplate() {}

  /** What each option does, in {@link ServerConfig#OPTIONS}' order; every option has one. */
  static final Map<String, List<String>> DESCRIPTIONS = descriptions();

  /** An example value for options whose default is empty (off); written as a commented line. */
  private static final Map<String, String> EXAMPLES = Map.of(
      "requirepass", "a-long-random-password",
      "aclfile", "/etc/bloomery/users.acl",
      "save", "3600 1",
      "store", "orders=jdbc:postgresql://127.0.0.1:5432/shop",
      "store-table", "customers=public.customers.email",
      "guard-statement-timeout", "10000");

  /** What {@code option} does, in lines of at most 110 characters; empty for a name that is not an option. */
  public static List<String> description(String option) {
    return DESCRIPTIONS.getOrDefault(option, List.of());
  }

  public static void main(String[] args) {
    Map<String, String> values = new LinkedHashMap<>();
    for (String arg : args) {
      int eq = arg.indexOf('=');
      if (eq <= 0) {
        System.err.println("ConfigTemplate: arguments are name=value, not '" + arg + "'");
        System.exit(2);
      }
      values.put(arg.substring(0, eq), arg.substring(eq + 1));
    }
    PrintWriter out = new PrintWriter(System.out, false, StandardCharsets.UTF_8);
    out.print(render(values));
    out.flush();
  }

  /**
   * The config file with {@code values} in place of their defaults.
   *
   * @throws IllegalArgumentException for a name that is not an option
   */
  public static String render(Map<String, String> values) {
    for (String name : values.keySet()) {
      if (!ServerConfig.OPTIONS.contains(name)) {
        throw new IllegalArgumentException("unknown option '" + name + "' (known: "
            + String.join(", ", ServerConfig.OPTIONS) + ")");
      }
    }
    Map<String, String> defaults = ServerConfig.defaults();
    defaults.put("io-transport", "auto"); // the default without the test-only JVM property
    StringBuilder out = new StringBuilder();
    out.append("""
        # Bloomery server configuration: one "name value" per line, redis.conf style; '#' starts a comment.
        # Every option the server accepts is listed with its default. The same options can be given as
        # --name value after the file on the command line, or as BLOOMERY_NAME environment variables
        # (upper case, '-' as '_'); the command line wins over the environment, which wins over this file.
        # Sizes take Redis's units: 1k = 1000, 1kb = 1024, mb, gb. Changes take effect on a restart; loglevel also
        # on SIGHUP (systemctl reload bloomery).
        """);
    for (String name : ServerConfig.OPTIONS) {
      out.append('\n');
      for (String line : DESCRIPTIONS.get(name)) {
        out.append("# ").append(line).append('\n');
      }
      String value = values.getOrDefault(name, defaults.get(name));
      if (value.isEmpty()) {
        out.append("# ").append(name).append(' ').append(EXAMPLES.getOrDefault(name, "\"\"")).append('\n');
      } else {
        out.append(name).append(' ').append(quoted(value)).append('\n');
      }
    }
    return out.toString();
  }

  private static String quoted(String value) {
    return value.matches("\\S+") ? value : "\"" + value + "\"";
  }

  private static Map<String, List<String>> descriptions() {
    Map<String, List<String>> d = new LinkedHashMap<>();
    d.put("port", List.of("The RESP port clients connect to (redis-cli -p PORT); 0 picks a free one."));
    d.put("bind", List.of("Addresses to listen on, separated by spaces. 0.0.0.0 or :: listens everywhere; then",
        "set requirepass, or protected-mode refuses clients from other hosts."));
    d.put("dir", List.of("Directory of the append-only log and the snapshots. The server locks it: one server per",
        "directory."));
    d.put("appendonly", List.of("yes: every write goes to the append-only log before it is acknowledged, so a restart",
        "loses nothing that appendfsync made durable. no: nothing is persisted."));
    d.put("appendfsync", List.of("When the log reaches the disk: always (before each reply), everysec (at most one",
        "second of writes lost on a power failure), no (when the kernel decides)."));
    d.put("requirepass", List.of("The password clients must give with AUTH; also guards the dashboard and /metrics",
        "(see http-auth). None by default. It is the ACL default user's password."));
    d.put("aclfile", List.of("A file of ACL users in Redis's format (one 'user NAME rule ...' per line, as ACL LIST",
        "prints them), loaded at start and by ACL LOAD, written by ACL SAVE. None by default."));
    d.put("maxmemory", List.of("Memory the filters may take (a size; 0: no limit). Writes that would pass it are",
        "refused with OOM. The packaged launcher sizes the JVM heap from it."));
    d.put("maxclients", List.of("Client connections served at once; one more is refused with an error."));
    d.put("timeout", List.of("Seconds an idle client may stay connected; 0 keeps idle clients forever."));
    d.put("protected-mode", List.of("yes: without requirepass, only clients on the loopback interface are served."));
    d.put("http-port", List.of("The HTTP port of the dashboard (/), /metrics (Prometheus) and /health; 0 picks a free",
        "one."));
    d.put("client-output-buffer-limit", List.of("Unsent replies a client may have: '<hard>' or Redis's 'normal <hard>",
        "<soft> <seconds>'. Above soft the server stops reading from it; above hard it is closed."));
    d.put("proto-max-bulk-len", List.of("The longest bulk string a command may carry (1mb to 512mb)."));
    d.put("save", List.of("Redis's snapshot schedule ('SECONDS CHANGES' pairs). Any value keeps state in dir even",
        "with appendonly no (a snapshot on SAVE and at shutdown); the schedule itself is not followed."));
    d.put("loglevel", List.of("debug, verbose, notice, warning or nothing. The log goes to standard output (the",
        "journal under systemd)."));
    d.put("store", List.of("A guarded set's store, NAME=URL: a JDBC PostgreSQL URL or sqlite:FILE. Repeat the line",
        "for more stores. Credentials come from BLOOMERY_STORE_<NAME>_USER and _PASSWORD."));
    d.put("store-table", List.of("Someone else's table as a read-only guarded set, NAME=TABLE.COLUMN. Repeatable."));
    d.put("guard-timeout", List.of("Milliseconds a GUARD command waits for its store before answering STOREDOWN."));
    d.put("guard-statement-timeout", List.of("PostgreSQL statement_timeout on the stores' connections, in",
        "milliseconds; empty: twice guard-timeout."));
    d.put("guard-build-timeout", List.of("Milliseconds GUARD.RESERVE, REBUILD and DROP wait before answering",
        "STOREDOWN while the work goes on."));
    d.put("http-auth", List.of("How the password reaches the dashboard and /metrics when requirepass is set: basic,",
        "token (Authorization: Bearer) or both. /health never asks for it."));
    d.put("load-idle-timeout", List.of("Seconds an unfinished BF.LOADCHUNK load may wait for its next chunk before it",
        "is abandoned."));
    d.put("io-transport", List.of("Socket layer: auto (io_uring, else epoll, else nio), io_uring, epoll or nio."));
    d.put("io-threads", List.of("Event loops serving clients; 0: one per core."));
    d.put("http-maxclients", List.of("HTTP connections served at once; one more is answered 503."));
    d.put("http-timeout", List.of("Seconds a kept-alive HTTP connection may stay idle."));
    d.put("http-request-timeout", List.of("Seconds an HTTP request has to arrive whole."));
    d.put("client-query-buffer-limit", List.of("The memory one command still being read may take (1mb to 4gb)."));
    d.put("maxmemory-clients", List.of("The memory all connections' unread commands may take together: a size, N% of",
        "the heap, or 0 for no limit."));
    d.put("auth-fail-delay", List.of("Milliseconds before answering a wrong password once a connection has given",
        "three, doubling each time up to 16 times; 0 turns it off."));
    d.put("bf-error-rate", List.of("RedisBloom's default false-positive rate of a Bloom filter BF.ADD or BF.INSERT",
        "creates, in (0, 1)."));
    d.put("bf-initial-size", List.of("RedisBloom's default capacity of a new Bloom filter (1 to 1073741824)."));
    d.put("bf-expansion-factor", List.of("How much larger each added layer of a new Bloom filter is (0 to 32768;",
        "0: the filter does not scale)."));
    d.put("cf-bucket-size", List.of("Items per bucket of a cuckoo filter CF.ADD or CF.INSERT creates (1 to 255)."));
    d.put("cf-initial-size", List.of("Default capacity of a new cuckoo filter (2 * cf-bucket-size to 1073741824)."));
    d.put("cf-max-iterations", List.of("Cuckoo kicks before a new cuckoo filter adds a layer (1 to 65535)."));
    d.put("cf-expansion-factor", List.of("How much larger each added layer of a new cuckoo filter is (0 to 32768)."));
    d.put("cf-max-expansions", List.of("Layers a new cuckoo filter may add (1 to 65536)."));
    d.put("cluster-enabled", List.of("yes: run as a node of a Bloomery cluster (Raft replicated shards, Redis Cluster's",
        "protocol; see docs/CLUSTER.md). dir then holds the node's identity and Raft logs."));
    d.put("cluster-port", List.of("The cluster bus port the node's Raft server listens on; empty: port + 10000."));
    d.put("cluster-announce-ip", List.of("The host clients and other nodes are told to use; empty: the first bind",
        "address (required when that is 0.0.0.0 or ::)."));
    d.put("cluster-announce-port", List.of("The port clients are told to use in MOVED and CLUSTER SLOTS; empty: port."));
    d.put("cluster-node-timeout", List.of("Milliseconds a shard's followers hear nothing from its leader before one",
        "stands for election (each waits between this and twice this): the floor of a failover's time. Keep it",
        "above the pauses a node can take (GC, a busy machine), or leaders step down needlessly."));
    return d;
  }
}
