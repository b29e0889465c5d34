package io.bloomery.format;

import io.bloomery.counting.CountingBloomFilter;
import io.bloomery.filter.FilterKind;
import io.bloomery.hash.HashProtocol;
import io.bloomery.hash.ProtocolId;
import io.bloomery.internal.KindAccess;
import java.io.IOException;
import java.util.Map;

/**
 * The body of a {@link FilterKind#COUNTING_BLOOM counting} Bloom filter.
 *
 * <table>
 *   <caption>Counting body; w = counter width, W = ceil(m·w / 64)</caption>
 *   <tr><th>offset</th><th>size</th><th>field</th><th>rule</th></tr>
 *   <tr><td>0</td><td>8</td><td>counters m</td><td>u64, 1 ≤ m ≤ min(2<sup>40</sup>, (2<sup>31</sup> − 9)·64/w)</td></tr>
 *   <tr><td>8</td><td>4</td><td>hashes k</td><td>u32, 1 ≤ k ≤ 255</td></tr>
 *   <tr><td>12</td><td>1</td><td>counter width w</td><td>u8, 4, 8 or 16</td></tr>
 *   <tr><td>13</td><td>8</td><td>item count</td><td>u64, adds minus removes, ≤ 2<sup>62</sup></td></tr>
 *   <tr><td>21</td><td>8W</td><td>counters</td><td>W little-endian u64 words; counter i is bits
 *       (i mod 64/w)·w … +w−1 of word ⌊i·w/64⌋; bits past counter m − 1 are 0</td></tr>
 * </table>
 */
final class CountingBloomBody {
  static final int FIXED_LENGTH = 8 + 4 + 1 + 8;
  static final int MAX_HASHES = 255;
  static final long MAX_ITEMS = 1L << 62;

  private CountingBloomBody() {}

  static FilterFormat.BodyWriter writer(CountingBloomFilter filter) {
    KindAccess.Counting<CountingBloomFilter> access = KindAccess.counting(CountingBloomFilter.class);
    long words = access.wordCount(filter);
    return BodyWriters.of(
        FilterKind.COUNTING_BLOOM, filter.protocolId(), filter.seed(), FIXED_LENGTH + Long.BYTES * words, out -> {
          out.u64(filter.counterCount());
          out.u32(filter.hashCount());
          out.u8(filter.counterBits());
          out.u64(filter.insertedCount());
          for (long j = 0; j < words; j++) {
            out.word(access.word(filter, j));
          }
        });
  }

  private record Fields(long counters, int hashes, int width, long items) {
    long words() {
      long perWord = 64 / width;
      return (counters + perWord - 1) / perWord;
    }
  }

  private static Fields readFields(Envelope envelope, FormatReader in) throws IOException {
    long offset = in.position();
    long counters = in.u64("counters (m)");
    int hashes = (int) Math.min(in.u32("hashes (k)"), Integer.MAX_VALUE);
    int width = in.u8("counter width");
    long items = in.u64("item count");
    // the width decides m's bound, so the fields are checked once all are read
    if (width != 4 && width != 8 && width != 16) {
      throw new FilterFormatException("counter width at offset " + (offset + 12) + ": expected 4, 8 or 16, found " + width);
    }
    long maxCounters = CountingBloomFilter.maxCounters(width);
    if (counters < 1 || counters > maxCounters) {
      throw new FilterFormatException(
          "counters (m) at offset " + offset + ": expected 1 <= m <= " + maxCounters + ", found " + Long.toUnsignedString(counters));
    }
    if (hashes < 1 || hashes > MAX_HASHES) {
      throw new FilterFormatException("hashes (k) at offset " + (offset + 8) + ": expected 1 <= k <= " + MAX_HASHES + ", found " + hashes);
    }
    if (items < 0 || items > MAX_ITEMS) {
      throw new FilterFormatException(
          "item count at offset " + (offset + 13) + ": expected 0 <= n <= 2^62, found " + Long.toUnsignedString(items));
    }
    Fields f = new Fields(counters, hashes, width, items);
    envelope.requireBodyLength(FIXED_LENGTH + Long.BYTES * f.words(), "m = " + counters + ", w = " + width + " (21 + 8 x " + f.words() + " words)");
    return f;
  }

  static void describe(Envelope envelope, FormatReader in, Map<String, Long> parameters) throws IOException {
    Fields f = readFields(envelope, in);
    envelope.checkedProtocol(f.counters(), f.hashes());
    parameters.put("counters", f.counters());
    parameters.put("hashes", (long) f.hashes());
    parameters.put("counterBits", (long) f.width());
    parameters.put("items", f.items());
  }

  static CountingBloomFilter read(Envelope envelope, FormatReader in) throws IOException {
    Fields f = readFields(envelope, in);
    HashProtocol protocol = envelope.checkedProtocol(f.counters(), f.hashes());
    FormatReader.WordStream payload = in.words(f.words(), "counters");
    try {
      return KindAccess.counting(CountingBloomFilter.class).restore(protocol, envelope.seed(), f.counters(), f.hashes(), f.width(), f.items(), payload::next);
    } catch (IllegalArgumentException e) {
      throw new FilterFormatException("counting filter rejected by CountingBloomFilter.restore: " + e.getMessage(), e);
    }
  }
}
