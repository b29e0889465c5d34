package io.bloomery.format;

import io.bloomery.internal.KindAccess;
import io.bloomery.sketch.CountMinSketch;
import io.bloomery.sketch.DecayRandom;
import io.bloomery.sketch.TDigest;
import io.bloomery.sketch.TopK;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Objects;

/**
 * The arrays of RedisBloom's count-min and top-k sketches exactly as its {@code rdb_save} writes them (raw C structs
 * on a little-endian 64-bit machine; RedisBloom {@code b28c29451ad4}, {@code src/cms.h}, {@code src/topk.h}), and the
 * sketches rebuilt from them. The Redis RDB framing around these arrays belongs to the server; Bloom and cuckoo
 * filters move through {@link RedisBloomDump}'s header and chunks.
 *
 * <table>
 *   <caption>Array layouts; C = width × depth, row-major (cell = row × width + column)</caption>
 *   <tr><th>array</th><th>element</th><th>bytes</th></tr>
 *   <tr><td>count-min counters</td><td>u32 counter</td><td>4C</td></tr>
 *   <tr><td>top-k buckets ({@code Bucket})</td><td>u32 fingerprint, u32 count</td><td>8C</td></tr>
 *   <tr><td>top-k heap ({@code HeapBucket})</td><td>u32 fingerprint, u32 item length, 8-byte item pointer (written as
 *       zeros; RedisBloom writes a process address), u32 count, 4 bytes padding (zeros)</td><td>24k</td></tr>
 * </table>
 *
 * <p>Arrays are Java byte arrays, so a sketch whose array would pass {@link #MAX_ARRAY_BYTES} bytes is refused
 * ({@link IllegalArgumentException}) in either direction.
 */
public final class RedisBloomArrays {
  /** Size of RedisBloom's {@code HeapBucket} struct. */
  public static final int HEAP_BUCKET_BYTES = 24;
  /** Size of RedisBloom's top-k {@code Bucket} struct. */
  public static final int TOPK_BUCKET_BYTES = 8;
  /** The largest array either direction handles. */
  public static final int MAX_ARRAY_BYTES = Integer.MAX_VALUE - 8;

  private RedisBloomArrays() {}

  /** The sketch's counters ({@code cms->array}): {@code 4 · width · depth} bytes. */
  public static byte[] countMinCounters(CountMinSketch sketch) {
    Objects.requireNonNull(sketch, "sketch");
    long cells = sketch.width() * sketch.depth();
    ByteBuffer out = allocate(cells, Integer.BYTES, "count-min counters");
    KindAccess.CountMin<CountMinSketch> access = KindAccess.countMin(CountMinSketch.class);
    for (long i = 0; i < cells; i++) {
      out.putInt((int) access.counterAt(sketch, i));
    }
    return out.array();
  }

  /**
   * A count-min sketch from RedisBloom's fields.
   *
   * @param count the total of increments ({@code cms->counter}, unsigned 64-bit)
   * @throws IllegalArgumentException with {@link CountMinSketch}'s message for a bad width or depth, or if {@code
   *     counters} is not {@code 4 · width · depth} bytes; nothing is allocated before the length is checked
   */
  public static CountMinSketch countMin(long width, long depth, long count, byte[] counters) {
    Objects.requireNonNull(counters, "counters");
    if (width >= 1 && depth >= 1 && (width > MAX_ARRAY_BYTES / Integer.BYTES / depth
        || width * depth * Integer.BYTES != counters.length)) {
      throw new IllegalArgumentException("count-min counters: expected 4 x " + width + " x " + depth + " bytes, found "
          + counters.length);
    }
    ByteBuffer in = ByteBuffer.wrap(counters).order(ByteOrder.LITTLE_ENDIAN);
    try {
      return KindAccess.countMin(CountMinSketch.class).restore(width, depth, count, () -> in.getInt() & 0xFFFF_FFFFL);
    } catch (java.io.IOException e) {
      throw new IllegalStateException("reading an array cannot fail", e);
    }
  }

  /** The sketch's buckets ({@code topk->data}): {@code 8 · width · depth} bytes. */
  public static byte[] topKBuckets(TopK topK) {
    Objects.requireNonNull(topK, "topK");
    long cells = topK.width() * topK.depth();
    ByteBuffer out = allocate(cells, TOPK_BUCKET_BYTES, "top-k buckets");
    KindAccess.TopKs<TopK, DecayRandom> access = KindAccess.topK(TopK.class, DecayRandom.class);
    for (long i = 0; i < cells; i++) {
      out.putInt(access.bucketFingerprint(topK, i));
      out.putInt((int) access.bucketCount(topK, i));
    }
    return out.array();
  }

