package io.bloomery.blocked;

import com.dynatrace.hash4j.hashing.Hasher64;
import io.bloomery.internal.ParallelBatches;
import io.bloomery.internal.Utf8Scratch;
import java.util.Objects;

/**
 * The batch loop shared by the blocked kinds: hash {@value #BATCH} keys into a small reusable array,
 * then hand the batch to the filter's probe or insert, so the cache misses of a batch overlap. Keys
 * come from an array of byte arrays, from slices of one buffer, or from strings (UTF-8, see
 * {@link #hashUtf8}). One {@code long[BATCH]} per call; nothing per key.
 */
final class KeyBatches {

  /** Keys hashed per batch before probing: enough misses in flight, small enough for L1. */
  static final int BATCH = 32;

  private KeyBatches() {}

  /** Where the keys come from. */
  interface Source {
    int count();

    /** Hashes keys [start, start + size) into {@code batch[at, at + size)}. */
    void hash(Hasher64 hasher, long[] batch, int at, int start, int size);

    /** Throws what {@link #hash} would throw for any key (a null key, a slice outside the buffer). */
    void check();
  }

  /** What the filter does with a hashed batch; returns what it counts (changed adds or maybes). */
  interface Step {
    int apply(long[] batch, int size, int start);
  }

  /** A blocked kind's per-hash probe and insert, which the shared batch loops below drive. */
  interface Blocks {
    /** Whether every bit of {@code hash} is set, read with no early exit so that a batch's misses overlap. */
    boolean containsBranchFree(long hash);

    /** Sets the bits of {@code hash}; true if one of them changed. */
    boolean insert(long hash);

    /** The block {@code hash} places its bits in. */
    int block(long hash);

    /** The 64-byte line of the filter's storage that holds block {@code block}, in {@code [0, lines())}. */
    long line(int block);

    /** The number of 64-byte lines the blocks span. */
    long lines();
  }

  /** Adds the keys {@code [from, to)} of {@code source}; returns how many changed the filter. */
  static int insertAll(Hasher64 hasher, Source source, int from, int to, Blocks blocks) {
    return run(hasher, source, from, to, (batch, size, start) -> Long.bitCount(insert(blocks, batch, size)));
  }

  /**
   * Adds every key of {@code source} over {@code parts} threads, each setting only the bits of the
   * blocks in its own range of lines ({@link ParallelBatches#scatterInsert}): each key is hashed once,
   * by one thread, and handed as (hash, index) to the thread that owns its block. {@code changed}, if
   * not null, receives what each {@code add} in order would have returned. Returns how many changed
   * the filter.
   */
  static int insertOwned(Hasher64 hasher, Source source, int parts, Blocks blocks, boolean[] changed) {
    source.check(); // before any thread adds anything
    return ParallelBatches.scatterInsert(source.count(), parts, blocks.lines(), 2,
        (from, to, chunkStart, out) -> scatterOwned(hasher, source, blocks, from, to, chunkStart, out),
        (owner, records, length, chunkStart, marks) -> applyOwned(blocks, records, length, chunkStart, marks),
        changed, null);
  }

  /**
   * Adds every key of {@code source} over {@link ParallelBatches#parts} threads for {@code
   * parallelism}: the plain batch loop when that is one, else {@link #insertOwned}.
   *
   * @throws IllegalArgumentException if parallelism &lt; 1
   */
  static int insertParallel(Hasher64 hasher, Source source, int parallelism, Blocks blocks) {
    int parts = ParallelBatches.parts(source.count(), parallelism);
    return parts == 1
        ? insertAll(hasher, source, 0, source.count(), blocks)
        : insertOwned(hasher, source, parts, blocks, null);
  }

  /** Hashes keys {@code [from, to)} once and appends (hash, key index in the chunk) to the owner of each one's block. */
  private static void scatterOwned(Hasher64 hasher, Source source, Blocks blocks, int from, int to, int chunkStart,
      ParallelBatches.Records out) {
    long[] batch = new long[BATCH];
    long[][] buffers = out.buffers;
    int[] lengths = out.lengths;
    for (int start = from; start < to; start += BATCH) {
      int size = Math.min(BATCH, to - start);
      source.hash(hasher, batch, 0, start, size);
      for (int j = 0; j < size; j++) {
        long hash = batch[j];
        int owner = out.owner(blocks.line(blocks.block(hash)));
        long[] buffer = buffers[owner];
        int at = lengths[owner];
        buffer[at] = hash;
        buffer[at + 1] = start + j - chunkStart;
        lengths[owner] = at + 2;
      }
    }
  }

  /** An owner's share of a round: inserts the (hash, key) records, {@value #BATCH} at a time, and marks changed keys. */
  private static long applyOwned(Blocks blocks, long[] records, int length, int chunkStart, long[] marks) {
    long[] batch = new long[BATCH];
    int[] keys = new int[BATCH];
    for (int start = 0; start < length; start += 2 * BATCH) {
      int size = Math.min(BATCH, (length - start) >>> 1);
      for (int j = 0; j < size; j++) {
        batch[j] = records[start + 2 * j];
        keys[j] = chunkStart + (int) records[start + 2 * j + 1];
      }
      mark(insert(blocks, batch, size), keys, marks);
    }
    return 0;
  }

