package io.bloomery.format;

import io.bloomery.blocked.SplitBlockBloomFilter;
import io.bloomery.internal.KindAccess;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.util.Objects;

/**
 * Reads and writes a split-block Bloom filter the way Parquet stores it in a file: a Thrift
 * compact-protocol {@code BloomFilterHeader} followed by the bitset. The bytes at a column chunk's
 * {@code bloom_filter_offset} are exactly this.
 *
 * <pre>
 * struct BloomFilterHeader {                       compact encoding written here (16 bytes for 1 KiB):
 *   1: required i32 numBytes                       15 varint(zigzag(numBytes))
 *   2: required BloomFilterAlgorithm algorithm     1c 1c 00 00   union { 1: SplitBlockAlgorithm BLOCK {} }
 *   3: required BloomFilterHash hash               1c 1c 00 00   union { 1: XxHash XXHASH {} }
 *   4: required BloomFilterCompression compression 1c 1c 00 00   union { 1: Uncompressed UNCOMPRESSED {} }
 * }                                                00            stop
 * bitset: numBytes bytes, 32-bit words little-endian (as parquet-java's {@code BlockSplitBloomFilter.writeTo})
 * </pre>
 *
 * <p>Reading validates every header field before allocating: numBytes must be a positive multiple of
 * 32 and at most 128 MiB (parquet-java's {@code ParquetFileReader} limit); the algorithm, hash and
 * compression must be BLOCK, XXHASH and UNCOMPRESSED; unknown fields are skipped as Thrift requires,
 * with nesting and lengths capped. Every violation raises {@link FilterFormatException} saying what
 * was expected and found.
 */
public final class ParquetBloomFormat {

  /** Largest bitset Parquet readers accept (parquet-java {@code BlockSplitBloomFilter.UPPER_BOUND_BYTES}). */
  public static final int MAX_BYTES = 128 * 1024 * 1024;

  private static final int TYPE_STOP = 0;
  private static final int TYPE_TRUE = 1;
  private static final int TYPE_FALSE = 2;
  private static final int TYPE_BYTE = 3;
  private static final int TYPE_I16 = 4;
  private static final int TYPE_I32 = 5;
  private static final int TYPE_I64 = 6;
  private static final int TYPE_DOUBLE = 7;
  private static final int TYPE_BINARY = 8;
  private static final int TYPE_LIST = 9;
  private static final int TYPE_SET = 10;
  private static final int TYPE_MAP = 11;
  private static final int TYPE_STRUCT = 12;
  private static final int TYPE_UUID = 13;
  private static final int MAX_DEPTH = 16;
  private static final int MAX_SKIPPED_BYTES = 1 << 20;

  private ParquetBloomFormat() {}

  /**
   * Writes header and bitset.
   *
   * @throws IllegalArgumentException if the filter is larger than {@link #MAX_BYTES} (no Parquet
   *     reader would load it)
   */
  public static void write(SplitBlockBloomFilter filter, OutputStream out) throws IOException {
    Objects.requireNonNull(filter, "filter");
    Objects.requireNonNull(out, "out");
    out.write(header(filter.byteSize()));
    KindAccess.splitBlock(SplitBlockBloomFilter.class).writeBitset(filter, out);
  }

