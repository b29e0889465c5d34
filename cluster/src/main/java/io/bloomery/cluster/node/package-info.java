/**
 * A cluster node: {@code bloomery serve --cluster-enabled yes}. Its identity, the cluster's topology in a metadata
 * Raft group, and the routing of Redis Cluster clients' commands to the shards' Raft leaders.
 */
package io.bloomery.cluster.node;
