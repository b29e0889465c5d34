package io.bloomery.server.persistence;

import io.bloomery.format.AtomicWrite;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * {@code bloomery check-log [--fix] DIR}, the counterpart of {@code redis-check-aof}: checks a data
 * directory's manifest, snapshot and journal segments, and with {@code fix} cuts the journal at its last
 * good record so the server starts again.
 *
 * <p>A fix never deletes: the bytes cut from the damaged segment are copied to
 * {@code journal.N.log.cut-<millis>} first, and whole segments after the damage are renamed the same way,
 * so an operator can inspect or restore them. A damaged manifest or snapshot cannot be repaired by
 * cutting the journal; the check says so and changes nothing.
 */
public final class LogCheck {

  /**
   * The outcome.
   *
   * @param lines what was checked and found, one line each, for the operator
   * @param startable whether the server would start on the directory as it now is
   * @param changed whether {@code fix} changed anything
   */
  public record Report(List<String> lines, boolean startable, boolean changed) {}

  private LogCheck() {}

  /** Checks {@code dir} without changing it. */
  public static Report check(Path dir) throws IOException {
    return run(dir, false);
  }

  /**
   * Checks {@code dir} and cuts the journal at the last good record before any damage, keeping a copy
   * of everything cut. Refuses while a server holds the directory.
   */
  public static Report fix(Path dir) throws IOException {
    Path lockFile = dir.resolve(DataDirectory.LOCK);
    if (!Files.exists(lockFile)) {
      return run(dir, true);
    }
    try (FileChannel channel = FileChannel.open(lockFile, StandardOpenOption.WRITE)) {
      FileLock lock;
      try {
        lock = channel.tryLock();
      } catch (OverlappingFileLockException e) {
        lock = null;
      }
      if (lock == null) {
        throw new IOException(dir + " is in use by a running server; stop it before --fix");
      }
      try {
        return run(dir, true);
      } finally {
        lock.release();
      }
    }
  }