  /** Header and bitset as one array. */
  public static byte[] toBytes(SplitBlockBloomFilter filter) {
    ByteArrayOutputStream out = new ByteArrayOutputStream((int) Math.min(MAX_BYTES, filter.byteSize()) + 32);
    try {
      write(filter, out);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return out.toByteArray();
  }

  /** The Thrift compact {@code BloomFilterHeader} for a bitset of {@code numBytes} bytes. */
  public static byte[] header(long numBytes) {
    if (numBytes <= 0 || numBytes > MAX_BYTES || numBytes % SplitBlockBloomFilter.BLOCK_BYTES != 0) {
      throw new IllegalArgumentException("a Parquet Bloom filter has a positive multiple of 32 bytes, at most "
          + MAX_BYTES + "; this one has " + numBytes);
    }
    ByteArrayOutputStream out = new ByteArrayOutputStream(24);
    out.write(0x15); // field 1, i32
    long zigzag = (numBytes << 1) ^ (numBytes >> 63);
    while ((zigzag & ~0x7FL) != 0) {
      out.write((int) ((zigzag & 0x7F) | 0x80));
      zigzag >>>= 7;
    }
    out.write((int) zigzag);
    for (int field = 0; field < 3; field++) {
      out.write(0x1c); // next field (delta 1), struct: the union
      out.write(0x1c); // union member 1, struct: BLOCK / XXHASH / UNCOMPRESSED
      out.write(0x00); // end of the empty member struct
      out.write(0x00); // end of the union
    }
    out.write(0x00); // end of BloomFilterHeader
    return out.toByteArray();
  }

  /**
   * Reads one header and its bitset from {@code in}, leaving the stream just after the bitset.
   *
   * @throws FilterFormatException if the header is malformed, unsupported or the bitset is truncated
   */
  public static SplitBlockBloomFilter read(InputStream in) throws IOException {
    Objects.requireNonNull(in, "in");
    int numBytes = readHeader(in);
    try {
      return KindAccess.splitBlock(SplitBlockBloomFilter.class).restoreBitset(numBytes, 0, in);
    } catch (EOFException e) {
      throw new FilterFormatException("Parquet Bloom bitset truncated: header says " + numBytes + " bytes", e);
    }
  }

  /**
   * Reads header and bitset from {@code bytes}, which must hold nothing else.
   *
   * @throws FilterFormatException on any malformed input, including trailing bytes
   */
  public static SplitBlockBloomFilter fromBytes(byte[] bytes) throws FilterFormatException {
    ByteArrayInputStream in = new ByteArrayInputStream(Objects.requireNonNull(bytes, "bytes"));
    try {
      int numBytes = readHeader(in);
      if (numBytes > in.available()) {
        // Refused before SplitBlockBloomFilter allocates the declared bitset.
        throw new FilterFormatException(
            "Parquet Bloom bitset truncated: header says " + numBytes + " bytes, " + in.available() + " remain");
      }
      SplitBlockBloomFilter filter = KindAccess.splitBlock(SplitBlockBloomFilter.class).restoreBitset(numBytes, 0, in);
      if (in.available() != 0) {
        throw new FilterFormatException("expected the bitset to end the input, found " + in.available() + " trailing bytes");
      }
      return filter;
    } catch (FilterFormatException e) {
      throw e;
    } catch (IOException e) {
      throw new FilterFormatException("unreadable Parquet Bloom filter: " + e.getMessage(), e);
    }
  }

  /**
   * Reads and validates a {@code BloomFilterHeader}; returns numBytes.
   *
   * @throws FilterFormatException if a required field is missing, malformed or unsupported
   */
  public static int readHeader(InputStream in) throws IOException {
    Reader reader = new Reader(in);
    long numBytes = 0;
    boolean hasNumBytes = false;
    boolean algorithm = false;
    boolean hash = false;
    boolean compression = false;
    int fieldId = 0;
    while (true) {
      int header = reader.byteValue();
      int type = header & 0x0F;
      if (type == TYPE_STOP) {
        break;
      }
      fieldId = reader.fieldId(header, fieldId);
      if (fieldId == 1 && type == TYPE_I32) {
        numBytes = reader.zigzagInt();
        hasNumBytes = true;
      } else if (fieldId == 2 && type == TYPE_STRUCT) {
        algorithm = reader.unionMember("algorithm", "BLOCK");
      } else if (fieldId == 3 && type == TYPE_STRUCT) {
        hash = reader.unionMember("hash", "XXHASH");
      } else if (fieldId == 4 && type == TYPE_STRUCT) {
        compression = reader.unionMember("compression", "UNCOMPRESSED");
      } else if (fieldId >= 1 && fieldId <= 4) {
        throw new FilterFormatException("BloomFilterHeader field " + fieldId + " has Thrift type " + type
            + ", expected " + (fieldId == 1 ? "i32 (5)" : "struct (12)"));
      } else {
        reader.skip(type, 0);
      }
    }
    if (!hasNumBytes) {
      throw new FilterFormatException("BloomFilterHeader.numBytes (field 1): required, found none");
    }
    if (!algorithm || !hash || !compression) {
      throw new FilterFormatException("BloomFilterHeader lacks a required field: algorithm=" + algorithm
          + ", hash=" + hash + ", compression=" + compression);
    }
    if (numBytes <= 0 || numBytes > MAX_BYTES || numBytes % SplitBlockBloomFilter.BLOCK_BYTES != 0) {
      throw new FilterFormatException("BloomFilterHeader.numBytes must be a positive multiple of 32 up to "
          + MAX_BYTES + ", found " + numBytes);
    }
    return (int) numBytes;
  }

  /** A tiny Thrift compact-protocol reader: only what the header and skipping need. */
  private static final class Reader {
    private final InputStream in;
    private long consumed;

    Reader(InputStream in) {
      this.in = in;
    }

    int byteValue() throws IOException {
      int b = in.read();
      if (b < 0) {
        throw new FilterFormatException("Parquet Bloom header truncated after " + consumed + " bytes");
      }
      consumed++;
      if (consumed > MAX_SKIPPED_BYTES) {
        throw new FilterFormatException("Parquet Bloom header longer than " + MAX_SKIPPED_BYTES + " bytes");
      }
      return b;
    }

    long varint() throws IOException {
      long value = 0;
      for (int shift = 0; shift < 64; shift += 7) {
        int b = byteValue();
        value |= (long) (b & 0x7F) << shift;
        if ((b & 0x80) == 0) {
          return value;
        }
      }
      throw new FilterFormatException("malformed Thrift varint: more than 10 bytes");
    }

    long zigzagLong() throws IOException {
      long raw = varint();
      return (raw >>> 1) ^ -(raw & 1);
    }

    int zigzagInt() throws IOException {
      long value = zigzagLong();
      if (value < Integer.MIN_VALUE || value > Integer.MAX_VALUE) {
        throw new FilterFormatException("Thrift i32 out of range: " + value);
      }
      return (int) value;
    }

    int fieldId(int header, int previous) throws IOException {
      int delta = header >>> 4;
      if (delta != 0) {
        return previous + delta;
      }
      long id = zigzagLong();
      if (id < Short.MIN_VALUE || id > Short.MAX_VALUE) {
        throw new FilterFormatException("Thrift field id out of range: " + id);
      }
      return (int) id;
    }

    /** Reads a union struct; true if its member 1 (the only supported one) is set. */
    boolean unionMember(String union, String supported) throws IOException {
      boolean found = false;
      int fieldId = 0;
      while (true) {
        int header = byteValue();
        int type = header & 0x0F;
        if (type == TYPE_STOP) {
          break;
        }
        fieldId = fieldId(header, fieldId);
        if (fieldId == 1 && type == TYPE_STRUCT) {
          skip(TYPE_STRUCT, 1);
          found = true;
        } else {
          throw new FilterFormatException("unsupported Parquet Bloom " + union + ": member " + fieldId
              + " (type " + type + "); only " + supported + " (member 1) is supported");
        }
      }
      if (!found) {
        throw new FilterFormatException("Parquet Bloom " + union + " union is empty; expected " + supported);
      }
      return true;
    }

    void skip(int type, int depth) throws IOException {
      if (depth > MAX_DEPTH) {
        throw new FilterFormatException("Thrift structure nested deeper than " + MAX_DEPTH);
      }
      switch (type) {
        case TYPE_TRUE:
        case TYPE_FALSE:
          return;
        case TYPE_BYTE:
          byteValue();
          return;
        case TYPE_I16:
        case TYPE_I32:
        case TYPE_I64:
          varint();
          return;
        case TYPE_DOUBLE:
          skipBytes(8);
          return;
        case TYPE_UUID:
          skipBytes(16);
          return;
        case TYPE_BINARY:
          skipBytes(varint());
          return;
        case TYPE_LIST:
        case TYPE_SET: {
          int header = byteValue();
          long size = header >>> 4;
          if (size == 15) {
            size = varint();
          }
          int elementType = header & 0x0F;
          for (long i = 0; i < size; i++) {
            skip(elementType == TYPE_TRUE || elementType == TYPE_FALSE ? TYPE_BYTE : elementType, depth + 1);
          }
          return;
        }
        case TYPE_MAP: {
          long size = varint();
          if (size == 0) {
            return;
          }
          int types = byteValue();
          for (long i = 0; i < size; i++) {
            skip(mapElement(types >>> 4), depth + 1);
            skip(mapElement(types & 0x0F), depth + 1);
          }
          return;
        }
        case TYPE_STRUCT: {
          int fieldId = 0;
          while (true) {
            int header = byteValue();
            int fieldType = header & 0x0F;
            if (fieldType == TYPE_STOP) {
              return;
            }
            fieldId = fieldId(header, fieldId);
            skip(fieldType, depth + 1);
          }
        }
        default:
          throw new FilterFormatException("unknown Thrift compact type " + type);
      }
    }

    private static int mapElement(int type) {
      return type == TYPE_TRUE || type == TYPE_FALSE ? TYPE_BYTE : type;
    }

    private void skipBytes(long count) throws IOException {
      if (count < 0 || consumed + count > MAX_SKIPPED_BYTES) {
        throw new FilterFormatException("Thrift field length " + count + " exceeds the header limit");
      }
      for (long i = 0; i < count; i++) {
        byteValue();
      }
    }
  }
}
