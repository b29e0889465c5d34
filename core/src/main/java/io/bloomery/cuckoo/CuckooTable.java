package io.bloomery.cuckoo;

import io.bloomery.internal.HeapBudget;

/**
 * One RedisBloom cuckoo sub-filter ({@code SubCF}): {@code numBuckets} buckets of {@code bucketSize} one-byte
 * fingerprint slots in one flat byte sequence, 0 meaning empty. Stored in pages of 2^30 bytes so that a sub-filter
 * larger than a Java array (RedisBloom allows 2^56 buckets) is still addressable with 64-bit slot indexes.
 *
 * <p>Sizes are fixed at construction; slot contents are guarded by {@link CuckooFilter}.
 */
final class CuckooTable {
  private static final int PAGE_SHIFT = 30;
  private static final long PAGE_MASK = (1L << PAGE_SHIFT) - 1;

  final long numBuckets;
  final int bucketSize;
  final long slots;
  private final byte[][] pages;

  private CuckooTable(long numBuckets, int bucketSize, byte[][] pages) {
    this.numBuckets = numBuckets;
    this.bucketSize = bucketSize;
    this.slots = numBuckets * bucketSize;
    this.pages = pages;
  }

  /** A zeroed table, or {@code null} if the heap cannot hold it even after a collection ({@link HeapBudget}). */
  static CuckooTable allocate(long numBuckets, int bucketSize) {
    long slots = numBuckets * bucketSize;
    if (numBuckets <= 0 || slots / bucketSize != numBuckets || !HeapBudget.couldEverFit(slots)) {
      return null;
    }
    int pageCount = (int) ((slots + PAGE_MASK) >>> PAGE_SHIFT);
    try {
      byte[][] pages = new byte[pageCount][];
      for (int p = 0; p < pageCount; p++) {
        long remaining = slots - ((long) p << PAGE_SHIFT);
        pages[p] = new byte[(int) Math.min(remaining, 1L << PAGE_SHIFT)];
      }
      return new CuckooTable(numBuckets, bucketSize, pages);
    } catch (OutOfMemoryError cannotFit) { // thrown only after a full collection
      return null;
    }
  }

  byte get(long slot) {
    return pages[(int) (slot >>> PAGE_SHIFT)][(int) (slot & PAGE_MASK)];
  }

  void set(long slot, byte fingerprint) {
    pages[(int) (slot >>> PAGE_SHIFT)][(int) (slot & PAGE_MASK)] = fingerprint;
  }

  /**
   * RedisBloom's {@code SubCF_GetIndex}: the first slot of bucket {@code hash mod numBuckets}. The C function
   * returns {@code uint32_t}, so the slot index is truncated to 32 bits; reproduced so that sub-filters of more
   * than 2^32 slots place fingerprints exactly where RedisBloom does.
   */
  long bucketStart(long hash) {
    return (Long.remainderUnsigned(hash, numBuckets) * bucketSize) & 0xFFFF_FFFFL;
  }

  /** The first empty slot of the bucket starting at {@code start}, or -1. */
  long findEmpty(long start) {
    for (int i = 0; i < bucketSize; i++) {
      if (get(start + i) == 0) {
        return start + i;
      }
    }
    return -1;
  }

  /** The first slot of the bucket starting at {@code start} that holds {@code fingerprint}, or -1. */
  long find(long start, byte fingerprint) {
    for (int i = 0; i < bucketSize; i++) {
      if (get(start + i) == fingerprint) {
        return start + i;
      }
    }
    return -1;
  }

  int countIn(long start, byte fingerprint) {
    int count = 0;
    for (int i = 0; i < bucketSize; i++) {
      if (get(start + i) == fingerprint) {
        count++;
      }
    }
    return count;
  }

  /** {@code Filter_FindAvailable}: first empty slot of bucket h1, else of bucket h2; -1 if both are full. */
  long findAvailable(long h1, long h2) {
    long slot = findEmpty(bucketStart(h1));
    return slot >= 0 ? slot : findEmpty(bucketStart(h2));
  }

  void copyOut(long from, byte[] out, int outOffset, int length) {
    long slot = from;
    int done = 0;
    while (done < length) {
      int page = (int) (slot >>> PAGE_SHIFT);
      int inPage = (int) (slot & PAGE_MASK);
      int n = Math.min(length - done, pages[page].length - inPage);
      System.arraycopy(pages[page], inPage, out, outOffset + done, n);
      done += n;
      slot += n;
    }
  }

  void copyIn(long to, byte[] in, int inOffset, int length) {
    long slot = to;
    int done = 0;
    while (done < length) {
      int page = (int) (slot >>> PAGE_SHIFT);
      int inPage = (int) (slot & PAGE_MASK);
      int n = Math.min(length - done, pages[page].length - inPage);
      System.arraycopy(in, inOffset + done, pages[page], inPage, n);
      done += n;
      slot += n;
    }
  }

  long occupied() {
    long count = 0;
    for (byte[] page : pages) {
      for (byte b : page) {
        if (b != 0) {
          count++;
        }
      }
    }
    return count;
  }

  /** A deep copy, or {@code null} if the heap cannot hold one. */
  CuckooTable copy() {
    if (!HeapBudget.couldEverFit(slots)) {
      return null;
    }
    try {
      byte[][] copies = new byte[pages.length][];
      for (int p = 0; p < pages.length; p++) {
        copies[p] = pages[p].clone();
      }
      return new CuckooTable(numBuckets, bucketSize, copies);
    } catch (OutOfMemoryError cannotFit) { // thrown only after a full collection
      return null;
    }
  }
}
