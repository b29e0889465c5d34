package io.bloomery.server.persistence;

import java.io.IOException;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What the server's own commands ({@code SAVE}, {@code BGSAVE}, {@code BGREWRITEAOF}, {@code LASTSAVE},
 * {@code INFO persistence}) ask of the durability layer. Implemented by this package; the command layer
 * uses {@link #DISABLED} until persistence is configured.
 */
public interface PersistenceControl {

  /** No persistence: saves are refused with the reason, INFO reports it off. */
  PersistenceControl DISABLED = new PersistenceControl() {
    @Override public void save() throws IOException { throw new IOException("persistence is disabled (no --dir)"); }
    @Override public boolean backgroundSave() { return false; }
    @Override public boolean backgroundRewrite() { return false; }
    @Override public long lastSaveUnixSeconds() { return 0; }
    @Override public Map<String, String> infoFields() { return idleInfo(); }
  };

  /**
   * INFO persistence without persistence: Redis's fields with the values of a server that has never saved, as a
   * Redis with {@code save ""} and {@code appendonly no} prints them (clients such as RLTest poll
   * {@code rdb_bgsave_in_progress} after FLUSHALL).
   */
  private static Map<String, String> idleInfo() {
    Map<String, String> m = new LinkedHashMap<>();
    m.put("loading", "0");
    m.put("async_loading", "0");
    m.put("rdb_bgsave_in_progress", "0");
    m.put("rdb_last_save_time", "0");
    m.put("rdb_last_bgsave_status", "ok");
    m.put("rdb_last_bgsave_time_sec", "-1");
    m.put("rdb_current_bgsave_time_sec", "-1");
    m.put("rdb_saves", "0");
    m.put("aof_enabled", "0");
    m.put("aof_rewrite_in_progress", "0");
    m.put("aof_rewrite_scheduled", "0");
    m.put("aof_last_rewrite_time_sec", "-1");
    m.put("aof_current_rewrite_time_sec", "-1");
    m.put("aof_last_bgrewrite_status", "ok");
    m.put("aof_rewrites", "0");
    m.put("aof_last_write_status", "ok");
    return Collections.unmodifiableMap(m);
  }

  /** {@code SAVE}: writes a snapshot now and returns when it is durable (temp, fsync, rename, fsync dir). */
  void save() throws IOException;

  /** {@code BGSAVE}: starts a snapshot in the background; {@code false} if one is already running. */
  boolean backgroundSave();

  /** {@code BGREWRITEAOF}: starts a journal rewrite in the background; {@code false} if one is running. */
  boolean backgroundRewrite();

  /** {@code LASTSAVE}: Unix seconds of the last successful snapshot, {@code 0} if none. */
  long lastSaveUnixSeconds();

  /** The {@code INFO persistence} section's fields, in the order they are printed. */
  Map<String, String> infoFields();
}
