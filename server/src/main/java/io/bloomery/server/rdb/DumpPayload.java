package io.bloomery.server.rdb;

import io.bloomery.server.keyspace.ValueType;
import java.io.ByteArrayInputStream;
import java.io.IOException;

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
   * The payload of a keyspace value. A BF or CF value is copied first (its readers run beside its writer); a CMS or
   * TOPK value must be held still by the caller (its key lock).
   *
   * @throws IllegalArgumentException for a value no module type carries (a guarded set), or one whose payload would
   *     not fit in a Java array (over 2 GiB)
   */
  public static byte[] dump(Object value) {
    ModuleType type = ModuleType.of(ValueType.of(value));
    if (type == null) {
      throw new IllegalArgumentException("no module type carries a " + ValueType.of(value).label() + " value");
    }
    RdbOutput out = new RdbOutput();
    try {
      writeValue(type, value, out);
    } catch (OutOfMemoryError e) { // the buffer cannot grow past the largest array
      throw new IllegalArgumentException("the " + type.typeName() + " value's payload is larger than 2 GiB", e);
    }
    out.rawByte(RDB_VERSION & 0xFF);
    out.rawByte(RDB_VERSION >>> 8);
    byte[] body = out.toByteArray();
    long crc = Crc64.update(0, body, 0, body.length);
    RdbOutput footer = new RdbOutput();
    footer.raw(body);
    footer.littleEndian64(crc);
    return footer.toByteArray();
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
