package io.bloomery.server.state;

import io.bloomery.cuckoo.CuckooFilter;
import io.bloomery.scalable.ScalableBloomFilter;
import io.bloomery.server.resp.RespEncoder;
import java.nio.file.Path;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The values {@code CONFIG GET} / {@code CONFIG SET} see: RedisBloom's module defaults for new filters and the
 * server's limits. Each is read through a typed accessor; the ones {@code CONFIG SET} changes at run time have a
 * setter that checks the value as Redis does (an {@link IllegalArgumentException} with Redis's words, the setting
 * unchanged), and a change applies to the next command. The ones the server fixes at start are set once, from its
 * options, before it serves clients.
 */
public final class Settings {
  private volatile double bfErrorRate = ScalableBloomFilter.DEFAULT_ERROR_RATE;
  private volatile long bfInitialSize = ScalableBloomFilter.DEFAULT_CAPACITY;
  private volatile long bfExpansion = ScalableBloomFilter.DEFAULT_EXPANSION;
  private volatile long cfBucketSize = CuckooFilter.DEFAULT_BUCKET_SIZE;
  private volatile long cfInitialSize = CuckooFilter.DEFAULT_CAPACITY;
  private volatile long cfMaxIterations = CuckooFilter.DEFAULT_MAX_ITERATIONS;
  private volatile long cfExpansion = CuckooFilter.DEFAULT_EXPANSION;
  private volatile long cfMaxExpansions = CuckooFilter.DEFAULT_MAX_EXPANSIONS;
  private volatile long maxmemory;
  private volatile String requirepass;
  private volatile long maxclients = 10000;
  private volatile long timeoutSeconds;
  private volatile String save = "";
  private volatile boolean protectedMode = true;
  private volatile boolean appendonly = true;
  private volatile String appendfsync = "everysec";
  private volatile String dir = "./data";
  private volatile long port = 6380;
  private volatile String bind = "127.0.0.1";
  private volatile String httpAuth = "both";
  private volatile long outputBufferLimit = 64L * 1024 * 1024;
  private volatile long outputBufferSoftLimit = 1024 * 1024;
  private volatile long outputBufferStallSeconds = 60;
  private volatile long clientQueryBufferLimit = 1024L * 1024 * 1024;
  private volatile long maxmemoryClients = Runtime.getRuntime().maxMemory() / 4;
  private volatile long authFailDelayMillis = 100;
  private volatile long slowlogLogSlowerThan = 10_000;
  private volatile long slowlogMaxLen = 128;
  private volatile long latencyMonitorThreshold;
  private volatile long hz = 10;
  private volatile String loglevel = "notice";
  private volatile Path configFile;
  private volatile boolean clusterEnabled;

  /** RedisBloom's module options, as Redis 8 names them, in the order CONFIG GET and the config file list them. */
  public static final List<String> MODULE_OPTIONS = List.of("bf-error-rate", "bf-initial-size",
      "bf-expansion-factor", "cf-bucket-size", "cf-initial-size", "cf-max-iterations", "cf-expansion-factor",
      "cf-max-expansions");

  /**
   * Sets one of {@link #MODULE_OPTIONS} from its text (a startup option, a config line or CONFIG SET), with
   * RedisBloom's ranges; the new value is the default of filters BF.ADD, BF.INSERT, CF.ADD, ... create from then on.
   *
   * @throws IllegalArgumentException with RedisBloom's text for a value out of range or not a number, or for a name
   *     that is not a module option
   */
  public void setModuleOption(String name, String value) {
    if (name.equals("bf-error-rate")) {
      double d;
      try {
        d = Double.parseDouble(value.strip());
      } catch (NumberFormatException e) {
        d = Double.NaN;
      }
      bfErrorRate(d);
      return;
    }
    long v;
    try {
      v = Long.parseLong(value.strip());
    } catch (NumberFormatException e) {
      v = Long.MIN_VALUE; // out of every range: the setter's range error names the option
    }
    switch (name) {
      case "bf-initial-size" -> bfInitialSize(v);
      case "bf-expansion-factor" -> bfExpansion(v);
      case "cf-bucket-size" -> cfBucketSize(v);
      case "cf-initial-size" -> cfInitialSize(v);
      case "cf-max-iterations" -> cfMaxIterations(v);
      case "cf-expansion-factor" -> cfExpansion(v);
      case "cf-max-expansions" -> cfMaxExpansions(v);
      default -> throw new IllegalArgumentException("not a module option: '" + name + "'");
    }
  }

