package io.bloomery.cluster.node;

import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.statemachine.TransactionContext;
import org.apache.ratis.statemachine.impl.BaseStateMachine;

/**
 * The state machine of a cluster's metadata group, which every node is a member of: the {@link Topology} (set once,
 * by {@code cluster create}) and, for each shard, the latest leader a node announced with its Raft term, so that a
 * node outside a shard can name its leader in {@code MOVED} and {@code CLUSTER SLOTS}.
 *
 * <p>Entries are UTF-8 text: {@code topology\nTEXT} ({@link Topology#encode}) and {@code leader SHARD TERM NODE}. An
 * announcement with a lower term than the one recorded is ignored, so a deposed leader's late announcement never
 * overwrites its successor's. The log is small (one entry per election) and replayed whole on a start.
 */
final class MetaStateMachine extends BaseStateMachine {
  /** A shard's leader as announced: the node and the Raft term it leads in. */
  record Leader(String node, long term) {}

  private volatile Topology topology;
  private final Map<String, Leader> leaders = new ConcurrentHashMap<>();

  /** The cluster's topology, or {@code null} before it is created. */
  Topology topology() {
    return topology;
  }

  /** The latest leader announced for {@code shard}, or {@code null}. */
  Leader leader(String shard) {
    return leaders.get(shard);
  }

  static Message topologyEntry(Topology t) {
    return Message.valueOf("topology\n" + t.encode());
  }

  static Message leaderEntry(String shard, long term, String node) {
    return Message.valueOf("leader " + shard + " " + term + " " + node);
  }

  @Override
  public CompletableFuture<Message> applyTransaction(TransactionContext trx) {
    LogEntryProto entry = trx.getLogEntry();
    String text = entry.getStateMachineLogEntry().getLogData().toString(StandardCharsets.UTF_8);
    String answer;
    try {
      answer = apply(text);
    } catch (IllegalArgumentException e) {
      answer = "ERR " + e.getMessage();
    }
    updateLastAppliedTermIndex(entry.getTerm(), entry.getIndex());
    return CompletableFuture.completedFuture(Message.valueOf(answer));
  }

  private String apply(String text) {
    if (text.startsWith("topology\n")) {
      Topology t = Topology.parse(text.substring("topology\n".length()));
      if (topology != null) {
        return topology.equals(t) ? "OK" : "ERR the cluster " + topology.cluster() + " exists already";
      }
      topology = t;
      return "OK";
    }
    String[] f = text.split(" ");
    if (f.length == 4 && f[0].equals("leader")) {
      Leader announced = new Leader(f[3], Long.parseLong(f[2]));
      leaders.merge(f[1], announced, (old, now) -> now.term() >= old.term() ? now : old);
      return "OK";
    }
    throw new IllegalArgumentException("not a metadata entry: " + text.lines().findFirst().orElse(""));
  }
}
