package io.bloomery.server.persistence;

import io.bloomery.format.AtomicWrite;
import io.bloomery.format.FilterFormat;
import io.bloomery.format.FilterFormatException;
import java.io.BufferedInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.zip.CRC32C;

/**
 * The byte layout of a snapshot file ({@code snapshot.NNNNNNNNNN.snap}): every key of one point-in-time
 * view, streamed one key at a time in both directions (the keyspace is never held in one array).
 *
 * <h2>Layout, version 2 (all integers little-endian)</h2>
 *
 * <table>
 *   <caption>Snapshot header, 28 bytes</caption>
 *   <tr><th>offset</th><th>size</th><th>field</th><th>rule</th></tr>
 *   <tr><td>0</td><td>4</td><td>magic</td><td>{@code 42 4C 4D 53} ("BLMS")</td></tr>
 *   <tr><td>4</td><td>1</td><td>version</td><td>u8 = 2 (1 is still read)</td></tr>
 *   <tr><td>5</td><td>3</td><td>reserved</td><td>0</td></tr>
 *   <tr><td>8</td><td>8</td><td>cut time</td><td>i64, Unix milliseconds of the cut</td></tr>
 *   <tr><td>16</td><td>8</td><td>first segment</td><td>u64, the first journal segment after the cut</td></tr>
 *   <tr><td>24</td><td>4</td><td>CRC-32C</td><td>u32, of bytes 0 to 23</td></tr>
 * </table>
 *
 * <table>
 *   <caption>Key entry, repeated; K is the key length, V the value length</caption>
 *   <tr><th>offset</th><th>size</th><th>field</th><th>rule</th></tr>
 *   <tr><td>0</td><td>4</td><td>entry marker</td><td>{@code EB 4B 45 59}</td></tr>
 *   <tr><td>4</td><td>4</td><td>key length K</td><td>u32, ≤ 512 MiB</td></tr>
 *   <tr><td>8</td><td>8</td><td>expiry</td><td>i64, Unix milliseconds, or -1 for none</td></tr>
 *   <tr><td>16</td><td>8</td><td>value length V</td><td>u64</td></tr>
 *   <tr><td>24</td><td>K</td><td>key</td><td>bytes</td></tr>
 *   <tr><td>24+K</td><td>4</td><td>header CRC-32C</td><td>u32, of bytes 0 to 23+K (marker to key)</td></tr>
 *   <tr><td>28+K</td><td>V</td><td>value</td><td>one {@link FilterFormat} envelope (its own CRC inside)</td></tr>
 *   <tr><td>28+K+V</td><td>4</td><td>value CRC-32C</td><td>u32, of the V value bytes</td></tr>
 * </table>
 *
 * <p>A metadata entry has a key entry's framing with the marker {@code EB 4D 45 54} ("\u00EBMET"), a name in place
 * of the key, expiry -1, and V ≤ 1 MiB of bytes its owner defines in place of a filter; it is not a key and the
 * trailer does not count it. The server's own snapshots have none; a cluster shard's replica records the state of
 * its slots in one ({@link SnapshotSink#metadata}, {@link KeyLoader#metadata}).
 *
 * <table>
 *   <caption>Trailer, 16 bytes, then the end of the file</caption>
 *   <tr><th>offset</th><th>size</th><th>field</th><th>rule</th></tr>
 *   <tr><td>0</td><td>4</td><td>end marker</td><td>{@code EB 45 4E 44}</td></tr>
 *   <tr><td>4</td><td>8</td><td>key count</td><td>u64, the number of key entries</td></tr>
 *   <tr><td>12</td><td>4</td><td>CRC-32C</td><td>u32, of bytes 0 to 11 of the trailer</td></tr>
 * </table>
 *
 * <p>Every byte is under one CRC, and a key's name is checked apart from its value, so a reader that meets a
 * damaged value still knows the key and where the next entry starts; after a damaged entry header it looks
 * for the next marker whose header checks. {@link #read} (the server's start) refuses any damage;
 * {@link #readSkippingDamage} ({@code check-log --fix}) loads the good entries and lists the damaged ones.
 *
 * <p>Version 1 (still read, strictly): a 24-byte header without the CRC; entries of tag {@code 4B}, key
 * length u32, key, expiry i64, value length u64, value, CRC-32C of the entry from the tag; a trailer of tag
 * {@code 45}, key count u64 and a CRC-32C of every byte of the file before it.
 *
 * <p>A snapshot is written to a temporary file, forced, renamed into place, the directory forced, and then
 * read back and checked ({@link Writer#publish}); any damage is a {@link PersistenceCorruptionException}
 * naming the file and the entry's offset.
 */
