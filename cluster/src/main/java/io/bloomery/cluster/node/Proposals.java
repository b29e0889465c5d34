package io.bloomery.cluster.node;

import io.bloomery.cluster.shard.ShardCommand;
import io.bloomery.cluster.shard.ShardStateMachine;
import io.bloomery.server.keyspace.HeapAdmission;
import io.bloomery.server.resp.Reply;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;

/*
 * Why batch, and why one entry at a time.
 *
 * Raft's cost is per entry, not per byte: a log append forced to disk on a majority, a round of append messages and
 * their answers, and the threads of Ratis that carry an entry from the client request to the state machine and back
 * (measured on the 2-vCPU test machine: about 0.75 ms of CPU summed over the three replicas for each entry, most of
 * it in thread switches). So the writes this node's clients send to a shard it leads queue here, and go to Ratis as
 * one entry of all that queued (up to a bound) whenever no entry of this queue is in flight: one client waits as long
 * as it would for an entry of its own; under load the batch grows to what arrived during one round.
 *
 * One entry in flight keeps the clients' order: a client's later write cannot overtake its earlier one, also when a
 * new leader answers "not ready" and the batch goes back to the head of the queue to be sent again.
 */

/**
 * The writes this node's clients sent to one shard's group while this node leads it, in arrival order, sent to the
 * group's Raft log as batched entries ({@link ShardCommand#encodeBatch}), one entry in flight at a time.
 */
final class Proposals {
  /** At most this many commands in one entry. */
  static final int MAX_COMMANDS = 1024;
  /** At most about this many bytes of arguments in one entry (a single larger command goes alone). */
  static final int MAX_BYTES = 1 << 20;
  /**
   * The most bytes of arguments a command (or transaction) may have to go as one entry: Ratis's leader refuses a log
   * entry over 4 MiB, and the entry adds a little framing. A larger write goes alone, in parts of
   * {@link Reshard#ENTRY_BYTES}, one entry each ({@link ShardStateMachine#PART}): the last part applies it.
   */
  static final long MAX_COMMAND_BYTES = (4L << 20) - (64 << 10);
  /**
   * The most bytes of arguments a write may have at all (in parts): Redis's own default bound on a client's query
   * buffer. A larger one, and a transaction under {@code WATCH} too large for one entry (its watched keys could change
   * between its parts), are refused before they are queued, alone, with an error that says so.
   */
  static final long MAX_WRITE_BYTES = 1L << 30;
  private static final long RETRY_MILLIS = 50;

  private final RaftServer raft;
  private final RaftGroupId group;
  private final String shard;
  private final ClientId clientId;
  private final LongSupplier callIds;
  private final ScheduledExecutorService timer;
  private final LongSupplier heldBytes;
  private final ArrayDeque<Proposal> queue = new ArrayDeque<>();
  /** Whether an entry of this queue is with Ratis (or waits to be sent again); guarded by {@code this}. */
  private boolean inFlight;

  /**
   * A write, or a transaction's commands, waiting for its entry. A transaction's commands stay together in one entry,
   * so they apply with no other command between them, as {@code EXEC} runs them.
   *
   * @param commands the command, or the transaction's commands in order
   * @param transaction whether {@code commands} are a transaction's: its reply is the array of theirs
   * @param size their arguments' bytes
   * @param deadline when ({@link System#nanoTime}) a leader not ready yet stops being waited for
   * @param elsewhere where the command goes if this node no longer leads the shard when its turn comes (a
   *     redirection)
   * @param reply completed with the command's reply, or the transaction's array of replies
   * @param holds for a transaction under {@code WATCH}, whether its watched keys are unchanged: asked once every
   *     entry before it has been applied on this leader, as the first of its entry (else {@code null})
   */
  record Proposal(List<List<byte[]>> commands, boolean transaction, long size, long deadline,
      Supplier<CompletionStage<Reply>> elsewhere, CompletableFuture<Reply> reply, BooleanSupplier holds) {}

