package io.bloomery.server.persistence;

import io.bloomery.format.AtomicWrite;
import io.bloomery.format.FilterFormat;
import io.bloomery.format.FilterFormatException;
import java.io.BufferedInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.zip.CRC32C;

/**
 * The byte layout of a snapshot file ({@code snapshot.NNNNNNNNNN.snap}): every key of one point-in-time
 * view, streamed one key at a time in both directions (the keyspace is never held in one array).
 *
 * <h2>Layout (all integers little-endian)</h2>
 *
 * <table>
 *   <caption>Snapshot header, 24 bytes</caption>
 *   <tr><th>offset</th><th>size</th><th>field</th><th>rule</th></tr>
 *   <tr><td>0</td><td>4</td><td>magic</td><td>{@code 42 4C 4D 53} ("BLMS")</td></tr>
 *   <tr><td>4</td><td>1</td><td>version</td><td>u8 = 1</td></tr>
 *   <tr><td>5</td><td>3</td><td>reserved</td><td>0</td></tr>
 *   <tr><td>8</td><td>8</td><td>cut time</td><td>i64, Unix milliseconds of the cut</td></tr>
 *   <tr><td>16</td><td>8</td><td>first segment</td><td>u64, the first journal segment after the cut</td></tr>
 * </table>
 *
 * <table>
 *   <caption>Key entry, repeated; K is the key length, V the value length</caption>
 *   <tr><th>offset</th><th>size</th><th>field</th><th>rule</th></tr>
 *   <tr><td>0</td><td>1</td><td>tag</td><td>{@code 4B} ('K')</td></tr>
 *   <tr><td>1</td><td>4</td><td>key length K</td><td>u32, ≤ 512 MiB</td></tr>
 *   <tr><td>5</td><td>K</td><td>key</td><td>bytes</td></tr>
 *   <tr><td>5+K</td><td>8</td><td>expiry</td><td>i64, Unix milliseconds, or -1 for none</td></tr>
 *   <tr><td>13+K</td><td>8</td><td>value length V</td><td>u64</td></tr>
 *   <tr><td>21+K</td><td>V</td><td>value</td><td>one {@link FilterFormat} envelope (its own CRC inside)</td></tr>
 *   <tr><td>21+K+V</td><td>4</td><td>CRC-32C</td><td>u32, of the entry's bytes from the tag to the value's end</td></tr>
 * </table>
 *
 * <table>
 *   <caption>Trailer, 13 bytes, then the end of the file</caption>
 *   <tr><th>offset</th><th>size</th><th>field</th><th>rule</th></tr>
 *   <tr><td>0</td><td>1</td><td>tag</td><td>{@code 45} ('E')</td></tr>
 *   <tr><td>1</td><td>8</td><td>key count</td><td>u64, the number of key entries</td></tr>
 *   <tr><td>9</td><td>4</td><td>CRC-32C</td><td>u32, of every byte of the file before this field</td></tr>
 * </table>
 *
 * <p>A snapshot is written to a temporary file, forced, renamed into place and the directory forced, so
 * a file under a snapshot name is always complete; reading still checks everything, and any damage is a
 * {@link PersistenceCorruptionException} naming the file and the entry's offset.
 */
final class SnapshotFormat {
  static final byte[] MAGIC = {0x42, 0x4C, 0x4D, 0x53};
  static final int VERSION = 1;
  static final int HEADER_LENGTH = 24;
  static final int TAG_KEY = 'K';
  static final int TAG_END = 'E';
  static final long MAX_KEY_LENGTH = 512L << 20;
  private static final int BUFFER = 1 << 16;

  private SnapshotFormat() {}

  /** Streams a snapshot into a temporary file; {@link #publish} makes it durable under its name. */
  static final class Writer implements SnapshotSink, AutoCloseable {
    private final AtomicWrite.Pending file;
    private final CrcOutputStream out;
    private long keys;

    Writer(Path target) throws IOException {
      this.file = AtomicWrite.open(target);
      this.out = new CrcOutputStream(file.out());
    }

    /** Writes the header; called at the cut. */
    void begin(long cutMillis, long firstSegment) throws IOException {
      out.write(MAGIC);
      out.write(VERSION);
      out.write(new byte[3]);
      out.u64(cutMillis);
      out.u64(firstSegment);
    }