final class SnapshotFormat {
  static final byte[] MAGIC = {0x42, 0x4C, 0x4D, 0x53};
  static final int VERSION = 2;
  static final int HEADER_LENGTH = 28;
  static final byte[] ENTRY_MARKER = {(byte) 0xEB, 0x4B, 0x45, 0x59};
  static final byte[] END_MARKER = {(byte) 0xEB, 0x45, 0x4E, 0x44};
  static final byte[] META_MARKER = {(byte) 0xEB, 0x4D, 0x45, 0x54};
  static final int MAX_META_LENGTH = 1 << 20;
  static final int ENTRY_HEAD_LENGTH = 24;
  static final int TRAILER_LENGTH = 16;
  static final int V1_TAG_KEY = 'K';
  static final int V1_TAG_END = 'E';
  static final long MAX_KEY_LENGTH = 512L << 20;
  private static final int BUFFER = 1 << 16;

  private SnapshotFormat() {}

  /** Streams a snapshot into a temporary file; {@link #publish} makes it durable under its name. */
  static final class Writer implements SnapshotSink, AutoCloseable {
    private final Path target;
    private final AtomicWrite.Pending file;
    private final CrcOutputStream out;
    private long keys;

    Writer(Path target) throws IOException {
      this.target = target;
      this.file = AtomicWrite.open(target);
      this.out = new CrcOutputStream(file.out());
    }

    /** Writes the header; called at the cut. */
    void begin(long cutMillis, long firstSegment) throws IOException {
      out.sums().startEntry();
      out.write(MAGIC);
      out.write(VERSION);
      out.write(new byte[3]);
      out.u64(cutMillis);
      out.u64(firstSegment);
      out.u32(out.sums().entryCrc());
    }

    @Override
    public void metadata(byte[] name, byte[] bytes) throws IOException {
      if (name.length > MAX_KEY_LENGTH || bytes.length > MAX_META_LENGTH) {
        throw new IllegalArgumentException("metadata of " + bytes.length + " bytes exceeds " + MAX_META_LENGTH);
      }
      out.sums().startEntry();
      out.write(META_MARKER);
      out.u32(name.length);
      out.u64(-1);
      out.u64(bytes.length);
      out.write(name);
      out.u32(out.sums().entryCrc());
      out.sums().startEntry();
      out.write(bytes);
      out.u32(out.sums().entryCrc());
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
      out.write(ENTRY_MARKER);
      out.u32(key.length);
      out.u64(expireAtMillis);
      out.u64(valueLength);
      out.write(key);
      out.u32(out.sums().entryCrc());
      out.sums().startEntry();
      long before = out.sums().position();
      FilterFormat.write(summary, out);
      if (out.sums().position() - before != valueLength) {
        throw new IllegalStateException("value wrote " + (out.sums().position() - before) + " bytes, declared " + valueLength);
      }
      out.u32(out.sums().entryCrc());
      keys++;
    }

