package io.bloomery.server.persistence;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The file names in a data directory and the file-system steps that make them durable.
 *
 * <ul>
 *   <li>{@code MANIFEST}: which snapshot and which journal segments make the current state
 *       ({@link Manifest});
 *   <li>{@code journal.NNNNNNNNNN.log}: journal segments ({@link JournalFormat}), numbered upwards;
 *   <li>{@code snapshot.NNNNNNNNNN.snap}: snapshots ({@link SnapshotFormat}); N is the first segment
 *       whose records come after the snapshot's cut;
 *   <li>{@code LOCK}: held with an OS file lock while a server uses the directory;
 *   <li>{@code journal.reserve}: allocated space the journal falls back on when the disk fills up, never read;
 *   <li>{@code SYNCED}: how far the journal is known forced to disk ({@link SyncMark});
 *   <li>names starting with {@code .} and ending in {@code .tmp}: files being written, never read.
 * </ul>
 */
final class DataDirectory {
  static final String MANIFEST = "MANIFEST";
  static final String LOCK = "LOCK";
  static final String RESERVE = "journal.reserve";
  private static final Pattern SEGMENT = Pattern.compile("journal\\.(\\d{10})\\.log");
  private static final Pattern SNAPSHOT = Pattern.compile("snapshot\\.(\\d{10})\\.snap");
  private static final Pattern TEMPORARY = Pattern.compile("\\..*\\.tmp");

  private DataDirectory() {}

  static String segmentName(long number) {
    return String.format(Locale.ROOT, "journal.%010d.log", number);
  }

  static String snapshotName(long number) {
    return String.format(Locale.ROOT, "snapshot.%010d.snap", number);
  }

  /** The journal segments in {@code dir}, by number. */
  static TreeMap<Long, Path> segments(Path dir) throws IOException {
    return numbered(dir, SEGMENT);
  }

  /** The snapshot files in {@code dir}, by number. */
  static TreeMap<Long, Path> snapshots(Path dir) throws IOException {
    return numbered(dir, SNAPSHOT);
  }

  /**
   * Deletes what {@code current} no longer needs: the segments before its first kept one, and every snapshot
   * other than its own and its previous one's. The previous state stays on disk until the next snapshot
   * replaces this manifest, as a fallback for a snapshot damaged after it was written.
   */
  static void deleteRetired(Path dir, Manifest current) throws IOException {
    for (Path old : segments(dir).headMap(current.firstKeptSegment(), false).values()) {
      Files.deleteIfExists(old);
    }
    String previous = current.previous() == null ? null : current.previous().snapshot();
    for (Path snapshot : snapshots(dir).values()) {
      String name = snapshot.getFileName().toString();
      if (!name.equals(current.snapshot()) && !name.equals(previous)) {
        Files.deleteIfExists(snapshot);
      }
    }
  }

  /** Files left behind by writes a crash interrupted. */
  static List<Path> temporaries(Path dir) throws IOException {
    List<Path> found = new ArrayList<>();
    try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir)) {
      for (Path entry : entries) {
        if (TEMPORARY.matcher(entry.getFileName().toString()).matches()) {
          found.add(entry);
        }
      }
    }
    return found;
  }

  private static TreeMap<Long, Path> numbered(Path dir, Pattern pattern) throws IOException {
    TreeMap<Long, Path> found = new TreeMap<>();
    try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir)) {
      for (Path entry : entries) {
        Matcher m = pattern.matcher(entry.getFileName().toString());
        if (m.matches()) {
          found.put(Long.parseLong(m.group(1)), entry);
        }
      }
    }
    return found;
  }
}