  /** The sketch's heap ({@code topk->heap}): {@code 24 · k} bytes, item pointers and padding zero. */
  public static byte[] topKHeap(TopK topK) {
    Objects.requireNonNull(topK, "topK");
    ByteBuffer out = allocate(topK.k(), HEAP_BUCKET_BYTES, "top-k heap");
    KindAccess.TopKs<TopK, DecayRandom> access = KindAccess.topK(TopK.class, DecayRandom.class);
    for (int slot = 0; slot < topK.k(); slot++) {
      byte[] item = access.heapItem(topK, slot);
      out.putInt(item == null ? 0 : io.bloomery.hash.MurmurHash2.hash32(item, 0, item.length, TopK.FINGERPRINT_SEED));
      out.putInt(item == null ? 0 : item.length);
      out.putLong(0);
      out.putInt((int) access.heapCount(topK, slot));
      out.putInt(0);
    }
    return out.array();
  }

  /** The item in heap slot {@code slot}, {@code null} for an empty slot. */
  public static byte[] topKItem(TopK topK, int slot) {
    Objects.requireNonNull(topK, "topK");
    Objects.checkIndex(slot, (int) topK.k());
    byte[] item = KindAccess.topK(TopK.class, DecayRandom.class).heapItem(topK, slot);
    return item == null ? null : item.clone();
  }

  /**
   * A top-k sketch from RedisBloom's fields: bucket fingerprints and counts and the heap counts come from the arrays;
   * heap fingerprints are recomputed from the items (RedisBloom derives them the same way), and the heap's item
   * lengths and pointers are ignored, as RedisBloom's loader ignores them.
   *
   * @param items the heap slots' items, {@code null} for an empty slot, {@code k} of them
   * @throws IllegalArgumentException with {@link TopK}'s message for bad parameters, if an array has the wrong
   *     length, or an empty slot has a count; nothing is allocated before the lengths are checked
   */
  public static TopK topK(long k, long width, long depth, double decay, byte[] buckets, byte[] heap, byte[][] items,
      DecayRandom random) {
    Objects.requireNonNull(buckets, "buckets");
    Objects.requireNonNull(heap, "heap");
    Objects.requireNonNull(items, "items");
    if (width >= 1 && depth >= 1 && (width > MAX_ARRAY_BYTES / TOPK_BUCKET_BYTES / depth
        || width * depth * TOPK_BUCKET_BYTES != buckets.length)) {
      throw new IllegalArgumentException("top-k buckets: expected 8 x " + width + " x " + depth + " bytes, found "
          + buckets.length);
    }
    if (k >= 1 && (k > MAX_ARRAY_BYTES / HEAP_BUCKET_BYTES || k * HEAP_BUCKET_BYTES != heap.length
        || items.length != k)) {
      throw new IllegalArgumentException("top-k heap: expected 24 x " + k + " bytes and " + k + " items, found "
          + heap.length + " bytes and " + items.length + " items");
    }
    ByteBuffer bucketsIn = ByteBuffer.wrap(buckets).order(ByteOrder.LITTLE_ENDIAN);
    ByteBuffer heapIn = ByteBuffer.wrap(heap).order(ByteOrder.LITTLE_ENDIAN);
    try {
      return KindAccess.topK(TopK.class, DecayRandom.class).restore(k, width, depth, decay, random, new KindAccess.TopKStateSource() {
        private int slot;

        @Override
        public int nextBucketFingerprint() {
          return bucketsIn.getInt();
        }

        @Override
        public long nextBucketCount() {
          return bucketsIn.getInt() & 0xFFFF_FFFFL;
        }

        @Override
        public byte[] nextHeapItem() {
          byte[] item = items[slot++];
          return item == null ? null : item.clone();
        }

        @Override
        public long nextHeapCount() {
          int base = (slot - 1) * HEAP_BUCKET_BYTES;
          return heapIn.getInt(base + 16) & 0xFFFF_FFFFL;
        }
      });
    } catch (java.io.IOException e) {
      throw new IllegalStateException("reading an array cannot fail", e);
    }
  }

  private static ByteBuffer allocate(long elements, int elementBytes, String what) {
    if (elements > MAX_ARRAY_BYTES / elementBytes) {
      throw new IllegalArgumentException(what + ": " + elements + " elements of " + elementBytes
          + " bytes pass the largest array, " + MAX_ARRAY_BYTES + " bytes");
    }
    return ByteBuffer.allocate((int) (elements * elementBytes)).order(ByteOrder.LITTLE_ENDIAN);
  }

  /** A t-digest's fields as RedisBloom's {@code TDigestRdbSave} writes them, after compressing. */
  public record TDigestFields(double min, double max, double[] means, long[] weights) {}

  /** Compresses {@code digest} (as RedisBloom does before saving) and returns its fields. */
  public static TDigestFields tDigest(TDigest digest) {
    KindAccess.tDigest(TDigest.class).compress(digest);
    KindAccess.TDigestState state = KindAccess.tDigest(TDigest.class).state(digest);
    return new TDigestFields(state.min(), state.max(), state.means(), state.weights());
  }

  /**
   * A compressed t-digest from RedisBloom's saved fields: every centroid merged.
   *
   * @throws IllegalArgumentException if the fields are not a valid digest
   */
  public static TDigest tDigest(long compression, double min, double max, long totalCompressions, double[] means,
      long[] weights) {
    return KindAccess.tDigest(TDigest.class).restore(compression, min, max, totalCompressions, means.length, means, weights);
  }
}
