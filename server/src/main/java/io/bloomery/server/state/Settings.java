package io.bloomery.server.state;

import io.bloomery.cuckoo.CuckooFilter;
import io.bloomery.scalable.ScalableBloomFilter;
import io.bloomery.server.resp.RespEncoder;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The values {@code CONFIG GET} / {@code CONFIG SET} see and change at run time: RedisBloom's module defaults for
 * new filters and the server's limits. Fields are volatile; a change applies to the next command.
 */
public final class Settings {
  public volatile double bfErrorRate = ScalableBloomFilter.DEFAULT_ERROR_RATE;
  public volatile long bfInitialSize = ScalableBloomFilter.DEFAULT_CAPACITY;
  public volatile long bfExpansion = ScalableBloomFilter.DEFAULT_EXPANSION;
  public volatile long cfBucketSize = CuckooFilter.DEFAULT_BUCKET_SIZE;
  public volatile long cfInitialSize = CuckooFilter.DEFAULT_CAPACITY;
  public volatile long cfMaxIterations = CuckooFilter.DEFAULT_MAX_ITERATIONS;
  public volatile long cfExpansion = CuckooFilter.DEFAULT_EXPANSION;
  public volatile long cfMaxExpansions = CuckooFilter.DEFAULT_MAX_EXPANSIONS;
  /** Bytes of filter data allowed before deny-oom commands are refused; 0 means no limit. */
  public volatile long maxmemory;
  /** {@code null} or empty: no password. */
  public volatile String requirepass;
  public volatile long maxclients = 10000;
  /** Idle seconds before a client is closed; 0 means never. */
  public volatile long timeoutSeconds;
  public volatile boolean protectedMode = true;
  public volatile String appendonly = "yes";
  public volatile String appendfsync = "everysec";
  public volatile String save = "";
  public volatile String dir = "./data";
  public volatile long port = 6380;
  public volatile String bind = "127.0.0.1";
  /** HTTP credentials the dashboard and {@code /metrics} accept: {@code basic}, {@code token} or {@code both}. */
  public volatile String httpAuth = "both";
  /** Bytes a client's unsent replies may reach before it is disconnected. */
  public volatile long outputBufferLimit = 64L * 1024 * 1024;
  /** Unsent bytes above which reading from a client pauses (fixed at start: it is the sockets' water mark). */
  public volatile long outputBufferSoftLimit = 1024 * 1024;
  /** Seconds above the soft limit before a client is disconnected (0: never for that; fixed at start). */
  public volatile long outputBufferStallSeconds = 60;
  /** Heap one command still being read may take ({@code client-query-buffer-limit}; fixed at start). */
  public volatile long clientQueryBufferLimit = 1024L * 1024 * 1024;
  /**
   * Heap all commands still being read may take together ({@code maxmemory-clients}; {@link Long#MAX_VALUE}: no
   * limit; fixed at start, when the server's {@link ServerContext} is made).
   */
  public volatile long maxmemoryClients = Runtime.getRuntime().maxMemory() / 4;
  /** Redis's {@code loglevel} name now in effect (see {@link LogLevel}). */
  public volatile String loglevel = "notice";
  /** The config file the server was started with, which CONFIG REWRITE rewrites; null when there was none. */
  public volatile Path configFile;
  /** Milliseconds of the first delayed wrong-password reply on a connection (0: none delayed). */
  public volatile long authFailDelayMillis = 100;

  /** Commands slower than this (µs) go to SLOWLOG; negative: none ({@code slowlog-log-slower-than}). */
  public volatile long slowlogLogSlowerThan = 10_000;
  /** SLOWLOG's length ({@code slowlog-max-len}). */
  public volatile long slowlogMaxLen = 128;
  /** Events at least this long (ms) go to LATENCY; 0: off ({@code latency-monitor-threshold}). */
  public volatile long latencyMonitorThreshold;
  /** Background tasks per second (active expiry, idle-load sweep), 1 to 500 ({@code hz}). */
  public volatile long hz = 10;

  /** RedisBloom's module options, as Redis 8 names them, in the order CONFIG GET and the config file list them. */
  public static final List<String> MODULE_OPTIONS = List.of("bf-error-rate", "bf-initial-size",
      "bf-expansion-factor", "cf-bucket-size", "cf-initial-size", "cf-max-iterations", "cf-expansion-factor",
      "cf-max-expansions");

  /**
   * Sets one of {@link #MODULE_OPTIONS} with RedisBloom's ranges (for a startup option, a config line or CONFIG
   * SET); the new value is the default of filters BF.ADD, BF.INSERT, CF.ADD, ... create from then on.
   *
   * @throws IllegalArgumentException with RedisBloom's text for a value out of range or not a number, or for a name
   *     that is not a module option
   */
  public void setModuleOption(String name, String value) {
    switch (name) {
      case "bf-error-rate" -> {
        double d;
        try {
          d = Double.parseDouble(value.strip());
        } catch (NumberFormatException e) {
          d = Double.NaN;
        }
        if (!(d > 0 && d < 1)) {
          throw new IllegalArgumentException("Value for `bf-error-rate` must be in the range (0, 1)");
        }
        bfErrorRate = d;
      }
      case "bf-initial-size" -> bfInitialSize = range(name, value, 1, 1L << 30);
      case "bf-expansion-factor" -> bfExpansion = range(name, value, 0, 32768);
      case "cf-bucket-size" -> cfBucketSize = range(name, value, 1, 255);
      case "cf-initial-size" -> cfInitialSize = range(name, value, 2 * cfBucketSize, 1L << 30);
      case "cf-max-iterations" -> cfMaxIterations = range(name, value, 1, 65535);
      case "cf-expansion-factor" -> cfExpansion = range(name, value, 0, 32768);
      case "cf-max-expansions" -> cfMaxExpansions = range(name, value, 1, 65536);
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

  private static long range(String name, String value, long min, long max) {
    long v;
    try {
      v = Long.parseLong(value.strip());
    } catch (NumberFormatException e) {
      v = Long.MIN_VALUE;
    }
    if (v < min || v > max) {
      throw new IllegalArgumentException("Value for `" + name + "` must be in the range [" + min + ", " + max + "]");
    }
    return v;
  }
}
