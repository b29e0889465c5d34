package io.bloomery.server.rdb;

import io.bloomery.server.keyspace.ValueType;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;

/**
 * {@code DUMP} payloads as Redis writes and {@code RESTORE} reads them ({@code createDumpPayload} and {@code
 * verifyDumpPayload} in Redis's {@code cluster.c}), so a key moves between Redis + RedisBloom and Bloomery in either
 * direction:
 *
 * <pre>
 * +-------------+-----------------+--------------------------+-----+--------------------+--------------------+
 * | type byte 7 | module id       | module value fields      | EOF | RDB version        | CRC-64 (Jones) of  |
 * | MODULE_2    | (RDB length,    | (opcode + value each,    | (0) | u16 little-endian  | everything before, |
 * |             |  64-bit)        |  see {@link ModuleType}) |     | ({@value #RDB_VERSION})                 | u64 little-endian  |
 * +-------------+-----------------+--------------------------+-----+--------------------+--------------------+
 * </pre>
 *
 * <p>Reading checks, in Redis's order: at least 10 bytes, a version not above {@value #RDB_VERSION}, the CRC
 * ({@link VersionOrChecksumException}); then the object ({@link RdbFormatException}): the type byte, a module id
 * this server has, the fields, the end marker. As in Redis, bytes between the value and the footer are ignored.
 */
public final class DumpPayload {
  /** The RDB version Redis 8 writes and the highest this server reads. */
  public static final int RDB_VERSION = 12;
  static final int RDB_TYPE_MODULE_2 = 7;

  private DumpPayload() {}

  /** A payload {@code RESTORE} refuses before reading the object: too short, a newer RDB version, a wrong CRC. */
  public static final class VersionOrChecksumException extends RdbFormatException {
    private static final long serialVersionUID = 1L;

    VersionOrChecksumException(String message) {
      super(message);
    }
  }

  /**
   * The payload of a keyspace value, which the caller holds still (its key lock) while it is written.
   *
   * @throws IllegalArgumentException for a value no module type carries (a guarded set), or one whose payload would
   *     not fit in a Java array (over 2 GiB)
   */
  public static byte[] dump(Object value) {
    ModuleType type = type(value);
    ByteArrayOutputStream buffer = new ByteArrayOutputStream();
    try {
      write(type, value, buffer);
    } catch (OutOfMemoryError e) { // the buffer cannot grow past the largest array
      throw new IllegalArgumentException("the " + type.typeName() + " value's payload is larger than 2 GiB", e);
    }
    return buffer.toByteArray();
  }

  /**
   * The payload of a keyspace value, as {@link #dump}, or {@code null} if it is longer than {@code max} bytes: its
   * writing stops there.
   *
   * @throws IllegalArgumentException for a value no module type carries
   */
  public static byte[] dumpAtMost(Object value, int max) {
    Window window = new Window(0, max, true);
    try {
      write(type(value), value, window);
    } catch (Window.Past e) {
      return null;
    }
    return window.bytes.toByteArray();
  }

  /**
   * Part of a value's payload and the whole payload's length, without the whole payload in memory: what a reshard
   * reads of a key too large for one answer, a part at a time. The value is written out in full for each part (its
   * CRC covers every byte), so reading a payload in n parts costs n times its writing; the caller holds the value
   * still between the parts (a frozen slot), or the parts do not make one payload and its CRC says so.
   *
   * @param offset the first byte of the part, at least 0; at or past the end, the part is empty
   * @param length the most bytes of the part, at least 0
   * @throws IllegalArgumentException for a value no module type carries
   */
  public static Part part(Object value, long offset, int length) {
    if (offset < 0 || length < 0) {
      throw new IllegalArgumentException("a part at " + offset + " of " + length + " bytes");
    }
    Window window = new Window(offset, length, false);
    long total = write(type(value), value, window);
    return new Part(total, window.bytes.toByteArray());
  }

  /** {@link #part}'s answer: {@code bytes} from the payload's offset asked for, of a payload of {@code total} bytes. */
  public record Part(long total, byte[] bytes) {}

  private static ModuleType type(Object value) {
    ModuleType type = ModuleType.of(ValueType.of(value));
    if (type == null) {
      throw new IllegalArgumentException("no module type carries a " + ValueType.of(value).label() + " value");
    }
    return type;
  }

  /** Writes the payload of {@code value} into {@code sink}: the object, the RDB version, the CRC. Returns its length. */
  private static long write(ModuleType type, Object value, OutputStream sink) {
    Checksummed body = new Checksummed(sink);
    RdbOutput out = new RdbOutput(body);
    writeValue(type, value, out);
    out.rawByte(RDB_VERSION & 0xFF);
    out.rawByte(RDB_VERSION >>> 8);
    new RdbOutput(sink).littleEndian64(body.crc);
    return body.length + 8;
  }