  /**
   * @param heldBytes the bytes the shard replica's values are counted for on this node: a write in parts is admitted
   *     only if the heap holds three times its size beside them ({@link HeapAdmission})
   */
  Proposals(RaftServer raft, RaftGroupId group, String shard, ClientId clientId, LongSupplier callIds,
      ScheduledExecutorService timer, LongSupplier heldBytes) {
    this.raft = raft;
    this.heldBytes = heldBytes;
    this.group = group;
    this.shard = shard;
    this.clientId = clientId;
    this.callIds = callIds;
    this.timer = timer;
  }

  /** Queues a write; the returned stage completes with its reply, after every write queued before it. */
  CompletableFuture<Reply> add(List<byte[]> argv, long deadline, Supplier<CompletionStage<Reply>> elsewhere) {
    return add(List.of(argv), false, deadline, elsewhere, null);
  }

  /**
   * Queues a transaction's commands, to be applied together in one entry; the returned stage completes with the
   * array of their replies, after every write queued before them.
   */
  CompletableFuture<Reply> addTransaction(List<List<byte[]>> commands, long deadline,
      Supplier<CompletionStage<Reply>> elsewhere, BooleanSupplier holds) {
    return add(commands, true, deadline, elsewhere, holds);
  }

  private CompletableFuture<Reply> add(List<List<byte[]>> commands, boolean transaction, long deadline,
      Supplier<CompletionStage<Reply>> elsewhere, BooleanSupplier holds) {
    long size = 0;
    for (List<byte[]> argv : commands) {
      for (byte[] a : argv) {
        size += a.length;
      }
    }
    if (size > MAX_WRITE_BYTES) {
      return CompletableFuture.completedFuture(Reply.error("ERR a write of " + size + " bytes is more than a cluster "
          + "node takes (" + MAX_WRITE_BYTES + " bytes of arguments): nothing was applied"));
    }
    if (size > MAX_COMMAND_BYTES && !HeapAdmission.admits(heldBytes.getAsLong(), 3 * size, size)) {
      // every replica holds the parts received, then the arguments decoded from them, then applies them; this node
      // holds the request encoded besides: a heap that cannot would fail the entry's apply, not just the write
      return CompletableFuture.completedFuture(Reply.error("OOM a write of " + size + " bytes goes in parts, which "
          + "take about three times its size of a node's heap beside its keys; this node's heap cannot hold that: "
          + "nothing was applied"));
    }
    if (size > MAX_COMMAND_BYTES && holds != null) {
      return CompletableFuture.completedFuture(Reply.error("ERR a transaction under WATCH of " + size + " bytes is "
          + "more than a cluster node's log entry takes (" + MAX_COMMAND_BYTES + " bytes of arguments), and a larger"
          + " one goes in parts between which its watched keys could change: nothing was applied"));
    }
    Proposal p = new Proposal(commands, transaction, size, deadline, elsewhere, new CompletableFuture<>(), holds);
    boolean send;
    synchronized (this) {
      queue.add(p);
      send = !inFlight;
      inFlight = true;
    }
    if (send) {
      sendNext();
    }
    return p.reply();
  }

