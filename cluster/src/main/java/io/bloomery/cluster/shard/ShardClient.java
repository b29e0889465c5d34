package io.bloomery.cluster.shard;

import io.bloomery.server.resp.Reply;
import java.io.Closeable;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.protocol.exceptions.StaleReadException;
import org.apache.ratis.protocol.exceptions.StateMachineException;
import org.apache.ratis.retry.RetryPolicies;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.apache.ratis.util.TimeDuration;

/**
 * Sends commands to one shard's group over Ratis's client protocol: writes to the leader through the log, reads to
 * the leader (linearizable) or to a named replica once it has applied a given index. Ratis finds the leader and
 * retries a request whose replica failed under the same call id, which the group's retry cache answers without
 * applying it twice. For tools and tests; Redis clients talk RESP to a node instead.
 */
public final class ShardClient implements Closeable {
  private static final TimeDuration RETRY_SLEEP = TimeDuration.valueOf(100, TimeUnit.MILLISECONDS);
  private final RaftClient client;
  private final Duration retryFor;

  /**
   * A client of {@code group} that retries a request for up to {@code retryFor} (a leader being elected, a replica
   * restarting) before it fails.
   */
  public ShardClient(ShardGroup group, Duration retryFor) {
    this.retryFor = retryFor;
    long attempts = Math.max(1, retryFor.toMillis() / RETRY_SLEEP.toLong(TimeUnit.MILLISECONDS));
    this.client = RaftClient.newBuilder().setRaftGroup(group.raftGroup())
        .setProperties(ShardReplica.clientProperties(new RaftProperties()))
        .setRetryPolicy(RetryPolicies.retryUpToMaximumCountWithFixedSleep((int) Math.min(Integer.MAX_VALUE, attempts),
            RETRY_SLEEP))
        .build();
  }

  /** A reply and the log index it was answered at. */
  public record Answer(Reply reply, long logIndex) {}

  /** Runs a mutating command through the log; returns once a majority has it and the leader applied it. */
  public Answer write(List<byte[]> argv) throws IOException {
    return answer(client.io().send(message(argv)));
  }

  /**
   * Runs commands through the log as one entry, applied one after the other; the reply is the array of theirs.
   */
  public Answer writeBatch(List<List<byte[]>> commands) throws IOException {
    return answer(client.io().send(batchMessage(commands)));
  }

  /** A request of commands to be applied as one entry ({@link ShardCommand#encodeBatch}). */
  public static Message batchMessage(List<List<byte[]>> commands) {
    return Message.valueOf(org.apache.ratis.thirdparty.com.google.protobuf.ByteString.copyFrom(
        ShardCommand.encodeBatch(commands)));
  }

  /** Runs a read-only command on the leader, after it confirmed it still leads (linearizable). */
  public Answer read(List<byte[]> argv) throws IOException {
    return answer(client.io().sendReadOnly(message(argv)));
  }

  /**
   * Runs a read-only command on {@code replica}, which answers once it has applied {@code minIndex}: a replica that
   * has not committed it yet (a follower learns the leader's commit index with its next append) is asked again every
   * 20 ms for as long as this client retries.
   */
  public Answer readAt(String replica, long minIndex, List<byte[]> argv) throws IOException {
    long deadline = System.nanoTime() + retryFor.toNanos();
    while (true) {
      try {
        return answer(client.io().sendStaleRead(message(argv), minIndex, RaftPeerId.valueOf(replica)));
      } catch (StateMachineException e) {
        // over gRPC the cause arrives as its class name in the message, in process as the cause itself
        boolean stale = e.getCause() instanceof StaleReadException
            || String.valueOf(e.getMessage()).contains(StaleReadException.class.getName());
        if (!stale || System.nanoTime() > deadline) {
          throw e;
        }
      }
      try {
        Thread.sleep(20);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new InterruptedIOException("interrupted while " + replica + " catches up to index " + minIndex);
      }
    }
  }

  /** The current leader's id as this client last learned it, or {@code null}. */
  public String leader() {
    RaftPeerId id = client.getLeaderId();
    return id == null ? null : id.toString();
  }

  /** Text arguments as UTF-8 bytes. */
  public static List<byte[]> argv(String... args) {
    List<byte[]> out = new ArrayList<>(args.length);
    for (String a : args) {
      out.add(a.getBytes(StandardCharsets.UTF_8));
    }
    return out;
  }

  /** A command as the message a shard's state machine takes. */
  public static Message message(List<byte[]> argv) {
    return Message.valueOf(ByteString.copyFrom(ShardCommand.encodeArguments(argv)));
  }

  private static Answer answer(RaftClientReply reply) throws IOException {
    if (!reply.isSuccess()) {
      throw reply.getException() != null ? reply.getException() : new IOException("request failed: " + reply);
    }
    return new Answer(ShardStateMachine.reply(reply.getMessage()), reply.getLogIndex());
  }

  @Override
  public void close() throws IOException {
    client.close();
  }
}