    /**
     * Writes the trailer, forces the file, renames it into place and forces the directory, then reads the
     * published file back and checks every CRC; a file that does not check is deleted and the failure thrown,
     * so a manifest is only ever pointed at a snapshot that was read back whole.
     */
    void publish() throws IOException {
      writeTrailer(out, keys);
      out.flush();
      file.publish();
      try {
        verify(target);
      } catch (IOException e) {
        Files.deleteIfExists(target);
        throw e;
      }
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

  private static void writeTrailer(CrcOutputStream out, long keys) throws IOException {
    out.sums().startEntry();
    out.write(END_MARKER);
    out.u64(keys);
    out.u32(out.sums().entryCrc());
  }

  /**
   * A damaged entry, or a damaged stretch of entries: bytes {@code [offset, end)}.
   *
   * @param key the key's name when its header checked (only the value is damaged), else {@code null}
   */
  record Damaged(long offset, long end, byte[] key, String problem) {
    /** The key as text for an operator: UTF-8 where it is printable, else hex; "unreadable" if unknown. */
    String name() {
      return key == null ? "(key unreadable: the entry header is damaged)" : printable(key);
    }
  }

  static String printable(byte[] key) {
    String text = new String(key, StandardCharsets.UTF_8);
    boolean plain = Arrays.equals(text.getBytes(StandardCharsets.UTF_8), key)
        && text.codePoints().noneMatch(Character::isISOControl);
    return plain ? "'" + text + "'" : "0x" + HexFormat.of().formatHex(key);
  }

  /**
   * What a snapshot's header and trailer said, and what a reading found.
   *
   * @param entriesEnd where the trailer starts (the file's size if it has none that checks)
   * @param damaged the damaged entries; empty for a snapshot read by {@link #read}
   */
  record Summary(int version, long cutMillis, long firstSegment, long keys, long bytes, long entriesEnd,
      List<Damaged> damaged) {}

  /**
   * Reads {@code file} and hands every key to {@code loader}, checking every CRC, the key count and the
   * trailer; any damage is a {@link PersistenceCorruptionException}.
   */
  static Summary read(Path file, KeyLoader loader) throws IOException {
    return read(file, loader, false);
  }

  /** Checks every CRC and length of {@code file} without decoding its values. */
  static Summary verify(Path file) throws IOException {
    return read(file, null, false);
  }

  /**
   * Reads {@code file}, handing every good key to {@code loader} (none if {@code null}) and listing every
   * damaged entry instead of stopping at it. A damaged file header, or a version-1 file, is still a {@link
   * PersistenceCorruptionException}: only version 2 frames keys to be skipped.
   */
  static Summary readSkippingDamage(Path file, KeyLoader loader) throws IOException {
    return read(file, loader, true);
  }

  private static Summary read(Path file, KeyLoader loader, boolean skipDamage) throws IOException {
    long size = Files.size(file);
    try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
      ByteBuffer header = ByteBuffer.allocate((int) Math.min(HEADER_LENGTH, size)).order(ByteOrder.LITTLE_ENDIAN);
      JournalFormat.readFully(channel, header, 0);
      if (size < 5 || !Arrays.equals(Arrays.copyOf(header.array(), 4), MAGIC)) {
        throw new PersistenceCorruptionException(file, 0, "not a snapshot file (bad magic)");
      }
      int version = header.get(4) & 0xFF;
      if (version == 1) {
        CrcInputStream in = new CrcInputStream(new BufferedInputStream(Channels.newInputStream(channel.position(0)), BUFFER), 0);
        try {
          return readVersion1(file, size, in, loader);
        } catch (EOFException e) {
          throw new PersistenceCorruptionException(file, in.sums().position(), "snapshot ends early (" + size + " bytes)");
        }
      }
      if (version != VERSION) {
        throw new PersistenceCorruptionException(file, 4, "snapshot version " + version + ", this build reads 1 and " + VERSION);
      }
      if (size < HEADER_LENGTH) {
        throw new PersistenceCorruptionException(file, 0, "snapshot ends early (" + size + " bytes)");
      }
      CRC32C headerCrc = new CRC32C();
      headerCrc.update(header.array(), 0, 24);
      if ((int) headerCrc.getValue() != header.getInt(24)) {
        throw new PersistenceCorruptionException(file, 0, String.format("snapshot header checksum mismatch (stored %08X,"
            + " computed %08X)", header.getInt(24), (int) headerCrc.getValue()));
      }
      return new Version2(file, size, channel, loader, skipDamage).read(header.getLong(8), header.getLong(16));
    }
  }

  /** One reading of a version-2 file: a buffered stream, reopened past each damaged stretch. */
  private static final class Version2 {
    private final Path file;
    private final long size;
    private final FileChannel channel;
    private final KeyLoader loader;
    private final boolean skipDamage;
    private final List<Damaged> damaged = new ArrayList<>();
    private CrcInputStream in;

    Version2(Path file, long size, FileChannel channel, KeyLoader loader, boolean skipDamage) throws IOException {
      this.file = file;
      this.size = size;
      this.channel = channel;
      this.loader = loader;
      this.skipDamage = skipDamage;
      seek(HEADER_LENGTH);
    }

    private void seek(long position) throws IOException {
      in = new CrcInputStream(new BufferedInputStream(Channels.newInputStream(channel.position(position)), BUFFER), position);
    }

