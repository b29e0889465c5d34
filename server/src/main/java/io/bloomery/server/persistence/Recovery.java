package io.bloomery.server.persistence;

import io.bloomery.format.AtomicWrite;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Restart: the manifest's snapshot into the keyspace, then every journal segment from the manifest's
 * first one, in order, through the replayer. The end of the newest segment is cut off when it holds only
 * bytes that were never forced ({@link SyncMark}): zeros quietly (unused space), anything else with a
 * warning and a copy of the cut bytes kept next to it (a torn write). Any other damage, and in particular
 * damage of forced (acknowledged) records, refuses the start with the file, the offset and the sequence
 * numbers of the records lost, pointing to {@code bloomery check-log --fix}.
 */
final class Recovery {
  private static final Logger LOG = LoggerFactory.getLogger(Recovery.class);

  /**
   * What recovery found.
   *
   * @param manifest the manifest in force
   * @param lastSegment the newest live segment, or {@code -1} if the manifest's first one does not exist
   * @param olderSegmentBytes bytes of the live segments before {@code lastSegment}
   * @param snapshotBytes the size of the manifest's snapshot file, 0 if none
   * @param nextSequence the sequence number the next journal record gets
   */
  record Result(Manifest manifest, long lastSegment, long olderSegmentBytes, long keys, long records,
      long snapshotBytes, long snapshotCutMillis, long trimmedBytes, long highestNumber, long nextSequence) {}

  private Recovery() {}

  /** A log line every few seconds while a long load runs, so an operator sees a large snapshot advance. */
  private static final class LoadProgress {
    private static final long EVERY_NANOS = 5_000_000_000L;
    private final String message;
    private long count;
    private long next = System.nanoTime() + EVERY_NANOS;

    LoadProgress(String message) {
      this.message = message;
    }

    void step() {
      count++;
      if (System.nanoTime() - next >= 0) {
        next = System.nanoTime() + EVERY_NANOS;
        LOG.info(message, count);
      }
    }
  }

