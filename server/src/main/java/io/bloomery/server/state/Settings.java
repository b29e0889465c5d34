package io.bloomery.server.state;

import io.bloomery.redisbloom.CuckooFilter;
import io.bloomery.redisbloom.ScalableBloomFilter;

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
  /** Milliseconds of the first delayed wrong-password reply on a connection (0: none delayed). */
  public volatile long authFailDelayMillis = 100;

  public boolean passwordRequired() {
    String p = requirepass;
    return p != null && !p.isEmpty();
  }
}
