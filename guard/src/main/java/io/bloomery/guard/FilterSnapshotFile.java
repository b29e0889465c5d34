package io.bloomery.guard;

import io.bloomery.filter.BloomFilter;
import io.bloomery.format.AtomicWrite;
import io.bloomery.format.FilterFormat;
import io.bloomery.format.FilterFormatException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.zip.CRC32C;

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
 * 68+L    F     the filter in {@link FilterFormat} (its own envelope and CRC)
 * 68+L+F  4     CRC-32C of every preceding byte
 * </pre>
 *
 * <p>Version 1 (written before replication existed) is the same without the replication LSN and
 * is still read, as LSN 0.
 *
 * <p>Written to a temporary file in the same directory, forced to disk, then atomically renamed over
 * the old snapshot, and the directory is forced: a crash leaves either the old or the new snapshot,
 * never a torn one. Every field is validated before anything is allocated.
 */
final class FilterSnapshotFile {
  private static final byte[] MAGIC = "BLMGUARD".getBytes(StandardCharsets.US_ASCII);
  private static final int VERSION = 2;
  private static final int MAX_IDENTITY_BYTES = 4096;
  private static final long MAX_FILE_BYTES = Integer.MAX_VALUE - 64;

  record Snapshot(
      boolean clean,
      long watermark,
      long generation,
      Instant builtAt,
      long expectedInsertions,
      double fpp,
      String storeIdentity,
      BloomFilter filter,
      long replicationLsn) {}

  private FilterSnapshotFile() {}

  static void write(Path path, Snapshot snapshot) throws IOException {
    byte[] identity = snapshot.storeIdentity().getBytes(StandardCharsets.UTF_8);
    if (identity.length > MAX_IDENTITY_BYTES) {
      throw new IllegalArgumentException("store identity longer than " + MAX_IDENTITY_BYTES);
    }
    byte[] filter = FilterFormat.toBytes(snapshot.filter());
    ByteBuffer header = ByteBuffer.allocate(68 + identity.length).order(ByteOrder.LITTLE_ENDIAN);
    header.put(MAGIC).put((byte) VERSION).put((byte) (snapshot.clean() ? 1 : 0));
    header.putLong(snapshot.watermark()).putLong(snapshot.generation());
    header.putLong(snapshot.builtAt().toEpochMilli()).putLong(snapshot.expectedInsertions());
    header.putDouble(snapshot.fpp()).putLong(snapshot.replicationLsn());
    header.putShort((short) identity.length).put(identity);
    header.putLong(filter.length).flip();
    CRC32C crc = new CRC32C();
    crc.update(header.duplicate());
    crc.update(filter);
    ByteBuffer trailer = ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN);
    trailer.putInt((int) crc.getValue()).flip();

    Path absolute = path.toAbsolutePath();
    Files.createDirectories(absolute.getParent());
    AtomicWrite.write(absolute, out -> {
      out.write(header.array(), header.arrayOffset(), header.limit());
      out.write(filter);
      out.write(trailer.array(), trailer.arrayOffset(), trailer.limit());
    });
  }

  /**
   * Reads and validates a snapshot.
   *
   * @throws FilterFormatException if the file is truncated, corrupt or of an unknown version
   */
  static Snapshot read(Path path) throws IOException {
    long size = Files.size(path);
    if (size > MAX_FILE_BYTES) {
      throw new FilterFormatException("guard snapshot " + path + ": " + size + " bytes, more than"
          + " the " + MAX_FILE_BYTES + " a snapshot can hold");
    }
    return parse(path.toString(), Files.readAllBytes(path));
  }

  /** Validates and decodes snapshot bytes; {@code source} names them in error messages. */
  static Snapshot parse(String source, byte[] bytes) throws FilterFormatException {
    ByteBuffer in = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
    if (bytes.length < 64) {
      throw new FilterFormatException("guard snapshot " + source + ": expected at least 64 bytes,"
          + " found " + bytes.length);
    }
    CRC32C crc = new CRC32C();
    crc.update(bytes, 0, bytes.length - 4);
    int storedCrc = in.getInt(bytes.length - 4);
    if (storedCrc != (int) crc.getValue()) {
      throw new FilterFormatException("guard snapshot " + source + ": CRC-32C mismatch (expected "
          + Integer.toHexString(storedCrc) + ", computed " + Long.toHexString(crc.getValue())
          + "); the file is corrupt");
    }
    byte[] magic = new byte[MAGIC.length];
    in.get(magic);
    if (!java.util.Arrays.equals(magic, MAGIC)) {
      throw new FilterFormatException("guard snapshot " + source + ": bad magic, not a guard snapshot");
    }
    int version = in.get();
    if (version != 1 && version != VERSION) {
      throw new FilterFormatException("guard snapshot " + source + ": version " + version
          + ", this build reads versions 1 and " + VERSION);
    }
    if (version == VERSION && bytes.length < 72) {
      throw new FilterFormatException("guard snapshot " + source + ": expected at least 72 bytes"
          + " for version " + VERSION + ", found " + bytes.length);
    }
    boolean clean = in.get() == 1;
    long watermark = in.getLong();
    long generation = in.getLong();
    Instant builtAt = Instant.ofEpochMilli(in.getLong());
    long expected = in.getLong();
    double fpp = in.getDouble();
    long replicationLsn = version == 1 ? 0 : in.getLong();
    int identityLength = Short.toUnsignedInt(in.getShort());
    if (identityLength > MAX_IDENTITY_BYTES || identityLength > in.remaining() - 12) {
      throw new FilterFormatException("guard snapshot " + source + ": identity length "
          + identityLength + " exceeds the file");
    }
    byte[] identity = new byte[identityLength];
    in.get(identity);
    long filterLength = in.getLong();
    if (filterLength != in.remaining() - 4) {
      throw new FilterFormatException("guard snapshot " + source + ": filter length " + filterLength
          + ", but " + (in.remaining() - 4) + " bytes remain");
    }
    byte[] filterBytes = new byte[(int) filterLength];
    in.get(filterBytes);
    Object filter = FilterFormat.fromBytes(filterBytes);
    if (!(filter instanceof BloomFilter bloom)) {
      throw new FilterFormatException("guard snapshot " + source + ": holds a "
          + filter.getClass().getSimpleName() + ", the guard uses a classic BloomFilter");
    }
    return new Snapshot(clean, watermark, generation, builtAt, expected, fpp,
        new String(identity, StandardCharsets.UTF_8), bloom, replicationLsn);
  }
}
