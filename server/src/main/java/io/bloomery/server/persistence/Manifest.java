package io.bloomery.server.persistence;

import io.bloomery.format.AtomicWrite;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Locale;
import java.util.zip.CRC32C;

/**
 * Which files make the current state: one snapshot (or none) plus every journal segment numbered from
 * {@link #firstSegment()} on, replayed in order; and which files made the state before the last snapshot,
 * kept as a fallback for {@code check-log --fix}. Stored as the text file {@code MANIFEST}, replaced
 * atomically (temp, fsync, rename, fsync of the directory), so a reader sees the old manifest or the new
 * one, never a mixture:
 *
 * <pre>
 * bloomery-manifest 3
 * snapshot snapshot.0000000007.snap
 * first-segment 7
 * first-sequence 1043
 * previous snapshot.0000000004.snap 4 1001
 * crc32c 8A3F0C12
 * </pre>
 *
 * <p>{@code snapshot none} means the state starts empty. {@code first-sequence N} is the sequence number
 * the journal gives the first record after the snapshot's cut, so a damaged first record of
 * {@code first-segment} can be named even when no earlier segment is kept; {@code -} when unknown (a
 * directory written without a journal, or carried over from version 2). {@code previous NAME|none N S} is
 * the manifest that was in force before this one's snapshot was taken (its snapshot, first segment and
 * first sequence: that snapshot plus the segments from N on reproduce the current state too);
 * {@code previous -} means none is kept. The last line is the CRC-32C (hex, upper case) of every byte
 * before it. Version 2 (without {@code first-sequence} and the previous state's S) and version 1 (without
 * the {@code previous} line either) are still read.
 *
 * @param snapshot the snapshot's file name, or {@code null} for none
 * @param firstSegment the first journal segment after the snapshot's cut
 * @param firstSequence the sequence number of the first journal record after the cut, 0 if unknown
 * @param previous the state before this snapshot (its own {@code previous} is {@code null}), or {@code null}
 */
record Manifest(String snapshot, long firstSegment, long firstSequence, Manifest previous) {
  private static final String HEADER = "bloomery-manifest 3";
  private static final String HEADER_2 = "bloomery-manifest 2";
  private static final String HEADER_1 = "bloomery-manifest 1";

  /** A fresh directory: no snapshot, journal from segment 1, whose first record is 1. */
  static final Manifest EMPTY = new Manifest(null, 1, 1, null);

  /** A manifest without a previous state. */
  Manifest(String snapshot, long firstSegment, long firstSequence) {
    this(snapshot, firstSegment, firstSequence, null);
  }

  /**
   * The manifest of a new snapshot taken while this one was in force: this one becomes its previous.
   *
   * @param nextFirstSequence the sequence number the journal gives the first record after the new cut, 0 if
   *     unknown
   */
  Manifest successor(String nextSnapshot, long nextFirstSegment, long nextFirstSequence) {
    return new Manifest(nextSnapshot, nextFirstSegment, nextFirstSequence,
        new Manifest(snapshot, firstSegment, firstSequence));
  }


  /**
   * The lowest journal segment this manifest needs kept: its previous one's first segment if it has a
   * previous, else its own.
   */
  long firstKeptSegment() {
    return previous == null ? firstSegment : Math.min(previous.firstSegment, firstSegment);
  }

  String text() {
    String body = HEADER + "\n"
        + "snapshot " + (snapshot == null ? "none" : snapshot) + "\n"
        + "first-segment " + firstSegment + "\n"
        + "first-sequence " + sequenceText(firstSequence) + "\n"
        + "previous " + (previous == null ? "-"
            : (previous.snapshot == null ? "none" : previous.snapshot) + " " + previous.firstSegment + " "
                + sequenceText(previous.firstSequence)) + "\n";
    return body + String.format(Locale.ROOT, "crc32c %08X%n", crc(body));
  }

  private static String sequenceText(long sequence) {
    return sequence > 0 ? Long.toString(sequence) : "-";
  }

  private static long sequenceValue(String text) {
    return text.equals("-") ? 0 : Long.parseLong(text);
  }