  /** The module options' current values as CONFIG GET shows them, in {@link #MODULE_OPTIONS}' order. */
  public Map<String, String> moduleValues() {
    Map<String, String> m = new LinkedHashMap<>();
    m.put("bf-error-rate", RespEncoder.formatDouble(bfErrorRate));
    m.put("bf-initial-size", Long.toString(bfInitialSize));
    m.put("bf-expansion-factor", Long.toString(bfExpansion));
    m.put("cf-bucket-size", Long.toString(cfBucketSize));
    m.put("cf-initial-size", Long.toString(cfInitialSize));
    m.put("cf-max-iterations", Long.toString(cfMaxIterations));
    m.put("cf-expansion-factor", Long.toString(cfExpansion));
    m.put("cf-max-expansions", Long.toString(cfMaxExpansions));
    return m;
  }

  /**
   * Redis's active-defragmentation options, in the order CONFIG GET lists them, each with its range and default
   * ({@code activedefrag} itself, yes or no, is kept apart). Bloomery has no allocator to defragment (the JVM's
   * garbage collector compacts the heap), so it answers them as a Redis built without jemalloc does: the tuning
   * values are checked, kept and shown, and {@code activedefrag} stays {@code no}.
   */
  private static final Map<String, DefragRange> DEFRAG_RANGES = defragRanges();

  private final Map<String, Long> defrag = new ConcurrentHashMap<>();

  /** One active-defrag option's range and default, as Redis 8 declares them. */
  private record DefragRange(long min, long max, long fallback) {}

  private static Map<String, DefragRange> defragRanges() {
    Map<String, DefragRange> m = new LinkedHashMap<>();
    m.put("active-defrag-ignore-bytes", new DefragRange(1, Long.MAX_VALUE, 100L << 20));
    m.put("active-defrag-threshold-lower", new DefragRange(0, 1000, 10));
    m.put("active-defrag-threshold-upper", new DefragRange(0, 1000, 100));
    m.put("active-defrag-cycle-min", new DefragRange(1, 99, 1));
    m.put("active-defrag-cycle-max", new DefragRange(1, 99, 25));
    m.put("active-defrag-max-scan-fields", new DefragRange(1, Long.MAX_VALUE, 1000));
    return Collections.unmodifiableMap(m);
  }

  /** Whether {@code name} is one of Redis's active-defragmentation options ({@link #setDefragOption}). */
  public static boolean isDefragOption(String name) {
    return name.equals("activedefrag") || DEFRAG_RANGES.containsKey(name);
  }

  /**
   * Sets one of Redis's active-defragmentation options from CONFIG SET's text, with Redis's ranges and words.
   *
   * @throws IllegalArgumentException for a value out of range or not a number (Redis's text), for
   *     {@code activedefrag} other than yes or no, and for {@code activedefrag yes}, which Bloomery cannot honour
   */
  public void setDefragOption(String name, String value) {
    if (name.equals("activedefrag")) {
      String v = value.strip().toLowerCase(Locale.ROOT);
      if (v.equals("yes")) {
        throw new IllegalArgumentException("Active defragmentation cannot be enabled: Bloomery's memory is "
            + "compacted by the JVM's garbage collector, there is no allocator to defragment");
      }
      if (!v.equals("no")) {
        throw new IllegalArgumentException("argument must be 'yes' or 'no'");
      }
      return;
    }
    DefragRange range = DEFRAG_RANGES.get(name);
    if (range == null) {
      throw new IllegalArgumentException("not an active-defrag option: '" + name + "'");
    }
    long v;
    try {
      v = name.equals("active-defrag-ignore-bytes") ? parseBytes(value) : Long.parseLong(value.strip());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("argument couldn't be parsed into an integer");
    }
    if (v < range.min() || v > range.max()) {
      throw new IllegalArgumentException("argument must be between " + range.min() + " and " + range.max()
          + " inclusive");
    }
    defrag.put(name, v);
  }

