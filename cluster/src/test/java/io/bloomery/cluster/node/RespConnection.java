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