  /** Passes bytes on, keeping their CRC-64 and their count. */
  private static final class Checksummed extends OutputStream {
    private final OutputStream out;
    long crc;
    long length;

    Checksummed(OutputStream out) {
      this.out = out;
    }

    @Override
    public void write(int b) throws IOException {
      crc = Crc64.update(crc, b);
      length++;
      out.write(b);
    }

    @Override
    public void write(byte[] b, int off, int len) throws IOException {
      crc = Crc64.update(crc, b, off, len);
      length += len;
      out.write(b, off, len);
    }
  }

  /**
   * Keeps the bytes written between {@code from} and {@code from + length}, and counts the rest; or, {@code bounded},
   * stops the writing ({@link Past}) at the first byte past the window.
   */
  private static final class Window extends OutputStream {
    /** Thrown through the writer by a bounded window, at its first byte past the end. */
    static final class Past extends RuntimeException {
      private static final long serialVersionUID = 1L;

      Past() {
        super(null, null, false, false);
      }
    }

    private final long from;
    private final long to;
    private final boolean bounded;
    final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    private long position;

    Window(long from, int length, boolean bounded) {
      this.from = from;
      this.to = from + length;
      this.bounded = bounded;
    }

    @Override
    public void write(int b) {
      if (position >= from && position < to) {
        bytes.write(b);
      } else if (bounded && position >= to) {
        throw new Past();
      }
      position++;
    }

    @Override
    public void write(byte[] b, int off, int len) {
      if (bounded && position + len > to) {
        throw new Past();
      }
      long start = Math.max(position, from);
      long end = Math.min(position + len, to);
      if (start < end) {
        bytes.write(b, off + (int) (start - position), (int) (end - start));
      }
      position += len;
    }
  }

  /** Writes the object: type byte, module id, fields, end marker. */
  static void writeValue(ModuleType type, Object value, RdbOutput out) {
    out.rawByte(RDB_TYPE_MODULE_2);
    out.length(type.moduleId());
    type.write(value, out);
    out.moduleEof();
  }

  /**
   * The keyspace value a payload holds.
   *
   * @throws VersionOrChecksumException if the footer is missing, names a newer RDB version or the CRC differs
   * @throws RdbFormatException if the object is malformed, of a type this server has not, or fails its checks
   */
  public static Object restore(byte[] payload) throws RdbFormatException {
    verifyFooter(payload);
    RdbInput in = new RdbInput(new ByteArrayInputStream(payload, 0, payload.length - 10));
    try {
      int objectType = in.u8();
      if (objectType != RDB_TYPE_MODULE_2) {
        throw new RdbFormatException("object type " + objectType + ": this server holds only module values (type "
            + RDB_TYPE_MODULE_2 + ")");
      }
      return readModuleValue(in);
    } catch (RdbFormatException e) {
      throw e;
    } catch (IOException e) {
      throw new RdbFormatException("reading a payload in memory failed", e);
    }
  }

  /** Reads a module id, the value's fields and the end marker, after the type byte. */
  static Object readModuleValue(RdbInput in) throws IOException {
    return readModuleValue(in, ModuleTypeId.decode(in.length()));
  }

  /** Reads the value's fields and the end marker, after the module id. */
  static Object readModuleValue(RdbInput in, ModuleTypeId id) throws IOException {
    ModuleType type = ModuleType.named(id.name());
    if (type == null) {
      throw new RdbFormatException("no module type " + id.name() + " here");
    }
    if (id.encodingVersion() > type.encodingVersion()) {
      throw new RdbFormatException(id.name() + " encoding version " + id.encodingVersion() + " is newer than "
          + type.encodingVersion());
    }
    Object value = type.read(in, id.encodingVersion());
    in.moduleEof();
    return ValueType.of(value).adopt(value);
  }

  private static void verifyFooter(byte[] payload) throws VersionOrChecksumException {
    if (payload.length < 10) {
      throw new VersionOrChecksumException("a payload is at least 10 bytes, found " + payload.length);
    }
    int footer = payload.length - 10;
    int version = (payload[footer] & 0xFF) | (payload[footer + 1] & 0xFF) << 8;
    if (version > RDB_VERSION) {
      throw new VersionOrChecksumException("RDB version " + version + " is newer than " + RDB_VERSION);
    }
    long crc = Crc64.update(0, payload, 0, payload.length - 8);
    long stored = 0;
    for (int i = 0; i < 8; i++) {
      stored |= (payload[footer + 2 + i] & 0xFFL) << (8 * i);
    }
    if (crc != stored) {
      throw new VersionOrChecksumException("CRC-64 " + Long.toHexString(stored) + " stored, "
          + Long.toHexString(crc) + " computed");
    }
  }
}
