package io.bloomery.server.persistence;

import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.zip.CRC32C;

/**
 * The byte layout of a journal segment file ({@code journal.NNNNNNNNNN.log}), and its scanner.
 *
 * <h2>Segment header (16 bytes, little-endian)</h2>
 *
 * <table>
 *   <caption>Segment header</caption>
 *   <tr><th>offset</th><th>size</th><th>field</th><th>rule</th></tr>
 *   <tr><td>0</td><td>4</td><td>magic</td><td>{@code 42 4C 4D 4A} ("BLMJ")</td></tr>
 *   <tr><td>4</td><td>1</td><td>version</td><td>u8 = 1</td></tr>
 *   <tr><td>5</td><td>3</td><td>reserved</td><td>0</td></tr>
 *   <tr><td>8</td><td>8</td><td>segment number</td><td>u64, equals the number in the file name</td></tr>
 * </table>
 *
 * <h2>Record (repeated to the end of the file)</h2>
 *
 * <table>
 *   <caption>Record; L is the payload length</caption>
 *   <tr><th>offset</th><th>size</th><th>field</th><th>rule</th></tr>
 *   <tr><td>0</td><td>4</td><td>payload length L</td><td>u32, 1 ≤ L ≤ {@link #MAX_PAYLOAD}</td></tr>
 *   <tr><td>4</td><td>4</td><td>CRC-32C</td><td>u32, Castagnoli CRC of the 4 length bytes then the payload</td></tr>
 *   <tr><td>8</td><td>L</td><td>payload</td><td>the command as a RESP array of bulk strings
 *       ({@code *N\r\n$len\r\nbytes\r\n…}), exactly L bytes</td></tr>
 * </table>
 *
 * <p>The CRC covers the length, so a damaged length is caught like damaged data. A record is
 * <em>bad</em> if its header is incomplete, its length is out of range or runs past the end of the file,
 * its CRC does not match, or its payload is not exactly one RESP array. A bad record after which no good
 * record starts at any later offset is a <em>torn tail</em> (a write cut short by a crash); a bad record
 * followed somewhere by a good one is <em>corruption in the middle</em>. Only the newest segment may
 * have a torn tail.
 */
final class JournalFormat {
  static final byte[] MAGIC = {0x42, 0x4C, 0x4D, 0x4A};
  static final int VERSION = 1;
  static final int HEADER_LENGTH = 16;
  static final int RECORD_HEADER_LENGTH = 8;
  /** The largest payload a record may declare (the JVM's array limit, with room). */
  static final int MAX_PAYLOAD = Integer.MAX_VALUE - 64;

  private static final int RESYNC_WINDOW = 1 << 16;

  private JournalFormat() {}

  static byte[] header(long segment) {
    ByteBuffer header = ByteBuffer.allocate(HEADER_LENGTH).order(ByteOrder.LITTLE_ENDIAN);
    header.put(MAGIC).put((byte) VERSION).put(new byte[3]).putLong(segment);
    return header.array();
  }

  /** One framed record for {@code argv}. */
  static byte[] encode(List<byte[]> argv) {
    if (argv.isEmpty()) {
      throw new IllegalArgumentException("a journaled command needs at least its name");
    }
    ByteArrayOutputStream out = new ByteArrayOutputStream(64);
    out.write(0);
    out.write(0);
    out.write(0);
    out.write(0);
    out.write(0);
    out.write(0);
    out.write(0);
    out.write(0);
    out.writeBytes(("*" + argv.size() + "\r\n").getBytes(StandardCharsets.US_ASCII));
    for (byte[] arg : argv) {
      out.writeBytes(("$" + arg.length + "\r\n").getBytes(StandardCharsets.US_ASCII));
      out.writeBytes(arg);
      out.write('\r');
      out.write('\n');
    }
    byte[] record = out.toByteArray();
    long payload = record.length - RECORD_HEADER_LENGTH;
    if (payload > MAX_PAYLOAD) {
      throw new IllegalArgumentException("command too large to journal: " + payload + " bytes");
    }
    ByteBuffer framed = ByteBuffer.wrap(record).order(ByteOrder.LITTLE_ENDIAN);
    framed.putInt(0, (int) payload);
    framed.putInt(4, (int) crc(record, 0, 4, record, RECORD_HEADER_LENGTH, (int) payload));
    return record;
  }

