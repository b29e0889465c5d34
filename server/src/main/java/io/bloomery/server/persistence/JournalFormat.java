package io.bloomery.server.persistence;

import io.bloomery.format.AtomicWrite;
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
 *   <tr><td>4</td><td>1</td><td>version</td><td>u8 = 2 (1 is still read)</td></tr>
 *   <tr><td>5</td><td>3</td><td>reserved</td><td>0</td></tr>
 *   <tr><td>8</td><td>8</td><td>segment number</td><td>u64, equals the number in the file name</td></tr>
 * </table>
 *
 * <h2>Record, version 2 (repeated to the end of the file)</h2>
 *
 * <table>
 *   <caption>Record; L is the payload length</caption>
 *   <tr><th>offset</th><th>size</th><th>field</th><th>rule</th></tr>
 *   <tr><td>0</td><td>4</td><td>sync marker</td><td>{@code EB 4A 52 31}</td></tr>
 *   <tr><td>4</td><td>8</td><td>sequence number</td><td>u64, one more than the directory's previous record</td></tr>
 *   <tr><td>12</td><td>4</td><td>payload length L</td><td>u32, 1 ≤ L ≤ {@link #MAX_PAYLOAD}</td></tr>
 *   <tr><td>16</td><td>4</td><td>payload CRC-32C</td><td>u32, of the L payload bytes</td></tr>
 *   <tr><td>20</td><td>4</td><td>header CRC-32C</td><td>u32, of bytes 0 to 19</td></tr>
 *   <tr><td>24</td><td>L</td><td>payload</td><td>the command as a RESP array of bulk strings
 *       ({@code *N\r\n$len\r\nbytes\r\n…}), exactly L bytes</td></tr>
 * </table>
 *
 * <p>Version 1 records were {@code length u32, CRC-32C u32 of the length and payload, payload}, with no
 * marker and no sequence number; a version-1 segment is read, never appended to.
 *
 * <p>A record is <em>good</em> if its header checks, its payload checks and is exactly one RESP array. The
 * scanner does not stop at a bad one: a record whose header checks but whose payload does not is skipped
 * by its length and named by its sequence number; after a damaged header the scanner looks for the next
 * offset where a marker starts a header that checks (version 1: a {@code *}, a length that fits and a
 * matching CRC) and reports the bytes in between as one damaged region, with the sequence numbers it lost
 * (those between the good records on either side). A region that runs to the end of the file with no good
 * record after it is a <em>tail</em>; whether a tail is a torn write or lost acknowledged records is decided
 * by {@link SyncMark}, which says what had been forced to disk.
 */
final class JournalFormat {
  static final byte[] MAGIC = {0x42, 0x4C, 0x4D, 0x4A};
  static final int VERSION = 2;
  static final int HEADER_LENGTH = 16;
  static final byte[] RECORD_MARKER = {(byte) 0xEB, 0x4A, 0x52, 0x31};
  static final int RECORD_HEADER_LENGTH = 24;
  static final int V1_RECORD_HEADER_LENGTH = 8;
  /** The largest payload a record may declare (the JVM's array limit, with room). */
  static final int MAX_PAYLOAD = Integer.MAX_VALUE - 64;

  private static final int RESYNC_WINDOW = 1 << 16;

  private JournalFormat() {}

  static byte[] header(long segment) {
    ByteBuffer header = ByteBuffer.allocate(HEADER_LENGTH).order(ByteOrder.LITTLE_ENDIAN);
    header.put(MAGIC).put((byte) VERSION).put(new byte[3]).putLong(segment);
    return header.array();
  }

  /**
   * One record for {@code argv}, its payload and payload CRC filled in; {@link #stamp} gives it its sequence
   * number and header CRC (the writer stamps under its lock, where the order is decided).
   */
  static byte[] encode(List<byte[]> argv) {
    if (argv.isEmpty()) {
      throw new IllegalArgumentException("a journaled command needs at least its name");
    }
    ByteArrayOutputStream out = new ByteArrayOutputStream(64);
    out.writeBytes(new byte[RECORD_HEADER_LENGTH]);
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
    CRC32C crc = new CRC32C();
    crc.update(record, RECORD_HEADER_LENGTH, (int) payload);
    ByteBuffer framed = ByteBuffer.wrap(record).order(ByteOrder.LITTLE_ENDIAN);
    framed.put(0, RECORD_MARKER);
    framed.putInt(12, (int) payload);
    framed.putInt(16, (int) crc.getValue());
    return record;
  }

  /** {@link #encode} then {@link #stamp}. */
  static byte[] encode(List<byte[]> argv, long sequence) {
    return stamp(encode(argv), sequence);
  }

  /** Writes {@code sequence} and the header CRC into an {@link #encode encoded} record; returns it. */
  static byte[] stamp(byte[] record, long sequence) {
    ByteBuffer framed = ByteBuffer.wrap(record).order(ByteOrder.LITTLE_ENDIAN);
    framed.putLong(4, sequence);
    CRC32C crc = new CRC32C();
    crc.update(record, 0, 20);
    framed.putInt(20, (int) crc.getValue());
    return record;
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
   * @param version the segment's format version (0 if its header is unreadable)
   * @param goodEnd the offset just past the last good record (the header's end if none; 0 if the header is
   *     bad)
   * @param records the good records
   * @param lastSequence the sequence number of the last good record, 0 if none or version 1
   * @param damages the bad regions, in file order; empty if every byte belongs to a good record
   */
  record Scan(Path file, int version, long fileSize, long goodEnd, long records, long lastSequence,
      List<Damage> damages) {
    boolean clean() {
      return damages.isEmpty();
    }

    /**
     * This scan with a first region that lost records of unknown number (no good record before it) numbered
     * from {@code previous} + 1; unchanged if {@code previous} is unknown (negative).
     */
    Scan numberedAfter(long previous) {
      if (previous < 0 || damages.isEmpty() || damages.getFirst().firstLost() != 0) {
        return this;
      }
      List<Damage> numbered = new ArrayList<>(damages);
      Damage first = numbered.getFirst();
      numbered.set(0, new Damage(first.offset(), first.end(), previous + 1, first.lastLost(), first.problem(),
          first.tail(), first.zeros(), first.recordsAfter()));
      return new Scan(file, version, fileSize, goodEnd, records, lastSequence, List.copyOf(numbered));
    }

    /** The region that runs to the end of the file, or {@code null}. */
    Damage tail() {
      return damages.isEmpty() || !damages.getLast().tail() ? null : damages.getLast();
    }
  }

  /**
   * A bad region: bytes {@code [offset, end)} belong to no good record.
   *
   * @param firstLost the sequence number of the first record lost in it, 0 if unknown
   * @param lastLost the last one, 0 if unknown (a tail, or version 1)
   * @param tail no good record starts after it: it runs to the end of the file
   * @param zeros every byte of it is zero (unused space, or pages a power loss never wrote)
   * @param recordsAfter good records after it in this file
   */
  record Damage(long offset, long end, long firstLost, long lastLost, String problem, boolean tail, boolean zeros,
      long recordsAfter) {
    long length() {
      return end - offset;
    }

    /** "records 18 to 20 (3)", "record 18", "records from 18 on", or "the records in it" when unknown. */
    String lost() {
      if (firstLost > 0 && lastLost >= firstLost) {
        long n = lastLost - firstLost + 1;
        return n == 1 ? "record " + firstLost : "records " + firstLost + " to " + lastLost + " (" + n + ")";
      }
      if (firstLost > 0) {
        return "records from " + firstLost + " on";
      }
      if (lastLost > 0) {
        return "records up to " + lastLost;
      }
      return "the records in it (not numbered)";
    }

    Damage withRecordsAfter(long count) {
      return new Damage(offset, end, firstLost, lastLost, problem, tail, zeros, count);
    }
  }

  /**
   * Reads {@code file}, handing each good record to {@code visitor} in order and skipping every bad region.
   *
   * @param segment the segment number the file name promises
   * @param previousSequence the sequence number of the record before this segment's first (0: this segment's
   *     first record is the directory's first), or -1 if unknown
   */
  static Scan scan(Path file, long segment, long previousSequence, RecordVisitor visitor) throws IOException {
    try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
      long size = channel.size();
      if (size < HEADER_LENGTH) {
        // A segment whose creation was cut short; nothing in it was ever acknowledged.
        return new Scan(file, 0, size, 0, 0, 0, List.of(new Damage(0, size, firstAfter(previousSequence), 0,
            "segment header incomplete (" + size + " of " + HEADER_LENGTH + " bytes)", true, zeros(channel, 0, size), 0)));
      }
      ByteBuffer header = ByteBuffer.allocate(HEADER_LENGTH).order(ByteOrder.LITTLE_ENDIAN);
      readFully(channel, header, 0);
      String headerProblem = headerProblem(header, segment);
      if (headerProblem != null) {
        return new Scan(file, 0, size, 0, 0, 0, List.of(new Damage(0, size, 0, 0, headerProblem,
            false, false, 0)));
      }
      int version = header.get(4) & 0xFF;
      List<Damage> damages = new ArrayList<>();
      List<Long> recordsBefore = new ArrayList<>();
      long offset = HEADER_LENGTH;
      long records = 0;
      long goodEnd = HEADER_LENGTH;
      long sequence = previousSequence;
      long lastGood = 0;
      while (offset < size) {
        RecordRead next = readRecord(channel, version, offset, size);
        if (next.problem() == null) {
          visitor.record(offset, next.argv());
          offset = next.end();
          goodEnd = offset;
          records++;
          sequence = next.sequence();
          lastGood = sequence;
          continue;
        }
        long end;
        long firstLost = firstAfter(sequence);
        long lastLost;
        if (next.end() > 0) {
          // The header checks, the payload does not: exactly this record is lost.
          end = next.end();
          firstLost = next.sequence();
          lastLost = next.sequence();
          sequence = next.sequence();
        } else {
          end = nextRecordStart(channel, version, offset + 1, size);
          lastLost = end < size && version >= 2 ? sequenceAt(channel, end) - 1 : 0;
        }
        boolean tail = end >= size;
        damages.add(new Damage(offset, end, firstLost, lastLost, next.problem(), tail,
            zeros(channel, offset, end), 0));
        recordsBefore.add(records);
        offset = end;
      }
      List<Damage> counted = new ArrayList<>(damages.size());
      for (int i = 0; i < damages.size(); i++) {
        counted.add(damages.get(i).withRecordsAfter(records - recordsBefore.get(i)));
      }
      return new Scan(file, version, size, goodEnd, records, version >= 2 ? lastGood : 0, List.copyOf(counted));
    }
  }

  private static long firstAfter(long sequence) {
    return sequence >= 0 ? sequence + 1 : 0;
  }

  /**
   * The sequence number of the record before the segment after {@code scan}'s: its last good record's, the one
   * before it if it holds none, -1 if unknown (a version-1 segment numbers nothing).
   */
  static long sequenceAfter(Scan scan, long previous) {
    if (scan.version() < 2) {
      return -1;
    }
    return scan.lastSequence() > 0 ? scan.lastSequence() : previous;
  }

  /** The segment file's version, 0 if its header is short or not a segment header. */
  static int version(Path file) throws IOException {
    try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
      if (channel.size() < HEADER_LENGTH) {
        return 0;
      }
      ByteBuffer header = ByteBuffer.allocate(HEADER_LENGTH).order(ByteOrder.LITTLE_ENDIAN);
      readFully(channel, header, 0);
      byte[] magic = new byte[4];
      header.get(0, magic);
      return Arrays.equals(magic, MAGIC) ? header.get(4) & 0xFF : 0;
    }
  }

  private static String headerProblem(ByteBuffer header, long segment) {
    byte[] magic = new byte[4];
    header.get(0, magic);
    if (!Arrays.equals(magic, MAGIC)) {
      return "not a journal segment: magic " + hex(magic) + ", expected " + hex(MAGIC);
    }
    int version = header.get(4) & 0xFF;
    if (version < 1 || version > VERSION) {
      return "journal segment version " + version + ", this build reads versions 1 to " + VERSION;
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

  /** Whether bytes [from, to) are all zero. */
  private static boolean zeros(FileChannel channel, long from, long to) throws IOException {
    ByteBuffer window = ByteBuffer.allocate(RESYNC_WINDOW);
    for (long base = from; base < to; base += RESYNC_WINDOW) {
      window.clear();
      window.limit((int) Math.min(RESYNC_WINDOW, to - base));
      readFully(channel, window, base);
      while (window.hasRemaining()) {
        if (window.get() != 0) {
          return false;
        }
      }
    }
    return true;
  }

  /**
   * The first offset in [from, size) where a record can start: version 2, a marker whose header checks and
   * whose length fits the file; version 1, a whole good record. {@code size} if there is none.
   */
  private static long nextRecordStart(FileChannel channel, int version, long from, long size) throws IOException {
    int head = version >= 2 ? RECORD_HEADER_LENGTH : V1_RECORD_HEADER_LENGTH;
    ByteBuffer window = ByteBuffer.allocate(RESYNC_WINDOW + head + 1).order(ByteOrder.LITTLE_ENDIAN);
    for (long base = from; base + head < size; base += RESYNC_WINDOW) {
      window.clear();
      window.limit((int) Math.min(window.capacity(), size - base));
      readFully(channel, window, base);
      int candidates = Math.min(RESYNC_WINDOW, window.limit() - head);
      for (int i = 0; i < candidates; i++) {
        if (version >= 2) {
          if (window.get(i) == RECORD_MARKER[0] && window.get(i + 1) == RECORD_MARKER[1]
              && window.get(i + 2) == RECORD_MARKER[2] && window.get(i + 3) == RECORD_MARKER[3]
              && headerChecks(window, i, size - base - i)) {
            return base + i;
          }
        } else {
          long length = window.getInt(i) & 0xFFFF_FFFFL;
          if (window.get(i + V1_RECORD_HEADER_LENGTH) == '*' && length >= 1
              && length <= size - base - i - V1_RECORD_HEADER_LENGTH
              && readRecord(channel, version, base + i, size).problem() == null) {
            return base + i;
          }
        }
      }
    }
    return size;
  }

  /** Whether the version-2 record header at {@code at} in {@code buffer} checks and its record fits in {@code left}. */
  private static boolean headerChecks(ByteBuffer buffer, int at, long left) {
    CRC32C crc = new CRC32C();
    crc.update(buffer.slice(at, 20));
    long length = buffer.getInt(at + 12) & 0xFFFF_FFFFL;
    return (int) crc.getValue() == buffer.getInt(at + 20) && length >= 1 && length <= MAX_PAYLOAD
        && length <= left - RECORD_HEADER_LENGTH;
  }

  private static long sequenceAt(FileChannel channel, long offset) throws IOException {
    ByteBuffer head = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN);
    readFully(channel, head, offset + 4);
    return head.getLong(0);
  }

  /**
   * Rewrites {@code file} to hold its header and only the bytes outside {@code cut} (regions in file order),
   * through a temporary file that is forced and renamed over it. A cut of the header itself writes a fresh
   * header. Returns the new size.
   */
  static long removeRegions(Path file, long segment, List<Damage> cut) throws IOException {
    try (FileChannel in = FileChannel.open(file, StandardOpenOption.READ)) {
      long size = in.size();
      return AtomicWrite.write(file, out -> {
        long from = HEADER_LENGTH;
        if (!cut.isEmpty() && cut.getFirst().offset() < HEADER_LENGTH) {
          out.write(header(segment));
          from = cut.getFirst().end();
        } else {
          copy(in, 0, HEADER_LENGTH, out);
        }
        for (Damage region : cut) {
          if (region.offset() >= from) {
            copy(in, from, region.offset(), out);
            from = region.end();
          }
        }
        copy(in, from, size, out);
      });
    }
  }

  /** Writes bytes [from, to) of {@code in} to {@code out}. */
  static void copy(FileChannel in, long from, long to, java.io.OutputStream out) throws IOException {
    ByteBuffer buffer = ByteBuffer.allocate(RESYNC_WINDOW);
    for (long at = from; at < to; ) {
      buffer.clear();
      buffer.limit((int) Math.min(RESYNC_WINDOW, to - at));
      int n = in.read(buffer, at);
      if (n < 0) {
        throw new EOFException("unexpected end of file at offset " + at);
      }
      out.write(buffer.array(), 0, n);
      at += n;
    }
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

  /**
   * One record read at an offset: its argv, sequence number and where the next record starts, or why it is
   * bad. A bad record whose header checks still has its {@code end} and {@code sequence}; otherwise {@code
   * end} is -1.
   */
  private record RecordRead(List<byte[]> argv, long sequence, long end, String problem) {
    static RecordRead bad(String problem) {
      return new RecordRead(null, 0, -1, problem);
    }
  }

  private static RecordRead readRecord(FileChannel channel, int version, long offset, long size) throws IOException {
    int headLength = version >= 2 ? RECORD_HEADER_LENGTH : V1_RECORD_HEADER_LENGTH;
    long remaining = size - offset;
    if (remaining < headLength) {
      return RecordRead.bad("record header incomplete (" + remaining + " of " + headLength + " bytes)");
    }
    ByteBuffer head = ByteBuffer.allocate(headLength).order(ByteOrder.LITTLE_ENDIAN);
    readFully(channel, head, offset);
    long sequence = 0;
    long length;
    long expectedCrc;
    if (version >= 2) {
      byte[] marker = new byte[4];
      head.get(0, marker);
      if (!Arrays.equals(marker, RECORD_MARKER)) {
        return RecordRead.bad("no record marker (found " + hex(marker) + ", expected " + hex(RECORD_MARKER) + ")");
      }
      CRC32C headerCrc = new CRC32C();
      headerCrc.update(head.array(), 0, 20);
      long storedHeaderCrc = head.getInt(20) & 0xFFFF_FFFFL;
      if (headerCrc.getValue() != storedHeaderCrc) {
        return RecordRead.bad(String.format("record header checksum mismatch (stored %08X, computed %08X)",
            storedHeaderCrc, headerCrc.getValue()));
      }
      sequence = head.getLong(4);
      length = head.getInt(12) & 0xFFFF_FFFFL;
      expectedCrc = head.getInt(16) & 0xFFFF_FFFFL;
    } else {
      length = head.getInt(0) & 0xFFFF_FFFFL;
      expectedCrc = head.getInt(4) & 0xFFFF_FFFFL;
    }
    if (length < 1 || length > MAX_PAYLOAD) {
      return RecordRead.bad("record length " + length + " out of range 1.." + MAX_PAYLOAD);
    }
    if (length > remaining - headLength) {
      // Both figures count from the record's first byte, as the damage offset and a cut there do.
      return RecordRead.bad("record of " + headLength + " + " + length + " bytes runs past the end of"
          + " the file, which ends " + remaining + " bytes after the record's start");
    }
    long end = offset + headLength + length;
    byte[] payload = new byte[(int) length];
    readFully(channel, ByteBuffer.wrap(payload), offset + headLength);
    CRC32C crc = new CRC32C();
    if (version < 2) {
      crc.update(head.array(), 0, 4);
    }
    crc.update(payload, 0, payload.length);
    long actualCrc = crc.getValue();
    if (actualCrc != expectedCrc) {
      String problem = String.format("record checksum mismatch (stored %08X, computed %08X)", expectedCrc, actualCrc);
      return version >= 2 ? new RecordRead(null, sequence, end, problem) : RecordRead.bad(problem);
    }
    List<byte[]> argv = decodePayload(payload);
    if (argv == null) {
      String problem = "record payload is not one RESP array of bulk strings";
      return version >= 2 ? new RecordRead(null, sequence, end, problem) : RecordRead.bad(problem);
    }
    return new RecordRead(argv, sequence, end, null);
  }
}
