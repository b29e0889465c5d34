package io.bloomery.cluster.node;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/** A test's RESP connection that sends commands and returns each reply's bytes exactly, as text or as bytes. */
final class RespConnection implements AutoCloseable {
  private final Socket socket;
  private final InputStream in;
  private final OutputStream out;

  RespConnection(int port) throws IOException {
    socket = new Socket("127.0.0.1", port);
    socket.setSoTimeout(30_000);
    in = socket.getInputStream();
    out = socket.getOutputStream();
  }

  /** Waits up to {@code millis} for each reply from here on (30 s unless told otherwise). */
  RespConnection timeout(int millis) throws IOException {
    socket.setSoTimeout(millis);
    return this;
  }

  String call(String... args) throws IOException {
    return pipeline(List.<String[]>of(args)).get(0);
  }

  /** Sends every command in one write, then reads their replies, in order. */
  List<String> pipeline(List<String[]> commands) throws IOException {
    ByteArrayOutputStream cmd = new ByteArrayOutputStream();
    for (String[] args : commands) {
      byte[][] bytes = new byte[args.length][];
      for (int i = 0; i < args.length; i++) {
        bytes[i] = args[i].getBytes(StandardCharsets.UTF_8);
      }
      encode(cmd, bytes);
    }
    cmd.writeTo(out);
    out.flush();
    List<String> replies = new ArrayList<>(commands.size());
    for (int i = 0; i < commands.size(); i++) {
      ByteArrayOutputStream reply = new ByteArrayOutputStream();
      read(reply);
      replies.add(reply.toString(StandardCharsets.UTF_8));
    }
    return replies;
  }

  /** Sends one command of arbitrary bytes and returns its reply's bytes exactly. */
  byte[] callBytes(byte[]... args) throws IOException {
    ByteArrayOutputStream cmd = new ByteArrayOutputStream();
    encode(cmd, args);
    cmd.writeTo(out);
    out.flush();
    ByteArrayOutputStream reply = new ByteArrayOutputStream();
    read(reply);
    return reply.toByteArray();
  }

  /** {@code BF.SCANDUMP} of {@code key} to its end: each chunk as {@code BF.LOADCHUNK} takes it, iterator and data. */
  List<Chunk> scandump(String key) throws IOException {
    List<Chunk> chunks = new ArrayList<>();
    scandump(key, chunks::add);
    return chunks;
  }

  /** {@code BF.SCANDUMP} of {@code key} to its end, each chunk given to {@code each} as it comes. */
  void scandump(String key, java.util.function.Consumer<Chunk> each) throws IOException {
    long iterator = 0;
    while (true) {
      byte[] reply = callBytes(ascii("BF.SCANDUMP"), ascii(key), ascii(Long.toString(iterator)));
      String text = new String(reply, StandardCharsets.ISO_8859_1);
      if (!text.startsWith("*2\r\n:")) {
        throw new IOException("not a BF.SCANDUMP reply: " + text.substring(0, Math.min(200, text.length())));
      }
      int lineEnd = text.indexOf('\r', 5);
      iterator = Long.parseLong(text.substring(5, lineEnd));
      if (iterator == 0) {
        return;
      }
      int lengthEnd = text.indexOf('\r', lineEnd + 3);
      int length = Integer.parseInt(text.substring(lineEnd + 3, lengthEnd));
      each.accept(new Chunk(iterator, java.util.Arrays.copyOfRange(reply, lengthEnd + 2, lengthEnd + 2 + length)));
    }
  }

  /** {@code BF.LOADCHUNK key iterator data} of {@code chunk}: its reply. */
  String loadChunk(String key, Chunk chunk) throws IOException {
    return new String(callBytes(ascii("BF.LOADCHUNK"), ascii(key), ascii(Long.toString(chunk.iterator())),
        chunk.data()), StandardCharsets.UTF_8);
  }

  /** One chunk of {@code BF.SCANDUMP}. */
  record Chunk(long iterator, byte[] data) {}

  private static byte[] ascii(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static void encode(ByteArrayOutputStream cmd, byte[][] args) {
    cmd.writeBytes(("*" + args.length + "\r\n").getBytes(StandardCharsets.US_ASCII));
    for (byte[] a : args) {
      cmd.writeBytes(("$" + a.length + "\r\n").getBytes(StandardCharsets.US_ASCII));
      cmd.writeBytes(a);
      cmd.writeBytes(new byte[] {'\r', '\n'});
    }
  }

  private void read(ByteArrayOutputStream reply) throws IOException {
    int type = in.read();
    reply.write(type);
    String line = line(reply);
    switch (type) {
      case '$', '=' -> {
        int n = Integer.parseInt(line);
        if (n >= 0) {
          reply.write(in.readNBytes(n + 2));
        }
      }
      case '*', '~' -> {
        for (int i = Integer.parseInt(line); i > 0; i--) {
          read(reply);
        }
      }
      case '%' -> {
        for (int i = 2 * Integer.parseInt(line); i > 0; i--) {
          read(reply);
        }
      }
      default -> { }
    }
  }

  private String line(ByteArrayOutputStream reply) throws IOException {
    StringBuilder line = new StringBuilder();
    for (int b; (b = in.read()) != '\r'; ) {
      line.append((char) b);
    }
    in.read();
    reply.write((line + "\r\n").getBytes(StandardCharsets.UTF_8));
    return line.toString();
  }

  @Override
  public void close() throws IOException {
    socket.close();
  }

  /** A free port on the loopback interface. */
  static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }
}
