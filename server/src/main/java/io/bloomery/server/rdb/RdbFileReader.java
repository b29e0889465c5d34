package io.bloomery.server.rdb;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.TreeMap;

/**
 * Reads a whole RDB file as Redis 8 writes it (RDB versions 1 to {@value DumpPayload#RDB_VERSION}) and hands every
 * value of a {@link ModuleType} to a {@link Visitor}; every other value is skipped and counted by its type.
 *
 * <p>The file: {@code REDIS} and a 4-digit version, then opcodes and keys until {@code EOF} (255) and, from version
 * 5, the CRC-64 of everything before it (0 when Redis ran with {@code rdbchecksum no}). Opcodes: {@code AUX} (250:
 * two strings), {@code MODULE_AUX} (247: a module id, then a module value), {@code FUNCTION2} (245: a string), {@code
 * SELECTDB} (254: a db number), {@code RESIZEDB} (251: two lengths), {@code SLOT_INFO} (244: three lengths), {@code
 * EXPIRETIME_MS} (252: u64 ms) and {@code EXPIRETIME} (253: u32 s) for the next key, {@code IDLE} (248: a length) and
 * {@code FREQ} (249: a byte). Anything else is an object type, then the key (a string), then the value.
 *
 * <p>Values skipped, by their encoding: strings (0); lists, sets and hashes of strings (1, 2, 4); zsets with text
 * (3) and binary (5) scores; a single blob for zipmap, ziplist, intset and listpack encodings (9 to 13, 16, 17, 20,
 * and 23 / 25 hash listpacks with field expiry, 25 after its minimum-expiry time); quicklists of ziplists (14) and of
 * listpack nodes (18); streams (15, 19, 21: listpacks, metadata, consumer groups with their pending entries and
 * consumers); hashes with field expiry (22, 24: a TTL, field and value per entry, 24 after its minimum-expiry time);
 * other modules' values (7, by their module-value framing). Module values of RedisBloom's types are read fully,
 * including their end marker, and checked as {@code RESTORE} checks them.
 */
public final class RdbFileReader {
  private static final int OPCODE_SLOT_INFO = 244;
  private static final int OPCODE_FUNCTION2 = 245;
  private static final int OPCODE_FUNCTION_PRE_GA = 246;
  private static final int OPCODE_MODULE_AUX = 247;
  private static final int OPCODE_IDLE = 248;
  private static final int OPCODE_FREQ = 249;
  private static final int OPCODE_AUX = 250;
  private static final int OPCODE_RESIZEDB = 251;
  private static final int OPCODE_EXPIRETIME_MS = 252;
  private static final int OPCODE_EXPIRETIME = 253;
  private static final int OPCODE_SELECTDB = 254;
  private static final int OPCODE_EOF = 255;

  /* Redis's type of each object type (TYPE's reply), whatever its encoding. */
  private static final String[] TYPE_NAMES = {
      "string", "list", "set", "zset", "hash", "zset", "module", "module", "?", "hash", "list", "set", "zset", "hash",
      "list", "stream", "hash", "zset", "list", "stream", "set", "stream", "hash", "hash", "hash", "hash"};

  private RdbFileReader() {}

  /** Receives the file's module values of this server's types, in file order. */
  @FunctionalInterface
  public interface Visitor {
    /**
     * One key.
     *
     * @param db the database it was in
     * @param key its name
     * @param expireAtMillis its expiry time (Unix milliseconds), or -1 for none
     * @param value the keyspace value, checked
     */
    void value(int db, byte[] key, long expireAtMillis, Object value) throws IOException;
  }

  /**
   * What a file held.
   *
   * @param rdbVersion the file's RDB version
   * @param values module values handed to the visitor
   * @param skipped keys skipped, by type ({@code string}, {@code list}, ..., {@code module <name>})
   */
  public record Summary(int rdbVersion, long values, Map<String, Long> skipped) {
    /** Keys skipped in all. */
    public long skippedTotal() {
      return skipped.values().stream().mapToLong(Long::longValue).sum();
    }
  }