    @Override
    public void accept(byte[] key, Object value, long expireAtMillis) throws IOException {
      if (key.length > MAX_KEY_LENGTH) {
        throw new IllegalArgumentException("key of " + key.length + " bytes exceeds " + MAX_KEY_LENGTH);
      }
      if (!(value instanceof io.bloomery.filter.Summary summary)) {
        throw new IllegalArgumentException("a " + value.getClass().getName() + " is not a filter or sketch to snapshot");
      }
      long valueLength = FilterFormat.serializedLength(summary);
      out.sums().startEntry();
      out.write(TAG_KEY);
      out.u32(key.length);
      out.write(key);
      out.u64(expireAtMillis);
      out.u64(valueLength);
      long before = out.sums().position();
      FilterFormat.write(summary, out);
      if (out.sums().position() - before != valueLength) {
        throw new IllegalStateException("value wrote " + (out.sums().position() - before) + " bytes, declared " + valueLength);
      }
      out.u32(out.sums().entryCrc());
      keys++;
    }

    /** Writes the trailer, forces the file, renames it into place and forces the directory. */
    void publish() throws IOException {
      out.write(TAG_END);
      out.u64(keys);
      out.u32(out.sums().fileCrc());
      out.flush();
      file.publish();
    }

    long keys() {
      return keys;
    }

    /** Abandons an unpublished snapshot: closes and deletes the temporary file. */
    @Override
    public void close() throws IOException {
      file.close();
    }
  }

  /** What a snapshot's header and trailer said. */
  record Summary(long cutMillis, long firstSegment, long keys, long bytes) {}

  /**
   * Reads {@code file} and hands every key to {@code loader}, checking every entry's CRC, the key count
   * and the whole file's CRC.
   */
  static Summary read(Path file, KeyLoader loader) throws IOException {
    long size = Files.size(file);
    try (InputStream raw = new BufferedInputStream(Files.newInputStream(file), BUFFER)) {
      CrcInputStream in = new CrcInputStream(raw);
      try {
        return read(file, size, in, loader);
      } catch (EOFException e) {
        throw new PersistenceCorruptionException(file, in.sums().position(), "snapshot ends early (" + size + " bytes)");
      }
    }
  }

  private static Summary read(Path file, long size, CrcInputStream in, KeyLoader loader) throws IOException {
    byte[] magic = in.bytes(4);
    if (!Arrays.equals(magic, MAGIC)) {
      throw new PersistenceCorruptionException(file, 0, "not a snapshot file (bad magic)");
    }
    int version = in.u8();
    if (version != VERSION) {
      throw new PersistenceCorruptionException(file, 4, "snapshot version " + version + ", this build reads " + VERSION);
    }
    in.bytes(3);
    long cutMillis = in.u64();
    long firstSegment = in.u64();
    long keys = 0;
    while (true) {
      long entry = in.sums().position();
      in.sums().startEntry();
      int tag = in.u8();
      if (tag == TAG_END) {
        long count = in.u64();
        long expected = in.sums().fileCrc();
        long stored = in.u32();
        if (count != keys) {
          throw new PersistenceCorruptionException(file, entry, "trailer says " + count + " keys, found " + keys);
        }
        if (stored != expected) {
          throw new PersistenceCorruptionException(file, entry, String.format(
              "snapshot checksum mismatch (stored %08X, computed %08X)", stored, expected));
        }
        if (in.sums().position() != size) {
          throw new PersistenceCorruptionException(file, in.sums().position(), (size - in.sums().position()) + " bytes after the trailer");
        }
        return new Summary(cutMillis, firstSegment, keys, size);
      }
      if (tag != TAG_KEY) {
        throw new PersistenceCorruptionException(file, entry, String.format("expected a key entry (4B) or the trailer (45), found %02X", tag));
      }
      long keyLength = in.u32();
      if (keyLength > MAX_KEY_LENGTH || keyLength > size - in.sums().position()) {
        throw new PersistenceCorruptionException(file, entry, "key length " + keyLength + " exceeds the bytes left");
      }
      byte[] key = in.bytes((int) keyLength);
      long expireAt = in.u64();
      long valueLength = in.u64();
      if (valueLength < 0 || valueLength > size - in.sums().position() - 4) {
        throw new PersistenceCorruptionException(file, entry, "value length " + valueLength + " exceeds the bytes left");
      }
      long valueStart = in.sums().position();
      Object value;
      in.bound(valueLength);
      try {
        value = FilterFormat.read(in, valueLength);
      } catch (FilterFormatException | EOFException e) {
        throw new PersistenceCorruptionException(file, entry, "value of key entry: " + e.getMessage(), e);
      } finally {
        in.bound(-1);
      }
      if (in.sums().position() - valueStart != valueLength) {
        throw new PersistenceCorruptionException(file, entry,
            "value took " + (in.sums().position() - valueStart) + " bytes, the entry declares " + valueLength);
      }
      long expected = in.sums().entryCrc();
      long stored = in.u32();
      if (stored != expected) {
        throw new PersistenceCorruptionException(file, entry, String.format(
            "key entry checksum mismatch (stored %08X, computed %08X)", stored, expected));
      }
      try {
        loader.load(key, value, expireAt);
      } catch (IllegalStateException | IllegalArgumentException e) {
        throw new PersistenceCorruptionException(file, entry, "key could not be loaded: " + e.getMessage(), e);
      }
      keys++;
    }
  }