  static Result run(Path dir, KeyLoader loader, CommandReplayer replayer) throws IOException {
    Manifest manifest = Manifest.read(dir);
    TreeMap<Long, Path> segments = DataDirectory.segments(dir);
    TreeMap<Long, Path> snapshots = DataDirectory.snapshots(dir);
    long highest = Math.max(segments.isEmpty() ? 0 : segments.lastKey(), snapshots.isEmpty() ? 0 : snapshots.lastKey());
    if (manifest == null) {
      if (!segments.isEmpty() || !snapshots.isEmpty()) {
        throw new PersistenceCorruptionException(dir.resolve(DataDirectory.MANIFEST), 0,
            "missing, but " + dir + " holds journal or snapshot files; refusing to guess which of them make the"
                + " current state (restore the MANIFEST, or move the files away to start empty)");
      }
      manifest = Manifest.EMPTY;
      manifest.write(dir);
    }
    long keys = 0;
    long snapshotBytes = 0;
    long cutMillis = 0;
    if (manifest.snapshot() != null) {
      Path snapshot = dir.resolve(manifest.snapshot());
      if (!Files.exists(snapshot)) {
        throw new PersistenceCorruptionException(dir.resolve(DataDirectory.MANIFEST), 0,
            "names snapshot " + manifest.snapshot() + ", which does not exist");
      }
      long size = Files.size(snapshot);
      LOG.info("loading {} ({} bytes)", manifest.snapshot(), size);
      LoadProgress progress = new LoadProgress("loading " + manifest.snapshot() + ": {} keys so far");
      SnapshotFormat.Summary summary;
      try {
        summary = SnapshotFormat.read(snapshot, (key, value, expireAtMillis) -> {
          loader.load(key, value, expireAtMillis);
          progress.step();
        });
      } catch (PersistenceCorruptionException e) {
        throw new PersistenceCorruptionException(e.file(), e.offset(), e.problem() + "; refusing to start. `bloomery"
            + " check-log --fix " + dir + "` falls back to the previous snapshot and the journal after it if they read"
            + " whole, or else rewrites this snapshot without the damaged keys and names them", e);
      }
      if (summary.firstSegment() != manifest.firstSegment()) {
        throw new PersistenceCorruptionException(snapshot, 16, "snapshot was cut before segment " + summary.firstSegment()
            + ", the manifest says " + manifest.firstSegment());
      }
      keys = summary.keys();
      snapshotBytes = summary.bytes();
      cutMillis = summary.cutMillis();
      LOG.info("loaded {} keys from {} ({} bytes)", keys, manifest.snapshot(), snapshotBytes);
    }
    Map<Long, Path> live = segments.tailMap(manifest.firstSegment(), true);
    long expected = manifest.firstSegment();
    for (long number : live.keySet()) {
      if (number != expected) {
        throw new PersistenceCorruptionException(dir.resolve(DataDirectory.segmentName(expected)), 0,
            "journal segment missing (segments from " + manifest.firstSegment() + " on must be contiguous; found "
                + live.keySet() + ")");
      }
      expected++;
    }
    SyncMark mark = SyncMark.read(dir);
    long records = 0;
    long trimmed = 0;
    long sequence = 0;
    long previous = firstPreviousSequence(manifest);
    long last = live.isEmpty() ? -1 : segments.lastKey();
    LoadProgress replayed = new LoadProgress("replaying the journal: {} records so far");
    for (Map.Entry<Long, Path> segment : live.entrySet()) {
      Path file = segment.getValue();
      JournalFormat.Scan scan = numbered(JournalFormat.scan(file, segment.getKey(), previous, (offset, argv) -> {
        replay(replayer, file, offset, argv);
        replayed.step();
      }), segment.getKey(), previous, segments);
      records += scan.records();
      sequence = Math.max(sequence, scan.lastSequence());
      previous = JournalFormat.sequenceAfter(scan, previous);
      // A crash while a rewrite was creating the next segment leaves segments after this one that hold no
      // record yet; this one was still the one being appended to, so it may be torn like the newest.
      boolean newest = segment.getKey() == last || onlyEmptySegmentsAfter(live, segment.getKey());
      List<JournalFormat.Damage> refused = new ArrayList<>();
      for (JournalFormat.Damage damage : scan.damages()) {
        if (refusal(damage, newest, mark.covers(segment.getKey(), damage.offset())) != null) {
          refused.add(damage);
        }
      }
      if (!refused.isEmpty()) {
        JournalFormat.Damage first = refused.getFirst();
        throw new PersistenceCorruptionException(file, first.offset(), describe(first) + "; "
            + refusal(first, newest, mark.covers(segment.getKey(), first.offset()))
            + (refused.size() > 1 ? "; and " + (refused.size() - 1) + " more damaged regions in this segment" : "")
            + "; refusing to start. `bloomery check-log " + dir + "` lists every damaged record; `bloomery check-log"
            + " --fix " + dir + "` removes the damaged bytes, keeps the good records around them and a copy of"
            + " what it removes");
      }
      if (scan.tail() != null) {
        trimmed += trimTornTail(scan, segment.getKey());
      }
    }
    if (last >= 0 && JournalFormat.version(live.get(last)) < JournalFormat.VERSION) {
      // A segment of an older format is read, never appended to: the journal continues in a new one.
      last++;
      JournalWriter.createSegment(dir, last).channel().close();
      live = DataDirectory.segments(dir).tailMap(manifest.firstSegment(), true);
      highest = Math.max(highest, last);
    }
    long older = 0;
    for (Map.Entry<Long, Path> segment : live.entrySet()) {
      if (segment.getKey() != last) {
        older += Files.size(segment.getValue());
      }
    }
    // After a snapshot the live segments may hold no record yet; the manifest still knows where numbering was.
    long nextSequence = Math.max(Math.max(sequence, mark.sequence()), firstPreviousSequence(manifest)) + 1;
    if (last >= 0) {
      // Everything kept is now forced, so the mark may cover it all: a later crash tears only new records.
      Path newest = live.get(last);
      try (FileChannel channel = FileChannel.open(newest, StandardOpenOption.WRITE)) {
        channel.force(false);
        new SyncMark(last, channel.size(), nextSequence - 1).writeForced(dir);
      }
    }
    removeLeftovers(dir, manifest);
    return new Result(manifest, last, older, keys, records, snapshotBytes, cutMillis, trimmed, highest, nextSequence);
  }

  /**
   * Why {@code damage} refuses a start, or {@code null} if recovery may cut it off: only a tail of the newest
   * segment that was never forced.
   */
  static String refusal(JournalFormat.Damage damage, boolean newest, boolean forced) {
    if (!damage.tail()) {
      return damage.recordsAfter() > 0 ? damage.recordsAfter() + " good records follow it" : "the segment header is damaged";
    }
    if (forced) {
      return "these bytes had been forced to disk, so their records were acknowledged";
    }
    if (!newest) {
      return "only the newest segment may end in a torn record";
    }
    return null;
  }

  /** "<problem>; record 18 lost (42 bytes)". */
  static String describe(JournalFormat.Damage damage) {
    return damage.problem() + "; " + damage.lost() + " lost (" + damage.length() + " bytes from offset "
        + damage.offset() + ")";
  }

