package io.bloomery.server.http;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.http.HttpDecoderConfig;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.timeout.WriteTimeoutHandler;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The HTTP/1.1 listener of the HTTP port: one Netty event loop (NIO; asleep while no connection is active) reads
 * every connection, so one client that stalls holds its own connection and nothing else.
 *
 * <p>Per connection, in order: a connection over {@link HttpLimits#maxClients()} is answered 503 and closed
 * ({@link HttpConnection}); a request must arrive whole within {@link HttpLimits#requestTimeoutMillis()} and a
 * kept-alive connection may stay idle for {@link HttpLimits#idleTimeoutMillis()}; the request line, headers and
 * body are capped ({@link HttpLimits}: 414, 431, 413, each closing the connection; any other malformed request
 * 400). A request is then checked by {@link HttpAccess} (unless its endpoint is open), answered 405 unless it is
 * a {@code GET} or {@code HEAD}, and computed inline or on one of {@link #PAGE_THREADS} page threads ({@link
 * Endpoint#inline()}); pipelined requests are answered in order ({@link HttpDispatch}).
 */
public final class HttpListener implements AutoCloseable {
  /** Threads computing the guarded pages (dashboard, {@code /metrics}), so a slow page does not hold another. */
  static final int PAGE_THREADS = 2;
  /** Requests of one connection received and not yet answered beyond which it is no longer read. */
  static final int MAX_PIPELINED = 16;

  private static final Logger LOG = LoggerFactory.getLogger(HttpListener.class);

  private final HttpLimits limits;
  private final HttpAccess access;
  private final Map<String, Endpoint> endpoints = new HashMap<>();
  private final Endpoint fallback;
  private final EventLoopGroup loop;
  private final ExecutorService pages;
  private final ChannelGroup channels;
  private final AtomicInteger connections = new AtomicInteger();
  private final LongAdder rejectedConnections = new LongAdder();
  private final LongAdder requestTimeouts = new LongAdder();
  private Channel listener;

  private HttpListener(HttpLimits limits, HttpAccess access, List<Endpoint> routes) {
    this.limits = limits;
    this.access = access;
    Endpoint other = null;
    for (Endpoint e : routes) {
      if (e.path() == null) {
        other = e;
      } else {
        endpoints.put(e.path(), e);
      }
    }
    this.fallback = other != null ? other : Endpoint.open(null, r -> Response.text(404, "not found\n"));
    this.loop = new MultiThreadIoEventLoopGroup(1, new DefaultThreadFactory("bloomery-http-io", true),
        NioIoHandler.newFactory());
    this.pages = Executors.newFixedThreadPool(PAGE_THREADS, new DefaultThreadFactory("bloomery-http-page", true));
    this.channels = new DefaultChannelGroup("bloomery-http", loop.next());
  }

  /**
   * Listens on {@code host:port} (0: an ephemeral port) and serves {@code routes}.
   *
   * @param routes the endpoints; one with a {@code null} path answers every other path (else those are 404)
   * @throws IOException if the address cannot be bound
   */
  public static HttpListener start(String host, int port, HttpLimits limits, HttpAccess access,
      List<Endpoint> routes) throws IOException {
    HttpListener http = new HttpListener(limits, access, routes);
    ServerBootstrap bootstrap = new ServerBootstrap()
        .group(http.loop)
        .channel(NioServerSocketChannel.class)
        .option(ChannelOption.SO_BACKLOG, 128)
        .option(ChannelOption.SO_REUSEADDR, true)
        .childOption(ChannelOption.TCP_NODELAY, true)
        .childHandler(new ChannelInitializer<SocketChannel>() {
          @Override
          protected void initChannel(SocketChannel ch) {
            http.channels.add(ch);
            HttpConnection connection = new HttpConnection(http);
            ch.pipeline().addLast(connection);
            ch.pipeline().addLast(new WriteTimeoutHandler(HttpLimits.WRITE_TIMEOUT_MILLIS, TimeUnit.MILLISECONDS));
            ch.pipeline().addLast(new HttpServerCodec(new HttpDecoderConfig()
                .setMaxInitialLineLength(HttpLimits.MAX_REQUEST_LINE_BYTES)
                .setMaxHeaderSize(HttpLimits.MAX_HEADER_BYTES)));
            ch.pipeline().addLast(new HttpDispatch.Aggregator(HttpLimits.MAX_BODY_BYTES));
            ch.pipeline().addLast(new HttpDispatch(http, connection));
          }
        });
    try {
      http.listener = bootstrap.bind(new InetSocketAddress(host, port)).sync().channel();
    } catch (Exception e) { // Netty rethrows the bind's IOException undeclared
      http.close();
      if (e instanceof InterruptedException) {
        Thread.currentThread().interrupt();
      }
      throw e instanceof IOException io ? io : new IOException(e.getMessage(), e);
    }
    return http;
  }

  /** The port actually bound. */
  public int port() {
    return ((InetSocketAddress) listener.localAddress()).getPort();
  }

  /** Connections being served now (refused ones are not counted). */
  public int connections() {
    return connections.get();
  }

  /** Connections refused since the start because {@link HttpLimits#maxClients()} were being served. */
  public long rejectedConnections() {
    return rejectedConnections.sum();
  }

  /** Connections closed since the start because a request did not arrive whole in time. */
  public long requestTimeouts() {
    return requestTimeouts.sum();
  }

  HttpLimits limits() {
    return limits;
  }

  /** Counts a new connection in if there is room; {@code false} (and counted as rejected) if not. */
  boolean admit() {
    while (true) {
      int n = connections.get();
      if (n >= limits.maxClients()) {
        rejectedConnections.increment();
        return false;
      }
      if (connections.compareAndSet(n, n + 1)) {
        return true;
      }
    }
  }

  /** An admitted connection has closed. */
  void left() {
    connections.decrementAndGet();
  }

  void requestTimedOut() {
    requestTimeouts.increment();
  }

  ExecutorService pages() {
    return pages;
  }

  Endpoint endpoint(String path) {
    return endpoints.getOrDefault(path, fallback);
  }

  /** The answer of {@code endpoint} to {@code request}, after the access and method checks. */
  Response serve(Endpoint endpoint, Request request) {
    if (!endpoint.open()) {
      Response refusal = access.refusal(request);
      if (refusal != null) {
        return refusal;
      }
    }
    if (!request.method().equals("GET") && !request.method().equals("HEAD")) {
      return Response.text(405, "only GET\n").with("Allow", "GET, HEAD");
    }
    try {
      return endpoint.route().apply(request);
    } catch (RuntimeException e) {
      LOG.warn("HTTP {} {} failed", request.method(), request.path(), e);
      return Response.text(500, "internal error\n");
    }
  }

  /** Stops listening, closes every connection and stops the threads. Idempotent. */
  @Override
  public void close() {
    if (listener != null) {
      listener.close().awaitUninterruptibly();
    }
    channels.close().awaitUninterruptibly();
    pages.shutdownNow();
    loop.shutdownGracefully(0, 2, TimeUnit.SECONDS).awaitUninterruptibly();
  }
}
