package io.bloomery.server.net;

import io.bloomery.server.command.Dispatcher;
import io.bloomery.server.command.Errors;
import io.bloomery.server.resp.Reply;
import io.bloomery.server.resp.RespEncoder;
import io.bloomery.server.resp.RespProtocolException;
import io.bloomery.server.resp.RespRequest;
import io.bloomery.server.state.ClientState;
import io.bloomery.server.state.RateLimitedLog;
import io.bloomery.server.state.ServerContext;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelOutboundBuffer;
import io.netty.handler.codec.DecoderException;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.util.concurrent.ScheduledFuture;
import java.net.InetSocketAddress;
import java.util.ArrayDeque;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.event.Level;

/**
 * One client connection: runs its commands in arrival order on the connection's event loop and writes each reply
 * in the same order, also when a reply must wait (for its journal record's fsync, an external store, a shard's log).
 * Commands behind a waiting reply wait too, unless the dispatcher pipelines them ({@link Dispatcher#pipelines}: keyed
 * writes, whose journal records or log entries keep their order); their replies wait in turn.
 *
 * <p>Output is bounded: while the socket's buffer is above the high-water mark, no further commands are executed
 * and no more bytes are read; a client whose unsent replies pass the hard limit, or that stays unwritable for the
 * stall period, is disconnected. Other connections never wait for it.
 */
final class ClientHandler extends ChannelInboundHandlerAdapter {
  private static final Logger LOG = LoggerFactory.getLogger(ClientHandler.class);
  private static final RateLimitedLog PROTOCOL_ERRORS = new RateLimitedLog(LOG, Level.INFO, "protocol error");
  private static final RateLimitedLog UNEXPECTED_ERRORS = new RateLimitedLog(LOG, Level.WARN, "unexpected error");
  private static final RateLimitedLog SLOW_CLIENTS = new RateLimitedLog(LOG, Level.WARN, "slow client");

  /**
   * Unsent bytes an unauthenticated client may have (CVE-2025-21605: a client that never reads must not grow
   * NOAUTH replies without bound).
   */
  static final long UNAUTHENTICATED_OUTPUT_LIMIT = 1024 * 1024;

  private final ServerContext server;
  private final Dispatcher dispatcher;
  private final ClientState client;
  private final long stallMillis;
  /**
   * Bytes a batch of replies may reach before it is handed to the channel mid-read, so that the channel's
   * writability (the output bound) sees them.
   */
  static final int BATCH_HANDOFF_BYTES = 64 * 1024;

  private final ArrayDeque<RespRequest> pending = new ArrayDeque<>();
  /**
   * Replies encoded but not yet handed to the channel: a pipelined read's replies go out as one buffer (one
   * channel write, one flush) instead of one pooled buffer, promise and outbound entry per reply.
   */
  private ByteBuf batch;
  /** The future of the latest batch handed to the channel (the one holding a reply that filled the batch). */
  private ChannelFuture lastHandOff;
  /**
   * Replies owed, in command order ({@link Owed}): while any is, only commands the dispatcher pipelines run, and only
   * if every owed reply is of such a command, up to {@link #MAX_OWED} of them; any other command waits until all
   * went out.
   */
  private final ArrayDeque<Owed> owed = new ArrayDeque<>();
  private boolean owedPipelined = true;
  /** At most this many replies owed to one client at a time (the commands behind them wait unread). */
  static final int MAX_OWED = 512;
  private boolean closing;
  /** Whether this connection's unexpected error was logged (it is logged once, however often it is raised). */
  private boolean failureLogged;
  private ScheduledFuture<?> stallCheck;
  /** Bytes of MONITOR lines handed to the loop and not yet written. */
  private final AtomicLong monitorQueued = new AtomicLong();
  private final AtomicBoolean monitorOverflow = new AtomicBoolean();
  /** Whether a task to pay landed replies ({@link #payLanded}) waits for the event loop. */
  private final AtomicBoolean payScheduled = new AtomicBoolean();

  ClientHandler(ServerContext server, Dispatcher dispatcher, ClientState client, long stallMillis) {
    this.server = server;
    this.dispatcher = dispatcher;
    this.client = client;
    this.stallMillis = stallMillis;
    client.lease(server.keyspace().lease());
  }