  /** The active-defragmentation options' values as CONFIG GET shows them ({@code activedefrag} is always no). */
  public Map<String, String> defragValues() {
    Map<String, String> m = new LinkedHashMap<>();
    m.put("activedefrag", "no");
    DEFRAG_RANGES.forEach((name, range) -> m.put(name, Long.toString(defrag.getOrDefault(name, range.fallback()))));
    return m;
  }

  /** Redis's {@code loglevel} name now in effect (see {@link LogLevel}). */
  /** Whether the server is a cluster node ({@code cluster-enabled yes}); INFO's {@code cluster_enabled}. */
  public boolean clusterEnabled() {
    return clusterEnabled;
  }

  public void clusterEnabled(boolean value) {
    clusterEnabled = value;
  }

  public String loglevel() {
    return loglevel;
  }

  /** Records {@code name} (one {@link LogLevel#parse} returned) as the level in effect. */
  public void loglevel(String name) {
    loglevel = LogLevel.parse(name);
  }

  /** The config file the server was started with, which CONFIG REWRITE rewrites; null when there was none. */
  public Path configFile() {
    return configFile;
  }

  public void configFile(Path file) {
    configFile = file;
  }

  /**
   * Redis's memory units: {@code 100}, {@code 1k} (1000), {@code 1kb} (1024), {@code mb}, {@code gb}, {@code m},
   * {@code g}, case-insensitive.
   *
   * @throws IllegalArgumentException for anything else or a negative value
   */
  public static long parseBytes(String text) {
    String s = text.strip().toLowerCase(Locale.ROOT);
    long unit = 1;
    String[][] units = {{"kb", "1024"}, {"mb", "1048576"}, {"gb", "1073741824"}, {"k", "1000"}, {"m", "1000000"},
        {"g", "1000000000"}, {"b", "1"}};
    for (String[] u : units) {
      if (s.endsWith(u[0])) {
        unit = Long.parseLong(u[1]);
        s = s.substring(0, s.length() - u[0].length());
        break;
      }
    }
    try {
      long n = Long.parseLong(s);
      if (n < 0) {
        throw new IllegalArgumentException("a memory size cannot be negative: '" + text + "'");
      }
      return Math.multiplyExact(n, unit);
    } catch (NumberFormatException | ArithmeticException e) {
      throw new IllegalArgumentException("not a memory size: '" + text + "' (examples: 100mb, 2gb, 1048576)");
    }
  }

  // ------------------------------------------------------------------------------- changed by CONFIG SET

  /** {@code bf-error-rate}: a new scalable Bloom key's error rate. */
  public double bfErrorRate() {
    return bfErrorRate;
  }

  public void bfErrorRate(double value) {
    if (!(value > 0 && value < 1)) {
      throw new IllegalArgumentException("Value for `bf-error-rate` must be in the range (0, 1)");
    }
    bfErrorRate = value;
  }

  /** {@code bf-initial-size}: a new scalable Bloom key's capacity. */
  public long bfInitialSize() {
    return bfInitialSize;
  }

  public void bfInitialSize(long value) {
    bfInitialSize = range("bf-initial-size", value, 1, 1L << 30);
  }

  /** {@code bf-expansion-factor}: a new scalable Bloom key's expansion (0: non-scaling). */
  public long bfExpansion() {
    return bfExpansion;
  }

  public void bfExpansion(long value) {
    bfExpansion = range("bf-expansion-factor", value, 0, 32768);
  }