  /** A byte count with a CRC of the whole stream and one of the current entry, fed by both streams. */
  private static class Checksums {
    final CRC32C file = new CRC32C();
    final CRC32C entry = new CRC32C();
    long position;

    final void update(int b) {
      file.update(b);
      entry.update(b);
      position++;
    }

    final void update(byte[] b, int off, int len) {
      file.update(b, off, len);
      entry.update(b, off, len);
      position += len;
    }

    final void startEntry() {
      entry.reset();
    }

    final long entryCrc() {
      return entry.getValue();
    }

    final long fileCrc() {
      return file.getValue();
    }

    final long position() {
      return position;
    }
  }

  /** The writer's side: counts and checksums what goes out. */
  private static final class CrcOutputStream extends OutputStream {
    private final OutputStream out;
    private final Checksums sums = new Checksums();
    private final byte[] scratch = new byte[8];

    CrcOutputStream(OutputStream out) {
      this.out = out;
    }

    @Override
    public void write(int b) throws IOException {
      out.write(b);
      sums.update(b);
    }

    @Override
    public void write(byte[] b, int off, int len) throws IOException {
      out.write(b, off, len);
      sums.update(b, off, len);
    }

    void u32(long value) throws IOException {
      for (int i = 0; i < 4; i++) {
        scratch[i] = (byte) (value >>> (8 * i));
      }
      write(scratch, 0, 4);
    }

    void u64(long value) throws IOException {
      for (int i = 0; i < 8; i++) {
        scratch[i] = (byte) (value >>> (8 * i));
      }
      write(scratch, 0, 8);
    }

    Checksums sums() {
      return sums;
    }

    @Override
    public void flush() throws IOException {
      out.flush();
    }
  }

  /** The reader's side: reads exactly what is asked, keeping the same checksums as the writer. */
  private static final class CrcInputStream extends InputStream {
    private final InputStream in;
    private final Checksums sums = new Checksums();
    private long limit = Long.MAX_VALUE;

    CrcInputStream(InputStream in) {
      this.in = in;
    }

    /** Makes reads past {@code position() + bytes} see the end of the stream; -1 lifts the bound. */
    void bound(long bytes) {
      limit = bytes < 0 ? Long.MAX_VALUE : sums.position() + bytes;
    }

    @Override
    public int read() throws IOException {
      if (sums.position() >= limit) {
        return -1;
      }
      int b = in.read();
      if (b >= 0) {
        sums.update(b);
      }
      return b;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
      if (sums.position() >= limit) {
        return -1;
      }
      int n = in.read(b, off, (int) Math.min(len, limit - sums.position()));
      if (n > 0) {
        sums.update(b, off, n);
      }
      return n;
    }

    byte[] bytes(int n) throws IOException {
      byte[] bytes = new byte[n];
      int read = 0;
      while (read < n) {
        int got = read(bytes, read, n - read);
        if (got < 0) {
          throw new EOFException();
        }
        read += got;
      }
      return bytes;
    }

    int u8() throws IOException {
      int b = read();
      if (b < 0) {
        throw new EOFException();
      }
      return b;
    }

    long u32() throws IOException {
      long value = 0;
      for (int i = 0; i < 4; i++) {
        value |= (long) u8() << (8 * i);
      }
      return value;
    }

    long u64() throws IOException {
      long value = 0;
      for (int i = 0; i < 8; i++) {
        value |= (long) u8() << (8 * i);
      }
      return value;
    }

    Checksums sums() {
      return sums;
    }
  }
}
