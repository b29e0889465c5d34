package io.bloomery.server.command;

import io.bloomery.filter.FilterKind;
import io.bloomery.filter.Summary;
import io.bloomery.format.FilterFormat;
import io.bloomery.format.FilterFormatException;
import io.bloomery.server.keyspace.Key;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * {@code BF.LOADCHUNK} / {@code BF.SCANDUMP} of a Bloomery file (docs/FORMAT.md) for a fixed Bloom key. Chunk 1
 * (iterator 1) begins with the file's envelope header, at least its 18 + S bytes (magic "BLMF" to the body length);
 * every later chunk carries the iterator {@code 1 + the file offset of its first byte}, so the chunks must come in
 * order and may have any size. The file is assembled outside the keyspace and becomes the key only when its last
 * byte arrives and the whole file (CRC-32C included) has been checked: a partial or damaged load never answers
 * EXISTS and leaves no key.
 *
 * <p>A RedisBloom SCANDUMP header is never taken for a file: it starts with its u64 item count, and a count whose
 * first bytes read "BLMF" 01 would be at least 2^40 + 2^32 items (bytes 4..7 are the version 1, a kind of 1 or 2
 * and a protocol), far beyond what a RedisBloom chain can hold.
 */
final class FileLoads {
  /** The size of the data chunks BF.SCANDUMP hands out after the header. */
  static final int DUMP_CHUNK = 16 << 20;

  private static final byte[] MAGIC = {'B', 'L', 'M', 'F'};
  /** Magic, version, kind, protocol, flags, seed length. */
  private static final int FIXED_PREFIX = 10;
  /** One load's limit: one Java array, with room left for the rest of the journal record that holds it. */
  static final int MAX_FILE = Integer.MAX_VALUE - (1 << 20);

  private final ConcurrentHashMap<Key, Pending> pending = new ConcurrentHashMap<>();
  private final AtomicLong pendingBytes = new AtomicLong();

  private static final class Pending {
    final byte[] file;
    int received;

    Pending(int length) {
      file = new byte[length];
    }
  }

  /** Whether {@code chunk} claims to begin a Bloomery file. */
  static boolean isFileHeader(byte[] chunk) {
    if (chunk.length < MAGIC.length) {
      return false;
    }
    for (int i = 0; i < MAGIC.length; i++) {
      if (chunk[i] != MAGIC[i]) {
        return false;
      }
    }
    return true;
  }

  /** The length of the envelope header (through the body length) of the file that {@code chunk} begins. */
  static int headerLength(byte[] chunk) {
    if (chunk.length < FIXED_PREFIX) {
      throw invalid("the header chunk has " + chunk.length + " bytes, less than the envelope header");
    }
    int seed = (chunk[8] & 0xFF) | (chunk[9] & 0xFF) << 8;
    return FIXED_PREFIX + seed + 8;
  }

  private static CommandException invalid(String why) {
    return new CommandException("ERR invalid Bloomery file: " + why);
  }

  boolean pending(Key key) {
    return pending.containsKey(key);
  }

  /** Forgets an unfinished load of {@code key}. */
  void abandon(Key key) {
    Pending p = pending.remove(key);
    if (p != null) {
      pendingBytes.addAndGet(-p.file.length);
    }
  }

