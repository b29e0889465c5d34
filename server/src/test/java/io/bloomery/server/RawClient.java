package io.bloomery.server;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/** A minimal RESP client for exact-byte assertions: sends commands, reads one whole reply as text. */
final class RawClient implements AutoCloseable {
  private final Socket socket;
  private final InputStream in;
  private final OutputStream out;

  RawClient(int port) {
    this("127.0.0.1", port);
  }

  /** Connects to {@code host} (also the local address the connection comes from, for non-loopback tests). */
  RawClient(String host, int port) {
    try {
      socket = new Socket(host, port);
      socket.setSoTimeout(10_000);
      in = new java.io.BufferedInputStream(socket.getInputStream());
      out = socket.getOutputStream();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** What one of {@link #concurrently}'s clients does on its own connection; {@code id} is 0 .. clients - 1. */
  @FunctionalInterface
  interface ClientWork<T> {
    T run(int id, RawClient client) throws Exception;
  }

  /**
   * Opens {@code clients} connections to {@code port}, each on its own thread running {@code work}, runs {@code
   * meanwhile} on the calling thread while they do, and returns each client's result in id order (waiting up to
   * 120 s each; the first failure is rethrown).
   */
  static <T> List<T> concurrently(int port, int clients, ClientWork<T> work, Runnable meanwhile) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(clients);
    try {
      List<Future<T>> futures = new ArrayList<>();
      for (int c = 0; c < clients; c++) {
        int id = c;
        futures.add(pool.submit(() -> {
          try (RawClient client = new RawClient(port)) {
            return work.run(id, client);
          }
        }));
      }
      meanwhile.run();
      List<T> results = new ArrayList<>();
      for (Future<T> f : futures) {
        results.add(f.get(120, TimeUnit.SECONDS));
      }
      return results;
    } finally {
      pool.shutdownNow();
    }
  }

  static byte[] encode(String... args) {
    StringBuilder sb = new StringBuilder("*").append(args.length).append("\r\n");
    for (String a : args) {
      byte[] b = a.getBytes(StandardCharsets.UTF_8);
      sb.append('$').append(b.length).append("\r\n").append(a).append("\r\n");
    }
    return sb.toString().getBytes(StandardCharsets.UTF_8);
  }

  /** Sends one command of binary arguments and returns its reply's bytes as ISO-8859-1 text. */
  String call(List<byte[]> args) {
    ByteArrayOutputStream command = new ByteArrayOutputStream();
    command.writeBytes(("*" + args.size() + "\r\n").getBytes(StandardCharsets.US_ASCII));
    for (byte[] a : args) {
      command.writeBytes(("$" + a.length + "\r\n").getBytes(StandardCharsets.US_ASCII));
      command.writeBytes(a);
      command.writeBytes("\r\n".getBytes(StandardCharsets.US_ASCII));
    }
    send(command.toByteArray());
    return reply();
  }

  /** Sends one command and returns its reply's bytes as ISO-8859-1 text. */
  String call(String... args) {
    send(encode(args));
    return reply();
  }

  void send(byte[] bytes) {
    try {
      out.write(bytes);
      out.flush();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Reads one reply (any RESP2/RESP3 frame, nested). */
  String reply() {
    ByteArrayOutputStream buf = new ByteArrayOutputStream();
    try {
      readFrame(buf);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return buf.toString(StandardCharsets.ISO_8859_1);
  }

  /** The port this connection comes from, as the server sees it. */
  int localPort() {
    return socket.getLocalPort();
  }

  /** Whether the server closed the connection (reads until EOF or timeout). */
  boolean closedByServer() {
    try {
      return in.read() == -1;
    } catch (IOException e) {
      return true;
    }
  }

  private String line(ByteArrayOutputStream buf) throws IOException {
    ByteArrayOutputStream l = new ByteArrayOutputStream();
    int c;
    while ((c = in.read()) != -1) {
      buf.write(c);
      if (c == '\n') {
        break;
      }
      l.write(c);
    }
    if (c == -1) {
      throw new IOException("connection closed");
    }
    String s = l.toString(StandardCharsets.ISO_8859_1);
    return s.endsWith("\r") ? s.substring(0, s.length() - 1) : s;
  }

  private void readFrame(ByteArrayOutputStream buf) throws IOException {
    String l = line(buf);
    char type = l.charAt(0);
    switch (type) {
      case '$', '=' -> {
        int n = Integer.parseInt(l.substring(1));
        if (n >= 0) {
          buf.write(in.readNBytes(n + 2));
        }
      }
      case '*', '~', '>' -> {
        int n = Integer.parseInt(l.substring(1));
        for (int i = 0; i < n; i++) {
          readFrame(buf);
        }
      }
      case '%' -> {
        int n = Integer.parseInt(l.substring(1));
        for (int i = 0; i < 2 * n; i++) {
          readFrame(buf);
        }
      }
      default -> {
        // simple line types: + - : _ # , (
      }
    }
  }

  @Override
  public void close() {
    try {
      socket.close();
    } catch (IOException e) {
      // closing anyway
    }
  }
}
