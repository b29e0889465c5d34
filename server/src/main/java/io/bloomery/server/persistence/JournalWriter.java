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
   * within one window of that length. */

  private static final Logger LOG = LoggerFactory.getLogger(JournalWriter.class);
  static final long EVERYSEC_POSTPONE_NANOS = TimeUnit.SECONDS.toNanos(2);
  private static final long EVERYSEC_INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(1);
  private static final CompletableFuture<Void> DONE = CompletableFuture.completedFuture(null);

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

  // Guarded by lock.
  private FileChannel channel;
  private long segment;
  private long segmentSize;
  private long written;
  private long synced;
  private long nextSequence;
  private long pendingSinceNanos = -1;
  private long inFlightSinceNanos = -1;
  private IOException failure;
  private boolean closing;

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
      if (failure != null) {
        return CompletableFuture.failedFuture(failure);
      }
      if (closing) {
        return CompletableFuture.failedFuture(new IOException("the journal is closed"));
      }
      try {
        ByteBuffer buffer = ByteBuffer.wrap(JournalFormat.stamp(record, nextSequence));
        while (buffer.hasRemaining()) {
          channel.write(buffer);
        }
      } catch (IOException e) {
        fail(new IOException("journal write failed in " + DataDirectory.segmentName(segment) + ": " + e.getMessage(), e));
        truncateTornWrite();
        return CompletableFuture.failedFuture(failure);
      }
      long now = System.nanoTime();
      if (pendingSinceNanos < 0) {
        pendingSinceNanos = now;
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
   */
  void rotate(PreparedSegment next) {
    lock.lock();
    try {
      retiring.add(channel);
      channel = next.channel();
      segment = next.number();
      segmentSize = JournalFormat.HEADER_LENGTH;
      wake.signal();
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

  /** The failure that stopped the journal, or {@code null}. */
  IOException failure() {
    return locked(() -> failure);
  }

  /** Forces everything written so far, whatever the policy, and returns when it is durable. */
  void flush() throws IOException {
    CompletableFuture<Void> done = new CompletableFuture<>();
    lock.lock();
    try {
      if (failure != null) {
        throw failure;
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

  private void fail(IOException cause) {
    if (failure == null) {
      failure = cause;
      LOG.error("journal stopped accepting writes: {}", cause.getMessage());
    }
    for (Waiter waiter : waiters) {
      waiter.done().completeExceptionally(failure);
    }
    waiters.clear();
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
        while (!closing && failure == null && !due(lastForceStart)) {
          if (policy == FsyncPolicy.EVERYSEC && waiters.isEmpty()) {
            wake.awaitNanos(Math.max(1, EVERYSEC_INTERVAL_NANOS - (System.nanoTime() - lastForceStart)));
          } else {
            wake.await();
          }
        }
        if (failure != null || (closing && written == synced && retiring.isEmpty() && waiters.isEmpty())) {
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
      try {
        for (FileChannel old : toRetire) {
          old.force(false);
          old.close();
        }
        current.force(false);
      } catch (IOException | UncheckedIOException e) {
        error = e instanceof IOException io ? io : ((UncheckedIOException) e).getCause();
      }
      if (error == null) {
        // Before the acknowledgements below: every released record then lies before the mark.
        writeMark(covered);
      }
      long elapsed = System.nanoTime() - lastForceStart;
      List<CompletableFuture<Void>> released = new ArrayList<>();
      lock.lock();
      try {
        inFlightSinceNanos = -1;
        if (error != null) {
          fail(new IOException("journal fsync failed: " + error.getMessage(), error));
          break;
        }
        synced = Math.max(synced, target);
        while (!waiters.isEmpty() && waiters.peekFirst().position() <= synced) {
          released.add(waiters.pollFirst().done());
        }
        fsyncs.record(elapsed, released.size());
      } finally {
        lock.unlock();
      }
      // Outside the lock: completing runs the replies' continuations, which must not hold up appenders.
      for (CompletableFuture<Void> done : released) {
        done.complete(null);
      }
    }
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
      if (failure == null && written != synced) {
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
      failure = new IOException("the journal was abandoned");
      for (Waiter waiter : waiters) {
        waiter.done().completeExceptionally(failure);
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
    for (FileChannel old : retiring) {
      old.close();
    }
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
