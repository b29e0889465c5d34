package io.bloomery.server.http;

import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.codec.DecoderResult;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpMessage;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.TooLongHttpContentException;
import io.netty.handler.codec.http.TooLongHttpHeaderException;
import io.netty.handler.codec.http.TooLongHttpLineException;
import java.net.InetSocketAddress;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The tail of an HTTP connection's pipeline: answers each whole request ({@link HttpListener#serve}), inline or on
 * a page thread as its endpoint says, and writes the answers in the order the requests came. Each request's work
 * starts when the one before it on the connection is answered, so a connection has at most one page in the
 * works. A request that is malformed, too large, or asks for {@code Connection: close} is the connection's last.
 */
final class HttpDispatch extends SimpleChannelInboundHandler<FullHttpRequest> {
  private static final Logger LOG = LoggerFactory.getLogger(HttpDispatch.class);

  private final HttpListener listener;
  private final HttpConnection connection;
  /** Completes once the last request received has its answer handed to the event loop. */
  private CompletableFuture<Void> previous = CompletableFuture.completedFuture(null);
  private int pending;
  private boolean last;

  HttpDispatch(HttpListener listener, HttpConnection connection) {
    this.listener = listener;
    this.connection = connection;
  }

  /** {@link HttpObjectAggregator} that passes an oversized request on as a failed one, answered in its turn. */
  static final class Aggregator extends HttpObjectAggregator {
    Aggregator(int maxContentLength) {
      super(maxContentLength);
    }

    @Override
    protected void handleOversizedMessage(ChannelHandlerContext ctx, HttpMessage oversized) {
      HttpRequest request = (HttpRequest) oversized;
      DefaultFullHttpRequest failed = new DefaultFullHttpRequest(request.protocolVersion(), request.method(),
          request.uri());
      failed.setDecoderResult(DecoderResult.failure(new TooLongHttpContentException(
          "request body larger than " + HttpLimits.MAX_BODY_BYTES + " bytes")));
      ctx.fireChannelRead(failed);
    }
  }

  @Override
  protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest request) {
    if (last) {
      return;
    }
    connection.requestReceived();
    if (++pending >= HttpListener.MAX_PIPELINED) {
      ctx.channel().config().setAutoRead(false);
    }
    boolean head = HttpMethod.HEAD.equals(request.method());
    boolean keepAlive = HttpUtil.isKeepAlive(request) && request.decoderResult().isSuccess();
    boolean http10 = HttpVersion.HTTP_1_0.equals(request.protocolVersion());
    CompletableFuture<Response> reply;
    Request parsed = request.decoderResult().isSuccess() ? parse(ctx, request) : null;
    if (parsed == null) {
      keepAlive = false;
      Response refusal = refusal(request.decoderResult());
      reply = previous.thenApply(x -> refusal);
    } else {
      Endpoint endpoint = listener.endpoint(parsed.path());
      reply = endpoint.inline() ? previous.thenApply(x -> listener.serve(endpoint, parsed))
          : previous.thenApplyAsync(x -> listener.serve(endpoint, parsed), listener.pages());
    }
    if (!keepAlive) {
      last = true;
      ctx.channel().config().setAutoRead(false);
    }
    boolean close = !keepAlive;
    previous = reply.handle((response, failure) -> failure == null ? response : internalError(failure))
        .thenAccept(response -> {
          try {
            ctx.executor().execute(() -> write(ctx, response, head, close, http10));
          } catch (RejectedExecutionException e) {
            // the event loop has stopped: the listener is closed, and the connection with it
          }
        });
  }

  private static Request parse(ChannelHandlerContext ctx, FullHttpRequest request) {
    try {
      return Request.of(request.method().name(), request.uri(), request.headers().get(HttpHeaderNames.AUTHORIZATION),
          ctx.channel().remoteAddress() instanceof InetSocketAddress a ? a.getAddress() : null);
    } catch (IllegalArgumentException e) {
      return null; // a malformed escape in the path: answered 400
    }
  }

  private static Response refusal(DecoderResult result) {
    Throwable cause = result.cause();
    return switch (cause) {
      case TooLongHttpLineException e -> Response.text(414, "request line longer than "
          + HttpLimits.MAX_REQUEST_LINE_BYTES + " bytes\n");
      case TooLongHttpHeaderException e -> Response.text(431, "request headers longer than "
          + HttpLimits.MAX_HEADER_BYTES + " bytes\n");
      case TooLongHttpContentException e -> Response.text(413, "request body longer than "
          + HttpLimits.MAX_BODY_BYTES + " bytes\n");
      case null, default -> Response.text(400, "malformed request\n");
    };
  }

  private static Response internalError(Throwable failure) {
    LOG.warn("HTTP request failed", failure);
    return Response.text(500, "internal error\n");
  }

  private void write(ChannelHandlerContext ctx, Response response, boolean head, boolean close, boolean http10) {
    FullHttpResponse out = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1,
        HttpResponseStatus.valueOf(response.status()),
        head ? Unpooled.EMPTY_BUFFER : Unpooled.wrappedBuffer(response.body()));
    out.headers().set(HttpHeaderNames.CONTENT_TYPE, response.contentType());
    for (Map.Entry<String, String> header : response.headers().entrySet()) {
      out.headers().set(header.getKey(), header.getValue());
    }
    out.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, response.body().length);
    if (close) {
      out.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
    } else if (http10) {
      out.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.KEEP_ALIVE);
    }
    ctx.writeAndFlush(out).addListener(written -> {
      pending--;
      if (!written.isSuccess()) {
        ctx.close();
      } else if (close) {
        connection.finish();
      } else {
        if (pending < HttpListener.MAX_PIPELINED) {
          ctx.channel().config().setAutoRead(true);
        }
        if (pending == 0) {
          connection.answered();
        }
      }
    });
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    LOG.debug("HTTP connection {} closed: {}", ctx.channel().remoteAddress(), cause.toString());
    ctx.close();
  }
}