  @Override
  public void channelActive(ChannelHandlerContext ctx) {
    client.killer(() -> ctx.channel().eventLoop().execute(() -> ctx.close()));
    client.monitorSink(line -> monitorLine(ctx, line));
    if (server.clientCount() > server.settings().maxclients()) {
      server.stats().rejectedConnections.increment();
      refuse(ctx, Errors.MAX_CLIENTS);
      return;
    }
    if (server.settings().protectedMode() && server.acl().defaultUser().nopass()
        && ctx.channel().remoteAddress() instanceof InetSocketAddress remote
        && !remote.getAddress().isLoopbackAddress()) {
      server.stats().rejectedConnections.increment();
      refuse(ctx, Errors.DENIED);
      return;
    }
    ctx.fireChannelActive();
  }

  private void refuse(ChannelHandlerContext ctx, String error) {
    closing = true;
    ByteBuf out = ctx.alloc().buffer();
    RespEncoder.encode(Reply.error(error), 2, out);
    ctx.writeAndFlush(out).addListener(ChannelFutureListener.CLOSE);
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) {
    client.releaseLease();
    if (batch != null) {
      batch.release();
      batch = null;
    }
    server.disconnect(client);
    pending.clear();
    if (stallCheck != null) {
      stallCheck.cancel(false);
    }
    ctx.fireChannelInactive();
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    if (closing) {
      return;
    }
    pending.add((RespRequest) msg);
    client.chaining(true); // the commands of one read run back to back: one clock read each
    drain(ctx); // keeps the lease: the next command of this read may write the same key
    if (!pending.isEmpty() && ctx.channel().config().isAutoRead()) {
      // a reply waits (its fsync, an external store): no more is read until the queue drains, so the commands
      // queued behind it are at most one read's worth (drain reads again once it is empty)
      ctx.channel().config().setAutoRead(false);
    }
  }

  /**
   * The end of one read: every command it carried has run (or waits), so the key-lock lease is let go before the
   * event loop serves anything else, then the replies go out together.
   */
  @Override
  public void channelReadComplete(ChannelHandlerContext ctx) {
    client.chaining(false);
    client.releaseLease();
    flush(ctx);
  }

  /** Hands the batch of replies to the channel; the returned future completes when it reached the socket. */
  private ChannelFuture handOff(ChannelHandlerContext ctx) {
    ByteBuf out = batch;
    batch = null;
    if (out == null) {
      return null;
    }
    lastHandOff = ctx.write(out);
    return lastHandOff;
  }

  private void flush(ChannelHandlerContext ctx) {
    handOff(ctx);
    ctx.flush();
  }

  /** {@link #drain} outside a read (a journal or deferred reply landed, the socket drained): nothing stays held. */
  private void drainReleasing(ChannelHandlerContext ctx) {
    try {
      drain(ctx);
    } finally {
      client.releaseLease();
    }
  }

  private void drain(ChannelHandlerContext ctx) {
    while (!closing && !pending.isEmpty()) {
      if (!ctx.channel().isWritable()) {
        client.releaseLease();
        ctx.channel().config().setAutoRead(false);
        watchStall(ctx);
        return;
      }
      RespRequest request = pending.peek();
      // asked only where it decides something (a reply owed before this command, or this command's own reply
      // owed), so a command answered at once with nothing owed costs no second look-up of its spec
      boolean owing = !owed.isEmpty();
      boolean pipelined = owing && dispatcher.pipelines(client, request.argv());
      if (owing && !(owedPipelined && pipelined && owed.size() < MAX_OWED)) {
        return; // runs once the replies owed before it went out
      }
      pending.poll();
      Dispatcher.Outcome outcome;
      try {
        outcome = dispatcher.execute(client, request.argv());
      } catch (RuntimeException | Error e) {
        client.releaseLease();
        throw e;
      }
      if (outcome.deferred() != null) {
        client.releaseLease();
        // the reply comes from another thread (an external store, a shard's log); it is owed until then. Only a
        // router keeps later commands behind such a reply in order (a shard's log); a command that deferred its
        // reply here (MIGRATE, a file load) has its later commands wait.
        Owed o = owe(outcome, dispatcher.routed()
            && (owing ? pipelined : dispatcher.pipelines(client, request.argv())));
        outcome.deferred().whenComplete((reply, failure) -> {
          if (failure != null) {
            LOG.error("deferred reply failed", failure);
            o.failed = true;
            o.ready(Reply.error("ERR internal error: " + failure.getClass().getSimpleName()));
          } else {
            o.ready(reply);
          }
          payLanded(ctx);
        });
        continue;
      }
      if (outcome.durable() instanceof java.util.concurrent.CompletableFuture<Void> done && done.isDone()
          && !done.isCompletedExceptionally()) {
        if (owed.isEmpty()) {
          write(ctx, outcome.reply());
        } else {
          owe(outcome, pipelined).ready(outcome.reply()); // after the replies owed before it
        }
      } else {
        client.releaseLease(); // never held while a reply waits for its fsync
        Owed o = owe(outcome, owing ? pipelined : dispatcher.pipelines(client, request.argv()));
        outcome.durable().whenComplete((ok, failure) -> {
          if (failure != null) {
            LOG.error("journal append failed; the client gets an error, not an acknowledgement", failure);
            o.ready(Reply.error("ERR write not persisted: " + failure.getMessage()));
          } else {
            o.ready(outcome.reply());
          }
          payLanded(ctx);
        });
      }
    }
    if (!closing && pending.isEmpty() && !ctx.channel().config().isAutoRead() && ctx.channel().isWritable()) {
      ctx.channel().config().setAutoRead(true);
    }
  }

