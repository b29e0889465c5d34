package io.bloomery.server.persistence;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.zip.CRC32C;

/**
 * The data directory's {@code SYNCED} file: how far the journal is known to be on disk. The journal's syncer
 * rewrites it in place after every fsync that covered new records, before it releases the acknowledgements
 * that fsync covers, so every record an {@code always} client was told succeeded lies before the mark.
 * Recovery uses it to tell a torn tail (bytes after the mark: never forced, so under {@code always} never
 * acknowledged) from damage of records that had been forced (before the mark: acknowledged, reported and
 * refused).
 *
 * <table>
 *   <caption>{@code SYNCED}, 36 bytes, little-endian</caption>
 *   <tr><th>offset</th><th>size</th><th>field</th><th>rule</th></tr>
 *   <tr><td>0</td><td>4</td><td>magic</td><td>{@code 42 4C 4D 44} ("BLMD")</td></tr>
 *   <tr><td>4</td><td>1</td><td>version</td><td>u8 = 1</td></tr>
 *   <tr><td>5</td><td>3</td><td>reserved</td><td>0</td></tr>
 *   <tr><td>8</td><td>8</td><td>segment</td><td>u64, the segment the last fsync forced</td></tr>
 *   <tr><td>16</td><td>8</td><td>offset</td><td>u64, that segment's bytes the fsync covered</td></tr>
 *   <tr><td>24</td><td>8</td><td>sequence</td><td>u64, the last record it covered, 0 if none</td></tr>
 *   <tr><td>32</td><td>4</td><td>CRC-32C</td><td>u32, of bytes 0 to 31</td></tr>
 * </table>
 *
 * <p>The file is written with one positional write and not forced itself: it survives a killed process (the
 * page cache does), and after a power loss it can only be older than the journal, never newer, because it
 * is written after the fsync it describes. An older mark makes recovery treat more of the tail as possibly
 * torn, which is the pre-mark behaviour; a missing or damaged mark is read as "nothing known forced".
 *
 * @param segment the segment the last fsync forced (segments before it were forced whole)
 * @param offset the bytes of {@code segment} it covered
 * @param sequence the last record it covered
 */
record SyncMark(long segment, long offset, long sequence) {
  static final String FILE = "SYNCED";
  static final byte[] MAGIC = {0x42, 0x4C, 0x4D, 0x44};
  static final int LENGTH = 36;

  /** Nothing known forced: a directory without a mark (format 1, or a fresh one). */
  static final SyncMark NONE = new SyncMark(0, 0, 0);

  /**
   * Whether the journal bytes at {@code offset} of {@code segmentNumber} had been forced. A segment's own
   * header counts only once a record after it was forced.
   */
  boolean covers(long segmentNumber, long at) {
    return segmentNumber < segment
        || (segmentNumber == segment && offset > JournalFormat.HEADER_LENGTH && at < offset);
  }

  byte[] bytes() {
    ByteBuffer out = ByteBuffer.allocate(LENGTH).order(ByteOrder.LITTLE_ENDIAN);
    out.put(MAGIC).put((byte) 1).put(new byte[3]).putLong(segment).putLong(offset).putLong(sequence);
    CRC32C crc = new CRC32C();
    crc.update(out.array(), 0, 32);
    out.putInt((int) crc.getValue());
    return out.array();
  }

  /** The mark in {@code dir}; {@link #NONE} if there is none or it does not check. */
  static SyncMark read(Path dir) throws IOException {
    Path file = dir.resolve(FILE);
    if (!Files.exists(file) || Files.size(file) != LENGTH) {
      return NONE;
    }
    ByteBuffer in = ByteBuffer.wrap(Files.readAllBytes(file)).order(ByteOrder.LITTLE_ENDIAN);
    byte[] magic = new byte[4];
    in.get(0, magic);
    CRC32C crc = new CRC32C();
    crc.update(in.array(), 0, 32);
    if (!Arrays.equals(magic, MAGIC) || in.get(4) != 1 || (int) crc.getValue() != in.getInt(32)) {
      return NONE;
    }
    return new SyncMark(in.getLong(8), in.getLong(16), in.getLong(24));
  }

  /** Replaces {@code dir}'s mark and forces it (recovery and check-log, after they forced the journal). */
  void writeForced(Path dir) throws IOException {
    try (Writer writer = Writer.open(dir)) {
      writer.write(this);
      writer.channel.force(false);
    }
  }

  /** Keeps the mark's file open for the syncer; one positional write per update. */
  static final class Writer implements AutoCloseable {
    private final FileChannel channel;

    private Writer(FileChannel channel) {
      this.channel = channel;
    }

    static Writer open(Path dir) throws IOException {
      return new Writer(FileChannel.open(dir.resolve(FILE), StandardOpenOption.CREATE, StandardOpenOption.WRITE));
    }

    void write(SyncMark mark) throws IOException {
      ByteBuffer bytes = ByteBuffer.wrap(mark.bytes());
      long at = 0;
      while (bytes.hasRemaining()) {
        at += channel.write(bytes, at);
      }
    }

    @Override
    public void close() throws IOException {
      channel.close();
    }
  }
}