  private static long crc(byte[] a, int aOffset, int aLength, byte[] b, int bOffset, int bLength) {
    CRC32C crc = new CRC32C();
    crc.update(a, aOffset, aLength);
    crc.update(b, bOffset, bLength);
    return crc.getValue();
  }

  /** Decodes one RESP array of bulk strings that fills {@code payload} exactly, or {@code null}. */
  static List<byte[]> decodePayload(byte[] payload) {
    int[] cursor = {0};
    long count = readPrefixed(payload, cursor, (byte) '*');
    // Each element takes at least 6 bytes ("$0\r\n\r\n"): cap the count before allocating for it.
    if (count < 1 || count > payload.length / 6) {
      return null;
    }
    List<byte[]> argv = new ArrayList<>((int) count);
    for (long i = 0; i < count; i++) {
      long length = readPrefixed(payload, cursor, (byte) '$');
      if (length < 0 || length > payload.length - cursor[0] - 2) {
        return null;
      }
      int start = cursor[0];
      int end = start + (int) length;
      if (payload[end] != '\r' || payload[end + 1] != '\n') {
        return null;
      }
      argv.add(Arrays.copyOfRange(payload, start, end));
      cursor[0] = end + 2;
    }
    return cursor[0] == payload.length ? argv : null;
  }

  /** Reads {@code <type><decimal>\r\n} at the cursor; -1 if it is not there or out of range. */
  private static long readPrefixed(byte[] bytes, int[] cursor, byte type) {
    int i = cursor[0];
    if (i >= bytes.length || bytes[i] != type) {
      return -1;
    }
    i++;
    long value = 0;
    int digits = 0;
    while (i < bytes.length && bytes[i] >= '0' && bytes[i] <= '9') {
      value = value * 10 + (bytes[i] - '0');
      i++;
      if (++digits > 10) {
        return -1;
      }
    }
    if (digits == 0 || i + 1 >= bytes.length || bytes[i] != '\r' || bytes[i + 1] != '\n') {
      return -1;
    }
    cursor[0] = i + 2;
    return value;
  }

  /** Receives each good record of a scan, in file order. */
  @FunctionalInterface
  interface RecordVisitor {
    void record(long offset, List<byte[]> argv) throws IOException;
  }

  /**
   * What a scan found.
   *
   * @param goodEnd the offset just past the last good record (where a repair truncates)
   * @param damage {@code null} if every byte belongs to a good record
   */
  record Scan(Path file, long fileSize, long goodEnd, long records, Damage damage) {
    boolean clean() {
      return damage == null;
    }
  }

  /**
   * A bad record.
   *
   * @param tornTail no good record starts anywhere after it
   */
  record Damage(long offset, String problem, boolean tornTail) {}

