package io.bloomery.server;

import io.bloomery.server.command.guard.StoreDeclaration;
import io.bloomery.server.http.HttpLimits;
import io.bloomery.server.state.LogLevel;
import io.bloomery.server.state.Settings;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The server's settings, with redis-server's option names. Sources, later ones winning: built-in defaults, a
 * config file named by the first argument ({@code name value} lines, {@code #} comments, as redis.conf), the
 * environment ({@code BLOOMERY_PORT}, {@code BLOOMERY_REQUIREPASS}, ... : the option name upper-cased with
 * {@code -} as {@code _}), then {@code --name value} flags.
 *
 * <p>Defaults: bind 127.0.0.1, port 6380, dir ./data, appendonly yes, appendfsync everysec, http-port 9180,
 * protected-mode yes, maxclients 10000, timeout 0, no password, no maxmemory, http-auth both, http-maxclients 128,
 * http-timeout 60, http-request-timeout 10, client-query-buffer-limit 1gb, maxmemory-clients 25% (of the heap),
 * auth-fail-delay 100, loglevel notice. Port 0 means an ephemeral port.
 */
public final class ServerConfig {
  /** Every option name this server accepts. */
  static final List<String> OPTIONS = List.of("port", "bind", "dir", "appendonly", "appendfsync", "requirepass",
      "aclfile", "maxmemory", "maxclients", "timeout", "protected-mode", "http-port", "client-output-buffer-limit",
      "proto-max-bulk-len", "save", "loglevel", "store", "store-table", "guard-timeout",
      "guard-statement-timeout", "guard-build-timeout", "http-auth", "load-idle-timeout", "io-transport",
      "io-threads", "http-maxclients", "http-timeout", "http-request-timeout", "client-query-buffer-limit",
      "maxmemory-clients", "auth-fail-delay", "bf-error-rate", "bf-initial-size", "bf-expansion-factor",
      "cf-bucket-size", "cf-initial-size", "cf-max-iterations", "cf-expansion-factor", "cf-max-expansions", "cluster-enabled", "cluster-port",
      "cluster-announce-ip", "cluster-announce-port", "cluster-node-timeout");

  /** The JVM system property that, when set, replaces {@code auto} as the default of {@code io-transport}. */
  public static final String IO_TRANSPORT_PROPERTY = "bloomery.io-transport";

  /** Options that may be given several times (each adds a line: one declared store each). */
  private static final List<String> REPEATABLE = List.of("store", "store-table");

  private final Map<String, String> values;
  private final Path file;

  private ServerConfig(Map<String, String> values, Path file) {
    this.values = values;
    this.file = file;
  }

  /** Parses flags (and an optional leading config file) with the process environment. */
  public static ServerConfig parse(String... args) {
    return parse(System.getenv(), args);
  }

  /**
   * Parses with an explicit environment.
   *
   * @throws IllegalArgumentException with a one-line message for an unknown option, a missing or bad value, or an
   *     unreadable config file
   */
  public static ServerConfig parse(Map<String, String> env, String... args) {
    Map<String, String> v = defaults();
    Args parsed = Args.of(args);
    if (parsed.request() != null) {
      throw new IllegalArgumentException("'" + parsed.requestedBy() + "' is not a server option"
          + " (bloomery serve " + parsed.requestedBy() + " answers it)");
    }
    if (parsed.file() != null) {
      readFile(parsed.file(), v);
    }
    for (String name : OPTIONS) {
      String envName = "BLOOMERY_" + name.toUpperCase(Locale.ROOT).replace('-', '_');
      String value = env.get(envName);
      if (value != null) {
        v.put(name, value);
      }
    }
    for (String[] option : parsed.options()) {
      set(v, option[0], option[1], "--" + option[0]);
    }
    ServerConfig config = new ServerConfig(v, parsed.file());
    config.validate();
    return config;
  }

  /** What command-line arguments ask for instead of a server. */
  public enum Request {
    /** The usage: {@code --help} or {@code -h}. */
    HELP,
    /** The version: {@code --version} or {@code -V}. */
    VERSION
  }

  private static final Map<String, Request> REQUESTS =
      Map.of("--help", Request.HELP, "-h", Request.HELP, "--version", Request.VERSION, "-V", Request.VERSION);

  /**
   * What {@code args} ask for instead of a server: the usage or the version, when {@code --help}, {@code -h},
   * {@code --version} or {@code -V} stands where a config file or an option may (not as an option's value); null
   * when they ask for a server.
   *
   * @throws IllegalArgumentException as {@link #parse(Map, String...)} for arguments it cannot split, before such a
   *     flag
   */
  public static Request request(String... args) {
    return Args.of(args).request();
  }

  /** Every option with its default value (empty: none), in {@link #OPTIONS}' order; a new map each call. */
  public static Map<String, String> defaults() {
    Map<String, String> v = new LinkedHashMap<>();
    v.put("port", "6380");
    v.put("bind", "127.0.0.1");
    v.put("dir", "./data");
    v.put("appendonly", "yes");
    v.put("appendfsync", "everysec");
    v.put("requirepass", "");
    v.put("aclfile", "");
    v.put("maxmemory", "0");
    v.put("maxclients", "10000");
    v.put("timeout", "0");
    v.put("protected-mode", "yes");
    v.put("http-port", "9180");
    v.put("client-output-buffer-limit", "64mb");
    v.put("proto-max-bulk-len", "512mb");
    v.put("save", "");
    v.put("loglevel", "notice");
    v.put("store", "");
    v.put("store-table", "");
    v.put("guard-timeout", "5000");
    v.put("guard-statement-timeout", "");
    v.put("guard-build-timeout", "60000");
    v.put("http-auth", "both");
    v.put("load-idle-timeout", "300");
    // the JVM property lets a test run (mvn test -Dbloomery.io-transport=epoll) put every server on one transport
    v.put("io-transport", System.getProperty(IO_TRANSPORT_PROPERTY, "auto"));
    v.put("io-threads", "0");
    v.put("http-maxclients", "128");
    v.put("http-timeout", "60");
    v.put("http-request-timeout", "10");
    v.put("client-query-buffer-limit", "1gb");
    v.put("maxmemory-clients", DEFAULT_MAXMEMORY_CLIENTS_PERCENT + "%");
    v.put("auth-fail-delay", "100");
    v.putAll(new Settings().moduleValues());
    v.put("cluster-enabled", "no");
    v.put("cluster-port", "");
    v.put("cluster-announce-ip", "");
    v.put("cluster-announce-port", "");
    v.put("cluster-node-timeout", "1000");
    return v;
  }

  /**
   * Arguments split: the config file, if the first one is not an option, then each option's name and value, up to a
   * help or version flag (which ends the split).
   */
  private record Args(Path file, List<String[]> options, Request request, String requestedBy) {
    static Args of(String[] args) {
      Path file = null;
      List<String[]> options = new ArrayList<>();
      int i = 0;
      // a first argument like an option (-p, --port) is not a file name: it is reported as an option
      if (args.length > 0 && !args[0].startsWith("-")) {
        file = Path.of(args[0]);
        i = 1;
      }
      for (; i < args.length; i++) {
        String arg = args[i];
        if (REQUESTS.containsKey(arg)) {
          return new Args(file, options, REQUESTS.get(arg), arg);
        }
        if (!arg.startsWith("--")) {
          throw new IllegalArgumentException("unexpected argument '" + arg + "' (options are --name value)");
        }
        String name = arg.substring(2).toLowerCase(Locale.ROOT);
        String value;
        int eq = name.indexOf('=');
        if (eq >= 0) {
          value = arg.substring(2 + eq + 1);
          name = name.substring(0, eq);
        } else {
          if (i + 1 >= args.length) {
            throw new IllegalArgumentException("option --" + name + " needs a value");
          }
          value = args[++i];
        }
        options.add(new String[] {name, value});
      }
      return new Args(file, options, null, null);
    }
  }

  private static void readFile(Path file, Map<String, String> v) {
    List<String> lines;
    try {
      lines = Files.readAllLines(file, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new IllegalArgumentException("cannot read config file " + file + ": " + e.getMessage());
    }
    int n = 0;
    for (String raw : lines) {
      n++;
      String line = raw.strip();
      if (line.isEmpty() || line.startsWith("#")) {
        continue;
      }
      String[] parts = line.split("\\s+", 2);
      String value = parts.length > 1 ? unquote(parts[1].strip()) : "";
      set(v, parts[0].toLowerCase(Locale.ROOT), value, file + ":" + n + " '" + parts[0] + "'");
    }
  }

  private static String unquote(String s) {
    if (s.length() >= 2 && ((s.startsWith("\"") && s.endsWith("\"")) || (s.startsWith("'") && s.endsWith("'")))) {
      return s.substring(1, s.length() - 1);
    }
    return s;
  }

  private static void set(Map<String, String> v, String name, String value, String where) {
    if (!OPTIONS.contains(name)) {
      throw new IllegalArgumentException("unknown option " + where + " (known: " + String.join(", ", OPTIONS) + ")");
    }
    if (REPEATABLE.contains(name) && !v.get(name).isEmpty()) {
      v.put(name, v.get(name) + "\n" + value);
    } else {
      v.put(name, value);
    }
  }

  private void validate() {
    port();
    httpPort();
    yesNo("appendonly");
    yesNo("protected-mode");
    if (clusterEnabled()) {
      clusterPort();
      clusterAnnouncePort();
      clusterNodeTimeoutMillis();
    }
    if (!List.of("always", "everysec", "no").contains(appendfsync())) {
      throw new IllegalArgumentException("appendfsync must be always, everysec or no, not '" + appendfsync() + "'");
    }
    maxmemory();
    maxclients();
    timeoutSeconds();
    outputBufferLimit();
    outputBufferSoftLimit();
    outputBufferStallMillis();
    guardTimeoutMillis();
    loadIdleTimeoutMillis();
    httpAuth();
    httpLimits();
    ioTransport();
    ioThreads();
    clientQueryBufferLimit();
    maxmemoryClients();
    authFailDelayMillis();
    loglevel();
    moduleOptions(new Settings());
    stores(Map.of());
    long bulk = protoMaxBulkLen();
    if (bulk < 1024 * 1024 || bulk > 512L * 1024 * 1024) {
      throw new IllegalArgumentException("proto-max-bulk-len must be between 1mb and 512mb, not " + bulk);
    }
  }

  private long number(String name, long min, long max) {
    String s = values.get(name);
    long n;
    try {
      n = Long.parseLong(s.strip());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(name + " must be an integer, not '" + s + "'");
    }
    if (n < min || n > max) {
      throw new IllegalArgumentException(name + " must be in [" + min + ", " + max + "], not " + n);
    }
    return n;
  }

  private boolean yesNo(String name) {
    String s = values.get(name).toLowerCase(Locale.ROOT);
    if (!s.equals("yes") && !s.equals("no")) {
      throw new IllegalArgumentException(name + " must be yes or no, not '" + values.get(name) + "'");
    }
    return s.equals("yes");
  }

  public int port() {
    return (int) number("port", 0, 65535);
  }

  public int httpPort() {
    return (int) number("http-port", 0, 65535);
  }

  /** The addresses to listen on (space separated in the option). */
  public List<String> bind() {
    List<String> out = new ArrayList<>();
    for (String s : values.get("bind").trim().split("\\s+")) {
      if (!s.isEmpty()) {
        out.add(s.startsWith("-") ? s.substring(1) : s);
      }
    }
    if (out.isEmpty()) {
      throw new IllegalArgumentException("bind needs at least one address");
    }
    return out;
  }

  public Path dir() {
    return Path.of(values.get("dir"));
  }

  public boolean appendonly() {
    return yesNo("appendonly");
  }

  public String appendfsync() {
    return values.get("appendfsync").toLowerCase(Locale.ROOT);
  }

  /** The ACL file ({@code --aclfile}, Redis's format) the users are loaded from, or {@code null} for none. */
  public java.nio.file.Path aclfile() {
    String f = values.get("aclfile");
    return f == null || f.isBlank() ? null : java.nio.file.Path.of(f.strip());
  }

  /** The password, or empty for none. */
  public String requirepass() {
    return values.get("requirepass");
  }

  public long maxmemory() {
    return Settings.parseBytes(values.get("maxmemory"));
  }

  public long maxclients() {
    return number("maxclients", 1, 1_000_000);
  }

  public long timeoutSeconds() {
    return number("timeout", 0, Integer.MAX_VALUE);
  }

  public boolean protectedMode() {
    return yesNo("protected-mode");
  }

  /** Bytes of unsent replies a client may have before it is disconnected (the hard limit). */
  public long outputBufferLimit() {
    long n = Settings.parseBytes(outputBufferParts()[0]);
    if (n < 1024) {
      throw new IllegalArgumentException("client-output-buffer-limit must be at least 1kb, not " + n);
    }
    return n;
  }

  /**
   * Unsent bytes above which the server stops reading from a client (the soft limit of Redis's {@code normal
   * <hard> <soft> <seconds>} form; 1 MB when not given or 0).
   */
  public long outputBufferSoftLimit() {
    String[] parts = outputBufferParts();
    long n = parts.length >= 2 ? Settings.parseBytes(parts[1]) : 0;
    if (n != 0 && n < 1024) {
      throw new IllegalArgumentException("client-output-buffer-limit soft limit must be 0 or at least 1kb, not " + n);
    }
    return n == 0 ? DEFAULT_SOFT_OUTPUT_LIMIT : n;
  }

  /**
   * Milliseconds a client may stay above the soft limit (not reading its replies) before it is disconnected: the
   * seconds of Redis's form (60 when not given; 0: it is only paused, never disconnected for that).
   */
  public long outputBufferStallMillis() {
    String[] parts = outputBufferParts();
    if (parts.length < 3) {
      return 60_000;
    }
    long seconds;
    try {
      seconds = Long.parseLong(parts[2]);
    } catch (NumberFormatException e) {
      seconds = -1;
    }
    if (seconds < 0 || seconds > 86_400) {
      throw new IllegalArgumentException(
          "client-output-buffer-limit seconds must be 0 to 86400, not '" + parts[2] + "'");
    }
    return seconds * 1000;
  }

  static final long DEFAULT_SOFT_OUTPUT_LIMIT = 1024 * 1024;

  /** "64mb" or Redis's "normal <hard> <soft> <seconds>": the hard limit, then soft and seconds if given. */
  private String[] outputBufferParts() {
    String[] parts = values.get("client-output-buffer-limit").trim().split("\\s+");
    if (parts[0].equalsIgnoreCase("normal")) {
      if (parts.length != 4) {
        throw new IllegalArgumentException("client-output-buffer-limit takes '<hard>' or 'normal <hard> <soft> "
            + "<seconds>', not '" + values.get("client-output-buffer-limit").trim() + "'");
      }
      return java.util.Arrays.copyOfRange(parts, 1, 4);
    }
    if (parts.length != 1) {
      throw new IllegalArgumentException("client-output-buffer-limit takes '<hard>' or 'normal <hard> <soft> "
          + "<seconds>', not '" + values.get("client-output-buffer-limit").trim() + "'");
    }
    return parts;
  }

  /**
   * The socket layer: {@code auto} (the default: io_uring where the kernel allows it, else epoll, else NIO), or
   * {@code io_uring}, {@code epoll}, {@code nio}; checked for being a known name here, for being available when
   * the server starts.
   */
  public String ioTransport() {
    String s = values.get("io-transport").strip().toLowerCase(Locale.ROOT);
    if (!List.of("auto", "io_uring", "epoll", "nio").contains(s)) {
      throw new IllegalArgumentException("io-transport must be auto, io_uring, epoll or nio, not '"
          + values.get("io-transport") + "'");
    }
    return s;
  }

  /** Event loops serving clients: {@code io-threads}, 0 (the default) for one per core. */
  public int ioThreads() {
    int n = (int) number("io-threads", 0, 1024);
    return n == 0 ? Runtime.getRuntime().availableProcessors() : n;
  }

  /**
   * The heap one command still being read may take ({@code client-query-buffer-limit}, Redis's name and default,
   * 1gb; 1mb to 4gb), counted as {@link io.bloomery.server.resp.RespDecoder} counts it: each argument its length
   * plus 40 bytes.
   */
  public long clientQueryBufferLimit() {
    long n = Settings.parseBytes(values.get("client-query-buffer-limit"));
    if (n < 1024 * 1024 || n > 4L * 1024 * 1024 * 1024) {
      throw new IllegalArgumentException("client-query-buffer-limit must be between 1mb and 4gb, not " + n);
    }
    return n;
  }

  /** The share of the JVM's maximum heap that {@code maxmemory-clients} is by default. */
  static final int DEFAULT_MAXMEMORY_CLIENTS_PERCENT = 25;

  /**
   * The heap all connections' commands still being read may take together ({@code maxmemory-clients}): a size, or
   * {@code N%} of the JVM's maximum heap (1 to 100; default 25%), or 0 for no limit; {@link Long#MAX_VALUE} for
   * none. A command that would pass it is refused and its connection closed, so that clients sending large commands
   * together cannot exhaust the heap that holds the filters.
   */
  public long maxmemoryClients() {
    String s = values.get("maxmemory-clients").strip();
    if (s.endsWith("%")) {
      long percent;
      try {
        percent = Long.parseLong(s.substring(0, s.length() - 1).strip());
      } catch (NumberFormatException e) {
        percent = -1;
      }
      if (percent < 1 || percent > 100) {
        throw new IllegalArgumentException("maxmemory-clients must be a size, 0 or 1% to 100% of the heap, not '"
            + s + "'");
      }
      return Runtime.getRuntime().maxMemory() / 100 * percent;
    }
    long n = Settings.parseBytes(s);
    if (n != 0 && n < 1024 * 1024) {
      throw new IllegalArgumentException("maxmemory-clients must be 0 (no limit) or at least 1mb, not " + n);
    }
    return n == 0 ? Long.MAX_VALUE : n;
  }

  /**
   * How long the server waits before answering a wrong password once a connection has given three (ms, 0 to 10000;
   * default 100; 0 turns the delay off): the first such reply waits this long, each further one twice the one
   * before, up to 16 times it. Other connections and the event loop never wait.
   */
  public long authFailDelayMillis() {
    return number("auth-fail-delay", 0, 10_000);
  }

  public long protoMaxBulkLen() {
    return Settings.parseBytes(values.get("proto-max-bulk-len"));
  }

  /**
   * How long an unfinished BF.LOADCHUNK file load may wait for its next chunk before it is abandoned and its staging
   * file deleted (seconds, 1 to 86400; default 300).
   */
  public long loadIdleTimeoutMillis() {
    return number("load-idle-timeout", 1, 86_400) * 1000;
  }

  /** How long a GUARD command waits for its store before answering STOREDOWN (ms, 100 to 600000). */
  public long guardTimeoutMillis() {
    return number("guard-timeout", 100, 600_000);
  }

  /** How long GUARD.RESERVE, REBUILD and DROP wait before answering STOREDOWN while the work goes on (ms). */
  public long guardBuildTimeoutMillis() {
    return number("guard-build-timeout", 100, 3_600_000);
  }

  /**
   * PostgreSQL {@code statement_timeout} on the stores' connections (ms, 100 to 3600000; default twice
   * guard-timeout): a statement whose reply already answered STOREDOWN may still finish (and is then answered 1 on
   * retry), but none runs unbounded. Scans for builds and rebuilds are exempt.
   */
  public long guardStatementTimeoutMillis() {
    if (values.get("guard-statement-timeout").isBlank()) {
      return 2 * guardTimeoutMillis();
    }
    return number("guard-statement-timeout", 100, 3_600_000);
  }

  /**
   * The stores the operator declared ({@code store NAME=URL}, {@code store-table NAME=TABLE.COLUMN}), with
   * credentials from {@code env} ({@code BLOOMERY_STORE_<NAME>_USER} / {@code _PASSWORD}).
   */
  public List<StoreDeclaration> stores(Map<String, String> env) {
    return StoreDeclaration.parse(lines("store"), lines("store-table"), env);
  }

  private List<String> lines(String name) {
    List<String> out = new ArrayList<>();
    for (String s : values.get(name).split("\n")) {
      if (!s.isBlank()) {
        out.add(s.strip());
      }
    }
    return out;
  }

  /**
   * Which HTTP credentials carry the password to the dashboard and {@code /metrics} when {@code requirepass} is
   * set: {@code basic} (HTTP basic authentication), {@code token} ({@code Authorization: Bearer}) or {@code both}.
   */
  public String httpAuth() {
    String s = values.get("http-auth").strip().toLowerCase(Locale.ROOT);
    if (!List.of("basic", "token", "both").contains(s)) {
      throw new IllegalArgumentException("http-auth must be basic, token or both, not '" + values.get("http-auth")
          + "'");
    }
    return s;
  }

  /**
   * The HTTP port's limits: {@code http-maxclients} connections served at once (1 to 100000; one more is answered
   * 503), {@code http-request-timeout} seconds for a request to arrive whole (1 to 3600) and {@code http-timeout}
   * seconds a kept-alive connection may stay idle (1 to 86400).
   */
  public HttpLimits httpLimits() {
    return new HttpLimits((int) number("http-maxclients", 1, 100_000),
        number("http-request-timeout", 1, 3600) * 1000, number("http-timeout", 1, 86_400) * 1000);
  }

  /**
   * Redis's {@code loglevel}: {@code debug} and {@code verbose} (stack traces of unexpected errors, per-client
   * events), {@code notice} (the default: start-up, shutdown, clients closed for errors), {@code warning}, or
   * {@code nothing}; it sets the level of the server's own loggers.
   */
  public String loglevel() {
    return LogLevel.parse(values.get("loglevel"));
  }

  public String save() {
    return values.get("save");
  }

  /** The config file given as the first argument; null when there was none. */
  public Path file() {
    return file;
  }

  /**
   * Sets RedisBloom's module options ({@link Settings#MODULE_OPTIONS}) on {@code settings} from these values.
   *
   * @throws IllegalArgumentException naming the option, with RedisBloom's range text, for a value out of range
   */
  public void moduleOptions(Settings settings) {
    for (String name : Settings.MODULE_OPTIONS) {
      try {
        settings.setModuleOption(name, values.get(name));
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException(name + ": " + e.getMessage() + ", not '" + values.get(name) + "'");
      }
    }
  }

  /** {@code cluster-enabled yes}: this process is a node of a Bloomery cluster (docs/CLUSTER.md). */
  public boolean clusterEnabled() {
    return yesNo("cluster-enabled");
  }

  /**
   * The cluster bus port, where the node's Raft server listens: {@code cluster-port}, else {@code port} + 10000 as
   * Redis Cluster's bus.
   *
   * @throws IllegalArgumentException if {@code port} is 0 (a node's address must not change between starts) or
   *     the bus port is out of range
   */
  public int clusterPort() {
    if (port() == 0) {
      throw new IllegalArgumentException("a cluster node needs a fixed port (port 0 picks another one each start)");
    }
    if (values.get("cluster-port").isBlank()) {
      if (port() + 10000 > 65535) {
        throw new IllegalArgumentException("port " + port() + " + 10000 is no port: give --cluster-port");
      }
      return port() + 10000;
    }
    return (int) number("cluster-port", 1, 65535);
  }

  /** The host clients are told to use ({@code cluster-announce-ip}), or {@code null} for the first bind address. */
  public String clusterAnnounceIp() {
    String ip = values.get("cluster-announce-ip").strip();
    return ip.isEmpty() ? null : ip;
  }

  /** The port clients are told to use ({@code cluster-announce-port}), else {@code port}. */
  public int clusterAnnouncePort() {
    return values.get("cluster-announce-port").isBlank() ? port() : (int) number("cluster-announce-port", 1, 65535);
  }

  /**
   * {@code cluster-node-timeout}, milliseconds: how long a shard's followers hear nothing from its leader before
   * one stands for election (each draws a timeout between this and twice this). It bounds how fast a failover can
   * be, and must stay above the pauses a node can take (GC, a busy machine), or leaders step down needlessly.
   */
  public long clusterNodeTimeoutMillis() {
    return number("cluster-node-timeout", 100, 60_000);
  }

  /** The value of an option as given (for CONFIG GET and logs). */
  public String get(String name) {
    return values.get(name);
  }

  /** A copy with {@code --name value} pairs applied on top. */
  public ServerConfig with(String... pairs) {
    Map<String, String> v = new LinkedHashMap<>(values);
    for (int i = 0; i + 1 < pairs.length; i += 2) {
      set(v, pairs[i].replaceFirst("^--", ""), pairs[i + 1], pairs[i]);
    }
    ServerConfig c = new ServerConfig(v, file);
    c.validate();
    return c;
  }

  @Override
  public String toString() {
    Map<String, String> shown = new LinkedHashMap<>(values);
    if (!shown.get("requirepass").isEmpty()) {
      shown.put("requirepass", "(set)");
    }
    List<String> redacted = new ArrayList<>();
    for (StoreDeclaration d : stores(Map.of())) {
      redacted.add(d.name() + "=" + d.redacted());
    }
    shown.put("store", String.join(" ", redacted));
    return shown.toString();
  }
}
