package io.bloomery.format;

import io.bloomery.filter.FilterKind;
import io.bloomery.hash.ProtocolId;
import io.bloomery.internal.KindAccess;
import io.bloomery.sketch.DecayRandom;
import io.bloomery.sketch.TopK;
import java.io.IOException;
import java.util.Map;

/**
 * The body of a {@link FilterKind#TOP_K top-k} sketch. Protocol {@code redisbloom-murmur2}, empty
 * seed. The decay random source is not persisted: a sketch read back draws from
 * {@link DecayRandom#glibc(int) DecayRandom.glibc(1)} (glibc's unseeded {@code rand()}); use
 * {@link TopK#copy(DecayRandom)} to choose another.
 *
 * <table>
 *   <caption>Top-k body; C = width × depth</caption>
 *   <tr><th>offset</th><th>size</th><th>field</th><th>rule</th></tr>
 *   <tr><td>0</td><td>4</td><td>k</td><td>u32 ≥ 1</td></tr>
 *   <tr><td>4</td><td>4</td><td>width</td><td>u32 ≥ 1</td></tr>
 *   <tr><td>8</td><td>4</td><td>depth</td><td>u32 ≥ 1, width × depth ≤ 2<sup>31</sup> − 9</td></tr>
 *   <tr><td>12</td><td>8</td><td>decay</td><td>IEEE-754 binary64, in (0, 1]</td></tr>
 *   <tr><td>20</td><td>8C</td><td>buckets</td><td>u64 per bucket, row-major: fingerprint in the low 32 bits,
 *       count (u32) in the high 32 bits</td></tr>
 *   <tr><td>20+8C</td><td>…</td><td>heap</td><td>k slots in heap order, each u32 count, u32 item length L
 *       (0xFFFFFFFF for an empty slot, whose count must be 0), then L item bytes</td></tr>
 * </table>
 *
 * <p>B = 20 + 8C + 8k + Σ L exactly; every L is checked against the body bytes that remain.
 */
final class TopKBody {
  static final int FIXED_LENGTH = 20;
  static final long EMPTY_SLOT = 0xFFFF_FFFFL;

  private TopKBody() {}

  static FilterFormat.BodyWriter writer(TopK topK) {
    KindAccess.TopKs<TopK, DecayRandom> access = KindAccess.topK(TopK.class, DecayRandom.class);
    long cells = topK.width() * topK.depth();
    int k = (int) topK.k();
    long itemBytes = 0;
    for (int slot = 0; slot < k; slot++) {
      byte[] item = access.heapItem(topK, slot);
      itemBytes += item == null ? 0 : item.length;
    }
    long length = FIXED_LENGTH + Long.BYTES * cells + 8L * k + itemBytes;
    return BodyWriters.of(FilterKind.TOP_K, ProtocolId.REDISBLOOM_MURMUR2, new byte[0], length, out -> {
      out.u32(topK.k());
      out.u32(topK.width());
      out.u32(topK.depth());
      out.u64(Double.doubleToRawLongBits(topK.decay()));
      for (long i = 0; i < cells; i++) {
        out.word((access.bucketFingerprint(topK, i) & 0xFFFF_FFFFL) | access.bucketCount(topK, i) << 32);
      }
      for (int slot = 0; slot < k; slot++) {
        byte[] item = access.heapItem(topK, slot);
        out.u32(access.heapCount(topK, slot));
        out.u32(item == null ? EMPTY_SLOT : item.length);
        if (item != null) {
          out.bytes(item);
        }
      }
    });
  }

  private record Fields(long k, long width, long depth, double decay) {}

  private static Fields readFields(Envelope envelope, FormatReader in) throws IOException {
    RedisBloomSketchBodies.requireProtocol(envelope);
    long offset = in.position();
    long k = in.u32("k", 1, Long.MAX_VALUE, "k >= 1");
    long width = in.u32("width");
    long depth = in.u32("depth");
    if (width < 1 || depth < 1 || width > TopK.MAX_CELLS / depth) { // the product can pass 2^63
      throw new FilterFormatException(
          "width x depth at offset " + (offset + 4) + ": expected each >= 1 and width x depth <= " + TopK.MAX_CELLS
              + ", found " + width + " x " + depth);
    }
    double decay = Double.longBitsToDouble(in.u64("decay"));
    if (!(decay > 0 && decay <= 1)) {
      throw new FilterFormatException("decay at offset " + (offset + 12) + ": expected 0 < decay <= 1, found " + decay);
    }
    long minimum = FIXED_LENGTH + Long.BYTES * width * depth + 8 * k;
    if (envelope.bodyLength < minimum) {
      throw new FilterFormatException(
          "body length at offset " + (envelope.bodyOffset - Long.BYTES) + ": expected at least " + minimum
              + " bytes for a top-k body with k = " + k + ", " + width + " x " + depth + " buckets, found " + envelope.bodyLength);
    }
    return new Fields(k, width, depth, decay);
  }

  static void describe(Envelope envelope, FormatReader in, Map<String, Long> parameters) throws IOException {
    Fields f = readFields(envelope, in);
    parameters.put("k", f.k());
    parameters.put("width", f.width());
    parameters.put("depth", f.depth());
  }

  static TopK read(Envelope envelope, FormatReader in) throws IOException {
    Fields f = readFields(envelope, in);
    long bodyEnd = envelope.bodyOffset + envelope.bodyLength;
    FormatReader.WordStream buckets = in.words(f.width() * f.depth(), "buckets");
    long[] word = {0};
    try {
      return KindAccess.topK(TopK.class, DecayRandom.class).restore(f.k(), f.width(), f.depth(), f.decay(), DecayRandom.glibc(1), new KindAccess.TopKStateSource() {
        private long pendingCount;

        @Override
        public int nextBucketFingerprint() throws IOException {
          word[0] = buckets.next();
          return (int) word[0];
        }

        @Override
        public long nextBucketCount() {
          return word[0] >>> 32;
        }

        @Override
        public byte[] nextHeapItem() throws IOException {
          long slotOffset = in.position();
          pendingCount = in.u32("heap count");
          long length = in.u32("heap item length");
          if (length == EMPTY_SLOT) {
            return null;
          }
          long remaining = bodyEnd - in.position();
          if (length > remaining) {
            throw new FilterFormatException(
                "heap item length at offset " + (slotOffset + 4) + ": expected at most the " + remaining
                    + " body bytes that remain, found " + length);
          }
          return in.bytes((int) length, "heap item");
        }

        @Override
        public long nextHeapCount() {
          return pendingCount;
        }
      });
    } catch (IllegalArgumentException e) {
      throw new FilterFormatException("top-k sketch rejected by TopK.restore: " + e.getMessage(), e);
    }
  }
}
