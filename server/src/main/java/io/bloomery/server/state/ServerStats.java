package io.bloomery.server.state;

import java.util.concurrent.atomic.LongAdder;

/** Counters for INFO stats and the metrics endpoint. */
public final class ServerStats {
  public final LongAdder connectionsReceived = new LongAdder();
  /** SLOWLOG's entries. */
  public final SlowLog slowLog = new SlowLog();
  /** LATENCY's events. */
  public final LatencyMonitor latency = new LatencyMonitor();
  public final LocalCounter commandsProcessed = new LocalCounter(); // per command: no atomic add
  public final LongAdder rejectedConnections = new LongAdder();
  public final LocalCounter errorReplies = new LocalCounter(); // per command: no atomic add
  public final LocalCounter keyspaceHits = new LocalCounter(); // per command: no atomic add
  public final LocalCounter keyspaceMisses = new LocalCounter(); // per command: no atomic add
  public final LongAdder expiredKeys = new LongAdder();
  public final LongAdder outputBufferDisconnections = new LongAdder();
  public final LongAdder protocolErrorDisconnections = new LongAdder();
  public final LongAdder oomRejections = new LongAdder();
  /** Wrong passwords given to AUTH or HELLO ({@code acl_access_denied_auth}, Redis's name). */
  public final LongAdder authFailures = new LongAdder();
  /** Wrong-password replies held back by the per-connection throttle. */
  public final LongAdder authFailuresDelayed = new LongAdder();
  /** Per-command calls, time, rejections and failures for INFO commandstats. */
  public final CommandStats commands = new CommandStats();
}
