package io.bloomery.guard;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * A decoder for the messages of PostgreSQL's built-in logical decoding plugin {@code pgoutput},
 * protocol version 1 (the one every server since 10 speaks; the guard asks for no streaming of
 * in-progress transactions, so a transaction arrives whole, at its commit, in commit order).
 *
 * <p>Only what the guard needs is kept: begin/commit with the commit's end LSN and timestamp,
 * relations (to find the item column by name), inserts, updates, deletes, truncates and logical
 * messages (the guard's freshness fences). Origin and type messages are recognised and skipped.
 *
 * <p>The input is untrusted bytes: every length and count is checked against what remains before
 * anything is allocated, and a malformed message raises {@link MalformedMessageException} naming
 * the message and the offset, never an unchecked buffer exception.
 */
final class PgOutput {
  /** Microseconds between the Unix epoch and PostgreSQL's epoch, 2000-01-01T00:00:00Z. */
  static final long PG_EPOCH_MICROS = 946_684_800L * 1_000_000L;

  private PgOutput() {}

  /** One decoded message. */
  sealed interface Message {}

  /** {@code B}: a transaction begins; {@code finalLsn} is its commit record's LSN. */
  record Begin(long finalLsn, long commitTimeMicros, int xid) implements Message {}

  /** {@code C}: a transaction committed; {@code endLsn} is the LSN just after its commit record. */
  record Commit(long commitLsn, long endLsn, long commitTimeMicros) implements Message {}

  /** {@code R}: the shape of a relation, sent before its first change in a session. */
  record Relation(int oid, String namespace, String name, List<String> columns)
      implements Message {}

  /** {@code I}: a new row. */
  record Insert(int relation, List<Value> tuple) implements Message {}

  /** {@code U}: an updated row; {@code tuple} is the new row. */
  record Update(int relation, List<Value> tuple) implements Message {}

  /** {@code D}: a deleted row (its key or old row is not kept). */
  record Delete(int relation) implements Message {}

  /** {@code T}: the relations were truncated. */
  record Truncate(int[] relations) implements Message {}

  /** {@code M}: a logical message ({@code pg_logical_emit_message}). */
  record LogicalMessage(boolean transactional, long lsn, String prefix, byte[] content)
      implements Message {}

  /** {@code O} (origin) or {@code Y} (type): recognised, not needed. */
  record Ignored(char type) implements Message {}

  /** One column of a tuple: {@code n} null, {@code u} unchanged TOAST, {@code t} text, {@code b} binary. */
  record Value(char kind, byte[] data) {
    boolean hasData() {
      return kind == 't' || kind == 'b';
    }
  }

  /** A message that is not well-formed pgoutput protocol version 1. */
  static final class MalformedMessageException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    MalformedMessageException(String message) {
      super(message);
    }
  }

  /** Decodes one message (the payload of one XLogData frame). */
  static Message decode(ByteBuffer buffer) {
    ByteBuffer in = buffer.slice();
    if (!in.hasRemaining()) {
      throw new MalformedMessageException("pgoutput: empty message");
    }
    char type = (char) in.get();
    try {
      Message message = switch (type) {
        case 'B' -> new Begin(in.getLong(), in.getLong(), in.getInt());
        case 'C' -> {
          in.get(); // flags, unused
          yield new Commit(in.getLong(), in.getLong(), in.getLong());
        }
        case 'R' -> relation(in);
        case 'I' -> {
          int relation = in.getInt();
          expect(in, 'N', "insert");
          yield new Insert(relation, tuple(in));
        }
        case 'U' -> update(in);
        case 'D' -> {
          int relation = in.getInt();
          char kind = (char) in.get();
          if (kind != 'K' && kind != 'O') {
            throw malformed("delete: expected K or O, found " + printable(kind), in);
          }
          tuple(in);
          yield new Delete(relation);
        }
        case 'T' -> truncate(in);
        case 'M' -> logicalMessage(in);
        case 'O' -> {
          in.getLong();
          string(in);
          yield new Ignored('O');
        }
        case 'Y' -> {
          in.getInt();
          string(in);
          string(in);
          yield new Ignored('Y');
        }
        default -> throw malformed("unknown message type " + printable(type), in);
      };
      if (in.hasRemaining()) {
        throw malformed("'" + type + "' message has " + in.remaining() + " trailing bytes", in);
      }
      return message;
    } catch (BufferUnderflowException e) {
      throw malformed("'" + type + "' message is truncated", in);
    }
  }

  private static Relation relation(ByteBuffer in) {
    int oid = in.getInt();
    String namespace = string(in);
    String name = string(in);
    in.get(); // replica identity setting
    int count = Short.toUnsignedInt(in.getShort());
    if (count > in.remaining() / 10) { // each column is at least 1 + 1 + 4 + 4 bytes
      throw malformed("relation declares " + count + " columns in " + in.remaining()
          + " bytes", in);
    }
    List<String> columns = new ArrayList<>(count);
    for (int i = 0; i < count; i++) {
      in.get(); // flags (part of the key)
      columns.add(string(in));
      in.getInt(); // type oid
      in.getInt(); // type modifier
    }
    return new Relation(oid, namespace, name, List.copyOf(columns));
  }

  private static Update update(ByteBuffer in) {
    int relation = in.getInt();
    char kind = (char) in.get();
    if (kind == 'K' || kind == 'O') {
      tuple(in); // the old key or row
      kind = (char) in.get();
    }
    if (kind != 'N') {
      throw malformed("update: expected N, found " + printable(kind), in);
    }
    return new Update(relation, tuple(in));
  }

  private static Truncate truncate(ByteBuffer in) {
    int count = in.getInt();
    in.get(); // options (CASCADE, RESTART IDENTITY)
    if (count < 0 || count > in.remaining() / 4) {
      throw malformed("truncate declares " + count + " relations in " + in.remaining()
          + " bytes", in);
    }
    int[] relations = new int[count];
    for (int i = 0; i < count; i++) {
      relations[i] = in.getInt();
    }
    return new Truncate(relations);
  }

  private static LogicalMessage logicalMessage(ByteBuffer in) {
    boolean transactional = (in.get() & 1) != 0;
    long lsn = in.getLong();
    String prefix = string(in);
    return new LogicalMessage(transactional, lsn, prefix, bytes(in, "message content"));
  }

  private static List<Value> tuple(ByteBuffer in) {
    int count = Short.toUnsignedInt(in.getShort());
    if (count > in.remaining()) { // each column is at least its kind byte
      throw malformed("tuple declares " + count + " columns in " + in.remaining() + " bytes", in);
    }
    List<Value> values = new ArrayList<>(count);
    for (int i = 0; i < count; i++) {
      char kind = (char) in.get();
      switch (kind) {
        case 'n', 'u' -> values.add(new Value(kind, null));
        case 't', 'b' -> values.add(new Value(kind, bytes(in, "column " + i)));
        default -> throw malformed("tuple column " + i + ": unknown kind " + printable(kind), in);
      }
    }
    return values;
  }

  private static byte[] bytes(ByteBuffer in, String what) {
    int length = in.getInt();
    if (length < 0 || length > in.remaining()) {
      throw malformed(what + " declares " + length + " bytes, " + in.remaining() + " remain", in);
    }
    byte[] data = new byte[length];
    in.get(data);
    return data;
  }

  private static String string(ByteBuffer in) {
    int start = in.position();
    for (int i = start; i < in.limit(); i++) {
      if (in.get(i) == 0) {
        byte[] text = new byte[i - start];
        in.get(text);
        in.get(); // the terminator
        return new String(text, StandardCharsets.UTF_8);
      }
    }
    throw malformed("unterminated string", in);
  }

  private static void expect(ByteBuffer in, char wanted, String what) {
    char found = (char) in.get();
    if (found != wanted) {
      throw malformed(what + ": expected " + wanted + ", found " + printable(found), in);
    }
  }

  private static String printable(char c) {
    return c >= 0x20 && c < 0x7f ? "'" + c + "'" : String.format("0x%02x", (int) c);
  }

  private static MalformedMessageException malformed(String what, ByteBuffer in) {
    return new MalformedMessageException("pgoutput: " + what + " (at byte " + in.position() + ")");
  }

  /**
   * The bytes of a {@code bytea} value in its text output form: hex ({@code \x0aff…}, the default
   * since PostgreSQL 9.0) or escape ({@code bytea_output = escape}: printable bytes as themselves,
   * {@code \\} for a backslash, {@code \ooo} octal for the rest).
   */
  static byte[] byteaFromText(byte[] text) {
    if (text.length >= 2 && text[0] == '\\' && text[1] == 'x') {
      if ((text.length & 1) != 0) {
        throw new MalformedMessageException("bytea hex text has an odd number of digits");
      }
      byte[] out = new byte[(text.length - 2) / 2];
      for (int i = 0; i < out.length; i++) {
        out[i] = (byte) (hexDigit(text[2 + 2 * i]) << 4 | hexDigit(text[3 + 2 * i]));
      }
      return out;
    }
    java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream(text.length);
    for (int i = 0; i < text.length; i++) {
      if (text[i] != '\\') {
        out.write(text[i]);
      } else if (i + 1 < text.length && text[i + 1] == '\\') {
        out.write('\\');
        i++;
      } else if (i + 3 < text.length && isOctal(text[i + 1]) && isOctal(text[i + 2])
          && isOctal(text[i + 3])) {
        int value = (text[i + 1] - '0') << 6 | (text[i + 2] - '0') << 3 | (text[i + 3] - '0');
        if (value > 0xff) {
          throw new MalformedMessageException("bytea escape \\" + (char) text[i + 1]
              + (char) text[i + 2] + (char) text[i + 3] + " is above \\377");
        }
        out.write(value);
        i += 3;
      } else {
        throw new MalformedMessageException("bytea escape text has a bad escape at byte " + i);
      }
    }
    return out.toByteArray();
  }

  private static boolean isOctal(byte b) {
    return b >= '0' && b <= '7';
  }

  private static int hexDigit(byte b) {
    if (b >= '0' && b <= '9') {
      return b - '0';
    }
    if (b >= 'a' && b <= 'f') {
      return b - 'a' + 10;
    }
    if (b >= 'A' && b <= 'F') {
      return b - 'A' + 10;
    }
    throw new MalformedMessageException("bytea hex text has a non-hex digit 0x"
        + Integer.toHexString(b & 0xff));
  }
}
