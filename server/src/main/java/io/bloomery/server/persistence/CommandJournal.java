package io.bloomery.server.persistence;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * Where the command layer records every mutating command it has applied.
 *
 * <p>The executor calls {@link #append} after a mutating command changed the keyspace, while it still
 * holds the locks of every key the command touched (and the shared side of the keyspace's cut lock, see
 * {@link SnapshotSource}), so the journal's order equals the apply order for every key. The argv given is
 * exactly what recovery re-executes through {@link CommandReplayer}: a command whose effect is not
 * deterministic from its arguments (an auto-created key that took the server's defaults, a random
 * choice) is journaled in a form that is.
 *
 * <p>The client's reply is written only when the returned stage completes: under
 * {@code appendfsync always} that is after the record's fsync (many callers share one fsync); under
 * {@code everysec} and {@code no} at once. A stage that completes exceptionally means the record may not
 * be durable: the client gets an error reply, never an acknowledgement.
 *
 * <p>Before it applies a write command the executor asks {@link #refusal()}: while the journal cannot take
 * records (a full disk), the command is refused without touching the keyspace.
 */
public interface CommandJournal {

  /** A journal that keeps nothing: the server's behaviour without {@code --appendonly yes}. */
  CommandJournal NONE = argv -> CompletableFuture.completedFuture(null);

  /**
   * Records one applied mutating command.
   *
   * @param argv the command name and its arguments, as they would arrive on the wire
   * @return completes when the record is durable under the configured fsync policy
   */
  CompletionStage<Void> append(List<byte[]> argv);

  /**
   * Why write commands must be refused before they apply, or {@code null} when they may run. Cheap when writes
   * are accepted; while they are refused a call may try whether the journal can take records again.
   */
  default String refusal() {
    return null;
  }
}
