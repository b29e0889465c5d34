package io.bloomery.server.resp;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * One reply frame, one record per RESP frame kind. {@link RespEncoder} writes each in RESP2 or RESP3: the RESP3-only
 * kinds ({@link Bool}, {@link Dbl}, {@link MapReply}, {@link SetReply}, {@link Verbatim}) have the RESP2 form Redis
 * uses for them (an integer 1/0, a bulk string, a flat array, an array, a bulk string). A {@link Constant} is any
 * of these encoded ahead of time.
 */
public sealed interface Reply {

  /** {@code +OK}. */
  Reply OK = new Simple("OK");
  /** {@code +QUEUED}, the answer to a command inside MULTI. */
  Reply QUEUED = new Simple("QUEUED");
  /** A null bulk string ({@code $-1} in RESP2, {@code _} in RESP3). */
  Reply NIL = new Nil();
  /** A null array ({@code *-1} in RESP2, {@code _} in RESP3). */
  Reply NIL_ARRAY = new NilArray();
  /** An empty array. */
  Reply EMPTY_ARRAY = new Array(List.of());

  /** {@code +text}: a status line; {@code text} must not contain CR or LF. */
  record Simple(String text) implements Reply {}

  /** {@code -text}: an error line, sent verbatim (its first word is the error code). */
  record Error(String text) implements Reply {}

  /** {@code :n}. */
  record Int(long value) implements Reply {}

  /** {@code $len\r\nbytes}. */
  record Bulk(byte[] bytes) implements Reply {}

  /** A null bulk string. */
  record Nil() implements Reply {}

  /** A null array. */
  record NilArray() implements Reply {}

  /** {@code *n} followed by the elements. */
  record Array(List<Reply> elements) implements Reply {}

  /** RESP3 {@code %n} of key/value pairs; a flat array of 2n in RESP2. */
  record MapReply(List<Reply> keysAndValues) implements Reply {}

  /** RESP3 {@code ~n}; an array in RESP2. */
  record SetReply(List<Reply> elements) implements Reply {}

  /** RESP3 {@code #t}/{@code #f}; {@code :1}/{@code :0} in RESP2. */
  record Bool(boolean value) implements Reply {}

  /** RESP3 {@code ,d}; a bulk string in RESP2. */
  record Dbl(double value) implements Reply {}

  /** RESP3 {@code =len\r\ntxt:text}; a bulk string in RESP2. */
  record Verbatim(String format, String text) implements Reply {}

  /**
   * A reply that never changes, encoded once in both protocols by {@link #constant}: the encoder copies its bytes
   * instead of walking its frames again. It sends exactly what the reply it was made from sends.
   */
  final class Constant implements Reply {
    private final Reply frames;
    private final byte[] resp2;
    private final byte[] resp3;

    private Constant(Reply of) {
      frames = of;
      resp2 = encoded(of, 2);
      resp3 = encoded(of, 3);
    }

    private static byte[] encoded(Reply of, int protocol) {
      ByteBuf out = Unpooled.buffer();
      RespEncoder.encode(of, protocol, out);
      byte[] bytes = new byte[out.readableBytes()];
      out.readBytes(bytes);
      return bytes;
    }

    /** The reply it was made from: the same frames, for a consumer that does not write RESP. */
    public Reply frames() {
      return frames;
    }

    /** The encoded frame for protocol 2 or 3; never modified. */
    byte[] bytes(int protocol) {
      return protocol >= 3 ? resp3 : resp2;
    }

    @Override
    public String toString() {
      return "Constant[" + new String(resp2, StandardCharsets.ISO_8859_1).replace("\r\n", " ").strip() + "]";
    }
  }

  /**
   * {@code reply} encoded once, for a reply sent many times (a command's fixed answers); see {@link Constant}.
   *
   * @throws IllegalArgumentException for an {@link Error}, which stays an error frame (the dispatcher counts errors
   *     by their kind)
   */
  static Reply constant(Reply reply) {
    if (reply instanceof Error) {
      throw new IllegalArgumentException("an error reply cannot be a constant");
    }
    return reply instanceof Constant c ? c : new Constant(reply);
  }

  static Reply error(String text) {
    return new Error(text);
  }

  static Reply integer(long value) {
    return new Int(value);
  }

  static Reply bulk(byte[] bytes) {
    return bytes == null ? NIL : new Bulk(bytes);
  }

  static Reply bulk(String text) {
    return text == null ? NIL : new Bulk(text.getBytes(StandardCharsets.UTF_8));
  }

  static Reply bool(boolean value) {
    return new Bool(value);
  }

  static Reply array(List<Reply> elements) {
    return new Array(elements);
  }

  static Reply arrayOf(Reply... elements) {
    return new Array(List.of(elements));
  }

  /** A map reply from field names to values; a {@code null} value becomes a nil. */
  static Reply map(Map<String, ?> fields) {
    List<Reply> flat = new ArrayList<>(fields.size() * 2);
    for (Map.Entry<String, ?> e : fields.entrySet()) {
      flat.add(new Simple(e.getKey()));
      flat.add(of(e.getValue()));
    }
    return new MapReply(flat);
  }

  /** A map reply whose field names are bulk strings, as Redis's own commands send them (HELLO, COMMAND DOCS). */
  static Reply bulkMap(Map<String, ?> fields) {
    List<Reply> flat = new ArrayList<>(fields.size() * 2);
    for (Map.Entry<String, ?> e : fields.entrySet()) {
      flat.add(bulk(e.getKey()));
      flat.add(of(e.getValue()));
    }
    return new MapReply(flat);
  }

  /** The reply for a plain Java value: Long/Integer, Double, String, byte[], Boolean, null, a list of those. */
  static Reply of(Object value) {
    if (value == null) {
      return NIL;
    }
    if (value instanceof Reply r) {
      return r;
    }
    if (value instanceof Long || value instanceof Integer) {
      return new Int(((Number) value).longValue());
    }
    if (value instanceof Double d) {
      return new Dbl(d);
    }
    if (value instanceof Boolean b) {
      return new Bool(b);
    }
    if (value instanceof byte[] bytes) {
      return new Bulk(bytes);
    }
    if (value instanceof List<?> list) {
      List<Reply> out = new ArrayList<>(list.size());
      for (Object o : list) {
        out.add(of(o));
      }
      return new Array(out);
    }
    return bulk(value.toString());
  }
}