  /**
   * Starts a load from its first chunk, refusing before allocation a file the memory budget or the heap cannot take.
   * Returns the complete filter if the chunk held the whole file, else {@code null}.
   */
  Summary begin(Invocation inv, Key key, byte[] chunk) {
    abandon(key);
    int header = headerLength(chunk);
    if (chunk.length < header) {
      throw invalid("the header chunk has " + chunk.length + " bytes, the envelope header " + header);
    }
    if (chunk[4] != FilterFormat.FORMAT_VERSION) {
      throw invalid("format version " + (chunk[4] & 0xFF) + ", this server reads " + FilterFormat.FORMAT_VERSION);
    }
    int kind = chunk[5] & 0xFF;
    if (kind != FilterKind.CLASSIC_BLOOM.code() && kind != FilterKind.BLOCKED_BLOOM.code()) {
      throw invalid("kind " + kind + " is not a classic (1) or blocked (2) Bloom filter");
    }
    if (chunk[7] != 0) {
      throw invalid("flags must be 0");
    }
    long body = 0;
    for (int i = 7; i >= 0; i--) {
      body = body << 8 | (chunk[header - 8 + i] & 0xFF);
    }
    if (body < 0 || body > MAX_FILE - header - 4L) {
      throw invalid("a body of " + Long.toUnsignedString(body) + " bytes exceeds the " + MAX_FILE
          + " bytes one load can take");
    }
    int total = (int) (header + body + 4);
    if (chunk.length > total) {
      throw invalid("the chunk has " + chunk.length + " bytes, the file " + total);
    }
    Memory.admitWithHeap(inv, total + pendingBytes.get());
    Pending p = new Pending(total);
    pendingBytes.addAndGet(total);
    pending.put(key, p);
    return append(key, p, chunk);
  }

  /** Appends a later chunk; returns the complete filter after the last one, else {@code null}. */
  Summary next(Key key, long iterator, byte[] chunk) {
    Pending p = pending.get(key);
    if (iterator != p.received + 1L) {
      abandon(key);
      throw invalid("chunk out of order: iterator " + iterator + ", expected " + (p.received + 1L) + "; load abandoned");
    }
    if (chunk.length > p.file.length - p.received) {
      abandon(key);
      throw invalid("the chunk runs " + (chunk.length - (p.file.length - p.received))
          + " bytes past the file's end; load abandoned");
    }
    return append(key, p, chunk);
  }

  private Summary append(Key key, Pending p, byte[] chunk) {
    System.arraycopy(chunk, 0, p.file, p.received, chunk.length);
    p.received += chunk.length;
    if (p.received < p.file.length) {
      return null;
    }
    abandon(key);
    try {
      return FilterFormat.fromBytes(p.file);
    } catch (FilterFormatException e) {
      throw invalid(e.getMessage());
    }
  }

  /**
   * BF.SCANDUMP of a fixed filter: iterator 0 gives (1, the envelope header); iterator i gives the chunk after the
   * one that began at file offset i - 1, with iterator {@code 1 + its offset}; past the end, (0, empty).
   */
  static long[] dumpRange(Summary filter, long iterator, int headerLength) {
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

  /** The bytes [from, to) of {@code filter}'s file, written through without holding the whole file. */
  static byte[] slice(Summary filter, long from, long to) {
    byte[] out = new byte[(int) (to - from)];
    OutputStream window = new OutputStream() {
      long at;

      @Override
      public void write(int b) throws IOException {
        write(new byte[] {(byte) b}, 0, 1);
      }

      @Override
      public void write(byte[] b, int off, int len) throws IOException {
        long lo = Math.max(at, from);
        long hi = Math.min(at + len, to);
        if (lo < hi) {
          System.arraycopy(b, off + (int) (lo - at), out, (int) (lo - from), (int) (hi - lo));
        }
        at += len;
        if (at >= to) {
          throw WindowFull.INSTANCE; // the rest of the file is not needed
        }
      }
    };
    try {
      FilterFormat.write(filter, window);
    } catch (WindowFull e) {
      return out;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return out;
  }

  /** Stops the serialization once the window is filled. */
  private static final class WindowFull extends IOException {
    static final WindowFull INSTANCE = new WindowFull();

    private WindowFull() {
      super("window filled", null);
    }

    @Override
    public synchronized Throwable fillInStackTrace() {
      return this;
    }
  }

  /** The envelope header's length (magic to body length) of a fixed filter's file. */
  static int headerLengthOf(Object fixed) {
    byte[] seed = fixed instanceof io.bloomery.filter.BloomFilter c ? c.seed()
        : ((io.bloomery.blocked.BlockedBloomFilter) fixed).seed();
    return FIXED_PREFIX + seed.length + 8;
  }
}
