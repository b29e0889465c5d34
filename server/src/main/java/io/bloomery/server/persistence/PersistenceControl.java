package io.bloomery.server.persistence;

import java.io.IOException;
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
    @Override public Map<String, String> infoFields() { return Map.of("loading", "0", "aof_enabled", "0"); }
  };

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