  /** {@code cf-bucket-size}: a new cuckoo key's bucket size. */
  public long cfBucketSize() {
    return cfBucketSize;
  }

  public void cfBucketSize(long value) {
    cfBucketSize = range("cf-bucket-size", value, 1, 255);
  }

  /** {@code cf-initial-size}: a new cuckoo key's capacity, at least two buckets. */
  public long cfInitialSize() {
    return cfInitialSize;
  }

  public void cfInitialSize(long value) {
    cfInitialSize = range("cf-initial-size", value, 2 * cfBucketSize, 1L << 30);
  }

  /** {@code cf-max-iterations}: a new cuckoo key's relocation limit. */
  public long cfMaxIterations() {
    return cfMaxIterations;
  }

  public void cfMaxIterations(long value) {
    cfMaxIterations = range("cf-max-iterations", value, 1, 65535);
  }

  /** {@code cf-expansion-factor}: a new cuckoo key's expansion (0: non-scaling). */
  public long cfExpansion() {
    return cfExpansion;
  }

  public void cfExpansion(long value) {
    cfExpansion = range("cf-expansion-factor", value, 0, 32768);
  }

  /** {@code cf-max-expansions}: how many times a new cuckoo key may grow. */
  public long cfMaxExpansions() {
    return cfMaxExpansions;
  }

  public void cfMaxExpansions(long value) {
    cfMaxExpansions = range("cf-max-expansions", value, 1, 65536);
  }

  /** Bytes of filter data allowed before deny-oom commands are refused; 0 means no limit. */
  public long maxmemory() {
    return maxmemory;
  }

  public void maxmemory(long bytes) {
    if (bytes < 0) {
      throw new IllegalArgumentException("argument can't be negative");
    }
    maxmemory = bytes;
  }

  /** {@code null} or empty: no password. */
  public String requirepass() {
    return requirepass;
  }

  public void requirepass(String value) {
    requirepass = value;
  }

  /** Commands slower than this (µs) go to SLOWLOG; negative: none ({@code slowlog-log-slower-than}). */
  public long slowlogLogSlowerThan() {
    return slowlogLogSlowerThan;
  }

  public void slowlogLogSlowerThan(long micros) {
    slowlogLogSlowerThan = Math.max(-1, micros);
  }

  /** SLOWLOG's length ({@code slowlog-max-len}). */
  public long slowlogMaxLen() {
    return slowlogMaxLen;
  }

  public void slowlogMaxLen(long entries) {
    if (entries < 0) {
      throw new IllegalArgumentException("argument can't be negative");
    }
    slowlogMaxLen = entries;
  }

  /** Events at least this long (ms) go to LATENCY; 0: off ({@code latency-monitor-threshold}). */
  public long latencyMonitorThreshold() {
    return latencyMonitorThreshold;
  }

  public void latencyMonitorThreshold(long millis) {
    if (millis < 0) {
      throw new IllegalArgumentException("argument can't be negative");
    }
    latencyMonitorThreshold = millis;
  }

  /** Background tasks per second (active expiry, idle-load sweep), 1 to 500 ({@code hz}). */
  public long hz() {
    return hz;
  }

  /** Sets {@link #hz()}, clamped to 1..500 as Redis clamps it. */
  public void hz(long perSecond) {
    hz = Math.max(1, Math.min(500, perSecond));
  }

  public boolean passwordRequired() {
    String p = requirepass;
    return p != null && !p.isEmpty();
  }

  /** Connections allowed at once. */
  public long maxclients() {
    return maxclients;
  }

  public void maxclients(long value) {
    if (value < 1) {
      throw new IllegalArgumentException("argument must be at least 1");
    }
    maxclients = value;
  }

  /** Idle seconds before a client is closed; 0 means never. */
  public long timeoutSeconds() {
    return timeoutSeconds;
  }