  /**
   * The sequence number before the first live segment's first record: the manifest's first sequence less
   * one; 0 in a directory that started empty and was never snapshotted (its first record is 1); else unknown
   * (-1: a version-2 manifest written by a snapshot).
   */
  static long firstPreviousSequence(Manifest manifest) {
    if (manifest.firstSequence() > 0) {
      return manifest.firstSequence() - 1;
    }
    return manifest.snapshot() == null && manifest.firstSegment() == 1 ? 0 : -1;
  }

  /**
   * {@code scan}, its first damaged region numbered when the record before it is unknown but the segment before
   * (kept with the previous state) is there to say: only read when there is damage to name.
   */
  static JournalFormat.Scan numbered(JournalFormat.Scan scan, long number, long previous, Map<Long, Path> segments)
      throws IOException {
    Path before = segments.get(number - 1);
    if (scan.clean() || previous >= 0 || scan.damages().getFirst().firstLost() != 0 || before == null) {
      return scan;
    }
    JournalFormat.Scan earlier = JournalFormat.scan(before, number - 1, -1, (offset, argv) -> {});
    return scan.numberedAfter(earlier.lastSequence() > 0 ? earlier.lastSequence() : -1);
  }

  static boolean onlyEmptySegmentsAfter(Map<Long, Path> live, long number) throws IOException {
    for (Map.Entry<Long, Path> later : live.entrySet()) {
      if (later.getKey() > number && Files.size(later.getValue()) > JournalFormat.HEADER_LENGTH) {
        return false;
      }
    }
    return true;
  }

  private static void replay(CommandReplayer replayer, Path file, long offset, List<byte[]> argv)
      throws PersistenceCorruptionException {
    try {
      replayer.replay(argv);
    } catch (RuntimeException e) {
      throw new PersistenceCorruptionException(file, offset, "record could not be replayed: " + e.getMessage(), e);
    }
  }

  /**
   * Cuts {@code scan}'s tail off its file: zeros quietly (space never written), anything else with a warning and
   * a copy of the cut bytes in a side file. Returns the bytes cut.
   */
  static long trimTornTail(JournalFormat.Scan scan, long segment) throws IOException {
    Path file = scan.file();
    JournalFormat.Damage tail = scan.tail();
    long cut = scan.fileSize() - tail.offset();
    if (tail.zeros() && tail.offset() >= JournalFormat.HEADER_LENGTH) {
      JournalFormat.cutAfterGoodRecords(file, tail.offset(), segment);
      LOG.info("{}: {} zero bytes after the last record at offset {}, never written; cut", file.getFileName(), cut,
          tail.offset());
      return cut;
    }
    Path kept = keepCopy(file, tail.offset(), "torn");
    JournalFormat.cutAfterGoodRecords(file, tail.offset(), segment);
    LOG.warn("{}: trimmed a torn write at offset {}, never forced to disk ({}; {} lost; {} bytes cut, kept in {})",
        file.getFileName(), tail.offset(), tail.problem(), tail.lost(), cut, kept.getFileName());
    return cut;
  }

  /**
   * Copies {@code file}'s bytes from {@code from} to its end into a new side file named after it, through {@link
   * AtomicWrite} (a crash during the copy leaves no partial side file under that name).
   *
   * @throws FileAlreadyExistsException if a side file of that name exists (it is never replaced)
   */
  static Path keepCopy(Path file, long from, String why) throws IOException {
    return keepCopy(file, from, Files.size(file), why);
  }

  /** As {@link #keepCopy(Path, long, String)}, of the bytes in [{@code from}, {@code to}). */
  static Path keepCopy(Path file, long from, long to, String why) throws IOException {
    Path kept = file.resolveSibling(file.getFileName() + "." + why + "-" + System.currentTimeMillis());
    if (Files.exists(kept, LinkOption.NOFOLLOW_LINKS)) {
      throw new FileAlreadyExistsException(kept.toString());
    }
    try (FileChannel in = FileChannel.open(file, StandardOpenOption.READ)) {
      AtomicWrite.write(kept, out -> {
        long size = Math.min(to, in.size());
        ByteBuffer buffer = ByteBuffer.allocate(1 << 16);
        for (long at = from; at < size; ) {
          buffer.clear();
          buffer.limit((int) Math.min(buffer.capacity(), size - at));
          int n = in.read(buffer, at);
          if (n < 0) {
            break;
          }
          out.write(buffer.array(), 0, n);
          at += n;
        }
      });
    }
    return kept;
  }

  /** Deletes what an interrupted rewrite left: retired segments and snapshots, and temporary files. */
  private static void removeLeftovers(Path dir, Manifest manifest) throws IOException {
    DataDirectory.deleteRetired(dir, manifest);
    for (Path temporary : DataDirectory.temporaries(dir)) {
      Files.deleteIfExists(temporary);
    }
  }
}
