package io.bloomery.format;

import io.bloomery.filter.FilterKind;
import io.bloomery.hash.ProtocolId;
import io.bloomery.internal.KindAccess;
import io.bloomery.sketch.CountMinSketch;
import java.io.IOException;
import java.util.Map;

/**
 * The body of a {@link FilterKind#COUNT_MIN_SKETCH count-min sketch}. Protocol
 * {@code redisbloom-murmur2}, empty seed.
 *
 * <table>
 *   <caption>Count-min body; C = width × depth, W = ceil(C / 2)</caption>
 *   <tr><th>offset</th><th>size</th><th>field</th><th>rule</th></tr>
 *   <tr><td>0</td><td>8</td><td>width</td><td>u64 ≥ 1</td></tr>
 *   <tr><td>8</td><td>8</td><td>depth</td><td>u64 ≥ 1, width × depth ≤ 2<sup>31</sup> − 9</td></tr>
 *   <tr><td>16</td><td>8</td><td>count</td><td>u64, total of increments (wraps, as RedisBloom's)</td></tr>
 *   <tr><td>24</td><td>8W</td><td>counters</td><td>u32 counters in row-major order, little-endian, two
 *       per u64 word (counter 2j in the low half of word j); if C is odd the last high half is 0</td></tr>
 * </table>
 */
final class CountMinBody {
  static final int FIXED_LENGTH = 24;

  private CountMinBody() {}

  static FilterFormat.BodyWriter writer(CountMinSketch sketch) {
    long cells = sketch.width() * sketch.depth();
    long length = FIXED_LENGTH + Long.BYTES * ((cells + 1) / 2);
    KindAccess.CountMin<CountMinSketch> access = KindAccess.countMin(CountMinSketch.class);
    return BodyWriters.of(FilterKind.COUNT_MIN_SKETCH, ProtocolId.REDISBLOOM_MURMUR2, new byte[0], length, out -> {
      out.u64(sketch.width());
      out.u64(sketch.depth());
      out.u64(sketch.insertedCount());
      for (long i = 0; i < cells; i += 2) {
        long high = i + 1 < cells ? access.counterAt(sketch, i + 1) : 0;
        out.word(access.counterAt(sketch, i) | high << 32);
      }
    });
  }

  private record Fields(long width, long depth, long count) {
    long words() {
      return (width * depth + 1) / 2;
    }
  }

  private static Fields readFields(Envelope envelope, FormatReader in) throws IOException {
    RedisBloomSketchBodies.requireProtocol(envelope);
    long offset = in.position();
    long width = in.u64("width", 1, CountMinSketch.MAX_CELLS, "1 <= width <= " + CountMinSketch.MAX_CELLS);
    long depth = in.u64("depth");
    if (depth < 1 || depth > CountMinSketch.MAX_CELLS / width) {
      throw new FilterFormatException(
          "depth at offset " + (offset + 8) + ": expected 1 <= depth and width x depth <= " + CountMinSketch.MAX_CELLS
              + ", found depth " + Long.toUnsignedString(depth) + " with width " + width);
    }
    Fields fields = new Fields(width, depth, in.u64("count"));
    envelope.requireBodyLength(FIXED_LENGTH + Long.BYTES * fields.words(),
        width + " x " + depth + " counters (24 + 8 x " + fields.words() + " words)");
    return fields;
  }

  static void describe(Envelope envelope, FormatReader in, Map<String, Long> parameters) throws IOException {
    Fields f = readFields(envelope, in);
    parameters.put("width", f.width());
    parameters.put("depth", f.depth());
    parameters.put("count", f.count());
  }

  static CountMinSketch read(Envelope envelope, FormatReader in) throws IOException {
    Fields f = readFields(envelope, in);
    long cells = f.width() * f.depth();
    FormatReader.WordStream payload = in.words(f.words(), "counters");
    long[] state = {0, 0}; // next cell, current word
    try {
      return KindAccess.countMin(CountMinSketch.class).restore(f.width(), f.depth(), f.count(), () -> {
        long cell = state[0]++;
        if ((cell & 1) == 0) {
          state[1] = payload.next();
          if (cell == cells - 1 && (state[1] >>> 32) != 0) {
            throw new FilterFormatException("counters: expected the unused high half of the last word to be 0, found "
                + (state[1] >>> 32));
          }
          return state[1] & 0xFFFF_FFFFL;
        }
        return state[1] >>> 32;
      });
    } catch (IllegalArgumentException e) {
      throw new FilterFormatException("count-min sketch rejected by CountMinSketch.restore: " + e.getMessage(), e);
    }
  }
}