  public void timeoutSeconds(long value) {
    if (value < 0) {
      throw new IllegalArgumentException("argument can't be negative");
    }
    timeoutSeconds = value;
  }

  /** {@code save}: the snapshot policy's text (empty: none), as CONFIG GET shows it. */
  public String save() {
    return save;
  }

  public void save(String value) {
    save = value;
  }

  // ------------------------------------------------------------------------------------------- fixed at start

  /** Whether clients not on loopback are refused while no password is set. */
  public boolean protectedMode() {
    return protectedMode;
  }

  /** Whether the journal is on ({@code appendonly yes}). */
  public boolean appendonly() {
    return appendonly;
  }

  /** The journal's fsync policy: {@code always}, {@code everysec} or {@code no}. */
  public String appendfsync() {
    return appendfsync;
  }

  /** The data directory. */
  public String dir() {
    return dir;
  }

  /** The RESP port: the one the server bound once it listens. */
  public long port() {
    return port;
  }

  /** The addresses the server listens on, space-separated. */
  public String bind() {
    return bind;
  }

  /** HTTP credentials the dashboard and {@code /metrics} accept: {@code basic}, {@code token} or {@code both}. */
  public String httpAuth() {
    return httpAuth;
  }

  /** Bytes a client's unsent replies may reach before it is disconnected. */
  public long outputBufferLimit() {
    return outputBufferLimit;
  }

  /** Unsent bytes above which reading from a client pauses (the sockets' water mark). */
  public long outputBufferSoftLimit() {
    return outputBufferSoftLimit;
  }

  /** Seconds above the soft limit before a client is disconnected (0: never for that). */
  public long outputBufferStallSeconds() {
    return outputBufferStallSeconds;
  }

  /** Heap one command still being read may take ({@code client-query-buffer-limit}). */
  public long clientQueryBufferLimit() {
    return clientQueryBufferLimit;
  }

  /**
   * Heap all commands still being read may take together ({@code maxmemory-clients}; {@link Long#MAX_VALUE}: no
   * limit; read when the server's {@link ServerContext} is made).
   */
  public long maxmemoryClients() {
    return maxmemoryClients;
  }

  /** Milliseconds of the first delayed wrong-password reply on a connection (0: none delayed). */
  public long authFailDelayMillis() {
    return authFailDelayMillis;
  }

  /** Sets {@link #protectedMode()}; at start. */
  public void protectedMode(boolean value) {
    protectedMode = value;
  }

  /** Sets {@link #appendonly()} and {@link #appendfsync()}; at start. */
  public void journal(boolean on, String fsync) {
    appendonly = on;
    appendfsync = fsync;
  }

  /** Sets {@link #dir()}; at start. */
  public void dir(String value) {
    dir = value;
  }

  /** Sets {@link #bind()}; at start. */
  public void bind(String addresses) {
    bind = addresses;
  }

  /** Sets {@link #port()}: the port asked for at start, the one bound once the server listens. */
  public void port(long value) {
    port = value;
  }

  /** Sets {@link #httpAuth()}; at start. */
  public void httpAuth(String value) {
    httpAuth = value;
  }

  /** Sets the output buffer limits ({@code client-output-buffer-limit}); at start. */
  public void outputBuffer(long limit, long softLimit, long stallSeconds) {
    outputBufferLimit = limit;
    outputBufferSoftLimit = softLimit;
    outputBufferStallSeconds = stallSeconds;
  }

  /** Sets the query memory limits; at start, before the {@link ServerContext} is made. */
  public void queryMemory(long perClient, long allClients) {
    clientQueryBufferLimit = perClient;
    maxmemoryClients = allClients;
  }

  /** Sets {@link #authFailDelayMillis()}; at start. */
  public void authFailDelayMillis(long value) {
    authFailDelayMillis = value;
  }

  private static long range(String name, long value, long min, long max) {
    if (value < min || value > max) {
      throw new IllegalArgumentException("Value for `" + name + "` must be in the range [" + min + ", " + max + "]");
    }
    return value;
  }
}