  /**
   * Reads {@code file}, handing each good record to {@code visitor}, up to the first bad record.
   *
   * @param segment the segment number the file name promises
   */
  static Scan scan(Path file, long segment, RecordVisitor visitor) throws IOException {
    try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
      long size = channel.size();
      if (size < HEADER_LENGTH) {
        // A segment whose creation was cut short; nothing in it was ever acknowledged.
        return new Scan(file, size, 0, 0,
            new Damage(0, "segment header incomplete (" + size + " of " + HEADER_LENGTH + " bytes)", true));
      }
      ByteBuffer header = ByteBuffer.allocate(HEADER_LENGTH).order(ByteOrder.LITTLE_ENDIAN);
      readFully(channel, header, 0);
      String headerProblem = headerProblem(header, segment);
      if (headerProblem != null) {
        return new Scan(file, size, 0, 0, new Damage(0, headerProblem, false));
      }
      long offset = HEADER_LENGTH;
      long records = 0;
      while (offset < size) {
        RecordRead next = readRecord(channel, offset, size);
        if (next.problem() != null) {
          boolean torn = !goodRecordAfter(channel, offset + 1, size);
          return new Scan(file, size, offset, records, new Damage(offset, next.problem(), torn));
        }
        visitor.record(offset, next.argv());
        offset = next.end();
        records++;
      }
      return new Scan(file, size, offset, records, null);
    }
  }

  private static String headerProblem(ByteBuffer header, long segment) {
    byte[] magic = new byte[4];
    header.get(0, magic);
    if (!Arrays.equals(magic, MAGIC)) {
      return "not a journal segment: magic " + hex(magic) + ", expected " + hex(MAGIC);
    }
    int version = header.get(4) & 0xFF;
    if (version != VERSION) {
      return "journal segment version " + version + ", this build reads version " + VERSION;
    }
    long found = header.getLong(8);
    if (found != segment) {
      return "segment header says number " + found + ", the file name says " + segment;
    }
    return null;
  }

  private static String hex(byte[] bytes) {
    StringBuilder text = new StringBuilder();
    for (byte b : bytes) {
      text.append(String.format("%02X", b & 0xFF));
    }
    return text.toString();
  }


  /** Whether a good record starts at some offset in [from, size). */
  private static boolean goodRecordAfter(FileChannel channel, long from, long size) throws IOException {
    ByteBuffer window = ByteBuffer.allocate(RESYNC_WINDOW + RECORD_HEADER_LENGTH + 1).order(ByteOrder.LITTLE_ENDIAN);
    for (long base = from; base + RECORD_HEADER_LENGTH < size; base += RESYNC_WINDOW) {
      window.clear();
      window.limit((int) Math.min(window.capacity(), size - base));
      readFully(channel, window, base);
      int candidates = Math.min(RESYNC_WINDOW, window.limit() - RECORD_HEADER_LENGTH);
      for (int i = 0; i < candidates; i++) {
        long length = window.getInt(i) & 0xFFFF_FFFFL;
        if (window.get(i + RECORD_HEADER_LENGTH) == '*' && length >= 1 && length <= size - base - i - RECORD_HEADER_LENGTH
            && readRecord(channel, base + i, size).problem() == null) {
          return true;
        }
      }
    }
    return false;
  }

  /**
   * Truncates {@code file} to {@code goodEnd}, the end of its last good record, and forces it. A cut at 0
   * (the header itself was torn while the segment was being created) writes the header again.
   */
  static void cutAfterGoodRecords(Path file, long goodEnd, long segment) throws IOException {
    try (FileChannel channel = FileChannel.open(file, StandardOpenOption.WRITE)) {
      channel.truncate(goodEnd);
      if (goodEnd == 0) {
        ByteBuffer header = ByteBuffer.wrap(header(segment));
        while (header.hasRemaining()) {
          channel.write(header, channel.size());
        }
      }
      channel.force(true);
    }
  }

  static void readFully(FileChannel channel, ByteBuffer buffer, long position) throws IOException {
    long at = position;
    while (buffer.hasRemaining()) {
      int n = channel.read(buffer, at);
      if (n < 0) {
        throw new EOFException("unexpected end of file at offset " + at);
      }
      at += n;
    }
    buffer.flip();
  }

  /** One record read at an offset: its argv and where the next record starts, or why it is bad. */
  private record RecordRead(List<byte[]> argv, long end, String problem) {
    static RecordRead bad(String problem) {
      return new RecordRead(null, -1, problem);
    }
  }

  private static RecordRead readRecord(FileChannel channel, long offset, long size) throws IOException {
    long remaining = size - offset;
    if (remaining < RECORD_HEADER_LENGTH) {
      return RecordRead.bad("record header incomplete (" + remaining + " of " + RECORD_HEADER_LENGTH + " bytes)");
    }
    ByteBuffer head = ByteBuffer.allocate(RECORD_HEADER_LENGTH).order(ByteOrder.LITTLE_ENDIAN);
    readFully(channel, head, offset);
    long length = head.getInt(0) & 0xFFFF_FFFFL;
    long expectedCrc = head.getInt(4) & 0xFFFF_FFFFL;
    if (length < 1 || length > MAX_PAYLOAD) {
      return RecordRead.bad("record length " + length + " out of range 1.." + MAX_PAYLOAD);
    }
    if (length > remaining - RECORD_HEADER_LENGTH) {
      // Both figures count from the record's first byte, as the damage offset and a cut there do.
      return RecordRead.bad("record of " + RECORD_HEADER_LENGTH + " + " + length + " bytes runs past the end of"
          + " the file, which ends " + remaining + " bytes after the record's start");
    }
    byte[] payload = new byte[(int) length];
    readFully(channel, ByteBuffer.wrap(payload), offset + RECORD_HEADER_LENGTH);
    long actualCrc = crc(head.array(), 0, 4, payload, 0, payload.length);
    if (actualCrc != expectedCrc) {
      return RecordRead.bad(String.format("record checksum mismatch (stored %08X, computed %08X)", expectedCrc, actualCrc));
    }
    List<byte[]> argv = decodePayload(payload);
    if (argv == null) {
      return RecordRead.bad("record payload is not one RESP array of bulk strings");
    }
    return new RecordRead(argv, offset + RECORD_HEADER_LENGTH + length, null);
  }
}