  /**
   * After an owed reply became ready, on any thread: has the event loop write the ready ones, run the commands behind
   * them, and flush. Replies that land together (a shard entry's commands, a group commit's writes) share one task
   * and one flush: a task and a socket write per reply cost more than the command.
   */
  private void payLanded(ChannelHandlerContext ctx) {
    if (payScheduled.compareAndSet(false, true)) {
      ctx.channel().eventLoop().execute(() -> {
        payScheduled.set(false); // a reply ready from here on schedules another task; one ready before is paid now
        payOwed(ctx);
        drainReleasing(ctx); // commands behind them, and replies of those that answer at once
        flush(ctx);
      });
    }
  }

  /**
   * A reply owed to the client: of a command whose reply comes later (a deferred reply, a journal's fsync), or of
   * one that answered at once behind such a command. Replies go out in command order, so an owed reply waits for
   * the ones owed before it.
   */
  private static final class Owed {
    final Dispatcher.Outcome outcome;
    final boolean deferred;
    /** Whether the deferred reply failed: the client gets an error instead, so the command's reply never went out. */
    boolean failed;
    /** Set on the thread the reply lands on, read on the event loop: volatile publishes {@link #failed} with it. */
    volatile Reply reply;

    Owed(Dispatcher.Outcome outcome) {
      this.outcome = outcome;
      this.deferred = outcome.deferred() != null;
    }

    void ready(Reply r) {
      reply = r;
    }
  }

  private Owed owe(Dispatcher.Outcome outcome, boolean pipelined) {
    Owed o = new Owed(outcome);
    owed.add(o);
    owedPipelined &= pipelined;
    return o;
  }

  /** Writes the owed replies that are ready, from the oldest, up to the first that is not. */
  private void payOwed(ChannelHandlerContext ctx) {
    while (!owed.isEmpty() && owed.peek().reply != null) {
      Owed o = owed.poll();
      boolean written = write(ctx, o.reply);
      if (o.deferred && o.outcome.written() != null) {
        // a command that asks whether its reply reached the socket (GUARD.*) gets a hand-off of its own; the others'
        // replies share the batch. write() may itself have handed the batch over (a large reply, or a close after
        // it): then the reply is in the latest hand-off, whose future says when it reached the socket.
        ChannelFuture sent = !written || o.failed ? null : batch != null ? handOff(ctx) : lastHandOff;
        if (sent == null) {
          o.outcome.written(false);
        } else {
          sent.addListener(f -> o.outcome.written(f.isSuccess()));
        }
      }
    }
    if (owed.isEmpty()) {
      owedPipelined = true;
    }
  }

  /**
   * Appends the reply to the batch (neither handed to the channel nor flushed yet, unless the batch is large or the
   * client is to be closed after it); {@code false} if the connection is closing and nothing was written.
   */
  private boolean write(ChannelHandlerContext ctx, Reply reply) {
    if (closing) {
      return false;
    }
    if (batch == null) {
      // on the heap: a reply is written in many small pieces, each a plain array copy there (see RespDecoder's
      // HEAP_CUMULATOR); the transport copies the batch to a direct buffer once, on its way to the socket
      batch = ctx.alloc().heapBuffer();
    }
    RespEncoder.encode(reply, client.protocol(), batch);
    if (client.closeAfterReply()) {
      closing = true;
      handOff(ctx);
      ctx.writeAndFlush(ctx.alloc().buffer(0)).addListener(ChannelFutureListener.CLOSE);
      return true;
    }
    ChannelOutboundBuffer buffer = ctx.channel().unsafe().outboundBuffer();
    long limit = client.authenticated() ? server.settings().outputBufferLimit()
        : Math.min(server.settings().outputBufferLimit(), UNAUTHENTICATED_OUTPUT_LIMIT);
    long unsent = batch.readableBytes() + (buffer == null ? 0 : buffer.totalPendingWriteBytes());
    if (unsent > limit) {
      disconnectSlowClient(ctx, "output buffer above " + limit + " bytes");
    } else if (batch.readableBytes() >= BATCH_HANDOFF_BYTES) {
      handOff(ctx);
    }
    return true;
  }

