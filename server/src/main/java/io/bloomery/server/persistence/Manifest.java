package io.bloomery.server.persistence;

import io.bloomery.format.AtomicWrite;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.zip.CRC32C;

/**
 * Which files make the current state: one snapshot (or none) plus every journal segment numbered from
 * {@link #firstSegment()} on, replayed in order. Stored as the text file {@code MANIFEST}, replaced
 * atomically (temp, fsync, rename, fsync of the directory), so a reader sees the old manifest or the new
 * one, never a mixture:
 *
 * <pre>
 * bloomery-manifest 1
 * snapshot snapshot.0000000007.snap
 * first-segment 7
 * crc32c 8A3F0C12
 * </pre>
 *
 * <p>{@code snapshot none} means the state starts empty. The last line is the CRC-32C (hex, upper case)
 * of every byte before it.
 *
 * @param snapshot the snapshot's file name, or {@code null} for none
 * @param firstSegment the first journal segment after the snapshot's cut
 */
record Manifest(String snapshot, long firstSegment) {
  private static final String HEADER = "bloomery-manifest 1";

  /** A fresh directory: no snapshot, journal from segment 1. */
  static final Manifest EMPTY = new Manifest(null, 1);

  String text() {
    String body = HEADER + "\n"
        + "snapshot " + (snapshot == null ? "none" : snapshot) + "\n"
        + "first-segment " + firstSegment + "\n";
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
    if (lines.length != 5 || !lines[4].isEmpty()) {
      throw new PersistenceCorruptionException(file, 0, "manifest: expected 4 lines, found " + (lines.length - 1));
    }
    long offset = 0;
    expect(file, offset, lines[0].equals(HEADER), "manifest: first line must be '" + HEADER + "', found '" + lines[0] + "'");
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
    String body = lines[0] + "\n" + lines[1] + "\n" + lines[2] + "\n";
    String expected = String.format(Locale.ROOT, "crc32c %08X", crc(body));
    expect(file, offset, lines[3].equals(expected), "manifest checksum: expected '" + expected + "', found '" + lines[3] + "'");
    return new Manifest(snapshotName.equals("none") ? null : snapshotName, first);
  }

  private static void expect(Path file, long offset, boolean ok, String problem) throws PersistenceCorruptionException {
    if (!ok) {
      throw new PersistenceCorruptionException(file, offset, problem);
    }
  }
}
