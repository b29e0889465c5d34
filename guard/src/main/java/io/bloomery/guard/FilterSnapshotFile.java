package io.bloomery.guard;

import io.bloomery.filter.Summary;
import io.bloomery.format.AtomicWrite;
import io.bloomery.format.FilterFormat;
import io.bloomery.format.FilterFormatException;
import java.io.BufferedInputStream;
import java.io.ByteArrayInputStream;
import java.io.EOFException;
import java.io.FilterOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Arrays;
import java.util.zip.CRC32C;
import java.util.zip.CheckedInputStream;

/**
 * The guard's persisted filter: a snapshot of the filter plus the store watermark it covers.
 *
 * <p>Layout (little-endian):
 *
 * <pre>
 * offset  size  field
 * 0       8     magic "BLMGUARD"
 * 8       1     version = 2
 * 9       1     clean: 1 if written by an orderly close, 0 for a checkpoint of a running guard
 * 10      8     watermark: every store row at a position &lt;= watermark is in the filter
 * 18      8     generation
 * 26      8     built-at, epoch milliseconds
 * 34      8     configured expected insertions
 * 42      8     configured false-positive rate (IEEE-754 double)
 * 50      8     replication LSN: every transaction of the followed replication stream that
 *               ends at or before it is in the filter; 0 when the guard follows none
 * 58      2     length L of the store identity
 * 60      L     store identity, UTF-8
 * 60+L    8     length F of the filter
 * 68+L    F     the filter in {@link FilterFormat} (its own envelope and CRC): a classic, blocked or
 *               split-block Bloom filter, whichever kind the guard uses (the envelope says which)
 * 68+L+F  4     CRC-32C of every preceding byte
 * </pre>
 *
 * <p>Version 1 (written before replication existed) is the same without the replication LSN and
 * is still read, as LSN 0.
 *
 * <p>Written to a temporary file in the same directory, forced to disk, then atomically renamed over
 * the old snapshot, and the directory is forced: a crash leaves either the old or the new snapshot,
 * never a torn one. Every field is validated before anything is allocated.
 *
 * <p>Streamed both ways: the filter goes through {@link FilterFormat#write(Summary, OutputStream)} and
 * {@link FilterFormat#read(InputStream, long)} with the outer CRC-32C computed on the fly, so no part of
 * the file is held in one array and a snapshot may exceed 2 GiB. On reading, the filter's own envelope
 * CRC is checked as it is read, and the outer CRC (which also covers the header) before the snapshot is
 * returned.
 */
final class FilterSnapshotFile {
  private static final byte[] MAGIC = "BLMGUARD".getBytes(StandardCharsets.US_ASCII);
  private static final int VERSION = 2;
  private static final int MAX_IDENTITY_BYTES = 4096;
  /** Fixed header bytes before the identity, in versions 1 and 2 (2 adds the replication LSN). */
  private static final int FIXED_V1 = 52;
  private static final int FIXED_V2 = 60;

  record Snapshot(
      boolean clean,
      long watermark,
      long generation,
      Instant builtAt,
      long expectedInsertions,
      double fpp,
      String storeIdentity,
      GuardFilter filter,
      long replicationLsn) {}

  private FilterSnapshotFile() {}

