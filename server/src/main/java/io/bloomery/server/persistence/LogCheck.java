package io.bloomery.server.persistence;

import io.bloomery.format.AtomicWrite;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
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

  /**
   * How a journal record names a file {@code BF.LOADCHUNK} loaded into {@code loads/}: the record's last
   * argument is this prefix and the file's name.
   */
  public static final String LOADED_FILE_MARKER = "BLOOMERY-LOADED-FILE:";

  private LogCheck() {}

  /**
   * Checks {@code dir} without changing it. While a running server holds the directory's {@code LOCK}, the
   * files are still checked but the report ends by saying the directory is in use and is not
   * {@link Report#startable() startable}: a second server is refused there.
   */
  public static Report check(Path dir) throws IOException {
    Path lockFile = dir.resolve(DataDirectory.LOCK);
    boolean inUse = false;
    if (Files.exists(lockFile)) {
      try (FileChannel channel = FileChannel.open(lockFile, StandardOpenOption.READ);
          FileLock lock = tryLock(channel, true)) {
        inUse = lock == null;
      }
    }
    Report report = run(dir, false);
    if (!inUse) {
      return report;
    }
    List<String> lines = new ArrayList<>(report.lines().subList(0, report.lines().size() - 1));
    lines.add("in use: a running server holds " + dir + " (its LOCK file is locked), so a second server is refused;"
        + " the files above were read while it writes them");
    return new Report(lines, false, false);
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
    try (FileChannel channel = FileChannel.open(lockFile, StandardOpenOption.WRITE);
        FileLock lock = tryLock(channel, false)) {
      if (lock == null) {
        throw new IOException(dir + " is in use by a running server; stop it before --fix");
      }
      return run(dir, true);
    }
  }

  /**
   * The lock a server holds on the {@code LOCK} file while it runs, taken here ({@code shared} needs only a
   * readable channel); null while a server, in this process or another, holds it.
   */
  private static FileLock tryLock(FileChannel channel, boolean shared) throws IOException {
    try {
      return channel.tryLock(0, Long.MAX_VALUE, shared);
    } catch (OverlappingFileLockException e) {
      return null;
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
        + ", journal from segment " + manifest.firstSegment() + (manifest.previous() == null ? ""
            : "; previous: snapshot " + (manifest.previous().snapshot() == null ? "none" : manifest.previous().snapshot())
            + ", journal from segment " + manifest.previous().firstSegment()) + ")");
    boolean changed = false;
    boolean startable = true;
    boolean lost = false;
    if (manifest.snapshot() != null) {
      SnapshotState state = checkSnapshot(dir, manifest.snapshot(), lines);
      if (state.damaged()) {
        String fallback = fallbackProblem(dir, manifest, segments);
        if (fallback == null) {
          lines.add(manifest.snapshot() + ": --fix falls back to the previous state: snapshot "
              + (manifest.previous().snapshot() == null ? "none" : manifest.previous().snapshot())
              + " and the journal from segment " + manifest.previous().firstSegment() + " (nothing lost)");
        } else if (state.summary() != null) {
          lines.add(manifest.snapshot() + ": no fallback (" + fallback + "); --fix skips the damaged "
              + (state.summary().damaged().size() == 1 ? "entry" : "entries") + " named above");
        } else {
          lines.add(manifest.snapshot() + ": not repairable: no fallback (" + fallback + ") and the damage cannot be"
              + " skipped key by key");
          return new Report(lines, false, false);
        }
        if (!fix) {
          startable = false;
        } else {
          Path snapshot = dir.resolve(manifest.snapshot());
          Path aside = snapshot.resolveSibling(snapshot.getFileName() + ".damaged-" + System.currentTimeMillis());
          Files.move(snapshot, aside);
          if (fallback == null) {
            manifest = manifest.previous();
            manifest.write(dir);
            lines.add("MANIFEST: now snapshot " + (manifest.snapshot() == null ? "none" : manifest.snapshot())
                + ", journal from segment " + manifest.firstSegment() + "; the damaged snapshot is kept as "
                + aside.getFileName());
          } else {
            long size = SnapshotFormat.copyWithoutDamage(aside, state.summary(), snapshot);
            lines.add(manifest.snapshot() + ": rewritten without the damaged entries (" + count(state.summary().keys(), "key")
                + ", " + count(size, "byte") + "); the damaged file is kept as " + aside.getFileName());
            lost = true;
          }
          changed = true;
        }
      }
    }
    Map<Long, Path> live = segments.tailMap(manifest.firstSegment(), true);
    SyncMark mark = SyncMark.read(dir);
    long expected = manifest.firstSegment();
    long last = live.isEmpty() ? -1 : segments.lastKey();
    long sequence = 0;
    long previous = Recovery.firstPreviousSequence(manifest);
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
      JournalFormat.Scan scan = Recovery.numbered(JournalFormat.scan(file, number, previous, (offset, argv) -> {}),
          number, previous, segments);
      sequence = Math.max(sequence, scan.lastSequence());
      previous = JournalFormat.sequenceAfter(scan, previous);
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
          lost = true;
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
    lines.add(startable ? (changed ? "fixed: the server starts on this directory"
        + (lost ? " without what is named above" : "") : "ok: the server starts on this directory")
        : "not valid: run with --fix to repair it as said above");
    return new Report(lines, startable, changed);
  }

  /**
   * A snapshot as checked: {@code damaged} if it is missing or does not read whole; {@code summary} lists its
   * damaged entries when they can be skipped (version 2 with a good file header), else {@code null}.
   */
  private record SnapshotState(boolean damaged, SnapshotFormat.Summary summary) {}

  private static SnapshotState checkSnapshot(Path dir, String name, List<String> lines) throws IOException {
    Path snapshot = dir.resolve(name);
    if (!Files.exists(snapshot)) {
      lines.add(name + ": missing");
      return new SnapshotState(true, null);
    }
    try {
      SnapshotFormat.Summary summary = SnapshotFormat.readSkippingDamage(snapshot, (key, value, expireAt) -> {});
      if (summary.damaged().isEmpty()) {
        lines.add(name + ": ok, " + count(summary.keys(), "key") + ", " + count(summary.bytes(), "byte"));
        return new SnapshotState(false, summary);
      }
      for (SnapshotFormat.Damaged entry : summary.damaged()) {
        lines.add(name + ": damaged at offset " + entry.offset() + " (" + count(entry.end() - entry.offset(), "byte")
            + "): key " + entry.name() + ": " + entry.problem());
      }
      lines.add(name + ": " + count(summary.keys(), "good key") + " around " + count(summary.damaged().size(), "damaged entry"));
      return new SnapshotState(true, summary);
    } catch (PersistenceCorruptionException e) {
      lines.add(e.getMessage());
      return new SnapshotState(true, null);
    }
  }

  /**
   * Why the state before {@code manifest}'s snapshot cannot stand in for it, or {@code null} if it can: its
   * snapshot reads whole, and its journal segments up to the current ones are all there, read whole, and name
   * only loaded files ({@code BF.LOADCHUNK}) that still exist.
   */
  private static String fallbackProblem(Path dir, Manifest manifest, TreeMap<Long, Path> segments) throws IOException {
    Manifest previous = manifest.previous();
    if (previous == null) {
      return "the manifest keeps no previous state";
    }
    if (previous.snapshot() != null) {
      Path snapshot = dir.resolve(previous.snapshot());
      if (!Files.exists(snapshot)) {
        return previous.snapshot() + " is missing";
      }
      try {
        SnapshotFormat.Summary summary = SnapshotFormat.readSkippingDamage(snapshot, (key, value, expireAt) -> {});
        if (!summary.damaged().isEmpty()) {
          return previous.snapshot() + " is damaged too";
        }
      } catch (PersistenceCorruptionException e) {
        return previous.snapshot() + " is damaged too";
      }
    }
    for (long number = previous.firstSegment(); number < manifest.firstSegment(); number++) {
      Path segment = segments.get(number);
      if (segment == null) {
        return DataDirectory.segmentName(number) + " is missing";
      }
      List<String> missing = new ArrayList<>();
      JournalFormat.Scan scan = JournalFormat.scan(segment, number, 0, (offset, argv) -> {
        String loaded = loadedFile(argv);
        if (loaded != null && !Files.exists(dir.resolve("loads").resolve(loaded))) {
          missing.add(loaded);
        }
      });
      if (!scan.clean()) {
        return DataDirectory.segmentName(number) + " is damaged";
      }
      if (!missing.isEmpty()) {
        return DataDirectory.segmentName(number) + " names loaded files already deleted: " + String.join(", ", missing);
      }
    }
    return null;
  }

  /** The file a {@code BF.LOADCHUNK key 0 BLOOMERY-LOADED-FILE:N.blmf} record names, else {@code null}. */
  private static String loadedFile(List<byte[]> argv) {
    if (argv.size() != 4 || !new String(argv.get(0), StandardCharsets.US_ASCII).equalsIgnoreCase("BF.LOADCHUNK")) {
      return null;
    }
    String last = new String(argv.get(3), StandardCharsets.UTF_8);
    return last.startsWith(LOADED_FILE_MARKER) ? last.substring(LOADED_FILE_MARKER.length()) : null;
  }

  /** "1 record", "3 records": a count with its noun in the right number. */
  private static String count(long n, String noun) {
    return n + " " + noun + (n == 1 ? "" : "s");
  }
}