    private void damage(long offset, long end, byte[] key, String problem) throws IOException {
      if (!skipDamage) {
        throw new PersistenceCorruptionException(file, offset, (key == null ? "" : "key " + printable(key) + ": ") + problem);
      }
      damaged.add(new Damaged(offset, end, key, problem));
      seek(end);
    }

    Summary read(long cutMillis, long firstSegment) throws IOException {
      long keys = 0;
      while (true) {
        long entry = in.sums().position();
        if (entry >= size) {
          if (damaged.isEmpty() || damaged.getLast().end() < size) {
            damage(entry, size, null, "snapshot ends without its trailer (" + size + " bytes)");
          }
          return new Summary(VERSION, cutMillis, firstSegment, keys, size, size, List.copyOf(damaged));
        }
        try {
          in.sums().startEntry();
          byte[] marker = in.bytes(4);
          if (Arrays.equals(marker, END_MARKER)) {
            long count = in.u64();
            long expected = in.sums().entryCrc();
            long stored = in.u32();
            if (stored != expected) {
              damage(entry, nextStart(entry + 1), null, String.format("trailer checksum mismatch (stored %08X, computed %08X)",
                  stored, expected));
              continue;
            }
            if (in.sums().position() != size) {
              damage(entry, nextStart(entry + 1), null, (size - in.sums().position()) + " bytes after the trailer");
              continue;
            }
            if (count != keys && damaged.isEmpty()) {
              throw new PersistenceCorruptionException(file, entry, "trailer says " + count + " keys, found " + keys);
            }
            return new Summary(VERSION, cutMillis, firstSegment, keys, size, entry, List.copyOf(damaged));
          }
          boolean meta = Arrays.equals(marker, META_MARKER);
          if (!meta && !Arrays.equals(marker, ENTRY_MARKER)) {
            damage(entry, nextStart(entry + 1), null, "no entry marker (found " + HexFormat.of().formatHex(marker) + ")");
            continue;
          }
          long keyLength = in.u32();
          long expireAt = in.u64();
          long valueLength = in.u64();
          long headerEnd = entry + ENTRY_HEAD_LENGTH + keyLength + 4;
          if (keyLength > MAX_KEY_LENGTH || headerEnd > size || valueLength < 0 || valueLength > size - headerEnd - 4
              || meta && valueLength > MAX_META_LENGTH) {
            damage(entry, nextStart(entry + 1), null, "entry lengths out of range (key " + keyLength + ", value "
                + valueLength + " bytes)");
            continue;
          }
          byte[] key = in.bytes((int) keyLength);
          long expected = in.sums().entryCrc();
          long stored = in.u32();
          if (stored != expected) {
            damage(entry, nextStart(entry + 1), null, String.format("entry header checksum mismatch (stored %08X, computed %08X)",
                stored, expected));
            continue;
          }
          long end = headerEnd + valueLength + 4;
          in.sums().startEntry();
          Object value;
          in.bound(valueLength);
          try {
            value = meta ? in.bytes((int) valueLength) : loader == null ? in.skipAll() : FilterFormat.read(in, valueLength);
          } catch (FilterFormatException | EOFException | IllegalArgumentException | IllegalStateException e) {
            damage(entry, end, key, "value: " + e.getMessage());
            continue;
          } finally {
            in.bound(-1);
          }
          if (in.sums().position() != headerEnd + valueLength) {
            damage(entry, end, key, "value took " + (in.sums().position() - headerEnd) + " bytes, the entry declares " + valueLength);
            continue;
          }
          long valueExpected = in.sums().entryCrc();
          long valueStored = in.u32();
          if (valueStored != valueExpected) {
            damage(entry, end, key, String.format("value checksum mismatch (stored %08X, computed %08X)", valueStored, valueExpected));
            continue;
          }
          if (meta) {
            if (loader != null) {
              try {
                loader.metadata(key, (byte[]) value);
              } catch (IllegalStateException | IllegalArgumentException e) {
                damage(entry, end, key, "metadata could not be loaded: " + e.getMessage());
              }
            }
            continue;
          }
          if (loader != null) {
            try {
              loader.load(key, value, expireAt);
            } catch (IllegalStateException | IllegalArgumentException e) {
              damage(entry, end, key, "key could not be loaded: " + e.getMessage());
              continue;
            }
          }
          keys++;
        } catch (EOFException e) {
          damage(entry, size, null, "snapshot ends early (" + size + " bytes)");
        }
      }
    }

