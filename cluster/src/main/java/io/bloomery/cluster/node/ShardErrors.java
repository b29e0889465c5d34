package io.bloomery.cluster.node;

import io.bloomery.cluster.shard.ShardStateMachine;
import io.bloomery.server.resp.Reply;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.exceptions.StateMachineException;

/**
 * The RESP errors a node answers when Ratis did not run a shard's command. Reads and writes differ only where the
 * leader moved ({@code MOVED} for a read, "may or may not have been applied" for a write), so that case stays with
 * each caller; everything else reads the same on both paths.
 */
final class ShardErrors {

  private ShardErrors() {}

  /** A new leader that has not committed its first entry of the term yet, past the command's deadline. */
  static Reply leaderNotReady(String shard) {
    return Reply.error("CLUSTERDOWN The cluster is down: shard " + shard + "'s leader is not ready");
  }

  /**
   * The error for a request that failed ({@code failure}) or was answered without success for a reason other than
   * the leader's: the state machine's refusal as it worded it (an OOM refusal is a Redis error of its own), or the
   * shard's name with what Ratis said.
   */
  static Reply of(String shard, RaftClientReply reply, Throwable failure) {
    if (failure != null) {
      return Reply.error("ERR shard " + shard + ": " + failure);
    }
    StateMachineException refused = reply.getStateMachineException();
    if (refused != null) {
      Throwable cause = refused.getCause();
      return Reply.error(cause instanceof ShardStateMachine.RefusedException r ? r.getMessage()
          : "ERR " + (cause != null ? cause.getMessage() : refused.getMessage()));
    }
    return Reply.error("ERR shard " + shard + ": " + reply.getException());
  }
}
