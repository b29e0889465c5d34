package io.bloomery.server.http;

import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.socket.DuplexChannel;
import io.netty.util.ReferenceCountUtil;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * The head of an HTTP connection's pipeline: the connection cap and the deadlines, on the raw bytes.
 *
 * <p>Over the cap, the connection is answered 503 at once, without reading its request, its sending side is shut
 * (so the client reads the whole answer, then the end), and whatever it sends is discarded until it closes or
 * {@link #REFUSED_LINGER_MILLIS} pass.
 *
 * <p>Admitted, it is in one of three states: reading a request (from the opening, or from the first byte after an
 * idle spell: a deadline of {@link HttpLimits#requestTimeoutMillis()}), handling requests received (no deadline:
 * the computing is the server's; writes have {@link HttpLimits#WRITE_TIMEOUT_MILLIS}), or idle after its responses
 * (a deadline of {@link HttpLimits#idleTimeoutMillis()}). A deadline passed closes the connection. Bytes that
 * arrive while requests are handled (a pipelined request begun) get the idle deadline once those are answered.
 */
final class HttpConnection extends ChannelInboundHandlerAdapter {
  /** How long a refused connection is read (and its bytes discarded) before it is closed. */
  static final long REFUSED_LINGER_MILLIS = 1000;

  private enum State { READING, HANDLING, IDLE }

  private final HttpListener listener;
  private boolean admitted;
  private boolean refused;
  private State state = State.READING;
  private ScheduledFuture<?> deadline;

  HttpConnection(HttpListener listener) {
    this.listener = listener;
  }

  @Override
  public void channelActive(ChannelHandlerContext ctx) {
    if (!listener.admit()) {
      refuse(ctx);
      return;
    }
    admitted = true;
    arm(ctx, listener.limits().requestTimeoutMillis(), true);
    ctx.fireChannelActive();
  }

  private void refuse(ChannelHandlerContext ctx) {
    refused = true;
    String body = "too many HTTP connections (http-maxclients " + listener.limits().maxClients() + ")\n";
    String answer = "HTTP/1.1 503 Service Unavailable\r\nContent-Type: " + Response.TEXT + "\r\nContent-Length: "
        + body.length() + "\r\nConnection: close\r\n\r\n" + body;
    ctx.writeAndFlush(Unpooled.copiedBuffer(answer, StandardCharsets.US_ASCII)).addListener(written -> {
      if (written.isSuccess() && ctx.channel() instanceof DuplexChannel duplex) {
        duplex.shutdownOutput();
      }
      ctx.executor().schedule(() -> ctx.close(), REFUSED_LINGER_MILLIS, TimeUnit.MILLISECONDS);
    });
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    if (refused) {
      ReferenceCountUtil.release(msg);
      return;
    }
    if (state == State.IDLE) {
      state = State.READING;
      arm(ctx, listener.limits().requestTimeoutMillis(), true);
    }
    ctx.fireChannelRead(msg);
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) {
    disarm();
    if (admitted) {
      admitted = false;
      listener.left();
    }
    if (!refused) {
      ctx.fireChannelInactive();
    }
  }

  /** A whole request has arrived: no deadline while it is answered. */
  void requestReceived() {
    state = State.HANDLING;
    disarm();
  }

  /** Every request received is answered: the idle deadline starts. */
  void answered(ChannelHandlerContext ctx) {
    if (state == State.HANDLING) {
      state = State.IDLE;
      arm(ctx, listener.limits().idleTimeoutMillis(), false);
    }
  }

  private void arm(ChannelHandlerContext ctx, long millis, boolean request) {
    disarm();
    deadline = ctx.executor().schedule(() -> {
      if (request) {
        listener.requestTimedOut();
      }
      ctx.close();
    }, millis, TimeUnit.MILLISECONDS);
  }

  private void disarm() {
    if (deadline != null) {
      deadline.cancel(false);
      deadline = null;
    }
  }
}