  private static long crc(String body) {
    CRC32C crc = new CRC32C();
    crc.update(body.getBytes(StandardCharsets.UTF_8));
    return crc.getValue();
  }

  void write(Path dir) throws IOException {
    AtomicWrite.write(dir.resolve(DataDirectory.MANIFEST), text().getBytes(StandardCharsets.UTF_8));
  }

  /** Reads {@code dir}'s manifest; {@code null} if there is none. */
  static Manifest read(Path dir) throws IOException {
    Path file = dir.resolve(DataDirectory.MANIFEST);
    if (!Files.exists(file)) {
      return null;
    }
    long size = Files.size(file);
    if (size > 4096) {
      throw new PersistenceCorruptionException(file, 0, "manifest of " + size + " bytes, expected a few lines");
    }
    return parse(file, new String(Files.readAllBytes(file), StandardCharsets.UTF_8));
  }

  static Manifest parse(Path file, String text) throws PersistenceCorruptionException {
    String[] lines = text.split("\n", -1);
    int version = lines[0].equals(HEADER_1) ? 1 : lines[0].equals(HEADER_2) ? 2 : 3;
    int expected = version + 3;
    if (lines.length != expected + 1 || !lines[expected].isEmpty()) {
      throw new PersistenceCorruptionException(file, 0, "manifest: expected " + expected + " lines, found " + (lines.length - 1));
    }
    long offset = 0;
    expect(file, offset, version < 3 || lines[0].equals(HEADER),
        "manifest: first line must be '" + HEADER + "', found '" + lines[0] + "'");
    offset += lines[0].length() + 1;
    int line = 1;
    expect(file, offset, lines[line].startsWith("snapshot "), "manifest: expected 'snapshot NAME|none'");
    String snapshotName = lines[line].substring("snapshot ".length());
    expect(file, offset, snapshotName.equals("none") || snapshotName.matches("snapshot\\.\\d{10}\\.snap"),
        "manifest: not a snapshot name: '" + snapshotName + "'");
    offset += lines[line++].length() + 1;
    expect(file, offset, lines[line].matches("first-segment \\d{1,18}"), "manifest: expected 'first-segment N'");
    long first = Long.parseLong(lines[line].substring("first-segment ".length()));
    expect(file, offset, first >= 1, "manifest: first-segment must be at least 1");
    offset += lines[line++].length() + 1;
    long firstSequence = 0;
    if (version >= 3) {
      expect(file, offset, lines[line].matches("first-sequence (-|[1-9]\\d{0,17})"),
          "manifest: expected 'first-sequence N|-'");
      firstSequence = sequenceValue(lines[line].substring("first-sequence ".length()));
      offset += lines[line++].length() + 1;
    }
    Manifest previous = null;
    if (version >= 2) {
      String state = "(none|snapshot\\.\\d{10}\\.snap) \\d{1,18}" + (version >= 3 ? " (-|[1-9]\\d{0,17})" : "");
      expect(file, offset, lines[line].matches("previous (-|" + state + ")"),
          "manifest: expected 'previous -' or 'previous NAME|none N" + (version >= 3 ? " S" : "") + "'");
      String[] words = lines[line].split(" ");
      if (words.length > 2) {
        previous = new Manifest(words[1].equals("none") ? null : words[1], Long.parseLong(words[2]),
            version >= 3 ? sequenceValue(words[3]) : 0);
        expect(file, offset, previous.firstSegment >= 1 && previous.firstSegment <= first,
            "manifest: the previous first segment must lie between 1 and first-segment");
      }
      offset += lines[line++].length() + 1;
    }
    String body = String.join("\n", Arrays.copyOf(lines, expected - 1)) + "\n";
    String crcLine = String.format(Locale.ROOT, "crc32c %08X", crc(body));
    expect(file, offset, lines[expected - 1].equals(crcLine),
        "manifest checksum: expected '" + crcLine + "', found '" + lines[expected - 1] + "'");
    return new Manifest(snapshotName.equals("none") ? null : snapshotName, first, firstSequence, previous);
  }

  private static void expect(Path file, long offset, boolean ok, String problem) throws PersistenceCorruptionException {
    if (!ok) {
      throw new PersistenceCorruptionException(file, offset, problem);
    }
  }
}
