package io.bloomery.server.persistence;

import io.bloomery.format.AtomicWrite;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The journal the command layer appends to: writes each record to the current segment before the
 * append returns, and forces segments from one background thread according to the {@link FsyncPolicy}.
 *
 * <p>Full disk: the writer keeps {@link #RESERVE_BYTES} of allocated space in {@code journal.reserve}.
 * A record write that finds the disk full frees the reserve and writes again, so the record of a
 * command already applied in memory still reaches the journal; from then on {@link #refusal()} tells
 * the command layer to refuse writes before they apply, until the reserve can be allocated again. A
 * record that still cannot be written (another I/O error, the freed space taken by someone else) and a
 * failed fsync leave memory ahead of the journal: the writer then refuses every append until a
 * checkpoint's snapshot has captured memory ({@link #checkpointed}).
 */
final class JournalWriter implements CommandJournal, AutoCloseable {
  /* Group commit. Appends write their record under one lock (a write(2) into the page cache, in journal
   * order) and, under `always`, queue a waiter holding the journal position just past their record. A
   * single syncer thread repeatedly takes the position written so far, forces the file outside the
   * lock, and completes every waiter up to that position: all appends that arrived while one fsync was
   * running share the next one, so throughput grows with the number of clients instead of being one
   * fsync per command. Positions are logical (they keep counting across segments), so a rotation only
   * moves the old channel to a list the syncer forces and closes.
   *
   * Under `everysec` the syncer forces once a second. An append is acknowledged at once unless the
   * oldest record not yet covered by a completed fsync is older than EVERYSEC_POSTPONE (Redis postpones
   * writes the same way while an fsync is slow), so the acknowledged-but-not-forced records always lie
   * within one window of that length.
   *
   * The syncer waits for work, never for time alone: with nothing written since the last force it
   * sleeps until an append wakes it, so an idle server uses no CPU here. */

  private static final Logger LOG = LoggerFactory.getLogger(JournalWriter.class);
  static final long EVERYSEC_POSTPONE_NANOS = TimeUnit.SECONDS.toNanos(2);
  private static final long EVERYSEC_INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(1);
  private static final CompletableFuture<Void> DONE = CompletableFuture.completedFuture(null);
  /** Space kept allocated for the records of commands applied while the disk fills up. */
  static final int RESERVE_BYTES = 4 << 20;
  /** How often a refused write may try to allocate the reserve again. */
  private static final long RESTORE_INTERVAL_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

  private record Waiter(long position, CompletableFuture<Void> done) {}

  /** A segment prepared ahead of a cut: created, headed and made durable, not yet written to. */
  record PreparedSegment(long number, Path path, FileChannel channel) {}

  private final FsyncPolicy policy;
  private final long postponeNanos;
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition wake = lock.newCondition();
  private final ArrayDeque<Waiter> waiters = new ArrayDeque<>();
  private final List<FileChannel> retiring = new ArrayList<>();
  private final Thread syncer;
  private final FileChannel reserve;

  // Guarded by lock.
  private FileChannel channel;
  private long segment;
  private long segmentSize;
  private long written;
  private long synced;
  private long nextSequence;
  private long pendingSinceNanos = -1;
  private long inFlightSinceNanos = -1;
  /** Memory holds what the journal lacks (a record not written, an fsync failed); cleared by a checkpoint. */
  private IOException failure;
  /** The newest segment that lacks a record of a command applied in memory, or whose fsync failed. */
  private long failedSegment = -1;
  /** The reserve is spent: new writes are refused until it is allocated again. */
  private IOException spent;
  private long nextRestoreNanos;
  private boolean closing;
  /** {@code failure}, else {@code spent}: read without the lock by {@link #refusal()}. */
  private volatile IOException refusing;

  private final LongAdder appends = new LongAdder();
  private final LongAdder postponed = new LongAdder();
  private final FsyncStats fsyncs = new FsyncStats();
  private final SyncMark.Writer mark; // null: no SYNCED file kept

  /**
   * Continues {@code segmentPath}, which recovery left ending in a good record, at its end.
   */
  JournalWriter(long segment, Path segmentPath, FsyncPolicy policy) throws IOException {
    this(segment, segmentPath, policy, EVERYSEC_POSTPONE_NANOS);
  }

  /** As above, with the everysec postpone threshold given (tests use 0 to see postponing happen). */
  JournalWriter(long segment, Path segmentPath, FsyncPolicy policy, long postponeNanos) throws IOException {
    this(segment, segmentPath, policy, postponeNanos, 1, null);
  }

  /**
   * As above, numbering records from {@code nextSequence} and recording each completed fsync in {@code mark}
   * (which this writer closes).
   */
  JournalWriter(long segment, Path segmentPath, FsyncPolicy policy, long postponeNanos, long nextSequence,
      SyncMark.Writer mark) throws IOException {
    this.nextSequence = nextSequence;
    this.mark = mark;
    this.policy = policy;
    this.postponeNanos = postponeNanos;
    this.segment = segment;
    this.channel = FileChannel.open(segmentPath, StandardOpenOption.WRITE);
    this.segmentSize = channel.size();
    channel.position(segmentSize);
    Path reservePath = segmentPath.resolveSibling(DataDirectory.RESERVE);
    try {
      this.reserve = FileChannel.open(reservePath, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
    } catch (IOException e) {
      channel.close();
      throw e;
    }
    if (reserve.size() != RESERVE_BYTES) {
      restoreReserve();
    }
    this.syncer = Thread.ofPlatform().name("bloomery-journal-fsync").daemon().unstarted(this::syncLoop);
    syncer.start();
  }

  /** Creates segment {@code number} (header, fsync, fsync of the directory) and returns it open. */
  static PreparedSegment createSegment(Path dir, long number) throws IOException {
    Path path = dir.resolve(DataDirectory.segmentName(number));
    FileChannel channel = FileChannel.open(path, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
    try {
      ByteBuffer header = ByteBuffer.wrap(JournalFormat.header(number));
      while (header.hasRemaining()) {
        channel.write(header);
      }
      channel.force(true);
      AtomicWrite.forceDirectory(dir);
      return new PreparedSegment(number, path, channel);
    } catch (IOException | RuntimeException e) {
      channel.close();
      Files.deleteIfExists(path);
      throw e;
    }
  }

  @Override
  public CompletionStage<Void> append(List<byte[]> argv) {
    byte[] record = JournalFormat.encode(argv);
    lock.lock();
    try {
      if (closing) {
        return CompletableFuture.failedFuture(new IOException("the journal is closed"));
      }
      if (failure != null) {
        failedSegment = segment;
        return CompletableFuture.failedFuture(notJournaled(failure.getMessage()));
      }
      IOException error = writeRecord(JournalFormat.stamp(record, nextSequence));
      if (error != null) {
        String cause = "journal write failed in " + DataDirectory.segmentName(segment) + ": " + error.getMessage();
        fail(new IOException(cause, error));
        return CompletableFuture.failedFuture(notJournaled(cause));
      }
      long now = System.nanoTime();
      if (pendingSinceNanos < 0) {
        pendingSinceNanos = now;
        if (policy == FsyncPolicy.EVERYSEC) {
          wake.signal(); // the syncer sleeps while nothing is pending
        }
      }
      written += record.length;
      segmentSize += record.length;
      nextSequence++;
      appends.increment();
      if (policy == FsyncPolicy.ALWAYS || (policy == FsyncPolicy.EVERYSEC && behind(now))) {
        if (policy == FsyncPolicy.EVERYSEC) {
          postponed.increment();
        }
        CompletableFuture<Void> done = new CompletableFuture<>();
        waiters.addLast(new Waiter(written, done));
        wake.signal();
        return done;
      }
      return DONE;
    } finally {
      lock.unlock();
    }
  }

  /** Why an append of a command already applied in memory failed: the reply tells the client so. */
  private static IOException notJournaled(String cause) {
    return new IOException("the command was applied in memory but its journal record was not written (" + cause
        + "); writes are refused until a snapshot has captured memory (retried automatically, or BGREWRITEAOF)");
  }

  /**
   * Writes {@code record} at the segment's end; on a full disk frees the reserve and writes it again (the
   * refusal of new writes starts then). Returns the error if it is still not written; no partial record stays.
   */
  private IOException writeRecord(byte[] record) {
    try {
      writeFully(record);
      return null;
    } catch (IOException e) {
      truncateTornWrite();
      if (!outOfSpace(e) || !releaseReserve(e)) {
        return e;
      }
    }
    try {
      writeFully(record);
      return null;
    } catch (IOException e) {
      truncateTornWrite();
      return e;
    }
  }

  private void writeFully(byte[] record) throws IOException {
    ByteBuffer buffer = ByteBuffer.wrap(record);
    while (buffer.hasRemaining()) {
      channel.write(buffer);
    }
  }

  /** Whether {@code e} is a write refused for lack of space (ENOSPC, or EDQUOT on a quota). */
  static boolean outOfSpace(IOException e) {
    String message = e.getMessage();
    return message != null && (message.contains("No space left on device") || message.contains("Disk quota exceeded"));
  }

  /** Frees the reserve after {@code cause} (a full disk): {@code false} if there was none to free. */
  private boolean releaseReserve(IOException cause) {
    try {
      if (reserve.size() == 0) {
        return false;
      }
      reserve.truncate(0);
    } catch (IOException e) {
      LOG.error("could not free the journal reserve: {}", e.toString());
      return false;
    }
    spent = cause;
    nextRestoreNanos = System.nanoTime() + RESTORE_INTERVAL_NANOS;
    refusing = failure != null ? failure : spent;
    LOG.error("the disk is full ({}): the journal reserve was used, write commands are refused until {} bytes "
        + "can be allocated again", cause.getMessage(), RESERVE_BYTES);
    return true;
  }

  /** Allocates the reserve ({@link #RESERVE_BYTES} written to {@code journal.reserve}); frees it all if it cannot. */
  private boolean restoreReserve() {
    // Bytes that do not compress, so a compressing file system allocates them too.
    byte[] chunk = new byte[64 << 10];
    SplittableRandom random = new SplittableRandom(segment);
    try {
      reserve.position(0);
      for (long at = 0; at < RESERVE_BYTES; at += chunk.length) {
        random.nextBytes(chunk);
        ByteBuffer buffer = ByteBuffer.wrap(chunk, 0, (int) Math.min(chunk.length, RESERVE_BYTES - at));
        while (buffer.hasRemaining()) {
          reserve.write(buffer);
        }
      }
      reserve.truncate(RESERVE_BYTES);
      return true;
    } catch (IOException e) {
      try {
        reserve.truncate(0);
      } catch (IOException freeing) {
        LOG.error("could not free a partial journal reserve: {}", freeing.toString());
      }
      if (spent == null) {
        spent = e;
        refusing = failure != null ? failure : spent;
        LOG.error("cannot allocate the journal reserve ({}): write commands are refused until it can be",
            e.getMessage());
      }
      return false;
    }
  }

  /**
   * Why write commands must be refused before they apply, or {@code null} when they may run: the reserve is
   * spent (the disk is full) or memory is ahead of the journal. While the reserve is spent each call, at most
   * every 100 ms, tries to allocate it again, so writes resume as soon as the disk has room.
   */
  @Override
  public String refusal() {
    IOException refused = refusing;
    if (refused == null) {
      return null;
    }
    lock.lock();
    try {
      if (failure == null && spent != null && !closing && System.nanoTime() - nextRestoreNanos >= 0) {
        nextRestoreNanos = System.nanoTime() + RESTORE_INTERVAL_NANOS;
        if (restoreReserve()) {
          LOG.info("the journal reserve is allocated again: write commands are accepted");
          spent = null;
          refusing = null;
          return null;
        }
      }
      return refusing == null ? null : refusing.getMessage();
    } finally {
      lock.unlock();
    }
  }

  private boolean behind(long now) {
    long oldest = oldestUnforcedNanos();
    return oldest >= 0 && now - oldest > postponeNanos;
  }

  /** A failed write may have left part of a record: cut the segment back to the last whole one. */
  private void truncateTornWrite() {
    try {
      channel.truncate(segmentSize);
      channel.position(segmentSize);
    } catch (IOException e) {
      LOG.error("could not cut a partial record off {}: {}", DataDirectory.segmentName(segment), e.toString());
    }
  }

  /** When the oldest record not yet covered by a completed fsync was written; -1 if none. */
  private long oldestUnforcedNanos() {
    return inFlightSinceNanos >= 0 ? inFlightSinceNanos : pendingSinceNanos;
  }

  /**
   * Switches appends to {@code next}. Called at a snapshot's cut, with writers paused, so it only swaps
   * channels; the syncer forces and closes the old segment.
   *
   * @return the sequence number the first record in {@code next} gets
   */
  long rotate(PreparedSegment next) {
    lock.lock();
    try {
      retiring.add(channel);
      channel = next.channel();
      segment = next.number();
      segmentSize = JournalFormat.HEADER_LENGTH;
      wake.signal();
      return nextSequence;
    } finally {
      lock.unlock();
    }
  }

  private <T> T locked(Supplier<T> read) {
    lock.lock();
    try {
      return read.get();
    } finally {
      lock.unlock();
    }
  }

  /** The segment appends go to now. */
  long currentSegment() {
    return locked(() -> segment);
  }

  /** Bytes of the current segment, header included. */
  long currentSegmentSize() {
    return locked(() -> segmentSize);
  }

  /** Records appended since this writer opened. */
  long appendCount() {
    return appends.sum();
  }

  /** Appends under {@code everysec} that waited for an fsync because the disk fell behind. */
  long postponedCount() {
    return postponed.sum();
  }

  FsyncStats fsyncStats() {
    return fsyncs;
  }

  /** Seconds since the oldest record not yet forced was written; 0 when everything is forced. */
  double lagSeconds() {
    long oldest = locked(this::oldestUnforcedNanos);
    return oldest < 0 ? 0 : (System.nanoTime() - oldest) / 1e9;
  }

  /** Why writes are refused now (memory ahead of the journal, or the reserve spent), or {@code null}. */
  IOException failure() {
    return refusing;
  }

  /**
   * A checkpoint published a snapshot whose cut came before segment {@code firstSegment}: what memory held
   * beyond the journal before that segment is now durable, so a failure confined to older segments clears.
   */
  void checkpointed(long firstSegment) {
    lock.lock();
    try {
      if (failure != null && failedSegment < firstSegment) {
        LOG.info("snapshot taken: the journal accepts writes again after \"{}\"", failure.getMessage());
        failure = null;
        failedSegment = -1;
        refusing = spent;
      }
    } finally {
      lock.unlock();
    }
  }

  /** Whether memory holds writes the journal lacks (only a snapshot can make them durable). */
  boolean behindMemory() {
    return locked(() -> failure != null);
  }

  /**
   * Forces everything written so far, whatever the policy, and returns when it is durable.
   *
   * @throws IOException if the fsync fails
   */
  void flush() throws IOException {
    CompletableFuture<Void> done = new CompletableFuture<>();
    lock.lock();
    try {
      if (closing) {
        throw new IOException("the journal is closed");
      }
      waiters.addLast(new Waiter(written, done));
      wake.signal();
    } finally {
      lock.unlock();
    }
    try {
      done.join();
    } catch (java.util.concurrent.CompletionException e) {
      throw e.getCause() instanceof IOException io ? io : new IOException(e.getCause());
    }
  }

  /** Memory is now ahead of the journal (called under the lock): appends are refused until a checkpoint. */
  private void fail(IOException cause) {
    if (failure == null) {
      failure = cause;
      LOG.error("journal stopped accepting writes until a snapshot captures memory: {}", cause.getMessage());
    }
    failedSegment = segment;
    refusing = failure;
  }

  private void syncLoop() {
    long lastForceStart = System.nanoTime();
    while (true) {
      long target;
      SyncMark covered;
      FileChannel current;
      List<FileChannel> toRetire;
      lock.lock();
      try {
        while (!closing && !due(lastForceStart)) {
          if (policy == FsyncPolicy.EVERYSEC && written != synced) {
            wake.awaitNanos(EVERYSEC_INTERVAL_NANOS - (System.nanoTime() - lastForceStart));
          } else {
            wake.await(); // nothing to force: an append, a rotation or close wakes it
          }
        }
        if (closing && written == synced && retiring.isEmpty() && waiters.isEmpty()) {
          break;
        }
        target = written;
        covered = new SyncMark(segment, segmentSize, nextSequence - 1);
        current = channel;
        toRetire = new ArrayList<>(retiring);
        retiring.clear();
        inFlightSinceNanos = pendingSinceNanos;
        pendingSinceNanos = -1;
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        break;
      } finally {
        lock.unlock();
      }
      lastForceStart = System.nanoTime();
      IOException error = null;
      for (FileChannel old : toRetire) {
        error = forceAndClose(old, error);
      }
      try {
        current.force(false);
      } catch (IOException | UncheckedIOException e) {
        error = error != null ? error : e instanceof IOException io ? io : ((UncheckedIOException) e).getCause();
      }
      if (error == null) {
        // Before the acknowledgements below: every released record then lies before the mark.
        writeMark(covered);
      }
      long elapsed = System.nanoTime() - lastForceStart;
      List<CompletableFuture<Void>> released = new ArrayList<>();
      IOException unknown = null;
      lock.lock();
      try {
        inFlightSinceNanos = -1;
        synced = Math.max(synced, target);
        if (error != null) {
          // After a failed fsync the kernel may have dropped the dirty pages: what they held is durable only
          // once a snapshot captures memory.
          fail(new IOException("journal fsync failed: " + error.getMessage(), error));
          unknown = new IOException("the command was applied in memory, but the journal's fsync failed ("
              + error.getMessage() + "), so whether its record is durable is unknown; writes are refused until a "
              + "snapshot has captured memory (retried automatically, or BGREWRITEAOF)", error);
        }
        while (!waiters.isEmpty() && waiters.peekFirst().position() <= synced) {
          released.add(waiters.pollFirst().done());
        }
        if (error == null) {
          fsyncs.record(elapsed, released.size());
        }
      } finally {
        lock.unlock();
      }
      // Outside the lock: completing runs the replies' continuations, which must not hold up appenders.
      for (CompletableFuture<Void> done : released) {
        if (unknown == null) {
          done.complete(null);
        } else {
          done.completeExceptionally(unknown);
        }
      }
    }
  }

  /** Forces and closes a retired segment; returns {@code error}, or this one's if it is the first. */
  private static IOException forceAndClose(FileChannel old, IOException error) {
    try (old) {
      old.force(false);
    } catch (IOException | UncheckedIOException e) {
      return error != null ? error : e instanceof IOException io ? io : ((UncheckedIOException) e).getCause();
    }
    return error;
  }

  /** Whether the syncer has work now (called under the lock). */
  private boolean due(long lastForceStart) {
    if (!retiring.isEmpty() || !waiters.isEmpty()) {
      return true;
    }
    if (written == synced) {
      return false;
    }
    return switch (policy) {
      case ALWAYS -> true;
      case EVERYSEC -> System.nanoTime() - lastForceStart >= EVERYSEC_INTERVAL_NANOS;
      case NO -> false;
    };
  }

  /** Forces what was written, stops the syncer and closes the segment. */
  @Override
  public void close() throws IOException {
    lock.lock();
    try {
      closing = true;
      wake.signal();
    } finally {
      lock.unlock();
    }
    try {
      syncer.join();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    lock.lock();
    try {
      for (FileChannel old : retiring) {
        old.close();
      }
      retiring.clear();
      reserve.close();
      if (written != synced) {
        channel.force(false);
        writeMark(new SyncMark(segment, segmentSize, nextSequence - 1));
      }
      channel.close();
      if (mark != null) {
        mark.close();
      }
      if (failure != null) {
        throw failure;
      }
    } finally {
      lock.unlock();
    }
  }

  /** Stops the syncer and closes the files without forcing them: what a killed process leaves. */
  void abandon() throws IOException {
    lock.lock();
    try {
      closing = true;
      synced = written; // the syncer forces nothing more
      retiring.forEach(JournalWriter::closeQuietly);
      retiring.clear();
      IOException abandoned = new IOException("the journal was abandoned");
      for (Waiter waiter : waiters) {
        waiter.done().completeExceptionally(abandoned);
      }
      waiters.clear();
      wake.signal();
    } finally {
      lock.unlock();
    }
    try {
      syncer.join();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    reserve.close();
    channel.close();
    if (mark != null) {
      mark.close();
    }
  }

  /** Records an fsync in the {@code SYNCED} file; a failure only logs (the mark is evidence, not data). */
  private void writeMark(SyncMark covered) {
    if (mark == null) {
      return;
    }
    try {
      mark.write(covered);
    } catch (IOException e) {
      LOG.error("could not record the journal's forced position in {}: {}", SyncMark.FILE, e.toString());
    }
  }

  private static void closeQuietly(FileChannel old) {
    try {
      old.close();
    } catch (IOException e) {
      LOG.warn("could not close a retired journal segment: {}", e.toString());
    }
  }

  /** Fsync latency and group-commit sizes, for INFO and metrics. */
  static final class FsyncStats {
    private long count;
    private long totalNanos;
    private long lastNanos;
    private long maxNanos;
    private long coveredAppends;

    synchronized void record(long nanos, int covered) {
      count++;
      totalNanos += nanos;
      lastNanos = nanos;
      maxNanos = Math.max(maxNanos, nanos);
      coveredAppends += covered;
    }

    synchronized long count() {
      return count;
    }

    synchronized long totalNanos() {
      return totalNanos;
    }

    synchronized long lastNanos() {
      return lastNanos;
    }

    synchronized long maxNanos() {
      return maxNanos;
    }

    /** Acknowledgements that waited for an fsync, summed over all fsyncs (their mean is the group size). */
    synchronized long coveredAppends() {
      return coveredAppends;
    }
  }
}
