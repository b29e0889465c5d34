package io.bloomery.server.command;

import io.bloomery.server.resp.Reply;
import io.bloomery.server.state.ClientState;
import java.util.List;
import java.util.concurrent.CompletionStage;

/**
 * Decides where a command runs when the server is a cluster node: the {@link Dispatcher} asks it after its own
 * checks (arity, authentication, ACL) and before it runs a command itself. A single-node server has none.
 */
public interface CommandRouter {
  /**
   * The reply of a command this router answers (a completed stage for an answer at hand: a redirection, an error, a
   * reply the router computed; an incomplete one for a reply that comes later, such as a write waiting for its
   * shard's log), or {@code null} for a command the server runs as a single node would.
   *
   * @param spec the command's entry in the table, or {@code null} for a name the table does not know (the
   *     cluster's own commands); the client is authenticated then
   */
  CompletionStage<Reply> route(ClientState client, CommandSpec spec, List<byte[]> argv);

  /**
   * Whether {@code spec} may run while earlier commands of the same client still wait for their replies: this
   * router applies such commands in the order the client sent them and answers each in its turn (a cluster node's
   * writes to a shard it leads, which queue for the shard's log). The client's replies still go out in order; any
   * other command waits until every earlier reply went out. {@code false} unless a router says so.
   */
  default boolean pipelines(CommandSpec spec, List<byte[]> argv) {
    return false;
  }

  /**
   * The reply of {@code EXEC} for the commands a transaction queued ({@code specs[i]} is {@code commands[i]}'s entry;
   * each passed the ACL), run by this router as one unit: the array of their replies, or an error for the whole
   * transaction. {@code null} (the default) runs it on this server as a single node would.
   */
  default CompletionStage<Reply> transaction(ClientState client, List<CommandSpec> specs,
      List<List<byte[]>> commands) {
    return null;
  }
}
