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
 * The head of an HTTP connection's pipeline: the connection cap, the deadlines and the closing, on the raw bytes.
 *
 * <p>Over the cap, the connection is answered 503 at once, without reading its request, and closed as below.
 *
 * <p>Admitted, it is in one of three states: reading a request (from the opening, or from the first byte after an
 * idle spell: a deadline of {@link HttpLimits#requestTimeoutMillis()}), handling requests received (no deadline:
 * the computing is the server's; writes have {@link HttpLimits#WRITE_TIMEOUT_MILLIS}), or idle after its responses
 * (a deadline of {@link HttpLimits#idleTimeoutMillis()}). A deadline passed closes the connection. Bytes that
 * arrive while requests are handled (a pipelined request begun) get the idle deadline once those are answered.
 *
 * <p>After a last response (503, an error that closes, {@code Connection: close}) the sending side is shut, so the
 * client reads the whole response and then the end, and whatever the client still sends is discarded until it
 * closes or {@link #LINGER_MILLIS} pass; closing at once with its bytes unread would send a reset that can destroy
 * the response before the client reads it.
 */
final class HttpConnection extends ChannelInboundHandlerAdapter {
  /** How long a connection is still read, and its bytes discarded, after its last response. */
  static final long LINGER_MILLIS = 1000;

  private enum State { READING, HANDLING, IDLE, CLOSING }

  private final HttpListener listener;
  private ChannelHandlerContext ctx;
  private boolean admitted;
  private State state = State.READING;
  private ScheduledFuture<?> deadline;

  HttpConnection(HttpListener listener) {
    this.listener = listener;
  }

  @Override
  public void handlerAdded(ChannelHandlerContext ctx) {
    this.ctx = ctx;
  }

  @Override
  public void channelActive(ChannelHandlerContext ctx) {
    if (!listener.admit()) {
      state = State.CLOSING;
      String body = "too many HTTP connections (http-maxclients " + listener.limits().maxClients() + ")\n";
      String answer = "HTTP/1.1 503 Service Unavailable\r\nContent-Type: " + Response.TEXT + "\r\nContent-Length: "
          + body.length() + "\r\nConnection: close\r\n\r\n" + body;
      ctx.writeAndFlush(Unpooled.copiedBuffer(answer, StandardCharsets.US_ASCII))
          .addListener(written -> linger());
      return;
    }
    admitted = true;
    arm(listener.limits().requestTimeoutMillis(), true);
    ctx.fireChannelActive();
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    if (state == State.CLOSING) {
      ReferenceCountUtil.release(msg);
      return;
    }
    if (state == State.IDLE) {
      state = State.READING;
      arm(listener.limits().requestTimeoutMillis(), true);
    }
    ctx.fireChannelRead(msg);
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) {
    disarm();
    if (admitted) {
      admitted = false;
      listener.left();
      ctx.fireChannelInactive();
    }
  }

  /** A whole request has arrived: no deadline while it is answered. */
  void requestReceived() {
    if (state != State.CLOSING) {
      state = State.HANDLING;
      disarm();
    }
  }

  /** Every request received is answered: the idle deadline starts. */
  void answered() {
    if (state == State.HANDLING) {
      state = State.IDLE;
      arm(listener.limits().idleTimeoutMillis(), false);
    }
  }

  /** The last response is written: the connection closes, after the linger. */
  void finish() {
    state = State.CLOSING;
    ctx.channel().config().setAutoRead(true);
    linger();
  }

  private void linger() {
    disarm();
    if (ctx.channel() instanceof DuplexChannel duplex && ctx.channel().isActive()) {
      duplex.shutdownOutput();
    }
    deadline = ctx.executor().schedule(() -> ctx.close(), LINGER_MILLIS, TimeUnit.MILLISECONDS);
  }

  private void arm(long millis, boolean request) {
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
