package io.bloomery.server.net;

import io.bloomery.server.command.ClientState;
import io.bloomery.server.command.Dispatcher;
import io.bloomery.server.command.ServerContext;
import io.bloomery.server.resp.RespDecoder;
import io.bloomery.server.resp.RespLimits;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.timeout.IdleStateHandler;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The RESP listener: Netty with epoll where available, NIO elsewhere; one event loop per core, each connection
 * pinned to one loop (so its commands run in order), connections on different loops in parallel.
 */
public final class Transport implements AutoCloseable {
  private final EventLoopGroup boss;
  private final EventLoopGroup workers;
  private final List<Channel> listeners = new ArrayList<>();
  private final String name;
  private final int port;

  private Transport(EventLoopGroup boss, EventLoopGroup workers, String name, int port) {
    this.boss = boss;
    this.workers = workers;
    this.name = name;
    this.port = port;
  }

  /**
   * Binds every address on {@code port} (0: an ephemeral port, the same for every address).
   *
   * @param softOutputLimit unsent bytes above which reading from a client pauses (its socket's high-water mark)
   * @param stallMillis how long a client may stay above it before it is disconnected (0: never for that)
   */
  public static Transport start(ServerContext server, Dispatcher dispatcher, RespLimits limits, List<String> bind,
      int port, long softOutputLimit, long stallMillis) throws InterruptedException {
    boolean epoll = Epoll.isAvailable();
    IoHandlerFactory factory = epoll ? EpollIoHandler.newFactory() : NioIoHandler.newFactory();
    Class<? extends ServerChannel> channel = epoll ? EpollServerSocketChannel.class : NioServerSocketChannel.class;
    EventLoopGroup boss = new MultiThreadIoEventLoopGroup(1, factory);
    EventLoopGroup workers = new MultiThreadIoEventLoopGroup(Runtime.getRuntime().availableProcessors(), factory);
    ServerBootstrap b = new ServerBootstrap()
        .group(boss, workers)
        .channel(channel)
        .option(ChannelOption.SO_BACKLOG, 511)
        .option(ChannelOption.SO_REUSEADDR, true)
        .childOption(ChannelOption.TCP_NODELAY, true)
        .childOption(ChannelOption.WRITE_BUFFER_WATER_MARK, new WriteBufferWaterMark(
            (int) Math.min(Integer.MAX_VALUE, softOutputLimit / 4), (int) Math.min(Integer.MAX_VALUE, softOutputLimit)))
        .childHandler(new ChannelInitializer<SocketChannel>() {
          @Override
          protected void initChannel(SocketChannel ch) {
            ClientState client = server.connect(String.valueOf(address(ch.remoteAddress())),
                String.valueOf(address(ch.localAddress())));
            long timeout = server.settings().timeoutSeconds;
            if (timeout > 0) {
              ch.pipeline().addLast(new IdleStateHandler(0, 0, timeout, TimeUnit.SECONDS));
            }
            ch.pipeline().addLast(new RespDecoder(limits, client::authenticated));
            ch.pipeline().addLast(new ClientHandler(server, dispatcher, client, stallMillis));
          }
        });
    Transport t = new Transport(boss, workers, epoll ? "epoll" : "nio", port);
    try {
      int actual = port;
      for (String host : bind) {
        Channel c = b.bind(new InetSocketAddress(host, actual)).sync().channel();
        t.listeners.add(c);
        actual = ((InetSocketAddress) c.localAddress()).getPort();
      }
      return new Transport(boss, workers, t.name, actual).adopt(t.listeners);
    } catch (RuntimeException | InterruptedException e) {
      t.close();
      throw e;
    }
  }

  private Transport adopt(List<Channel> channels) {
    listeners.addAll(channels);
    return this;
  }

  private static String address(InetSocketAddress a) {
    if (a == null) {
      return "?";
    }
    String host = a.getAddress() == null ? a.getHostString() : a.getAddress().getHostAddress();
    return host + ":" + a.getPort();
  }

  /** The port actually bound. */
  public int port() {
    return port;
  }

  /** {@code epoll} or {@code nio}. */
  public String name() {
    return name;
  }

  /** A worker loop, for periodic tasks (active expiry). */
  public EventLoopGroup workers() {
    return workers;
  }

  @Override
  public void close() {
    for (Channel c : listeners) {
      c.close().awaitUninterruptibly();
    }
    workers.shutdownGracefully(0, 2, TimeUnit.SECONDS).awaitUninterruptibly();
    boss.shutdownGracefully(0, 2, TimeUnit.SECONDS).awaitUninterruptibly();
  }
}