    /**
     * The first offset in [from, size) where an entry marker starts a header that checks, or the end marker
     * starts a trailer that checks and ends the file; {@code size} if there is none.
     */
    private long nextStart(long from) throws IOException {
      ByteBuffer window = ByteBuffer.allocate(BUFFER + 4).order(ByteOrder.LITTLE_ENDIAN);
      for (long base = from; base + 4 <= size; base += BUFFER) {
        window.clear();
        window.limit((int) Math.min(window.capacity(), size - base));
        JournalFormat.readFully(channel, window, base);
        int candidates = Math.min(BUFFER, window.limit() - 3);
        for (int i = 0; i < candidates; i++) {
          if (window.get(i) == (byte) 0xEB && startsHere(base + i)) {
            return base + i;
          }
        }
      }
      return size;
    }

    private boolean startsHere(long at) throws IOException {
      ByteBuffer head = ByteBuffer.allocate((int) Math.min(ENTRY_HEAD_LENGTH, size - at)).order(ByteOrder.LITTLE_ENDIAN);
      JournalFormat.readFully(channel, head, at);
      byte[] marker = Arrays.copyOf(head.array(), 4);
      CRC32C crc = new CRC32C();
      if (Arrays.equals(marker, END_MARKER) && at + TRAILER_LENGTH == size) {
        crc.update(head.array(), 0, 12);
        return (int) crc.getValue() == head.getInt(12);
      }
      if (!Arrays.equals(marker, ENTRY_MARKER) && !Arrays.equals(marker, META_MARKER) || head.limit() < ENTRY_HEAD_LENGTH) {
        return false;
      }
      long keyLength = head.getInt(4) & 0xFFFF_FFFFL;
      if (keyLength > MAX_KEY_LENGTH || at + ENTRY_HEAD_LENGTH + keyLength + 4 > size) {
        return false;
      }
      ByteBuffer key = ByteBuffer.allocate((int) keyLength + 4).order(ByteOrder.LITTLE_ENDIAN);
      JournalFormat.readFully(channel, key, at + ENTRY_HEAD_LENGTH);
      crc.update(head.array(), 0, ENTRY_HEAD_LENGTH);
      crc.update(key.array(), 0, (int) keyLength);
      return (int) crc.getValue() == key.getInt((int) keyLength);
    }
  }

  /**
   * Writes {@code target} as {@code source} without its damaged entries (as {@link #readSkippingDamage} listed
   * them in {@code summary}): the header and every good entry byte for byte, then a trailer with the new key
   * count. Through a temporary file, forced and renamed; returns the new size.
   */
  static long copyWithoutDamage(Path source, Summary summary, Path target) throws IOException {
    try (FileChannel in = FileChannel.open(source, StandardOpenOption.READ)) {
      return AtomicWrite.write(target, raw -> {
        CrcOutputStream out = new CrcOutputStream(raw);
        long from = 0;
        for (Damaged region : summary.damaged()) {
          JournalFormat.copy(in, from, Math.min(region.offset(), summary.entriesEnd()), out);
          from = Math.max(from, region.end());
        }
        JournalFormat.copy(in, from, summary.entriesEnd(), out);
        writeTrailer(out, summary.keys());
        out.flush();
      });
    }
  }

  /** Version 1: the entries and trailer as {@code V1_*} describe, checked strictly. */
  private static Summary readVersion1(Path file, long size, CrcInputStream in, KeyLoader loader) throws IOException {
    in.bytes(8);
    long cutMillis = in.u64();
    long firstSegment = in.u64();
    long keys = 0;
    while (true) {
      long entry = in.sums().position();
      in.sums().startEntry();
      int tag = in.u8();
      if (tag == V1_TAG_END) {
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
        return new Summary(1, cutMillis, firstSegment, keys, size, entry, List.of());
      }
      if (tag != V1_TAG_KEY) {
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
        value = loader == null ? in.skipAll() : FilterFormat.read(in, valueLength);
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
        if (loader != null) {
          loader.load(key, value, expireAt);
        }
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

    CrcInputStream(InputStream in, long position) {
      this.in = in;
      sums.position = position;
    }

    /** Reads to the bound, keeping the checksums; returns {@code null} (no value decoded). */
    Object skipAll() throws IOException {
      byte[] scratch = new byte[BUFFER];
      while (read(scratch, 0, scratch.length) > 0) {
        // The bytes only feed the checksums.
      }
      return null;
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