  private static Report run(Path dir, boolean fix) throws IOException {
    List<String> lines = new ArrayList<>();
    if (!Files.isDirectory(dir)) {
      throw new IOException(dir + " is not a directory");
    }
    Manifest manifest;
    try {
      manifest = Manifest.read(dir);
    } catch (PersistenceCorruptionException e) {
      lines.add("MANIFEST: " + e.getMessage() + " (not repairable by cutting the journal)");
      return new Report(lines, false, false);
    }
    TreeMap<Long, Path> segments = DataDirectory.segments(dir);
    if (manifest == null) {
      if (segments.isEmpty() && DataDirectory.snapshots(dir).isEmpty()) {
        lines.add("no persistence files in " + dir + " (a server starts empty here)");
        return new Report(lines, true, false);
      }
      lines.add("MANIFEST: missing while journal or snapshot files exist (not repairable by cutting the journal)");
      return new Report(lines, false, false);
    }
    lines.add("MANIFEST: ok (snapshot " + (manifest.snapshot() == null ? "none" : manifest.snapshot())
        + ", journal from segment " + manifest.firstSegment() + ")");
    if (manifest.snapshot() != null) {
      Path snapshot = dir.resolve(manifest.snapshot());
      try {
        if (!Files.exists(snapshot)) {
          lines.add(manifest.snapshot() + ": missing (not repairable by cutting the journal)");
          return new Report(lines, false, false);
        }
        SnapshotFormat.Summary summary = SnapshotFormat.read(snapshot, (key, value, expireAt) -> {});
        lines.add(manifest.snapshot() + ": ok, " + count(summary.keys(), "key") + ", "
            + count(summary.bytes(), "byte"));
      } catch (PersistenceCorruptionException e) {
        lines.add(e.getMessage() + " (not repairable by cutting the journal)");
        return new Report(lines, false, false);
      }
    }
    Map<Long, Path> live = segments.tailMap(manifest.firstSegment(), true);
    SyncMark mark = SyncMark.read(dir);
    long expected = manifest.firstSegment();
    long last = live.isEmpty() ? -1 : segments.lastKey();
    long sequence = 0;
    boolean changed = false;
    boolean startable = true;
    boolean broken = false;
    List<Path> later = new ArrayList<>();
    for (Map.Entry<Long, Path> entry : live.entrySet()) {
      Path file = entry.getValue();
      long number = entry.getKey();
      String name = file.getFileName().toString();
      if (!broken && number != expected) {
        lines.add(DataDirectory.segmentName(expected) + ": missing; the segments after it cannot be applied");
        startable = false;
        broken = true;
      }
      if (broken) {
        later.add(file);
        continue;
      }
      expected++;
      JournalFormat.Scan scan = JournalFormat.scan(file, number, sequence, (offset, argv) -> {});
      sequence = Math.max(sequence, scan.lastSequence());
      String numbered = scan.lastSequence() > 0 ? " (to record " + scan.lastSequence() + ")" : "";
      if (scan.clean()) {
        lines.add(name + ": ok, " + count(scan.records(), "record") + numbered + ", " + count(scan.fileSize(), "byte"));
        continue;
      }
      boolean newest = number == last || Recovery.onlyEmptySegmentsAfter(live, number);
      long damagedBytes = 0;
      for (JournalFormat.Damage damage : scan.damages()) {
        String refusal = Recovery.refusal(damage, newest, mark.covers(number, damage.offset()));
        damagedBytes += damage.length();
        if (refusal == null) {
          lines.add(name + ": " + (damage.zeros() ? "unused zero bytes" : "torn write") + " at offset " + damage.offset()
              + ": " + Recovery.describe(damage) + "; never forced to disk, the server cuts it at start");
        } else {
          lines.add(name + ": damaged at offset " + damage.offset() + ": " + Recovery.describe(damage) + "; " + refusal);
          startable = false;
        }
      }
      lines.add(name + ": " + count(scan.records(), "good record") + numbered + " kept around "
          + count(scan.damages().size(), "damaged region") + " (" + count(damagedBytes, "byte") + " of "
          + count(scan.fileSize(), "byte") + ")");
      if (fix) {
        List<String> kept = new ArrayList<>();
        for (JournalFormat.Damage damage : scan.damages()) {
          if (damage.offset() < damage.end()) {
            kept.add(Recovery.keepCopy(file, damage.offset(), damage.end(), "cut-at-" + damage.offset())
                .getFileName().toString());
          }
        }
        long size = JournalFormat.removeRegions(file, number, scan.damages());
        lines.add(name + ": removed the damaged bytes, now " + count(size, "byte") + "; what was removed is kept in "
            + String.join(", ", kept));
        changed = true;
      }
    }
    for (Path segment : later) {
      if (fix) {
        Path kept = segment.resolveSibling(segment.getFileName() + ".cut-" + System.currentTimeMillis());
        Files.move(segment, kept);
        lines.add(segment.getFileName() + ": follows a missing segment; moved aside to " + kept.getFileName());
        changed = true;
      } else {
        lines.add(segment.getFileName() + ": follows a missing segment; --fix moves it aside");
        startable = false;
      }
    }
    if (changed) {
      AtomicWrite.forceDirectory(dir);
      if (last >= 0 && Files.exists(live.get(last))) {
        // The rewritten segments are forced; the mark now covers exactly what they hold.
        new SyncMark(last, Files.size(live.get(last)), Math.max(sequence, mark.sequence())).writeForced(dir);
      }
      startable = true;
    }
    lines.add(startable ? (changed ? "fixed: the server starts on this directory without the records named above"
        : "ok: the server starts on this directory")
        : "not valid: run with --fix to remove the damaged bytes (the good records around them are kept)");
    return new Report(lines, startable, changed);
  }

  /** "1 record", "3 records": a count with its noun in the right number. */
  private static String count(long n, String noun) {
    return n + " " + noun + (n == 1 ? "" : "s");
  }
}
