package io.bloomery.cluster.shard;

import io.bloomery.server.resp.Reply;
import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.BufferUnderflowException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * A command's {@link Reply} as the bytes a shard's state machine returns to the replica that submitted it: one tag
 * byte per frame, then its payload (big-endian; strings as u32 length and UTF-8, bulk bytes as u32 length and the
 * bytes, aggregates as u32 count and their elements). The tree is kept whole, so the submitting replica encodes it
 * for its client in RESP2 or RESP3 as the single-node server does.
 */
public final class ReplyCodec {
  private static final int SIMPLE = 1;
  private static final int ERROR = 2;
  private static final int INT = 3;
  private static final int BULK = 4;
  private static final int NIL = 5;
  private static final int NIL_ARRAY = 6;
  private static final int ARRAY = 7;
  private static final int MAP = 8;
  private static final int SET = 9;
  private static final int BOOL = 10;
  private static final int DOUBLE = 11;
  private static final int VERBATIM = 12;
  /** Nesting deeper than any command's reply: a decode beyond it is refused rather than recursing further. */
  private static final int MAX_DEPTH = 64;

  private ReplyCodec() {}

  /** The reply's bytes. */
  public static byte[] encode(Reply reply) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (DataOutputStream out = new DataOutputStream(bytes)) {
      write(reply, out);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return bytes.toByteArray();
  }

  private static void write(Reply reply, DataOutputStream out) throws IOException {
    switch (reply) {
      case Reply.Simple r -> text(out, SIMPLE, r.text());
      case Reply.Error r -> text(out, ERROR, r.text());
      case Reply.Int r -> {
        out.writeByte(INT);
        out.writeLong(r.value());
      }
      case Reply.Bulk r -> {
        out.writeByte(BULK);
        out.writeInt(r.bytes().length);
        out.write(r.bytes());
      }
      case Reply.Nil r -> out.writeByte(NIL);
      case Reply.NilArray r -> out.writeByte(NIL_ARRAY);
      case Reply.Array r -> elements(out, ARRAY, r.elements());
      case Reply.MapReply r -> elements(out, MAP, r.keysAndValues());
      case Reply.SetReply r -> elements(out, SET, r.elements());
      case Reply.Bool r -> {
        out.writeByte(BOOL);
        out.writeBoolean(r.value());
      }
      case Reply.Dbl r -> {
        out.writeByte(DOUBLE);
        out.writeDouble(r.value());
      }
      case Reply.Verbatim r -> {
        text(out, VERBATIM, r.format());
        string(out, r.text());
      }
      case Reply.Constant r -> write(r.frames(), out);
    }
  }

  private static void text(DataOutputStream out, int tag, String text) throws IOException {
    out.writeByte(tag);
    string(out, text);
  }

  private static void string(DataOutputStream out, String text) throws IOException {
    byte[] b = text.getBytes(StandardCharsets.UTF_8);
    out.writeInt(b.length);
    out.write(b);
  }

  private static void elements(DataOutputStream out, int tag, List<Reply> elements) throws IOException {
    out.writeByte(tag);
    out.writeInt(elements.size());
    for (Reply e : elements) {
      write(e, out);
    }
  }

  /**
   * Reads a reply {@link #encode} wrote.
   *
   * @throws IllegalArgumentException if the bytes are not one whole reply
   */
  public static Reply decode(ByteBuffer bytes) {
    ByteBuffer in = bytes.duplicate();
    try {
      Reply r = read(in, 0);
      if (in.hasRemaining()) {
        throw new IllegalArgumentException(in.remaining() + " bytes after the reply");
      }
      return r;
    } catch (BufferUnderflowException e) {
      throw new IllegalArgumentException("reply ends early", e);
    }
  }

  private static Reply read(ByteBuffer in, int depth) {
    if (depth > MAX_DEPTH) {
      throw new IllegalArgumentException("reply nested deeper than " + MAX_DEPTH);
    }
    int tag = in.get();
    return switch (tag) {
      case SIMPLE -> new Reply.Simple(string(in));
      case ERROR -> new Reply.Error(string(in));
      case INT -> new Reply.Int(in.getLong());
      case BULK -> new Reply.Bulk(bytes(in));
      case NIL -> new Reply.Nil();
      case NIL_ARRAY -> new Reply.NilArray();
      case ARRAY -> new Reply.Array(elements(in, depth));
      case MAP -> new Reply.MapReply(elements(in, depth));
      case SET -> new Reply.SetReply(elements(in, depth));
      case BOOL -> new Reply.Bool(in.get() != 0);
      case DOUBLE -> new Reply.Dbl(in.getDouble());
      case VERBATIM -> new Reply.Verbatim(string(in), string(in));
      default -> throw new IllegalArgumentException("unknown reply tag " + tag);
    };
  }

  private static byte[] bytes(ByteBuffer in) {
    int length = in.getInt();
    if (length < 0 || length > in.remaining()) {
      throw new IllegalArgumentException("a length of " + Integer.toUnsignedLong(length) + " with "
          + in.remaining() + " bytes left");
    }
    byte[] b = new byte[length];
    in.get(b);
    return b;
  }

  private static String string(ByteBuffer in) {
    return new String(bytes(in), StandardCharsets.UTF_8);
  }

  private static List<Reply> elements(ByteBuffer in, int depth) {
    int count = in.getInt();
    if (count < 0 || count > in.remaining()) { // every element takes at least its tag byte
      throw new IllegalArgumentException("an aggregate of " + Integer.toUnsignedLong(count) + " elements with "
          + in.remaining() + " bytes left");
    }
    List<Reply> out = new ArrayList<>(count);
    for (int i = 0; i < count; i++) {
      out.add(read(in, depth + 1));
    }
    return out;
  }
}
