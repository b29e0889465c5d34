/**
 * One shard replicated by Raft (Apache Ratis): {@link io.bloomery.cluster.shard.ShardReplica} runs a replica whose
 * state machine ({@link io.bloomery.cluster.shard.ShardStateMachine}) is the server's keyspace, fed by the
 * {@link io.bloomery.cluster.shard.ShardCommand}s its log commits; {@link io.bloomery.cluster.shard.ShardClient}
 * sends commands to a shard's group.
 */
package io.bloomery.cluster.shard;