  static void write(Path path, Snapshot snapshot) throws IOException {
    byte[] identity = snapshot.storeIdentity().getBytes(StandardCharsets.UTF_8);
    if (identity.length > MAX_IDENTITY_BYTES) {
      throw new IllegalArgumentException("store identity longer than " + MAX_IDENTITY_BYTES);
    }
    Summary filter = snapshot.filter().filter();
    long filterLength = FilterFormat.serializedLength(filter);
    ByteBuffer header = ByteBuffer.allocate(FIXED_V2 + identity.length + 8).order(ByteOrder.LITTLE_ENDIAN);
    header.put(MAGIC).put((byte) VERSION).put((byte) (snapshot.clean() ? 1 : 0));
    header.putLong(snapshot.watermark()).putLong(snapshot.generation());
    header.putLong(snapshot.builtAt().toEpochMilli()).putLong(snapshot.expectedInsertions());
    header.putDouble(snapshot.fpp()).putLong(snapshot.replicationLsn());
    header.putShort((short) identity.length).put(identity);
    header.putLong(filterLength).flip();

    Path absolute = path.toAbsolutePath();
    Files.createDirectories(absolute.getParent());
    AtomicWrite.write(absolute, out -> {
      CrcOutputStream checked = new CrcOutputStream(out);
      checked.write(header.array(), header.arrayOffset(), header.limit());
      FilterFormat.write(filter, checked);
      if (checked.count != header.limit() + filterLength) {
        throw new IllegalStateException("guard snapshot: the filter wrote " + (checked.count - header.limit())
            + " bytes, declared " + filterLength);
      }
      ByteBuffer trailer = ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN);
      out.write(trailer.putInt((int) checked.crc.getValue()).array());
    });
  }

  /**
   * Reads and validates a snapshot, streaming it.
   *
   * @throws FilterFormatException if the file is truncated, corrupt or of an unknown version
   */
  static Snapshot read(Path path) throws IOException {
    long size = Files.size(path);
    try (InputStream in = new BufferedInputStream(Files.newInputStream(path), 1 << 16)) {
      return parse(path.toString(), in, size);
    }
  }

  /** Validates and decodes snapshot bytes; {@code source} names them in error messages. */
  static Snapshot parse(String source, byte[] bytes) throws FilterFormatException {
    try {
      return parse(source, new ByteArrayInputStream(bytes), bytes.length);
    } catch (FilterFormatException e) {
      throw e;
    } catch (IOException e) {
      throw new UncheckedIOException("unreachable: an in-memory stream failed", e);
    }
  }

  /** Decodes the {@code size} bytes of {@code raw}, which must be exactly one snapshot. */
  private static Snapshot parse(String source, InputStream raw, long size) throws IOException {
    String where = "guard snapshot " + source + ": ";
    if (size < 64) {
      throw new FilterFormatException(where + "expected at least 64 bytes, found " + size);
    }
    CRC32C crc = new CRC32C();
    CheckedInputStream in = new CheckedInputStream(raw, crc);
    ByteBuffer prefix = read(in, MAGIC.length + 1, where);
    byte[] magic = Arrays.copyOf(prefix.array(), MAGIC.length);
    if (!Arrays.equals(magic, MAGIC)) {
      throw new FilterFormatException(where + "bad magic, not a guard snapshot");
    }
    int version = prefix.get(MAGIC.length);
    if (version != 1 && version != VERSION) {
      throw new FilterFormatException(where + "version " + version + ", this build reads versions 1 and " + VERSION);
    }
    if (version == VERSION && size < 72) {
      throw new FilterFormatException(where + "expected at least 72 bytes for version " + VERSION + ", found " + size);
    }
    int fixed = version == 1 ? FIXED_V1 : FIXED_V2;
    ByteBuffer header = read(in, fixed - prefix.capacity(), where);
    boolean clean = header.get() == 1;
    long watermark = header.getLong();
    long generation = header.getLong();
    Instant builtAt = Instant.ofEpochMilli(header.getLong());
    long expected = header.getLong();
    double fpp = header.getDouble();
    long replicationLsn = version == 1 ? 0 : header.getLong();
    int identityLength = Short.toUnsignedInt(header.getShort());
    long afterIdentity = size - fixed - identityLength; // the filter length, the filter and the CRC remain
    if (identityLength > MAX_IDENTITY_BYTES || afterIdentity < 12) {
      throw new FilterFormatException(where + "identity length " + identityLength + " exceeds the file");
    }
    byte[] identity = read(in, identityLength, where).array();
    long filterLength = read(in, 8, where).getLong();
    if (filterLength != afterIdentity - 12) {
      throw new FilterFormatException(where + "filter length " + filterLength + ", but " + (afterIdentity - 12)
          + " bytes remain");
    }
    BoundedStream body = new BoundedStream(in, filterLength);
    Summary read;
    try {
      read = FilterFormat.read(body, filterLength);
    } catch (FilterFormatException e) {
      // Bad bytes inside the filter are usually a corrupt file: say so if the whole-file checksum agrees.
      body.transferTo(OutputStream.nullOutputStream());
      requireChecksum(crc, raw, where, e);
      throw new FilterFormatException(where + "filter: " + e.getMessage(), e);
    }
    if (body.left != 0) {
      throw new FilterFormatException(where + "filter length " + filterLength + ", but its envelope ends "
          + body.left + " bytes before that");
    }
    requireChecksum(crc, raw, where, null);
    GuardFilter filter = GuardFilter.of(read);
    if (filter == null) {
      throw new FilterFormatException(where + "holds a " + read.kind().kindName() + " filter; a guard uses one of "
          + GuardFilter.kindNames());
    }
    return new Snapshot(clean, watermark, generation, builtAt, expected, fpp,
        new String(identity, StandardCharsets.UTF_8), filter, replicationLsn);
  }

  /** Reads the stored CRC-32C that ends the file and compares it with {@code crc} of everything before it. */
  private static void requireChecksum(CRC32C crc, InputStream raw, String where, Throwable cause) throws IOException {
    int computed = (int) crc.getValue();
    int stored = read(raw, 4, where).getInt();
    if (stored != computed) {
      throw new FilterFormatException(where + "CRC-32C mismatch (expected " + Integer.toHexString(stored)
          + ", computed " + Integer.toHexString(computed) + "); the file is corrupt", cause);
    }
  }

  /** Exactly {@code length} bytes, little-endian, or a format error naming the truncation. */
  private static ByteBuffer read(InputStream in, int length, String where) throws IOException {
    byte[] bytes = in.readNBytes(length);
    if (bytes.length != length) {
      throw new FilterFormatException(where + "truncated: expected " + length + " more bytes, found " + bytes.length);
    }
    return ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
  }

  /** The filter's bytes: reading past the declared filter length is the end of input. */
  private static final class BoundedStream extends InputStream {
    private final InputStream in;
    private long left;

    BoundedStream(InputStream in, long length) {
      this.in = in;
      this.left = length;
    }

    @Override
    public int read() throws IOException {
      if (left == 0) {
        return -1;
      }
      int b = in.read();
      if (b < 0) {
        throw new EOFException("snapshot ends inside its filter");
      }
      left--;
      return b;
    }

    @Override
    public int read(byte[] target, int offset, int length) throws IOException {
      if (left == 0) {
        return length == 0 ? 0 : -1;
      }
      int n = in.read(target, offset, (int) Math.min(length, left));
      if (n > 0) {
        left -= n;
      }
      return n;
    }
  }

  /** Counts and checksums what passes through to the atomic write's stream (which it does not close). */
  private static final class CrcOutputStream extends FilterOutputStream {
    final CRC32C crc = new CRC32C();
    long count;

    CrcOutputStream(OutputStream out) {
      super(out);
    }

    @Override
    public void write(int b) throws IOException {
      out.write(b);
      crc.update(b);
      count++;
    }

    @Override
    public void write(byte[] bytes, int offset, int length) throws IOException {
      out.write(bytes, offset, length);
      crc.update(bytes, offset, length);
      count += length;
    }
  }
}