  /**
   * A MONITOR line for this connection, from any thread: written on the connection's loop, under the output limits
   * of every reply (a monitor is a normal client to them, as in Redis). Lines that wait for the loop count too, so
   * that a loop that falls behind cannot queue them without bound either.
   */
  private void monitorLine(ChannelHandlerContext ctx, byte[] line) {
    long queued = monitorQueued.addAndGet(line.length);
    if (queued > server.settings().outputBufferLimit()) {
      monitorQueued.addAndGet(-line.length);
      if (monitorOverflow.compareAndSet(false, true)) {
        ctx.channel().eventLoop().execute(() -> disconnectSlowClient(ctx, "monitor lines above "
            + server.settings().outputBufferLimit() + " bytes"));
      }
      return;
    }
    ctx.channel().eventLoop().execute(() -> {
      monitorQueued.addAndGet(-line.length);
      if (closing || !ctx.channel().isActive()) {
        return;
      }
      if (batch != null) {
        batch.writeBytes(line); // behind replies not yet handed over, in the order they were made
      } else {
        lastHandOff = ctx.write(Unpooled.wrappedBuffer(line));
      }
      ChannelOutboundBuffer buffer = ctx.channel().unsafe().outboundBuffer();
      long limit = server.settings().outputBufferLimit();
      long unsent = (batch == null ? 0 : batch.readableBytes())
          + (buffer == null ? 0 : buffer.totalPendingWriteBytes());
      if (unsent > limit) {
        disconnectSlowClient(ctx, "output buffer above " + limit + " bytes");
        return;
      }
      if (batch == null) {
        ctx.flush();
      }
      if (!ctx.channel().isWritable()) {
        watchStall(ctx);
      }
    });
  }

  private void disconnectSlowClient(ChannelHandlerContext ctx, String why) {
    client.releaseLease();
    closing = true;
    if (batch != null) {
      batch.release();
      batch = null;
    }
    pending.clear();
    server.stats().outputBufferDisconnections.increment();
    SLOW_CLIENTS.log("closing client id={} addr={}: {}", client.id(), client.address(), why);
    ctx.close();
  }

  private void watchStall(ChannelHandlerContext ctx) {
    if (stallCheck != null || stallMillis <= 0) {
      return;
    }
    stallCheck = ctx.executor().schedule(() -> {
      stallCheck = null;
      if (!ctx.channel().isWritable() && ctx.channel().isActive()) {
        disconnectSlowClient(ctx, "not reading its replies for " + stallMillis + " ms");
      }
    }, stallMillis, TimeUnit.MILLISECONDS);
  }

  @Override
  public void channelWritabilityChanged(ChannelHandlerContext ctx) {
    if (ctx.channel().isWritable()) {
      if (stallCheck != null) {
        stallCheck.cancel(false);
        stallCheck = null;
      }
      drainReleasing(ctx);
      flush(ctx);
    }
    ctx.fireChannelWritabilityChanged();
  }

  @Override
  public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
    if (evt instanceof IdleStateEvent) {
      LOG.debug("closing idle client id={}", client.id());
      ctx.close();
      return;
    }
    ctx.fireUserEventTriggered(evt);
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    client.releaseLease();
    Throwable root = cause instanceof DecoderException && cause.getCause() != null ? cause.getCause() : cause;
    if (root instanceof RespProtocolException protocol) {
      server.stats().protocolErrorDisconnections.increment();
      PROTOCOL_ERRORS.log("closing client id={} addr={}: {}", client.id(), client.address(), protocol.getMessage());
      if (!closing) {
        closing = true;
        handOff(ctx); // the replies before the bad frame go first
        ByteBuf out = ctx.alloc().buffer();
        RespEncoder.encode(Reply.error(protocol.reply()), client.protocol(), out);
        ctx.writeAndFlush(out).addListener(ChannelFutureListener.CLOSE);
      }
      return;
    }
    if (!(root instanceof java.io.IOException) && !failureLogged) {
      failureLogged = true;
      UNEXPECTED_ERRORS.log("closing client id={} addr={} after an unexpected error: {}", client.id(),
          client.address(), String.valueOf(root));
      LOG.debug("the unexpected error of client id={}", client.id(), root);
    }
    closing = true;
    flush(ctx);
    ctx.close();
  }
}
