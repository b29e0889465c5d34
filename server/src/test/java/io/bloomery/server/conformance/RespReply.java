package io.bloomery.server.conformance;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * One complete RESP2/RESP3 reply as it came off the wire: its exact bytes, its type byte and, for
 * aggregates, its elements. The replay test compares {@link #raw()}; the elements serve only the
 * "fields" comparison of HELLO.
 *
 * <p>The reader is deliberately independent of the server's own codec: it is the yardstick, so it
 * must not share that code's mistakes. Lengths from the wire are checked against a cap before
 * anything is allocated, and a reply that does not parse is a clear {@link IOException}.
 */
record RespReply(byte type, byte[] raw, byte[] scalar, List<RespReply> elements) {

  /** The largest bulk string or aggregate the replay expects; RedisBloom dumps stay far below. */
  static final int MAX_LENGTH = 64 << 20;

  /** Reads one reply from {@code in} (which should be buffered). */
  static RespReply read(InputStream in) throws IOException {
    ByteArrayOutputStream raw = new ByteArrayOutputStream();
    RespReply reply = read(in, raw, 0);
    return new RespReply(reply.type, raw.toByteArray(), reply.scalar, reply.elements);
  }

  /** Parses {@code bytes} as exactly one reply; trailing bytes are an error. */
  static RespReply parse(byte[] bytes) throws IOException {
    ByteArrayInputStream in = new ByteArrayInputStream(bytes);
    RespReply reply = read(in);
    if (in.available() > 0) {
      throw new IOException(in.available() + " bytes after a complete reply");
    }
    return reply;
  }

  private static RespReply read(InputStream in, ByteArrayOutputStream raw, int depth) throws IOException {
    if (depth > 64) {
      throw new IOException("replies nested deeper than 64");
    }
    int start = raw.size();
    int t = in.read();
    if (t < 0) {
      throw new EOFException("the connection closed before a reply");
    }
    raw.write(t);
    byte[] head = line(in, raw);
    byte type = (byte) t;
    switch (type) {
      case '+', '-', ':', ',', '(', '_', '#' -> {
        return new RespReply(type, slice(raw, start), head, List.of());
      }
      case '$', '!', '=' -> {
        long n = length(head);
        if (n < 0) {
          return new RespReply(type, slice(raw, start), null, List.of());
        }
        byte[] data = in.readNBytes((int) n + 2);
        if (data.length != n + 2) {
          throw new EOFException("the connection closed inside a " + n + "-byte bulk string");
        }
        if (data[(int) n] != '\r' || data[(int) n + 1] != '\n') {
          throw new IOException("a " + n + "-byte bulk string is not followed by CRLF");
        }
        raw.write(data, 0, data.length);
        return new RespReply(type, slice(raw, start), Arrays.copyOf(data, (int) n), List.of());
      }
      case '*', '~', '>', '%', '|' -> {
        long n = length(head);
        if (n < 0) {
          return new RespReply(type, slice(raw, start), null, List.of());
        }
        long count = (type == '%' || type == '|') ? 2 * n : n;
        List<RespReply> elements = new ArrayList<>((int) Math.min(count, 1024));
        for (long i = 0; i < count; i++) {
          elements.add(read(in, raw, depth + 1));
        }
        if (type == '|') { // an attribute: the reply itself follows it
          return read(in, raw, depth + 1);
        }
        return new RespReply(type, slice(raw, start), null, List.copyOf(elements));
      }
      default -> throw new IOException("unknown RESP type byte 0x" + Integer.toHexString(t & 0xff));
    }
  }

  private static byte[] line(InputStream in, ByteArrayOutputStream raw) throws IOException {
    ByteArrayOutputStream head = new ByteArrayOutputStream();
    while (true) {
      int b = in.read();
      if (b < 0) {
        throw new EOFException("the connection closed inside a reply line");
      }
      raw.write(b);
      if (b == '\r') {
        int lf = in.read();
        if (lf < 0) {
          throw new EOFException("the connection closed inside a reply line");
        }
        raw.write(lf);
        if (lf != '\n') {
          throw new IOException("CR not followed by LF in a reply line");
        }
        return head.toByteArray();
      }
      if (head.size() >= MAX_LENGTH) {
        throw new IOException("a reply line longer than " + MAX_LENGTH + " bytes");
      }
      head.write(b);
    }
  }

  private static long length(byte[] head) throws IOException {
    String s = new String(head, StandardCharsets.US_ASCII);
    long n;
    try {
      n = Long.parseLong(s);
    } catch (NumberFormatException e) {
      throw new IOException("bad length '" + s + "'");
    }
    if (n < -1 || n > MAX_LENGTH) {
      throw new IOException("length " + n + " outside [-1, " + MAX_LENGTH + "]");
    }
    return n;
  }

  private static byte[] slice(ByteArrayOutputStream raw, int start) {
    byte[] all = raw.toByteArray();
    return Arrays.copyOfRange(all, start, all.length);
  }

  /**
   * For a map, or a flat name/value array as RESP2 sends maps: the value whose name is
   * {@code field}, or null when there is none.
   */
  RespReply field(String field) {
    if (type != '%' && type != '*') {
      return null;
    }
    byte[] wanted = field.getBytes(StandardCharsets.US_ASCII);
    for (int i = 0; i + 1 < elements.size(); i += 2) {
      byte[] name = elements.get(i).scalar();
      if (name != null && Arrays.equals(name, wanted)) {
        return elements.get(i + 1);
      }
    }
    return null;
  }
}