  /**
   * Reads the whole file from {@code in}, which is left after the checksum.
   *
   * @throws RdbFormatException if the file is not an RDB file of a version this server reads, is malformed or
   *     truncated, its checksum differs, or a RedisBloom value in it fails its checks (naming the key)
   * @throws IOException if reading fails or the visitor throws
   */
  public static Summary read(InputStream in, Visitor visitor) throws IOException {
    RdbInput rdb = new RdbInput(in);
    byte[] magic = rdb.raw(9);
    String header = new String(magic, StandardCharsets.US_ASCII);
    if (!header.startsWith("REDIS") || !header.substring(5).chars().allMatch(Character::isDigit)) {
      throw new RdbFormatException("not an RDB file: it starts with " + printable(magic) + ", not REDIS and a version");
    }
    int version = Integer.parseInt(header.substring(5));
    if (version < 1 || version > DumpPayload.RDB_VERSION) {
      throw new RdbFormatException("RDB version " + version + ": this server reads 1 to " + DumpPayload.RDB_VERSION);
    }
    Map<String, Long> skipped = new TreeMap<>();
    long values = 0;
    int db = 0;
    long expireAt = -1;
    while (true) {
      long offset = rdb.position();
      int type = rdb.u8();
      switch (type) {
        case OPCODE_EOF -> {
          if (version >= 5) {
            long computed = rdb.crc();
            long stored = rdb.littleEndian(8);
            if (stored != 0 && stored != computed) {
              throw new RdbFormatException("RDB checksum " + Long.toHexString(stored) + " stored, "
                  + Long.toHexString(computed) + " computed");
            }
          }
          return new Summary(version, values, skipped);
        }
        case OPCODE_SELECTDB -> db = rdb.count(Integer.MAX_VALUE, "database number");
        case OPCODE_RESIZEDB -> {
          rdb.length();
          rdb.length();
        }
        case OPCODE_SLOT_INFO -> {
          rdb.length();
          rdb.length();
          rdb.length();
        }
        case OPCODE_AUX -> {
          rdb.skipString();
          rdb.skipString();
        }
        case OPCODE_FUNCTION2 -> rdb.skipString();
        case OPCODE_MODULE_AUX -> {
          rdb.length(); // module id
          long whenOpcode = rdb.length();
          if (whenOpcode != RdbOutput.MODULE_OPCODE_UINT) {
            throw new RdbFormatException("module aux data at offset " + offset + ": bad when opcode " + whenOpcode);
          }
          rdb.length();
          rdb.skipModuleValue();
        }
        case OPCODE_EXPIRETIME_MS -> expireAt = rdb.littleEndian(8);
        case OPCODE_EXPIRETIME -> expireAt = rdb.littleEndian(4) * 1000;
        case OPCODE_IDLE -> rdb.length();
        case OPCODE_FREQ -> rdb.u8();
        case OPCODE_FUNCTION_PRE_GA -> throw new RdbFormatException("pre-GA function data at offset " + offset
            + " (Redis 7.0 release candidates) is not read");
        default -> {
          byte[] key = rdb.string();
          if (type == DumpPayload.RDB_TYPE_MODULE_2) {
            ModuleTypeId id = ModuleTypeId.decode(rdb.length());
            if (ModuleType.named(id.name()) == null) {
              rdb.skipModuleValue();
              skipped.merge("module " + id.name(), 1L, Long::sum);
            } else {
              Object value;
              try {
                value = DumpPayload.readModuleValue(rdb, id);
              } catch (RdbFormatException e) {
                throw new RdbFormatException("key " + printable(key) + " (db " + db + ", offset " + offset
                    + "): " + e.getMessage(), e);
              }
              visitor.value(db, key, expireAt, value);
              values++;
            }
          } else {
            skipValue(rdb, type, offset);
            skipped.merge(type < TYPE_NAMES.length ? TYPE_NAMES[type] : "type " + type, 1L, Long::sum);
          }
          expireAt = -1;
        }
      }
    }
  }

  /** The key as text: printable ASCII as is, other bytes as {@code \xHH}. */
  static String printable(byte[] key) {
    StringBuilder out = new StringBuilder("\"");
    for (byte b : key) {
      if (b >= 0x20 && b < 0x7F && b != '"' && b != '\\') {
        out.append((char) b);
      } else {
        out.append(String.format("\\x%02x", b & 0xFF));
      }
    }
    return out.append('"').toString();
  }

  private static void skipValue(RdbInput rdb, int type, long offset) throws IOException {
    switch (type) {
      case 0, 9, 10, 11, 12, 13, 16, 17, 20, 23 -> rdb.skipString();
      case 25 -> {
        rdb.skip(8);
        rdb.skipString();
      }
      case 1, 2 -> skipStrings(rdb, rdb.length());
      case 4 -> skipStrings(rdb, 2 * rdb.length());
      case 3 -> {
        for (long n = rdb.length(); n > 0; n--) {
          rdb.skipString();
          int len = rdb.u8();
          if (len < 253) {
            rdb.skip(len);
          }
        }
      }
      case 5 -> {
        for (long n = rdb.length(); n > 0; n--) {
          rdb.skipString();
          rdb.skip(8);
        }
      }
      case 14 -> skipStrings(rdb, rdb.length());
      case 18 -> {
        for (long n = rdb.length(); n > 0; n--) {
          rdb.length(); // container: plain or packed
          rdb.skipString();
        }
      }
      case 15, 19, 21 -> skipStream(rdb, type);
      case 22, 24 -> {
        if (type == 24) {
          rdb.skip(8);
        }
        for (long n = rdb.length(); n > 0; n--) {
          rdb.length();
          rdb.skipString();
          rdb.skipString();
        }
      }
      case 7 -> throw new IllegalStateException("module values are read by the caller");
      default -> throw new RdbFormatException("unknown object type " + type + " at offset " + offset);
    }
  }

  private static void skipStrings(RdbInput rdb, long count) throws IOException {
    for (long n = count; n > 0; n--) {
      rdb.skipString();
    }
  }

  private static void skipStream(RdbInput rdb, int type) throws IOException {
    for (long n = rdb.length(); n > 0; n--) {
      rdb.skipString(); // node key (master id)
      rdb.skipString(); // listpack
    }
    rdb.length(); // length
    rdb.length(); // last id ms
    rdb.length(); // last id seq
    if (type >= 19) {
      rdb.length(); // first id
      rdb.length();
      rdb.length(); // max deleted id
      rdb.length();
      rdb.length(); // entries added
    }
    for (long groups = rdb.length(); groups > 0; groups--) {
      rdb.skipString(); // name
      rdb.length(); // last id
      rdb.length();
      if (type >= 19) {
        rdb.length(); // entries read
      }
      for (long pending = rdb.length(); pending > 0; pending--) {
        rdb.skip(16 + 8); // raw id, delivery time
        rdb.length(); // delivery count
      }
      for (long consumers = rdb.length(); consumers > 0; consumers--) {
        rdb.skipString(); // name
        rdb.skip(8); // seen time
        if (type >= 21) {
          rdb.skip(8); // active time
        }
        for (long pending = rdb.length(); pending > 0; pending--) {
          rdb.skip(16);
        }
      }
    }
  }
}
