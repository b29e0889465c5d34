package io.bloomery.server.net;

import io.bloomery.server.command.Dispatcher;
import io.bloomery.server.resp.RespDecoder;
import io.bloomery.server.resp.RespLimits;
import io.bloomery.server.state.ClientState;
import io.bloomery.server.state.ServerContext;
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
import io.netty.channel.uring.IoUring;
import io.netty.channel.uring.IoUringIoHandler;
import io.netty.channel.uring.IoUringServerSocketChannel;
import io.netty.handler.timeout.IdleStateHandler;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * The RESP listener: Netty with io_uring where the kernel allows it, else epoll, else NIO ({@link Kind#choose});
 * {@code io-threads} event loops (one per core by default), each connection pinned to one loop (so its commands
 * run in order), connections on different loops in parallel.
 */
public final class Transport implements AutoCloseable {
  /** The socket layers the server can run on, as {@code --io-transport} names them. */
  public enum Kind {
    IO_URING("io_uring", IoUring::isAvailable, IoUring::unavailabilityCause),
    EPOLL("epoll", Epoll::isAvailable, Epoll::unavailabilityCause),
    NIO("nio", () -> true, () -> null);

    private final String label;
    private final Supplier<Boolean> available;
    private final Supplier<Throwable> cause;

    Kind(String label, Supplier<Boolean> available, Supplier<Throwable> cause) {
      this.label = label;
      this.available = available;
      this.cause = cause;
    }

    /** The name {@code --io-transport}, INFO and the start-up line use. */
    public String label() {
      return label;
    }

    /** Whether this JVM, kernel and sandbox can run it. */
    public boolean available() {
      return available.get();
    }

    /** Why it cannot run here, in one line ({@code null} if it can). */
    public String whyUnavailable() {
      if (available()) {
        return null;
      }
      Throwable t = cause.get();
      while (t != null && t.getCause() != null && t.getCause() != t) {
        t = t.getCause();
      }
      return t == null ? "not available" : t.getClass().getSimpleName() + ": " + t.getMessage();
    }

    /**
     * The kind for an {@code --io-transport} value: {@code auto} takes the first available of io_uring, epoll
     * and NIO, and says why it skipped the others; a named kind must be available.
     *
     * @throws IllegalArgumentException for an unknown name, or a named kind that cannot run here (with why)
     */
    public static Choice choose(String requested) {
      String name = requested.strip().toLowerCase(Locale.ROOT);
      if (name.equals("auto")) {
        List<String> skipped = new ArrayList<>();
        for (Kind k : values()) {
          if (k.available()) {
            return new Choice(k, skipped.isEmpty() ? "auto: the first of io_uring, epoll, nio available"
                : "auto: " + String.join("; ", skipped));
          }
          skipped.add(k.label + " unavailable (" + k.whyUnavailable() + ")");
        }
      }
      for (Kind k : values()) {
        if (k.label.equals(name)) {
          if (!k.available()) {
            throw new IllegalArgumentException("io-transport " + k.label + " is not available here: "
                + k.whyUnavailable() + " (use auto to fall back)");
          }
          return new Choice(k, "io-transport " + k.label);
        }
      }
      throw new IllegalArgumentException("io-transport must be auto, io_uring, epoll or nio, not '" + requested + "'");
    }

    private IoHandlerFactory factory() {
      return switch (this) {
        case IO_URING -> IoUringIoHandler.newFactory();
        case EPOLL -> EpollIoHandler.newFactory();
        case NIO -> NioIoHandler.newFactory();
      };
    }

    private Class<? extends ServerChannel> serverChannel() {
      return switch (this) {
        case IO_URING -> IoUringServerSocketChannel.class;
        case EPOLL -> EpollServerSocketChannel.class;
        case NIO -> NioServerSocketChannel.class;
      };
    }
  }

  /** A transport chosen for a server, and why (for the start-up log line). */
  public record Choice(Kind kind, String reason) {}

  private final EventLoopGroup workers;
  private final List<Channel> listeners = new ArrayList<>();
  private final String name;
  private final int port;

  private Transport(EventLoopGroup workers, String name, int port) {
    this.workers = workers;
    this.name = name;
    this.port = port;
  }

  /** An address that could not be bound; the cause is the operating system's refusal. */
  public static final class BindFailure extends IOException {
    private final String host;
    private final int port;

    BindFailure(String host, int port, Throwable cause) {
      super(host + " port " + port + ": " + cause.getMessage(), cause);
      this.host = host;
      this.port = port;
    }

    /** The address as given to bind. */
    public String host() {
      return host;
    }

    /** The port it was to be bound on. */
    public int port() {
      return port;
    }
  }

  /**
   * Binds every address on {@code port} (0: an ephemeral port, the same for every address).
   *
   * @param softOutputLimit unsent bytes above which reading from a client pauses (its socket's high-water mark)
   * @param stallMillis how long a client may stay above it before it is disconnected (0: never for that)
   * @throws BindFailure naming the first address that could not be bound; nothing stays bound or running
   */
  public static Transport start(ServerContext server, Dispatcher dispatcher, RespLimits limits, List<String> bind,
      int port, long softOutputLimit, long stallMillis, Kind kind, int ioThreads)
      throws BindFailure, InterruptedException {
    IoHandlerFactory factory = kind.factory();
    // The listening sockets accept on the same loops that serve the clients, as Redis accepts on its one thread: a loop
    // of their own would cost a thread and, with io_uring, a ring and 1,024 preallocated message headers (about 1 MB
    // of an idle server's memory) for a few accepts a second.
    EventLoopGroup workers = new MultiThreadIoEventLoopGroup(ioThreads, factory);
    ServerBootstrap b = new ServerBootstrap()
        .group(workers)
        .channel(kind.serverChannel())
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
            long timeout = server.settings().timeoutSeconds();
            if (timeout > 0) {
              ch.pipeline().addLast(new IdleStateHandler(0, 0, timeout, TimeUnit.SECONDS));
            }
            ch.pipeline().addLast(new RespDecoder(limits, client::authenticated, server.queryMemory()));
            ch.pipeline().addLast(new ClientHandler(server, dispatcher, client, stallMillis));
          }
        });
    Transport t = new Transport(workers, kind.label(), port);
    try {
      int actual = port;
      for (String host : bind) {
        Channel c;
        try {
          c = b.bind(new InetSocketAddress(host, actual)).sync().channel();
        } catch (InterruptedException e) {
          throw e;
        } catch (Exception e) { // Netty rethrows the bind's IOException undeclared
          throw new BindFailure(host, actual, e);
        }
        t.listeners.add(c);
        actual = ((InetSocketAddress) c.localAddress()).getPort();
      }
      return new Transport(workers, t.name, actual).adopt(t.listeners);
    } catch (BindFailure | RuntimeException | InterruptedException e) {
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

  /** {@code io_uring}, {@code epoll} or {@code nio}. */
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
  }
}
