package io.bloomery.cluster.node;

import io.bloomery.cluster.shard.GuardDeclarations;
import io.bloomery.server.command.guard.GuardSets;
import io.bloomery.server.keyspace.Key;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.ratis.protocol.RaftGroupId;

/**
 * A cluster node's guarded keys ({@link GuardSets}) as its shards' logs declare them: each shard replica here tells
 * it which keys to open and drop ({@link #of}), and the node's leadership of each key's shard decides whether it
 * serves them ({@link GuardSets.Leadership}, answered by the {@link RaftNode} once it runs).
 */
final class ClusterGuards implements GuardSets.Leadership {
  private final GuardSets guards;
  /** Per shard group here, the keys its log declared, so that a snapshot or the group's removal drops only its own. */
  private final Map<RaftGroupId, Set<Key>> declared = new ConcurrentHashMap<>();
  private volatile RaftNode node;

  /** Makes {@code guards} follow the logs of node {@code nodeId}'s shards; before its Raft server replays them. */
  ClusterGuards(GuardSets guards, String nodeId) {
    this.guards = guards;
    guards.followLog(nodeId, this);
  }

  GuardSets guards() {
    return guards;
  }

  /** The node whose divisions say which shards it leads; until it is set, it leads none. */
  void node(RaftNode value) {
    this.node = value;
  }

  /** What the replica of shard group {@code group} here tells the guards as its log declares and drops keys. */
  GuardDeclarations.Listener of(RaftGroupId group) {
    return new GuardDeclarations.Listener() {
      @Override
      public void declared(Key key, GuardDeclarations.Declaration d) {
        keysOf(group).add(key);
        guards.declare(key, d.store(), d.errorRate(), d.capacity());
      }

      @Override
      public void dropped(Key key) {
        keysOf(group).remove(key);
        guards.undeclare(key);
      }

      @Override
      public void moved(Key key) {
        keysOf(group).remove(key);
        guards.moved(key);
      }

      @Override
      public void rebuild(Key key) {
        guards.rebuildFromLog(key);
      }

      @Override
      public String state(Key key) {
        io.bloomery.server.command.guard.GuardedKeyHealth h = guards.health(key);
        if (h == null) {
          return "not opened on this node";
        }
        return h.built() ? GuardDeclarations.READY : h.state();
      }

      @Override
      public void replaced(Map<Key, GuardDeclarations.Declaration> all) {
        Set<Key> mine = keysOf(group);
        for (Key k : Set.copyOf(mine)) {
          if (!all.containsKey(k)) {
            dropped(k);
          }
        }
        all.forEach(this::declared);
      }
    };
  }

  /** The shard group left this node (removed, or the node left the cluster): its guarded keys close here. */
  void removed(RaftGroupId group) {
    Set<Key> keys = declared.remove(group);
    if (keys != null) {
      keys.forEach(guards::undeclare);
    }
  }

  private Set<Key> keysOf(RaftGroupId group) {
    return declared.computeIfAbsent(group, g -> ConcurrentHashMap.newKeySet());
  }

  @Override
  public long term(Key key) {
    RaftNode n = node;
    return n == null ? -1 : n.leaderTerm(key);
  }

  @Override
  public CompletionStage<Boolean> confirm(Key key, long term) {
    RaftNode n = node;
    return n == null ? CompletableFuture.completedFuture(false) : n.confirmLeader(key, term);
  }

  @Override
  public boolean changes() {
    return true;
  }
}