  /** Sends the queue's head as one entry, or marks the queue idle when it is empty. */
  private void sendNext() {
    List<Proposal> batch = new ArrayList<>();
    synchronized (this) {
      long bytes = 0;
      int count = 0;
      while (!queue.isEmpty() && (batch.isEmpty() || count + queue.peek().commands().size() <= MAX_COMMANDS
          && bytes + queue.peek().size() <= MAX_BYTES && queue.peek().holds() == null)) {
        // a larger transaction or command goes alone; a watched transaction goes first in an entry of its own
        Proposal p = queue.poll();
        bytes += p.size();
        count += p.commands().size();
        batch.add(p);
      }
      if (batch.isEmpty()) {
        inFlight = false;
        return;
      }
    }
    RaftServer.Division division = leading();
    if (division == null) {
      // led elsewhere now: nothing of this batch was sent, so each command goes where it would have gone
      for (Proposal p : batch) {
        forward(p.elsewhere().get(), p.reply());
      }
      sendNext();
      return;
    }
    Proposal first = batch.get(0);
    if (first.holds() != null) {
      // every entry this queue sent before has been applied here (its reply came after that); entries of earlier
      // terms may still be on their way to the state machine: wait for them, then ask whether the watch holds
      boolean behind = division.getInfo().getLastAppliedIndex() < division.getRaftLog().getLastCommittedIndex();
      if (behind && System.nanoTime() > first.deadline()) {
        behind = false; // not caught up within the command's wait: the watch is taken as broken, below
        first.reply().complete(Reply.NIL_ARRAY);
      }
      if (behind) {
        requeue(batch);
        timer.schedule(this::sendNext, 1, TimeUnit.MILLISECONDS);
        return;
      }
      if (first.reply().isDone() || !first.holds().getAsBoolean()) {
        first.reply().complete(Reply.NIL_ARRAY); // a watched key changed: EXEC runs nothing, as in Redis
        requeue(batch.subList(1, batch.size()));
        sendNext();
        return;
      }
    }
    if (first.size() > MAX_COMMAND_BYTES) { // alone: a larger write never joins a batch, nor one joins it
      byte[] id = (clientId + "-" + callIds.getAsLong()).getBytes(StandardCharsets.US_ASCII);
      sendPart(first, id, System.currentTimeMillis(), ShardCommand.encodeBatch(first.commands()), 0);
      return;
    }
    List<List<byte[]>> commands = new ArrayList<>(batch.size());
    for (Proposal p : batch) {
      commands.addAll(p.commands());
    }
    submit(division, ShardCommand.encodeBatch(commands)).whenComplete((reply, failure) -> finish(batch, reply, failure));
  }

  /** This node's division of the shard while it leads it, else {@code null}. */
  private RaftServer.Division leading() {
    try {
      RaftServer.Division division = raft.getDivision(group);
      return division != null && division.getInfo().isLeader() ? division : null;
    } catch (IOException e) {
      return null;
    }
  }