  /** Marks key {@code keys[b]} for every set bit b of {@code changedInBatch}. */
  private static void mark(long changedInBatch, int[] keys, long[] marks) {
    for (long rest = changedInBatch; rest != 0; rest &= rest - 1) {
      int key = keys[Long.numberOfTrailingZeros(rest)];
      marks[key >>> 6] |= 1L << key;
    }
  }

  /** Queries the keys {@code [from, to)} of {@code source} into {@code out[from, to)}; returns the maybes. */
  static int probeAll(Hasher64 hasher, Source source, int from, int to, boolean[] out, Blocks blocks) {
    checkOut(out, source.count());
    return run(hasher, source, from, to, (batch, size, start) -> probe(blocks, batch, size, out, start));
  }

  /**
   * Pass 1 reads each key's block (independent loads, so the misses overlap) and notes which keys are
   * already present; pass 2 does the atomic ORs of the others on lines that are now in L1. Returns
   * the keys that changed the filter, bit j for {@code batch[j]}.
   */
  private static long insert(Blocks blocks, long[] batch, int count) {
    long present = 0;
    for (int j = 0; j < count; j++) {
      present |= (blocks.containsBranchFree(batch[j]) ? 1L : 0L) << j;
    }
    long changed = 0;
    for (int j = 0; j < count; j++) {
      if ((present & (1L << j)) == 0 && blocks.insert(batch[j])) {
        changed |= 1L << j;
      }
    }
    return changed;
  }

  private static int probe(Blocks blocks, long[] batch, int count, boolean[] out, int outStart) {
    int maybe = 0;
    for (int j = 0; j < count; j++) {
      boolean answer = blocks.containsBranchFree(batch[j]);
      out[outStart + j] = answer;
      maybe += answer ? 1 : 0;
    }
    return maybe;
  }

  /** Runs {@code step} over the keys {@code [from, to)} of {@code source} (all of them, or a part of a parallel call). */
  private static int run(Hasher64 hasher, Source source, int from, int to, Step step) {
    long[] batch = new long[BATCH];
    int total = 0;
    for (int start = from; start < to; start += BATCH) {
      int size = Math.min(BATCH, to - start);
      source.hash(hasher, batch, 0, start, size);
      total += step.apply(batch, size, start);
    }
    return total;
  }

  static Source of(byte[][] items) {
    Objects.requireNonNull(items, "items");
    return new Source() {
      @Override
      public int count() {
        return items.length;
      }

      @Override
      public void hash(Hasher64 hasher, long[] batch, int at, int start, int size) {
        for (int j = 0; j < size; j++) {
          batch[at + j] = hasher.hashBytesToLong(Objects.requireNonNull(items[start + j], "items[]"));
        }
      }

      @Override
      public void check() {
        for (byte[] item : items) {
          Objects.requireNonNull(item, "items[]");
        }
      }
    };
  }

  static Source of(byte[] buffer, int[] offsets, int[] lengths, int count) {
    Objects.requireNonNull(buffer, "buffer");
    Objects.requireNonNull(offsets, "offsets");
    Objects.requireNonNull(lengths, "lengths");
    if (count < 0 || count > offsets.length || count > lengths.length) {
      throw new IllegalArgumentException("count " + count + " must be in [0, min(offsets.length "
          + offsets.length + ", lengths.length " + lengths.length + ")]");
    }
    return new Source() {
      @Override
      public int count() {
        return count;
      }

      @Override
      public void hash(Hasher64 hasher, long[] batch, int at, int start, int size) {
        for (int j = 0; j < size; j++) {
          int i = start + j;
          Objects.checkFromIndexSize(offsets[i], lengths[i], buffer.length);
          batch[at + j] = hasher.hashBytesToLong(buffer, offsets[i], lengths[i]);
        }
      }

      @Override
      public void check() {
        for (int i = 0; i < count; i++) {
          Objects.checkFromIndexSize(offsets[i], lengths[i], buffer.length);
        }
      }
    };
  }

  static Source of(CharSequence[] items) {
    Objects.requireNonNull(items, "items");
    return new Source() {
      @Override
      public int count() {
        return items.length;
      }

      @Override
      public void hash(Hasher64 hasher, long[] batch, int at, int start, int size) {
        for (int j = 0; j < size; j++) {
          batch[at + j] = hashUtf8(hasher, items[start + j]);
        }
      }

      @Override
      public void check() {
        for (CharSequence item : items) {
          Objects.requireNonNull(item, "items[]");
        }
      }
    };
  }

  /**
   * Hash of the UTF-8 bytes of {@code item}, encoded into the calling thread's {@link Utf8Scratch}
   * (no allocation once the scratch has grown to the item's length).
   */
  static long hashUtf8(Hasher64 hasher, CharSequence item) {
    Objects.requireNonNull(item, "item");
    Utf8Scratch scratch = Utf8Scratch.get();
    int length = scratch.encode(item); // first: encoding may grow the scratch's array
    return hasher.hashBytesToLong(scratch.bytes(), 0, length);
  }

  static void checkOut(boolean[] out, int needed) {
    Objects.requireNonNull(out, "out");
    if (out.length < needed) {
      throw new IllegalArgumentException("out has " + out.length + " elements, needs " + needed);
    }
  }
}
