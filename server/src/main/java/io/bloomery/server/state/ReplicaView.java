package io.bloomery.server.state;

import io.bloomery.server.keyspace.Keyspace;
import java.util.Map;

/**
 * What a cluster node tells INFO, {@code /metrics}, {@code /health} and the dashboard about the shard replica it
 * holds. A cluster node serves its keys from that replica, not from the server's own keyspace, which stays empty.
 */
public interface ReplicaView {

  /** The keyspace of this node's shard replica, or {@code null} while it holds none (not joined, or left). */
  Keyspace replicaKeyspace();

  /**
   * INFO's replication fields for this node, in Redis Cluster's words: {@code role:master} on its shard's leader,
   * {@code role:slave} with the leader's address on a follower.
   */
  Map<String, String> replicationInfo();
}
