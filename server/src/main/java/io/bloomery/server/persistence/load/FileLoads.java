package io.bloomery.server.persistence.load;

import io.bloomery.blocked.BlockedBloomFilter;
import io.bloomery.blocked.ScalableBlockedBloomFilter;
import io.bloomery.filter.BloomFilter;
import io.bloomery.filter.FilterKind;
import io.bloomery.filter.Summary;
import io.bloomery.format.AtomicWrite;
import io.bloomery.format.FilterFormat;
import io.bloomery.format.FilterFormatException;
import io.bloomery.server.keyspace.HeapAdmission;
import io.bloomery.server.keyspace.Key;
import io.bloomery.server.keyspace.ValueType;
import io.bloomery.server.persistence.LogCheck;
import io.bloomery.server.resp.ClientText;
import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code BF.LOADCHUNK} / {@code BF.SCANDUMP} of a Bloomery file (docs/FORMAT.md) for a fixed or scaling blocked Bloom
 * key. Chunk 1
 * (iterator 1) begins with the file's envelope header, at least its 18 + S bytes (magic "BLMF" to the body length);
 * every later chunk carries the iterator {@code 1 + the file offset of its first byte}, so the chunks must come in
 * order and may have any size. A file that its header chunk holds whole is read from that chunk; a longer one is
 * streamed into a staging file ({@code loads/NNN.part} in the data directory), never into one array, and becomes
 * the key only when its last byte has arrived, the staging file is forced to disk and the whole file (CRC-32C
 * included) has been read back and checked: a partial or damaged load never answers EXISTS and leaves no key.
 *
 * <p>Durability without one giant journal record: with the journal on, the checked staging file is renamed to
 * {@code loads/NNN.blmf} (directory forced) and the journal records only {@code BF.LOADCHUNK key 0 <marker + name>},
 * which only recovery accepts; replay reads the key back from that file. The next snapshot holds the key, and the
 * files loaded before its cut are then deleted. At start, staging files of unfinished loads and loaded files no
 * replayed record names are deleted, so a kill -9 mid-load leaves no half key and no disk behind.
 *
 * <p>An unfinished load holds only its staging file and a promise of the filter's memory (counted against
 * {@code maxmemory} by {@link #reservedBytes()}); it is released when a new header for its key arrives, when the
 * connection that sent its last chunk closes, or after {@code load-idle-timeout} seconds without a chunk.
 *
 * <p>The last chunk's heavy work (forcing the staging file, reading the whole file back with its CRC-32C check,
 * allocating and filling the filter) runs on a finishing thread, never on the event loop: the command answers through
 * a deferred reply, and the finishing thread ({@link #offLoop}) then takes the key's write lock, installs the
 * key, journals it and completes the reply once that record is durable. While a load is finishing it still holds its
 * reservation; a new header for its key, its connection closing or the server closing cancels it (it then installs
 * nothing and deletes its files); once installed, the key stays. Inside MULTI/EXEC (and in journal replay, which
 * never stages) the finish runs synchronously under the transaction's write, as a deferred reply cannot be queued
 * there.
 *
 * <p>A RedisBloom SCANDUMP header is never taken for a file: it starts with its u64 item count, and a count whose
 * first bytes read "BLMF" 01 would be at least 2^40 + 2^32 items (bytes 4..7 are the version 1, a kind of 1 or 2
 * and a protocol), far beyond what a RedisBloom chain can hold.
 */
public final class FileLoads implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(FileLoads.class);

  /** The size of the data chunks BF.SCANDUMP hands out after the header. */
  public static final int DUMP_CHUNK = 16 << 20;

  /** A file at least this long has its last dump chunk (which streams the whole filter for the CRC) off the loop. */
  public static final long DUMP_OFF_LOOP = 1 << 20;

  /** The data of the journal record of a finished load: this marker, then the loaded file's name. */
  private static final byte[] LOADED_MARKER = LogCheck.LOADED_FILE_MARKER.getBytes(StandardCharsets.US_ASCII);

  private static final byte[] MAGIC = {'B', 'L', 'M', 'F'};
  /** Magic, version, kind, protocol, flags, seed length. */
  private static final int FIXED_PREFIX = 10;
  /** The fixed fields (count, k, inserted) before a classic or blocked payload. */
  private static final int BODY_FIXED = 20;
  /** The largest body of a classic file (m = 2^40 bits) and of a blocked one. */
  private static final long MAX_CLASSIC_BODY = BODY_FIXED + 8 * ((BloomFilter.MAX_BITS + 63) >>> 6);
  private static final long MAX_BLOCKED_BODY = BODY_FIXED + 64 * BlockedBloomFilter.MAX_BLOCKS;
  /** A scaling blocked body: expansion, error rate and layer count, then 28 bytes per layer, then the layers. */
  private static final int SCALING_FIXED = 16 + 28;
  private static final long MAX_SCALING_BODY = SCALING_FIXED + (long) ScalableBlockedBloomFilter.MAX_LAYERS
      * (28 + 64 * BlockedBloomFilter.MAX_BLOCKS);
  /** Classic storage is allocated in arrays of at most this many bytes (core's 2^27-word segments). */
  private static final long CLASSIC_SEGMENT_BYTES = 1L << 30;
  private static final String PART = ".part";
  private static final String LOADED = ".blmf";

  private final ConcurrentHashMap<Key, Pending> pending = new ConcurrentHashMap<>();
  /** Loads whose last chunk has arrived and that a finishing thread reads back; removed by whoever claims them. */
  private final ConcurrentHashMap<Key, Finish> finishing = new ConcurrentHashMap<>();
  private final ThreadPoolExecutor finisher;

  /**
   * Tests only (package-private): runs on a finishing thread before its task (reading a staged load back, a dump's
   * last chunk), so a test can hold that task deterministically. {@code null} in production.
   */
  static volatile Runnable finishHook;
  /** Loaded files the journal names and no published snapshot covers yet. */
  private final Set<String> loadedFiles = ConcurrentHashMap.newKeySet();
  private final AtomicLong reserved = new AtomicLong();
  private final AtomicLong staged = new AtomicLong();
  private final AtomicLong nextFile = new AtomicLong(System.currentTimeMillis() * 1000);
  private final LongSupplier clock;
  private volatile Path dir;
  private volatile boolean temporaryDir;
  private volatile boolean keepLoadedFiles;
  private volatile long idleMillis = 300_000;

  private static final class Pending {
    final Path part;
    final FileChannel channel;
    final long total;
    final long filterBytes;
    final boolean classic;
    /** Guarded by this: bytes written so far, and whether the load's accounting has been given back. */
    long received;
    boolean released;
    volatile long lastChunkMillis;
    volatile long owner;

    Pending(Path part, FileChannel channel, long total, long filterBytes, boolean classic, long now, long owner) {
      this.part = part;
      this.classic = classic;
      this.channel = channel;
      this.total = total;
      this.filterBytes = filterBytes;
      this.lastChunkMillis = now;
      this.owner = owner;
    }
  }

  /** Loads timed by {@code clock} (milliseconds), staged in a temporary directory until {@link #configure}d. */
  public FileLoads(LongSupplier clock) {
    this.clock = clock;
    int threads = Math.max(1, Math.min(4, Runtime.getRuntime().availableProcessors() / 2));
    AtomicInteger n = new AtomicInteger();
    this.finisher = new ThreadPoolExecutor(threads, threads, 30, TimeUnit.SECONDS, new LinkedBlockingQueue<>(),
        r -> Thread.ofPlatform().daemon().name("bloomery-load-finish-" + n.incrementAndGet()).unstarted(r));
    finisher.allowCoreThreadTimeOut(true);
  }

  /**
   * Where staging and loaded files live, and whether a finished load is journaled by reference to its file (so that
   * file is kept until a snapshot covers it). {@code null}: a private temporary directory, created by the first load
   * that stages a file (a server that never loads one leaves nothing behind, even when killed) and deleted at close.
   */
  public void configure(Path directory, boolean journaled, long idleTimeoutMillis) {
    this.dir = directory;
    this.temporaryDir = directory == null;
    this.keepLoadedFiles = journaled;
    this.idleMillis = idleTimeoutMillis;
  }

  /** The directory, created on first use (inside the data directory, which recovery has created by then). */
  private Path dir() throws IOException {
    Path d = dir;
    if (d == null) {
      synchronized (this) {
        if (dir == null) {
          dir = Files.createTempDirectory("bloomery-loads");
          temporaryDir = true;
        }
        d = dir;
      }
    }
    if (!Files.isDirectory(d)) {
      Files.createDirectories(d);
    }
    return d;
  }

  /** Whether {@code chunk} claims to begin a Bloomery file. */
  public static boolean isFileHeader(byte[] chunk) {
    return startsWith(chunk, MAGIC);
  }

  private static boolean startsWith(byte[] data, byte[] prefix) {
    if (data.length < prefix.length) {
      return false;
    }
    for (int i = 0; i < prefix.length; i++) {
      if (data[i] != prefix[i]) {
        return false;
      }
    }
    return true;
  }

  /** The data of the {@code BF.LOADCHUNK key 0 data} record of a finished load of {@code loadedFile}. */
  public static byte[] loadedFileRecord(String loadedFile) {
    byte[] name = loadedFile.getBytes(StandardCharsets.US_ASCII);
    byte[] data = Arrays.copyOf(LOADED_MARKER, LOADED_MARKER.length + name.length);
    System.arraycopy(name, 0, data, LOADED_MARKER.length, name.length);
    return data;
  }

  /** Whether {@code data} of a {@code BF.LOADCHUNK key 0 data} record names a loaded file (recovery only). */
  public static boolean isLoadedFileRecord(long iterator, byte[] data) {
    return iterator == 0 && startsWith(data, LOADED_MARKER);
  }

  /**
   * Whether {@code chunk} is a Bloomery file whole, as its header tells its length (what a single {@code BF.LOADCHUNK}
   * record replays alike anywhere); {@code false} for a header chunk that more chunks must follow, and for anything
   * that is not a file's beginning.
   */
  public static boolean isWholeFile(byte[] chunk) {
    if (!isFileHeader(chunk) || chunk.length < FIXED_PREFIX) {
      return false;
    }
    int header = headerLength(chunk);
    return chunk.length >= header + 4L && Long.compareUnsigned(bodyLength(chunk, header), chunk.length - header - 4L) == 0;
  }

  /** The body length, unsigned, that a header of {@code header} bytes ends with. */
  private static long bodyLength(byte[] chunk, int header) {
    long body = 0;
    for (int i = 7; i >= 0; i--) {
      body = body << 8 | (chunk[header - 8 + i] & 0xFF);
    }
    return body;
  }

  /** The length of the envelope header (through the body length) of the file that {@code chunk} begins. */
  static int headerLength(byte[] chunk) {
    if (chunk.length < FIXED_PREFIX) {
      throw invalid("the header chunk has " + chunk.length + " bytes, less than the envelope header");
    }
    int seed = (chunk[8] & 0xFF) | (chunk[9] & 0xFF) << 8;
    return FIXED_PREFIX + seed + 8;
  }

  private static LoadException invalid(String why) {
    return new LoadException("ERR invalid Bloomery file: " + why);
  }

  /** Whether an unfinished load of {@code key} waits for its next chunk. */
  public boolean pending(Key key) {
    return pending.containsKey(key);
  }

  /** Unfinished loads. */
  public int pendingCount() {
    return pending.size();
  }

  /** Loads whose last chunk arrived and that are being read back. */
  public int finishingCount() {
    return finishing.size();
  }

  /** The memory the unfinished loads' filters will take, counted against {@code maxmemory} now. */
  public long reservedBytes() {
    return reserved.get();
  }

  /** The bytes the unfinished loads hold in their staging files. */
  public long stagedBytes() {
    return staged.get();
  }

  /** Forgets an unfinished load of {@code key}, deleting its staging file. */
  public void abandon(Key key) {
    Pending p = pending.remove(key);
    if (p != null) {
      release(p);
    }
  }

  /** Gives back a load's reservation and staged bytes, once; with {@code deleteFile}, deletes its staging file. */
  private void release(Pending p, boolean deleteFile) {
    synchronized (p) {
      if (!p.released) {
        p.released = true;
        reserved.addAndGet(-p.filterBytes);
        staged.addAndGet(-p.received);
      }
      if (deleteFile) {
        try {
          p.channel.close();
          Files.deleteIfExists(p.part);
        } catch (IOException e) {
          LOG.warn("cannot delete the staging file {}: {}", p.part, e.toString());
        }
      }
    }
  }

  private void release(Pending p) {
    release(p, true);
  }

  /** A key as the log shows it: the client chose its bytes, so control characters are escaped. */
  private static String printable(Key key) {
    return ClientText.escape(key.toString());
  }

  /**
   * Abandons the loads whose last chunk came from client {@code clientId} (its connection closed), also one being
   * finished: that one installs nothing (a key it already installed stays).
   */
  public void clientGone(long clientId) {
    pending.forEach((key, p) -> {
      if (p.owner == clientId && pending.remove(key, p)) {
        LOG.info("file load of key '{}' abandoned: its connection closed after {} of {} bytes", printable(key),
            p.received, p.total);
        release(p);
      }
    });
    finishing.forEach((key, f) -> {
      if (f.p.owner == clientId && cancel(f)) {
        LOG.info("file load of key '{}' abandoned: its connection closed while it was being finished",
            printable(key));
      }
    });
  }

  /**
   * Cancels a finishing load: its accounting is given back now; the finishing thread deletes its files and installs
   * nothing. {@code false} if it had already been claimed (installed or cancelled).
   */
  private boolean cancel(Finish f) {
    if (!finishing.remove(f.key, f)) {
      return false;
    }
    release(f.p, false); // the finishing thread may still be reading the file: it deletes it
    return true;
  }

  /** Abandons the loads that received no chunk for the idle timeout. */
  public int sweepIdle() {
    long now = clock.getAsLong();
    int removed = 0;
    for (Map.Entry<Key, Pending> e : pending.entrySet()) {
      Pending p = e.getValue();
      if (now - p.lastChunkMillis >= idleMillis && pending.remove(e.getKey(), p)) {
        LOG.info("file load of key '{}' abandoned: no chunk for {} ms after {} of {} bytes", printable(e.getKey()),
            idleMillis, p.received, p.total);
        release(p);
        removed++;
      }
    }
    return removed;
  }

  /**
   * A finished load: the filter; whether its header chunk held the whole file; and the loaded file the journal
   * should name ({@code null} when the file came whole or no journal keeps it).
   */
  public record Done(Summary filter, boolean whole, String loadedFile) implements Step {}

  /** What a chunk led to: a {@link Done} key, or a staged load whose last chunk arrived and must be finished. */
  public sealed interface Step permits Done, Finish {}

  /** A staged load whose every byte is on disk (forced); {@link #finish} reads it back. */
  public static final class Finish implements Step {
    private final Key key;
    private final Pending p;

    private Finish(Key key, Pending p) {
      this.key = key;
      this.p = p;
    }

    /** The key the load is for. */
    public Key key() {
      return key;
    }
  }

  /** Installs a finished load under the key's write lock; returns when its journal record is durable. */
  @FunctionalInterface
  public interface Installer {
    CompletionStage<Void> install(Done done);
  }

  /**
   * Starts a load from its first chunk, refusing before allocation a file the memory budget, the heap or the disk
   * cannot take. Returns the complete filter if the chunk held the whole file, else {@code null}. A load of the same key
   * that is being finished is cancelled: the new header supersedes it.
   */
  public Step begin(LoadCaller caller, Key key, byte[] chunk) {
    abandon(key);
    Finish running = finishing.get(key);
    if (running != null && cancel(running)) {
      LOG.info("file load of key '{}' cancelled while being finished: a new header arrived", printable(key));
    }
    int header = headerLength(chunk);
    if (chunk.length < header) {
      throw invalid("the header chunk has " + chunk.length + " bytes, the envelope header " + header);
    }
    if (chunk[4] != FilterFormat.FORMAT_VERSION) {
      throw invalid("format version " + (chunk[4] & 0xFF) + ", this server reads " + FilterFormat.FORMAT_VERSION);
    }
    int kind = chunk[5] & 0xFF;
    boolean classic = kind == FilterKind.CLASSIC_BLOOM.code();
    boolean scaling = kind == FilterKind.SCALABLE_BLOCKED_BLOOM.code();
    if (!classic && !scaling && kind != FilterKind.BLOCKED_BLOOM.code()) {
      throw invalid("kind " + kind + " is not a classic (1), blocked (2) or scaling blocked (12) Bloom filter");
    }
    if (chunk[7] != 0) {
      throw invalid("flags must be 0");
    }
    long body = bodyLength(chunk, header);
    long maxBody = classic ? MAX_CLASSIC_BODY : scaling ? MAX_SCALING_BODY : MAX_BLOCKED_BODY;
    int minBody = scaling ? SCALING_FIXED : BODY_FIXED;
    if (body < minBody || body > maxBody) {
      throw invalid("a body of " + Long.toUnsignedString(body) + " bytes is outside the " + minBody + ".." + maxBody
          + " bytes a " + (classic ? "classic" : scaling ? "scaling blocked" : "blocked")
          + " filter file can have; it exceeds the format");
    }
    long total = header + body + 4;
    if (chunk.length > total) {
      throw invalid("the chunk has " + chunk.length + " bytes, the file " + total);
    }
    long filterBytes = body - minBody; // a scaling chain's layer headers count too: an upper bound
    long largestArray = classic ? Math.min(filterBytes, CLASSIC_SEGMENT_BYTES) : filterBytes;
    caller.admit(filterBytes, largestArray);
    if (chunk.length == total) {
      return new Done(parse(chunk), true, null);
    }
    Path part;
    FileChannel channel;
    try {
      Path d = dir();
      long usable = Files.getFileStore(d).getUsableSpace();
      if (total - chunk.length > usable) {
        throw new LoadException("ERR cannot stage a Bloomery file of " + total + " bytes: " + usable
            + " bytes free in " + d);
      }
      part = d.resolve(nextFile.incrementAndGet() + PART);
      channel = FileChannel.open(part, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
    } catch (IOException e) {
      throw new LoadException("ERR cannot stage the load: " + e.getMessage());
    }
    Pending p = new Pending(part, channel, total, filterBytes, classic, clock.getAsLong(), caller.clientId());
    reserved.addAndGet(filterBytes);
    pending.put(key, p);
    return append(key, p, chunk);
  }

  /** Appends a later chunk; after the last one returns the load to {@link #finish}, else {@code null}. */
  public Step next(LoadCaller caller, Key key, long iterator, byte[] chunk) {
    Pending p = pending.get(key);
    if (p == null) { // released by the idle sweep or a disconnect since the caller looked
      throw abandoned();
    }
    if (iterator != p.received + 1L) {
      abandon(key);
      throw invalid("chunk out of order: iterator " + iterator + ", expected " + (p.received + 1L) + "; load abandoned");
    }
    if (chunk.length > p.total - p.received) {
      abandon(key);
      throw invalid("the chunk runs " + (chunk.length - (p.total - p.received))
          + " bytes past the file's end; load abandoned");
    }
    p.owner = caller.clientId();
    p.lastChunkMillis = clock.getAsLong();
    return append(key, p, chunk);
  }

  private static LoadException abandoned() {
    return invalid("the load was abandoned (idle, or its connection closed); start again with the header chunk");
  }

  private Step append(Key key, Pending p, byte[] chunk) {
    boolean complete;
    try {
      synchronized (p) {
        if (p.released) {
          throw abandoned();
        }
        ByteBuffer buffer = ByteBuffer.wrap(chunk);
        while (buffer.hasRemaining()) {
          p.channel.write(buffer, p.received + buffer.position());
        }
        p.received += chunk.length;
        staged.addAndGet(chunk.length);
        complete = p.received == p.total;
      }
      if (!complete) {
        return null;
      }
      p.channel.force(true);
    } catch (IOException e) {
      abandon(key);
      throw new LoadException("ERR cannot stage the load: " + e.getMessage() + "; load abandoned");
    }
    if (!pending.remove(key, p)) {
      throw abandoned();
    }
    // Under the key's write lock, on the connection's own event loop: no new header, disconnect or idle sweep of
    // this load can run between the two maps.
    Finish f = new Finish(key, p);
    finishing.put(key, f);
    return f;
  }

  /**
   * Claims {@code f} for the caller, which installs it under its key's write lock; throws if it was cancelled meanwhile
   * (a new header, its connection closing, the server closing).
   */
  public void claim(Finish f) {
    if (!finishing.remove(f.key, f)) {
      throw cancelled();
    }
  }

  private static LoadException cancelled() {
    return invalid("the load was cancelled while being finished (a new header, its connection or the server closed)");
  }

  /**
   * Runs {@code task} on a finishing thread, never an event loop (after the test hook); {@code false}, running nothing,
   * once the loads are closed. The task must catch what it throws: nothing reports it.
   */
  public boolean offLoop(Runnable task) {
    try {
      finisher.execute(() -> {
        Runnable hook = finishHook;
        if (hook != null) {
          hook.run();
        }
        task.run();
      });
      return true;
    } catch (RejectedExecutionException e) {
      return false;
    }
  }

  /**
   * Claims {@code f} and reads its staged file back whole, for a caller that installs it elsewhere (a cluster node
   * sends it through its shard's log, whose every replica parses it); the load's accounting and staging file go
   * whatever happens.
   *
   * @throws LoadException if it was cancelled meanwhile (a new header, its connection or the server closed), is
   *     larger than one array holds, or cannot be read
   */
  public byte[] takeStaged(Finish f) {
    try {
      claim(f);
      if (f.p.total > Integer.MAX_VALUE - 8) {
        throw new LoadException("ERR a Bloomery file of " + f.p.total + " bytes cannot be read back into one array");
      }
      byte[] file = Files.readAllBytes(f.p.part);
      if (file.length != f.p.total) {
        throw new LoadException("ERR cannot read the staged load back: " + file.length + " of its " + f.p.total
            + " bytes are on disk");
      }
      return file;
    } catch (IOException e) {
      throw new LoadException("ERR cannot read the staged load back: " + e.getMessage());
    } finally {
      finishing.remove(f.key, f);
      release(f.p, true);
    }
  }

  /** Gives up {@code f} without finishing it (no finishing thread took it): its accounting and files go. */
  public void drop(Finish f) {
    cancel(f);
    release(f.p, true);
  }

  /**
   * Reads {@code f} back and installs it through {@code installer}, on whichever thread calls it; gives the load's
   * accounting back and deletes its staging file (and the loaded file, unless installed) whatever happens.
   */
  public CompletionStage<Void> finishAndInstall(LoadCaller caller, Finish f, Installer installer) {
    Done done = null;
    boolean installed = false;
    try {
      done = read(caller, f);
      CompletionStage<Void> durable = installer.install(done);
      installed = true;
      return durable;
    } finally {
      finishing.remove(f.key, f);
      release(f.p, true); // once: the keyspace counts the filter now; deletes the staging file unless renamed
      if (!installed && done != null && done.loadedFile() != null) {
        discard(done.loadedFile());
      }
    }
  }

  /** The heavy part of a finish: checks the file whole (CRC-32C included), allocates the filter, keeps the file. */
  private Done read(LoadCaller caller, Finish f) {
    Pending p = f.p;
    try {
      if (finishing.get(f.key) != f) {
        throw cancelled();
      }
      // The filter is allocated only now, once: check again what other keys took meanwhile (its own reservation is
      // still counted, so only the heap is checked against its size).
      long largest = p.classic ? Math.min(p.filterBytes, CLASSIC_SEGMENT_BYTES) : p.filterBytes;
      caller.admitReserved(p.filterBytes, largest);
      Summary filter = read(p.part);
      String loaded = null;
      if (keepLoadedFiles && !caller.replaying()) {
        loaded = nextFile.incrementAndGet() + LOADED;
        p.channel.close();
        Files.move(p.part, dir().resolve(loaded), StandardCopyOption.ATOMIC_MOVE);
        AtomicWrite.forceDirectory(dir());
      }
      return new Done(filter, false, loaded);
    } catch (IOException e) {
      throw new LoadException("ERR cannot read the staged load back: " + e.getMessage());
    }
  }

  /** The loaded file has been journaled: it stays until a snapshot whose cut follows the record is published. */
  public void journaled(String loadedFile) {
    loadedFiles.add(loadedFile);
  }

  /** A finished load whose file the journal no longer needs (the record was not written): delete the file. */
  private void discard(String loadedFile) {
    try {
      Files.deleteIfExists(dir().resolve(loadedFile));
    } catch (IOException e) {
      LOG.warn("cannot delete the loaded file {}: {}", loadedFile, e.toString());
    }
  }

  /**
   * Called at a snapshot's cut (writers paused): returns what to run once that snapshot is published, deleting the
   * loaded files whose journal records precede the cut (the snapshot holds their keys).
   */
  public Runnable atCut() {
    List<String> covered = new ArrayList<>(loadedFiles);
    return () -> {
      for (String name : covered) {
        loadedFiles.remove(name);
        discard(name);
      }
    };
  }

  /**
   * Recovery: the key of a {@code BF.LOADCHUNK key 0 <marker + name>} record, read back from its loaded file, if the
   * heap rule ({@link HeapAdmission}) admits it beside the {@code held} bytes of the keys recovered so far.
   */
  public Summary replayLoaded(byte[] data, long held) {
    String name = new String(data, LOADED_MARKER.length, data.length - LOADED_MARKER.length, StandardCharsets.US_ASCII);
    if (!name.matches("[0-9]{1,19}\\.blmf")) {
      throw new IllegalStateException("journal record names '" + name + "', not a loaded file");
    }
    try {
      Path file = dir().resolve(name);
      if (!Files.exists(file)) {
        throw new IllegalStateException("journal record names the loaded file " + file + ", which is missing");
      }
      long bytes = Files.size(file);
      boolean classic = FilterFormat.describe(file).kind() == FilterKind.CLASSIC_BLOOM;
      if (!HeapAdmission.admits(held, bytes, classic ? Math.min(bytes, CLASSIC_SEGMENT_BYTES) : bytes)) {
        throw new IllegalStateException("the loaded file " + file + " holds a " + bytes + "-byte filter, which the "
            + Runtime.getRuntime().maxMemory() + "-byte heap cannot take beside the " + held
            + " bytes of keys recovered before it; start the server with a larger -Xmx");
      }
      Summary filter = read(file);
      loadedFiles.add(name);
      return filter;
    } catch (LoadException e) {
      throw new IllegalStateException("the loaded file " + name + ": " + e.reply(), e);
    } catch (FilterFormatException e) {
      throw new IllegalStateException("the loaded file " + name + " is damaged: " + e.getMessage(), e);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * After recovery: deletes the staging files of unfinished loads (a crash mid-load leaves no half key and no disk
   * behind) and the loaded files that no replayed record named (a snapshot already holds their keys).
   */
  public void afterRecovery() throws IOException {
    Path d = dir;
    if (d == null || !Files.isDirectory(d)) {
      return;
    }
    try (DirectoryStream<Path> files = Files.newDirectoryStream(d)) {
      for (Path f : files) {
        String name = f.getFileName().toString();
        boolean unfinished = name.endsWith(PART);
        boolean unneeded = name.endsWith(LOADED) && (!loadedFiles.contains(name) || !keepLoadedFiles);
        if (unfinished || unneeded) {
          LOG.info("deleting {} {}", unfinished ? "the staging file of an unfinished load," : "the covered load", f);
          Files.deleteIfExists(f);
        }
      }
    }
    if (!keepLoadedFiles) {
      loadedFiles.clear();
    }
  }

  private Summary read(Path file) throws IOException {
    try (InputStream in = new BufferedInputStream(Files.newInputStream(file), 1 << 20)) {
      return FilterFormat.read(in, Files.size(file));
    } catch (FilterFormatException e) {
      throw invalid(e.getMessage());
    }
  }

  private static Summary parse(byte[] file) {
    try {
      return FilterFormat.fromBytes(file);
    } catch (FilterFormatException e) {
      throw invalid(e.getMessage());
    }
  }

  /**
   * Abandons every unfinished load, cancels the loads being finished and waits for their threads to delete their
   * files (none installs a key after this); deletes the directory if it was a temporary one.
   */
  @Override
  public void close() {
    for (Key key : List.copyOf(pending.keySet())) {
      abandon(key);
    }
    for (Finish f : List.copyOf(finishing.values())) {
      cancel(f);
    }
    finisher.shutdownNow(); // interrupts a read back; each finishing thread cleans up after itself
    try {
      if (!finisher.awaitTermination(60, TimeUnit.SECONDS)) {
        LOG.warn("a file load is still being finished after 60 s; its staging file is deleted at the next start");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    Path d = dir;
    if (temporaryDir && d != null) {
      try (DirectoryStream<Path> files = Files.newDirectoryStream(d)) {
        for (Path f : files) {
          Files.deleteIfExists(f);
        }
        Files.deleteIfExists(d);
      } catch (IOException e) {
        LOG.warn("cannot delete {}: {}", d, e.toString());
      }
    }
  }

  // ------------------------------------------------------------------------------------------------ dump

  /**
   * BF.SCANDUMP of a fixed filter: iterator 0 gives (1, the envelope header); iterator i gives the chunk after the
   * one that began at file offset i - 1, with iterator {@code 1 + its offset}; past the end, (0, empty).
   */
  public static long[] dumpRange(Summary filter, long iterator, int headerLength) {
    long total = FilterFormat.serializedLength(filter);
    if (iterator <= 0) {
      return new long[] {1, 0, headerLength};
    }
    long start = iterator == 1 ? headerLength : iterator - 1 + DUMP_CHUNK;
    if (iterator > total || start >= total) {
      return new long[] {0, 0, 0};
    }
    return new long[] {start + 1, start, Math.min(total, start + DUMP_CHUNK)};
  }

  /** The bytes [from, to) of {@code filter}'s file, through core (payload bytes straight from the words). */
  public static byte[] slice(Summary filter, long from, long to) {
    return FilterFormat.serializedRange(filter, from, to);
  }

  /** The envelope header's length (magic to body length) of a fixed or scaling blocked filter's file. */
  public static int headerLengthOf(Object fixed) {
    byte[] seed = switch (ValueType.of(fixed)) {
      case CLASSIC_BLOOM -> ((BloomFilter) fixed).seed();
      case SCALABLE_BLOCKED_BLOOM -> ((ScalableBlockedBloomFilter) fixed).seed();
      default -> ((BlockedBloomFilter) fixed).seed();
    };
    return FIXED_PREFIX + seed.length + 8;
  }
}
