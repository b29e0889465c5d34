package io.bloomery.server.persistence;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The server's durability: opened once from its configuration, it recovers the keyspace (snapshot, then
 * journal replay), then journals every mutating command, rewrites the journal into snapshots without
 * stopping writes, and answers SAVE, BGSAVE, BGREWRITEAOF, LASTSAVE and INFO persistence.
 *
 * <pre>{@code
 * Durability durability = Durability.open(dir, true, FsyncPolicy.EVERYSEC, keyspace, replayer, keyspace);
 * CommandJournal journal = durability.journal();       // append every applied mutating command
 * PersistenceControl control = durability.control();   // SAVE, BGSAVE, BGREWRITEAOF, LASTSAVE, INFO
 * durability.metrics().bindTo(registry);               // AOF size, fsync latency, lag, last snapshot
 * durability.close();                                  // flush, snapshot, release the directory
 * }</pre>
 *
 * <p>Guarantees (see {@code docs/PERSISTENCE.md}): a command acknowledged after its journal append
 * completed survives a crash of the process under every fsync policy, and a crash of the machine under
 * {@link FsyncPolicy#ALWAYS}; under {@link FsyncPolicy#EVERYSEC} a machine crash loses at most the
 * acknowledgements of one two-second window. A torn write after the last fsync is trimmed at start with a
 * warning; damage anywhere else refuses the start with the file, the offset and the records lost. The
 * directory is locked against a
 * second server.
 *
 * <p>Thread-safe. The snapshot source must stay usable until {@link #close()} returns (it takes the
 * final snapshot).
 */
public final class Durability implements AutoCloseable {
  /* A snapshot and a rewrite are the same operation here ("checkpoint"): prepare segment N+1 (created
   * and forced ahead, so the cut does no I/O), take the keyspace's cut and switch the journal to N+1
   * there, stream every key into snapshot.N+1 (temp, fsync, rename, fsync dir), then replace the
   * manifest with (snapshot.N+1, segments from N+1) and delete what it no longer names. A crash at any
   * step leaves the old manifest, whose snapshot and segments are all still on disk (deletion comes
   * last), so recovery never depends on a half-written file. */

  private static final Logger LOG = LoggerFactory.getLogger(Durability.class);
  /** How long after a failed checkpoint the timer tries again while the journal is behind memory. */
  private static final long CHECKPOINT_RETRY_NANOS = TimeUnit.SECONDS.toNanos(5);

  private final DurabilityOptions options;
  private final SnapshotSource source;
  private final FileChannel lockChannel;
  private final FileLock lock;
  private final JournalWriter writer; // null without appendonly
  private final CommandJournal journal;
  private final PersistenceMetrics metrics;
  private final Control control = new Control();
  private final ExecutorService background;
  private final ScheduledExecutorService timer;
  private final AtomicBoolean checkpointRunning = new AtomicBoolean();
  private final LongAdder changes = new LongAdder();
  private final Object state = new Object();
  private volatile boolean closed;
  private volatile java.util.function.Supplier<Runnable> cutHook = () -> () -> {};

  // Guarded by state.
  private Manifest manifest;
  private long nextNumber;
  private long olderSegmentBytes;
  private long snapshotBytes;
  private long lastSaveMillis;
  private long lastCheckpointSeconds = -1;
  private long checkpointStartedNanos = -1;
  private boolean lastCheckpointOk = true;
  private long lastCheckpointEndNanos;
  private long checkpoints;
  private long changesAtLastCut;

  private Durability(DurabilityOptions options, SnapshotSource source, FileChannel lockChannel, FileLock lock,
      Recovery.Result recovered) throws IOException {
    this.options = options;
    this.source = source;
    this.lockChannel = lockChannel;
    this.lock = lock;
    this.manifest = recovered.manifest();
    this.nextNumber = Math.max(recovered.highestNumber(), manifest.firstSegment()) + 1;
    this.olderSegmentBytes = recovered.olderSegmentBytes();
    this.snapshotBytes = recovered.snapshotBytes();
    this.lastSaveMillis = recovered.snapshotCutMillis();
    if (options.appendOnly()) {
      long number = recovered.lastSegment();
      Path path;
      if (number < 0) {
        number = manifest.firstSegment();
        JournalWriter.PreparedSegment created = JournalWriter.createSegment(options.dir(), number);
        created.channel().close();
        path = created.path();
        nextNumber = Math.max(nextNumber, number + 1);
      } else {
        path = options.dir().resolve(DataDirectory.segmentName(number));
      }
      this.writer = new JournalWriter(number, path, options.fsync(), JournalWriter.EVERYSEC_POSTPONE_NANOS,
          recovered.nextSequence(), SyncMark.Writer.open(options.dir()));
      this.journal = new Journal();
    } else {
      Files.deleteIfExists(options.dir().resolve(DataDirectory.RESERVE)); // left by an earlier appendonly run
      this.writer = null;
      this.journal = argv -> {
        changes.increment();
        return CompletableFuture.completedFuture(null);
      };
    }
    this.metrics = new PersistenceMetrics(this);
    this.background = Executors.newSingleThreadExecutor(Thread.ofPlatform().name("bloomery-snapshot").daemon().factory());
    this.timer = Executors.newSingleThreadScheduledExecutor(Thread.ofPlatform().name("bloomery-persistence-timer").daemon().factory());
  }

  /** Opens {@code dir} with Redis's automatic-rewrite defaults; see {@link #open(DurabilityOptions, SnapshotSource, CommandReplayer, KeyLoader)}. */
  public static Durability open(Path dir, boolean appendOnly, FsyncPolicy policy, SnapshotSource source,
      CommandReplayer replayer, KeyLoader loader) throws IOException {
    return open(DurabilityOptions.of(dir, appendOnly, policy), source, replayer, loader);
  }

  /**
   * Locks the data directory (creating it, mode 0700, if absent), recovers its state into the keyspace
   * through {@code loader} and {@code replayer}, and starts journaling.
   *
   * @throws PersistenceCorruptionException if a file is damaged other than by a torn write; the
   *     message names the file and the offset
   * @throws IOException if the directory is in use by another server or cannot be read or written
   */
  public static Durability open(DurabilityOptions options, SnapshotSource source, CommandReplayer replayer,
      KeyLoader loader) throws IOException {
    Path dir = options.dir().toAbsolutePath();
    createDirectory(dir);
    FileChannel lockChannel = FileChannel.open(dir.resolve(DataDirectory.LOCK), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
    FileLock lock;
    try {
      lock = lockChannel.tryLock();
    } catch (OverlappingFileLockException e) {
      lock = null;
    }
    if (lock == null) {
      lockChannel.close();
      throw new IOException(dir + " is in use by another server (its LOCK file is locked)");
    }
    Durability durability;
    try {
      long started = System.nanoTime();
      Recovery.Result recovered = Recovery.run(dir, loader, replayer);
      durability = new Durability(
          new DurabilityOptions(dir, options.appendOnly(), options.fsync(), options.autoRewritePercentage(),
              options.autoRewriteMinBytes()), source, lockChannel, lock, recovered);
      LOG.info("DB loaded from disk: {} keys from the snapshot, {} journal records replayed, {} s",
          recovered.keys(), recovered.records(), String.format("%.3f", (System.nanoTime() - started) / 1e9));
      if (!options.appendOnly() && recovered.lastSegment() >= 0) {
        // The journal of an earlier appendonly run is folded into a snapshot before it is retired.
        durability.checkpoint();
      }
    } catch (IOException | RuntimeException e) {
      lock.release();
      lockChannel.close();
      throw e;
    }
    durability.timer.scheduleWithFixedDelay(durability::maybeRewrite, 1, 1, TimeUnit.SECONDS);
    return durability;
  }

  private static void createDirectory(Path dir) throws IOException {
    if (Files.isDirectory(dir)) {
      return;
    }
    try {
      Files.createDirectories(dir.getParent());
      Files.createDirectory(dir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
    } catch (UnsupportedOperationException e) {
      Files.createDirectories(dir);
    } catch (FileAlreadyExistsException e) {
      if (!Files.isDirectory(dir)) {
        throw new IOException(dir + " exists and is not a directory");
      }
    }
  }

  /** Whether {@code dir} holds persisted state (a manifest), which a server must load even without a journal. */
  public static boolean holdsState(Path dir) {
    return Files.exists(dir.resolve(DataDirectory.MANIFEST));
  }

  /**
   * Installs what runs at every snapshot's cut, with writers paused; the {@code Runnable} it returns runs once that
   * snapshot is published and the journal before it retired (the command layer deletes the loaded files of
   * {@code BF.LOADCHUNK} that the snapshot now holds).
   */
  public void onCut(java.util.function.Supplier<Runnable> hook) {
    this.cutHook = java.util.Objects.requireNonNull(hook, "hook");
  }

  /** Where the command layer records every applied mutating command. */
  public CommandJournal journal() {
    return journal;
  }

  /** SAVE, BGSAVE, BGREWRITEAOF, LASTSAVE and INFO persistence. */
  public PersistenceControl control() {
    return control;
  }

  /** Journal size, fsync latency, persistence lag and snapshot times, for {@code /metrics}. */
  public PersistenceMetrics metrics() {
    return metrics;
  }

  /** The journal the command layer sees: counts changes, and says when writes must be refused before they apply. */
  private final class Journal implements CommandJournal {
    @Override
    public CompletionStage<Void> append(List<byte[]> argv) {
      changes.increment();
      return writer.append(argv);
    }

    @Override
    public String refusal() {
      return writer.refusal();
    }
  }

  /**
   * Takes a snapshot and rewrites the journal to start after it. One at a time.
   *
   * @throws IOException if it fails (the previous snapshot and the whole journal stay in force), or if
   *     another one is running
   */
  void checkpoint() throws IOException {
    if (!checkpointRunning.compareAndSet(false, true)) {
      throw new IOException("Background save already in progress");
    }
    try {
      runCheckpoint();
    } finally {
      checkpointRunning.set(false);
    }
  }

  private void runCheckpoint() throws IOException {
    long started = System.nanoTime();
    long number;
    synchronized (state) {
      number = nextNumber++;
      checkpointStartedNanos = started;
    }
    Path dir = options.dir();
    JournalWriter.PreparedSegment prepared = null;
    boolean[] rotated = {false};
    long[] cut = new long[3]; // cut time, changes before it, the journal's first sequence after it
    boolean ok = false;
    try (SnapshotFormat.Writer snapshot = new SnapshotFormat.Writer(dir.resolve(DataDirectory.snapshotName(number)))) {
      prepared = writer == null ? null : JournalWriter.createSegment(dir, number);
      JournalWriter.PreparedSegment afterCut = prepared;
      HeaderFirst sink = new HeaderFirst(snapshot, cut, number);
      Runnable[] afterPublish = {() -> {}};
      source.snapshot(() -> {
        afterPublish[0] = cutHook.get();
        cut[0] = System.currentTimeMillis();
        cut[1] = changes.sum();
        if (afterCut != null) {
          synchronized (state) {
            olderSegmentBytes += writer.currentSegmentSize();
          }
          cut[2] = writer.rotate(afterCut);
          rotated[0] = true;
        }
      }, sink);
      if (cut[0] == 0) {
        throw new IllegalStateException("the snapshot source returned without taking its cut");
      }
      sink.begin();
      snapshot.publish();
      Manifest next;
      synchronized (state) {
        next = manifest.successor(DataDirectory.snapshotName(number), number, cut[2]);
      }
      next.write(dir);
      synchronized (state) {
        manifest = next;
        olderSegmentBytes = 0;
        snapshotBytes = Files.size(dir.resolve(next.snapshot()));
        lastSaveMillis = System.currentTimeMillis();
        changesAtLastCut = cut[1];
      }
      if (writer != null) {
        writer.checkpointed(number);
      }
      DataDirectory.deleteRetired(dir, next);
      afterPublish[0].run();
      LOG.info("snapshot {} written: {} keys, {} bytes, {} ms", next.snapshot(), snapshot.keys(), snapshotBytes(),
          TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started));
      ok = true;
    } catch (UncheckedIOException e) {
      throw e.getCause();
    } catch (OutOfMemoryError e) {
      // The snapshot's own allocations are gone once it unwinds: report the cause, never a stray Error, so that
      // SAVE answers it and neither the background thread nor shutdown dies of it.
      throw new IOException(DataDirectory.snapshotName(number) + " failed: the Java heap ran out (" + e
          + "); the previous snapshot and the whole journal stay in force", e);
    } finally {
      if (prepared != null && !rotated[0]) {
        prepared.channel().close();
        Files.deleteIfExists(prepared.path());
      }
      synchronized (state) {
        lastCheckpointOk = ok;
        checkpoints++;
        lastCheckpointEndNanos = System.nanoTime();
        lastCheckpointSeconds = TimeUnit.NANOSECONDS.toSeconds(lastCheckpointEndNanos - started);
        checkpointStartedNanos = -1;
      }
      if (!ok) {
        LOG.error("snapshot {} failed; the previous snapshot and the whole journal stay in force",
            DataDirectory.snapshotName(number));
      }
    }
  }

  /** Writes the snapshot header before the first key (its fields are known only at the cut). */
  static final class HeaderFirst implements SnapshotSink {
    private final SnapshotFormat.Writer snapshot;
    private final long[] cut;
    private final long number;
    private boolean begun;

    HeaderFirst(SnapshotFormat.Writer snapshot, long[] cut, long number) {
      this.snapshot = snapshot;
      this.cut = cut;
      this.number = number;
    }

    void begin() throws IOException {
      if (!begun) {
        snapshot.begin(cut[0], number);
        begun = true;
      }
    }

    @Override
    public void accept(byte[] key, Object value, long expireAtMillis) throws IOException {
      begin();
      snapshot.accept(key, value, expireAtMillis);
    }

    @Override
    public void metadata(byte[] name, byte[] bytes) throws IOException {
      begin();
      snapshot.metadata(name, bytes);
    }
  }

  private boolean startBackgroundCheckpoint() {
    if (closed || checkpointRunning.get()) {
      return false;
    }
    background.execute(() -> {
      try {
        checkpoint();
      } catch (IOException | RuntimeException e) {
        LOG.error("background snapshot failed: {}", e.toString());
      }
    });
    return true;
  }

  /**
   * The automatic rewrite: when the journal has outgrown the snapshot by the configured percentage, or when memory
   * holds writes the journal lacks (a failed record write or fsync), which only a snapshot makes durable; after a
   * failed checkpoint that one waits {@link #CHECKPOINT_RETRY_NANOS}.
   */
  private void maybeRewrite() {
    if (writer == null || closed || checkpointRunning.get()) {
      return;
    }
    if (writer.behindMemory()) {
      boolean retry;
      synchronized (state) {
        retry = lastCheckpointOk || System.nanoTime() - lastCheckpointEndNanos >= CHECKPOINT_RETRY_NANOS;
      }
      if (retry) {
        LOG.info("starting a snapshot to capture the writes the journal lacks");
        startBackgroundCheckpoint();
      }
      return;
    }
    if (options.autoRewritePercentage() == 0) {
      return;
    }
    long journalBytes = journalBytes();
    long base = snapshotBytes();
    if (journalBytes >= options.autoRewriteMinBytes()
        && journalBytes * 100.0 >= (double) options.autoRewritePercentage() * base) {
      LOG.info("starting automatic rewrite: journal {} bytes, snapshot {} bytes", journalBytes, base);
      startBackgroundCheckpoint();
    }
  }

  long journalBytes() {
    if (writer == null) {
      return 0;
    }
    synchronized (state) {
      return olderSegmentBytes + writer.currentSegmentSize();
    }
  }

  long snapshotBytes() {
    synchronized (state) {
      return snapshotBytes;
    }
  }

  long lastSaveMillis() {
    synchronized (state) {
      return lastSaveMillis;
    }
  }

  JournalWriter writer() {
    return writer;
  }

  long changesSinceLastSave() {
    synchronized (state) {
      return changes.sum() - changesAtLastCut;
    }
  }

  /**
   * Flushes the journal, takes a final snapshot, stops the background threads and releases the
   * directory. A failed final snapshot is logged; the journal still holds everything.
   */
  @Override
  public void close() throws IOException {
    close(true);
  }

  /**
   * Stops background work and flushes the journal; writes the final snapshot only if {@code snapshot} ({@code
   * SHUTDOWN NOSAVE} skips it: the journal, when on, still holds every acknowledged write).
   */
  public void close(boolean snapshot) throws IOException {
    if (closed) {
      return;
    }
    closed = true;
    timer.shutdownNow();
    background.shutdown();
    IOException failure = null;
    try {
      background.awaitTermination(1, TimeUnit.HOURS);
      if (writer != null) {
        try {
          writer.flush();
        } catch (IOException e) {
          // the final snapshot below captures memory, journaled or not
          LOG.error("final journal flush failed: {}", e.getMessage());
        }
      }
      // A client's SAVE may still be running: wait for it rather than skip the final snapshot.
      while (!checkpointRunning.compareAndSet(false, true)) {
        Thread.sleep(10);
      }
      try {
        if (snapshot) {
          runCheckpoint();
        }
      } finally {
        checkpointRunning.set(false);
      }
    } catch (IOException e) {
      failure = e;
      LOG.error("final snapshot failed: {}", e.getMessage());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      try {
        if (writer != null) {
          writer.close();
        }
      } catch (IOException e) {
        failure = failure == null ? e : failure;
      }
      lock.release();
      lockChannel.close();
    }
    if (failure != null) {
      throw failure;
    }
  }

  /**
   * Stops without flushing or snapshotting, leaving the files exactly as a killed process would (what
   * was written is in the page cache). For tests that crash the server in-process.
   */
  void abandon() throws IOException {
    closed = true;
    timer.shutdownNow();
    background.shutdownNow();
    try {
      background.awaitTermination(1, TimeUnit.MINUTES);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    if (writer != null) {
      writer.abandon();
    }
    lock.release();
    lockChannel.close();
  }

  private final class Control implements PersistenceControl {
    @Override
    public void save() throws IOException {
      checkpoint();
    }

    @Override
    public boolean backgroundSave() {
      return startBackgroundCheckpoint();
    }

    @Override
    public boolean backgroundRewrite() {
      return startBackgroundCheckpoint();
    }

    @Override
    public long lastSaveUnixSeconds() {
      return lastSaveMillis() / 1000;
    }

    @Override
    public Map<String, String> infoFields() {
      Map<String, String> info = new LinkedHashMap<>();
      boolean running;
      long current;
      boolean ok;
      long lastSeconds;
      long count;
      synchronized (state) {
        running = checkpointStartedNanos >= 0;
        current = running ? TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - checkpointStartedNanos) : -1;
        ok = lastCheckpointOk;
        lastSeconds = lastCheckpointSeconds;
        count = checkpoints;
      }
      IOException journalFailure = writer == null ? null : writer.failure();
      JournalWriter.FsyncStats fsyncs = writer == null ? null : writer.fsyncStats();
      info.put("loading", "0");
      info.put("async_loading", "0");
      info.put("rdb_changes_since_last_save", Long.toString(changesSinceLastSave()));
      info.put("rdb_bgsave_in_progress", running ? "1" : "0");
      info.put("rdb_last_save_time", Long.toString(lastSaveUnixSeconds()));
      info.put("rdb_last_bgsave_status", ok ? "ok" : "err");
      info.put("rdb_last_bgsave_time_sec", Long.toString(lastSeconds));
      info.put("rdb_current_bgsave_time_sec", Long.toString(current));
      info.put("rdb_saves", Long.toString(count));
      info.put("aof_enabled", writer == null ? "0" : "1");
      info.put("aof_rewrite_in_progress", running && writer != null ? "1" : "0");
      info.put("aof_rewrite_scheduled", "0");
      info.put("aof_last_rewrite_time_sec", writer == null ? "-1" : Long.toString(lastSeconds));
      info.put("aof_current_rewrite_time_sec", writer == null ? "-1" : Long.toString(current));
      info.put("aof_last_bgrewrite_status", ok ? "ok" : "err");
      info.put("aof_rewrites", writer == null ? "0" : Long.toString(count));
      info.put("aof_last_write_status", journalFailure == null ? "ok" : "err");
      info.put("aof_current_size", Long.toString(journalBytes()));
      info.put("aof_base_size", Long.toString(snapshotBytes()));
      info.put("aof_fsync", options.fsync().configName());
      info.put("aof_delayed_fsync", writer == null ? "0" : Long.toString(writer.postponedCount()));
      info.put("aof_fsyncs", fsyncs == null ? "0" : Long.toString(fsyncs.count()));
      info.put("aof_last_fsync_usec", fsyncs == null ? "0" : Long.toString(fsyncs.lastNanos() / 1000));
      info.put("aof_persistence_lag_ms", writer == null ? "0" : Long.toString((long) (writer.lagSeconds() * 1000)));
      return info;
    }
  }
}
