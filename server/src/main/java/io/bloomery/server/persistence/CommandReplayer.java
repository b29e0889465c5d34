package io.bloomery.server.persistence;

import java.util.List;

/**
 * Re-executes a journaled command against the keyspace during recovery, without journaling it again and
 * before any client connects. Implemented by the command layer.
 */
public interface CommandReplayer {

  /**
   * Applies one journaled command.
   *
   * @throws IllegalStateException if the command cannot be applied (the journal and the snapshot
   *     disagree); recovery stops and names the record's file and offset
   */
  void replay(List<byte[]> argv);
}