  private CompletableFuture<RaftClientReply> submit(RaftServer.Division division, byte[] content) {
    RaftClientRequest request = RaftClientRequest.newBuilder().setClientId(clientId).setServerId(raft.getId())
        .setGroupId(group).setCallId(callIds.getAsLong()).setMessage(Message.valueOf(ByteString.copyFrom(content)))
        .setType(RaftClientRequest.writeRequestType()).build();
    try {
      return RaftNode.submit(raft, division, request);
    } catch (IOException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  /**
   * Sends bytes {@code offset ..} of a large write's request {@code whole} as one {@link ShardStateMachine#PART} entry,
   * then the next part once this one is applied; the last part's reply is the write's. Until the last part is
   * appended nothing of the write is applied, so a write that meets another leader before it goes there whole.
   */
  private void sendPart(Proposal p, byte[] id, long started, byte[] whole, int offset) {
    RaftServer.Division division = leading();
    if (division == null) {
      sendElsewhere(p);
      return;
    }
    int n = Math.min(Reshard.ENTRY_BYTES, whole.length - offset);
    boolean last = offset + n == whole.length;
    List<byte[]> part = List.of(ascii(ShardStateMachine.PART), id, ascii(Long.toString(started)),
        ascii(Integer.toString(whole.length)), ascii(Integer.toString(offset)),
        Arrays.copyOfRange(whole, offset, offset + n));
    submit(division, ShardCommand.encodeArguments(part)).whenComplete((reply, failure) -> {
      boolean applied = failure == null && reply.isSuccess();
      Reply answer = applied ? ShardStateMachine.reply(reply.getMessage()) : null;
      if (applied && answer instanceof Reply.Error) {
        p.reply().complete(answer); // a part that did not follow: the write was forgotten, none of it applied
        sendNext();
      } else if (last) {
        finish(List.of(p), reply, failure);
      } else if (applied) {
        sendPart(p, id, started, whole, offset + n);
      } else if (failure == null && reply.getLeaderNotReadyException() != null && System.nanoTime() <= p.deadline()) {
        timer.schedule(() -> sendPart(p, id, started, whole, offset), RETRY_MILLIS, TimeUnit.MILLISECONDS);
      } else if (failure == null && reply.getNotLeaderException() != null) {
        sendElsewhere(p);
      } else {
        Reply error = failure == null && reply.getLeaderNotReadyException() != null ? ShardErrors.leaderNotReady(shard)
            : ShardErrors.of(shard, reply, failure);
        p.reply().complete(error instanceof Reply.Error e ? Reply.error(e.text()
            + " (part of a write in parts failed: nothing of the write was applied)") : error);
        sendNext();
      }
    });
  }

  /** A write in parts that meets another leader before its last part: nothing of it applied, it goes there whole. */
  private void sendElsewhere(Proposal p) {
    forward(p.elsewhere().get(), p.reply());
    sendNext();
  }

  private static byte[] ascii(String s) {
    return s.getBytes(StandardCharsets.US_ASCII);
  }

  private void finish(List<Proposal> batch, RaftClientReply reply, Throwable failure) {
    if (failure == null && !reply.isSuccess() && reply.getLeaderNotReadyException() != null) {
      // a new leader that has not committed its first entry yet: nothing was appended, so the batch goes again,
      // ahead of everything queued after it, except the commands that waited long enough
      List<Proposal> again = new ArrayList<>(batch.size());
      for (Proposal p : batch) {
        if (System.nanoTime() > p.deadline()) {
          p.reply().complete(ShardErrors.leaderNotReady(shard));
        } else {
          again.add(p);
        }
      }
      requeue(again);
      timer.schedule(this::sendNext, RETRY_MILLIS, TimeUnit.MILLISECONDS);
      return;
    }
    try {
      if (failure == null && reply.isSuccess()) {
        Reply replies = ShardStateMachine.reply(reply.getMessage());
        int count = batch.stream().mapToInt(p -> p.commands().size()).sum();
        if (!(replies instanceof Reply.Array array) || array.elements().size() != count) {
          failAll(batch, Reply.error("ERR shard " + shard + " answered a batch of " + count
              + " commands with " + replies));
        } else {
          int at = 0;
          for (Proposal p : batch) {
            int n = p.commands().size();
            p.reply().complete(p.transaction() ? Reply.array(new ArrayList<>(array.elements().subList(at, at + n)))
                : array.elements().get(at));
            at += n;
          }
        }
      } else if (failure == null && reply.getNotLeaderException() != null) {
        // the entry may have been appended before this node lost the leadership: a retry could apply it twice
        failAll(batch, Reply.error("ERR shard " + shard + " lost its leader while this command was in flight: it "
            + "may or may not have been applied"));
      } else {
        failAll(batch, ShardErrors.of(shard, reply, failure));
      }
    } finally {
      sendNext();
    }
  }

  /** Puts {@code batch} back at the head of the queue, in its order, ahead of everything queued after it. */
  private synchronized void requeue(List<Proposal> batch) {
    for (int i = batch.size() - 1; i >= 0; i--) {
      queue.addFirst(batch.get(i));
    }
  }

  private static void failAll(List<Proposal> batch, Reply error) {
    for (Proposal p : batch) {
      p.reply().complete(error);
    }
  }

  private static void forward(CompletionStage<Reply> from, CompletableFuture<Reply> to) {
    from.whenComplete((r, e) -> {
      if (e != null) {
        to.completeExceptionally(e);
      } else {
        to.complete(r);
      }
    });
  }
}
