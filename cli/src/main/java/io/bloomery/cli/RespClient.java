package io.bloomery.cli;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.ByteArrayOutputStream;
import java.io.Closeable;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * A blocking RESP2 connection for the commands that talk to a running server ({@code top}, {@code load}): one
 * request, then its reply, at a time. Requests are arrays of bulk strings; replies come back as {@link String}
 * (simple string), {@code byte[]} (bulk string), {@link Long} (integer), {@link List} (array) or {@code null} (null
 * bulk or array). Every failure is a {@link Failure}: an error reply is an {@link ErrorReply}, and a connection that
 * fails, times out or breaks the protocol is a plain {@code Failure} (that connection is then unusable). Not
 * thread-safe.
 */
final class RespClient implements Closeable {
  /** Longest simple-string, error or integer line accepted from the server. */
  private static final int MAX_LINE = 64 * 1024;
  /** Deepest nesting of arrays accepted from the server. */
  private static final int MAX_DEPTH = 32;

  /** Talking to the server failed; the message says how, in one line. */
  static class Failure extends IOException {
    private static final long serialVersionUID = 1L;

    Failure(String message, Throwable cause) {
      super(message, cause);
    }
  }

  /** An error reply ({@code -ERR ...}): the command failed on the server; the connection is still usable. */
  static final class ErrorReply extends Failure {
    private static final long serialVersionUID = 1L;

    ErrorReply(String message) {
      super(message, null);
    }
  }

  private final Socket socket;
  private final InputStream in;
  private final OutputStream out;

  private RespClient(Socket socket) throws IOException {
    this.socket = socket;
    this.in = new BufferedInputStream(socket.getInputStream(), 64 * 1024);
    this.out = new BufferedOutputStream(socket.getOutputStream(), 64 * 1024);
  }

  /**
   * Connects, then authenticates with {@code password} unless it is null or empty.
   *
   * @param readTimeoutMillis how long one reply may take; 0 waits forever
   * @throws ErrorReply if the server refuses the password
   * @throws Failure if the server cannot be reached
   */
  static RespClient connect(String host, int port, int connectTimeoutMillis, int readTimeoutMillis, String password)
      throws Failure {
    Socket socket = new Socket();
    try {
      try {
        socket.connect(new InetSocketAddress(host, port), connectTimeoutMillis);
      } catch (IOException e) {
        throw new Failure(e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage(), e);
      }
      socket.setSoTimeout(readTimeoutMillis);
      socket.setTcpNoDelay(true);
      RespClient client = new RespClient(socket);
      if (password != null && !password.isEmpty()) {
        client.call("AUTH", password);
      }
      return client;
    } catch (Failure | RuntimeException e) {
      closeQuietly(socket, e);
      throw e;
    } catch (IOException e) {
      closeQuietly(socket, e);
      throw new Failure(String.valueOf(e.getMessage()), e);
    }
  }

  private static void closeQuietly(Socket socket, Exception failure) {
    try {
      socket.close();
    } catch (IOException e) {
      failure.addSuppressed(e);
    }
  }

  /** Sends the command whose arguments are {@code args} (strings as UTF-8) and returns its reply. */
  Object call(Object... args) throws Failure {
    try {
      return send(args);
    } catch (Failure e) {
      throw e;
    } catch (IOException e) {
      throw new Failure(args[0] + ": " + (e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage()), e);
    }
  }

  private Object send(Object... args) throws IOException {
    out.write(("*" + args.length + "\r\n").getBytes(StandardCharsets.US_ASCII));
    for (Object arg : args) {
      byte[] bytes = arg instanceof byte[] b ? b : String.valueOf(arg).getBytes(StandardCharsets.UTF_8);
      out.write(("$" + bytes.length + "\r\n").getBytes(StandardCharsets.US_ASCII));
      out.write(bytes);
      out.write('\r');
      out.write('\n');
    }
    out.flush();
    return reply(0);
  }

  /** {@link #call} for a command whose reply is a bulk or simple string, as text. */
  String callForText(Object... args) throws Failure {
    Object reply = call(args);
    if (reply instanceof byte[] bytes) {
      return new String(bytes, StandardCharsets.UTF_8);
    }
    if (reply instanceof String text) {
      return text;
    }
    throw new Failure("unexpected reply to " + args[0] + ": " + describe(reply), null);
  }

  private Object reply(int depth) throws IOException {
    int type = in.read();
    if (type < 0) {
      throw new EOFException("the server closed the connection");
    }
    String line = line();
    switch (type) {
      case '+':
        return line;
      case '-':
        throw new ErrorReply(line);
      case ':':
        return number(line);
      case '$': {
        long length = number(line);
        if (length < 0) {
          return null;
        }
        if (length > Integer.MAX_VALUE - 8) {
          throw new IOException("bulk reply of " + length + " bytes is too long");
        }
        byte[] bytes = in.readNBytes((int) length);
        if (bytes.length != length || in.read() != '\r' || in.read() != '\n') {
          throw new EOFException("the server closed the connection inside a reply");
        }
        return bytes;
      }
      case '*': {
        long count = number(line);
        if (count < 0) {
          return null;
        }
        if (depth >= MAX_DEPTH) {
          throw new IOException("reply nested deeper than " + MAX_DEPTH + " arrays");
        }
        List<Object> elements = new ArrayList<>((int) Math.min(count, 1024));
        for (long i = 0; i < count; i++) {
          elements.add(reply(depth + 1));
        }
        return elements;
      }
      default:
        throw new IOException("not a RESP2 reply (type byte 0x" + Integer.toHexString(type) + ")");
    }
  }

  /** The rest of a reply's first line, UTF-8 (error replies may quote keys). */
  private String line() throws IOException {
    ByteArrayOutputStream line = new ByteArrayOutputStream();
    while (true) {
      int b = in.read();
      if (b < 0) {
        throw new EOFException("the server closed the connection inside a reply");
      }
      if (b == '\r') {
        if (in.read() != '\n') {
          throw new IOException("reply line not ended by CRLF");
        }
        return line.toString(StandardCharsets.UTF_8);
      }
      if (line.size() == MAX_LINE) {
        throw new IOException("reply line longer than " + MAX_LINE + " bytes");
      }
      line.write(b);
    }
  }

  private static long number(String line) throws IOException {
    try {
      return Long.parseLong(line);
    } catch (NumberFormatException e) {
      throw new IOException("not a RESP integer: " + line, e);
    }
  }

  private static String describe(Object reply) {
    return reply == null ? "null" : reply instanceof List<?> list ? "an array of " + list.size() : reply.toString();
  }

  @Override
  public void close() throws IOException {
    socket.close();
  }
}
