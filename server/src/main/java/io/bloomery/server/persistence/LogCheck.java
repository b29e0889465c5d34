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
    long expected = manifest.firstSegment();
    long last = live.isEmpty() ? -1 : segments.lastKey();
    boolean changed = false;
    boolean startable = true;
    boolean broken = false;
    List<Path> later = new ArrayList<>();
    for (Map.Entry<Long, Path> entry : live.entrySet()) {
      Path file = entry.getValue();
      String name = file.getFileName().toString();
      if (!broken && entry.getKey() != expected) {
        lines.add(DataDirectory.segmentName(expected) + ": missing; the segments after it cannot be applied");
        startable = false;
        broken = true;
      }
      if (broken) {
        later.add(file);
        continue;
      }
      expected++;
      JournalFormat.Scan scan = JournalFormat.scan(file, entry.getKey(), (offset, argv) -> {});
      if (scan.clean()) {
        lines.add(name + ": ok, " + count(scan.records(), "record") + ", " + count(scan.fileSize(), "byte"));
        continue;
      }
      JournalFormat.Damage damage = scan.damage();
      boolean tolerated = damage.tornTail()
          && (entry.getKey() == last || Recovery.onlyEmptySegmentsAfter(live, entry.getKey()));
      // The scan stops at the bad record, so the cut point (the end of the last good record) is its offset.
      long cut = scan.fileSize() - scan.goodEnd();
      lines.add(name + ": " + (tolerated ? "torn last record" : "damaged") + " at offset " + damage.offset() + ": "
          + damage.problem() + "; " + count(scan.records(), "good record") + " before it; a cut there removes "
          + count(cut, "byte") + ", from offset " + scan.goodEnd() + " to the end of the file ("
          + count(scan.fileSize(), "byte") + ")"
          + (tolerated ? "; the server trims it at start" : ""));
      startable &= tolerated;
      broken = !tolerated;
      if (fix) {
        Path kept = Recovery.keepCopy(file, scan.goodEnd(), "cut");
        JournalFormat.cutAfterGoodRecords(file, scan.goodEnd(), entry.getKey());
        lines.add(name + ": truncated to " + Math.max(scan.goodEnd(), JournalFormat.HEADER_LENGTH)
            + " bytes; what was cut (" + count(cut, "byte") + ") is kept in " + kept.getFileName());
        changed = true;
      }
    }
    for (Path segment : later) {
      if (fix) {
        Path kept = segment.resolveSibling(segment.getFileName() + ".cut-" + System.currentTimeMillis());
        Files.move(segment, kept);
        lines.add(segment.getFileName() + ": follows the damage; moved aside to " + kept.getFileName());
        changed = true;
      } else {
        lines.add(segment.getFileName() + ": follows the damage; --fix moves it aside");
        startable = false;
      }
    }
    if (changed) {
      AtomicWrite.forceDirectory(dir);
      startable = true;
    }
    lines.add(startable ? (changed ? "fixed: the server starts from the last good record"
        : "ok: the server starts on this directory") : "not valid: run with --fix to cut the journal at the last good record");
    return new Report(lines, startable, changed);
  }

  /** "1 record", "3 records": a count with its noun in the right number. */
  private static String count(long n, String noun) {
    return n + " " + noun + (n == 1 ? "" : "s");
  }
}
