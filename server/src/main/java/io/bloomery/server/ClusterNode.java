package io.bloomery.server;

import io.bloomery.server.command.CommandRouter;
import io.bloomery.server.state.ReplicaView;
import io.bloomery.server.state.ServerContext;
import io.bloomery.server.command.guard.GuardSets;
import java.io.IOException;
import java.util.ServiceLoader;

/**
 * The cluster node a server process is with {@code cluster-enabled yes}: it decides where each command runs
 * ({@link CommandRouter}) and owns the node's Raft server. The {@code cluster} module provides it through
 * {@link java.util.ServiceLoader}, looked up only when a node starts, so a single-node server loads none of it.
 */
public interface ClusterNode extends CommandRouter, ReplicaView, AutoCloseable {

  /** Leaves the node's Raft groups (their logs stay in the data directory for the next start). */
  @Override
  void close();

  /** Starts a node. */
  interface Provider {
    /**
     * Starts the node of {@code config} (its identity and Raft logs under {@code dir}) for a server whose commands
     * run on {@code context}, its guarded keys on {@code guards} (which the node makes follow its shard's log).
     *
     * @throws IOException if the node cannot start: its directory belongs to another node, its bus port is taken
     */
    ClusterNode start(ServerConfig config, ServerContext context, GuardSets guards) throws IOException;
  }

  /**
   * Starts the node the class path provides.
   *
   * @throws IOException if none does (a build without the cluster module), or it cannot start
   */
  static ClusterNode start(ServerConfig config, ServerContext context, GuardSets guards) throws IOException {
    Provider provider = ServiceLoader.load(Provider.class, ClusterNode.class.getClassLoader()).findFirst()
        .orElseThrow(() -> new IOException("cluster-enabled yes needs the cluster module, which this build lacks"));
    return provider.start(config, context, guards);
  }
}
