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
 * bloomery-manifest 2
 * snapshot snapshot.0000000007.snap
 * first-segment 7
 * previous snapshot.0000000004.snap 4
 * crc32c 8A3F0C12
 * </pre>
 *
 * <p>{@code snapshot none} means the state starts empty. {@code previous NAME|none N} is the manifest that
 * was in force before this one's snapshot was taken (its snapshot and first segment: that snapshot plus
 * the segments from N on reproduce the current state too); {@code previous -} means none is kept. The last
 * line is the CRC-32C (hex, upper case) of every byte before it. Version 1 (the same without the {@code
 * previous} line) is still read.
 *
 * @param snapshot the snapshot's file name, or {@code null} for none
 * @param firstSegment the first journal segment after the snapshot's cut
 * @param previous the state before this snapshot (its own {@code previous} is {@code null}), or {@code null}
 */
record Manifest(String snapshot, long firstSegment, Manifest previous) {
  private static final String HEADER = "bloomery-manifest 2";
  private static final String HEADER_1 = "bloomery-manifest 1";

  /** A fresh directory: no snapshot, journal from segment 1. */
  static final Manifest EMPTY = new Manifest(null, 1);

  Manifest(String snapshot, long firstSegment) {
    this(snapshot, firstSegment, null);
  }

  /** The manifest of a new snapshot taken while this one was in force: this one becomes its previous. */
  Manifest successor(String nextSnapshot, long nextFirstSegment) {
    return new Manifest(nextSnapshot, nextFirstSegment, new Manifest(snapshot, firstSegment));
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
        + "previous " + (previous == null ? "-"
            : (previous.snapshot == null ? "none" : previous.snapshot) + " " + previous.firstSegment) + "\n";
    return body + String.format(Locale.ROOT, "crc32c %08X%n", crc(body));
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
    boolean version1 = lines[0].equals(HEADER_1);
    int expected = version1 ? 4 : 5;
    if (lines.length != expected + 1 || !lines[expected].isEmpty()) {
      throw new PersistenceCorruptionException(file, 0, "manifest: expected " + expected + " lines, found " + (lines.length - 1));
    }
    long offset = 0;
    expect(file, offset, version1 || lines[0].equals(HEADER),
        "manifest: first line must be '" + HEADER + "', found '" + lines[0] + "'");
    offset += lines[0].length() + 1;
    expect(file, offset, lines[1].startsWith("snapshot "), "manifest: expected 'snapshot NAME|none'");
    String snapshotName = lines[1].substring("snapshot ".length());
    expect(file, offset, snapshotName.equals("none") || snapshotName.matches("snapshot\\.\\d{10}\\.snap"),
        "manifest: not a snapshot name: '" + snapshotName + "'");
    offset += lines[1].length() + 1;
    expect(file, offset, lines[2].matches("first-segment \\d{1,18}"), "manifest: expected 'first-segment N'");
    long first = Long.parseLong(lines[2].substring("first-segment ".length()));
    expect(file, offset, first >= 1, "manifest: first-segment must be at least 1");
    offset += lines[2].length() + 1;
    Manifest previous = null;
    if (!version1) {
      expect(file, offset, lines[3].matches("previous (-|(none|snapshot\\.\\d{10}\\.snap) \\d{1,18})"),
          "manifest: expected 'previous -' or 'previous NAME|none N'");
      String[] words = lines[3].split(" ");
      if (words.length == 3) {
        previous = new Manifest(words[1].equals("none") ? null : words[1], Long.parseLong(words[2]));
        expect(file, offset, previous.firstSegment >= 1 && previous.firstSegment <= first,
            "manifest: the previous first segment must lie between 1 and first-segment");
      }
      offset += lines[3].length() + 1;
    }
    String body = String.join("\n", Arrays.copyOf(lines, expected - 1)) + "\n";
    String crcLine = String.format(Locale.ROOT, "crc32c %08X", crc(body));
    expect(file, offset, lines[expected - 1].equals(crcLine),
        "manifest checksum: expected '" + crcLine + "', found '" + lines[expected - 1] + "'");
    return new Manifest(snapshotName.equals("none") ? null : snapshotName, first, previous);
  }

  private static void expect(Path file, long offset, boolean ok, String problem) throws PersistenceCorruptionException {
    if (!ok) {
      throw new PersistenceCorruptionException(file, offset, problem);
    }
  }
}
