package io.bloomery.server.persistence;

import java.util.Locale;

/**
 * When the journal forces its records to stable storage, with redis-server's {@code appendfsync} names.
 *
 * <p>Under every policy a record is handed to the kernel ({@code write(2)}) before its command is
 * acknowledged, so a crash of the server process alone (kill -9, an {@code OutOfMemoryError}) loses no
 * acknowledged write. The policy decides what an operating-system crash or a power failure may lose.
 */
public enum FsyncPolicy {
  /**
   * A command is acknowledged only after an fsync that covers its record. Concurrent commands share one
   * fsync (group commit). Nothing acknowledged is lost on power failure.
   */
  ALWAYS("always"),
  /**
   * A background thread forces the journal once a second; commands are acknowledged at once, unless
   * the oldest record not yet forced is more than two seconds old, in which case new commands wait for
   * the fsync that covers them. A power failure loses at most the writes acknowledged within one window
   * of two seconds (see {@code docs/PERSISTENCE.md}).
   */
  EVERYSEC("everysec"),
  /** Never forced by the server (the kernel writes back when it likes, about 30 s on Linux). */
  NO("no");

  private final String configName;

  FsyncPolicy(String configName) {
    this.configName = configName;
  }

  /** The name in {@code --appendfsync} and {@code CONFIG GET appendfsync}. */
  public String configName() {
    return configName;
  }

  /**
   * Parses {@code always}, {@code everysec} or {@code no} (any case).
   *
   * @throws IllegalArgumentException naming the accepted values
   */
  public static FsyncPolicy parse(String name) {
    for (FsyncPolicy policy : values()) {
      if (policy.configName.equals(name.toLowerCase(Locale.ROOT))) {
        return policy;
      }
    }
    throw new IllegalArgumentException("appendfsync: expected always, everysec or no, found '" + name + "'");
  }
}
