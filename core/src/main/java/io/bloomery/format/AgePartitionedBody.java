package io.bloomery.format;

import io.bloomery.aging.AgePartitionedFilter;
import io.bloomery.filter.BloomFilter;
import io.bloomery.filter.FilterKind;
import io.bloomery.hash.HashProtocol;
import io.bloomery.hash.ProtocolId;
import io.bloomery.internal.KindAccess;
import java.io.IOException;
import java.util.Map;

/**
 * The body of an {@link FilterKind#AGE_PARTITIONED_BLOOM age-partitioned} filter: g classic
 * generations sharing protocol, seed, m and k. The time source is not persisted: a filter read back
 * uses the system clock; use {@link AgePartitionedFilter#copy(java.util.function.LongSupplier)} to
 * choose another.
 *
 * <table>
 *   <caption>Age-partitioned body; W = ceil(m / 64)</caption>
 *   <tr><th>offset</th><th>size</th><th>field</th><th>rule</th></tr>
 *   <tr><td>0</td><td>8</td><td>bits per generation m</td><td>u64, 1 ≤ m ≤ 2<sup>40</sup></td></tr>
 *   <tr><td>8</td><td>4</td><td>hashes k</td><td>u32, 1 ≤ k ≤ 255</td></tr>
 *   <tr><td>12</td><td>4</td><td>generations g</td><td>u32, 2 ≤ g ≤ 1024</td></tr>
 *   <tr><td>16</td><td>8</td><td>span s</td><td>u64 milliseconds, ≥ 1</td></tr>
 *   <tr><td>24</td><td>8</td><td>newest generation</td><td>i64, ⌊time / s⌋ of the newest generation</td></tr>
 *   <tr><td>32</td><td>g·(8 + 8W)</td><td>generations</td><td>oldest first, each: u64 inserted count
 *       (≤ 2<sup>62</sup>), then W words as in the classic body (bits ≥ m are 0)</td></tr>
 * </table>
 */
final class AgePartitionedBody {
  static final int FIXED_LENGTH = 32;
  static final long MAX_BITS = 1L << 40;
  static final int MAX_HASHES = 255;
  static final long MAX_INSERTED = 1L << 62;

  private AgePartitionedBody() {}

  static FilterFormat.BodyWriter writer(AgePartitionedFilter filter) {
    // the live generations, streamed in place: adds during the write may show (a rolling snapshot)
    AgePartitionedFilter.Snapshot snapshot = KindAccess.aging(AgePartitionedFilter.class, AgePartitionedFilter.Snapshot.class).liveGenerations(filter);
    KindAccess.Classic<BloomFilter> access = KindAccess.classic(BloomFilter.class);
    long words = (filter.bitsPerGeneration() + 63) >>> 6;
    long length = FIXED_LENGTH + (long) snapshot.size() * (Long.BYTES + Long.BYTES * words);
    return BodyWriters.of(FilterKind.AGE_PARTITIONED_BLOOM, filter.protocolId(), filter.seed(), length, out -> {
      out.u64(filter.bitsPerGeneration());
      out.u32(filter.hashCount());
      out.u32(filter.generations());
      out.u64(filter.generationSpanMillis());
      out.u64(snapshot.newestGeneration());
      for (int i = 0; i < snapshot.size(); i++) {
        BloomFilter generation = snapshot.generation(i);
        out.u64(generation.insertedCount());
        for (long j = 0; j < words; j++) {
          out.word(access.word(generation, j));
        }
      }
    });
  }

  private record Fields(long bits, int hashes, int generations, long span, long newest) {
    long words() {
      return (bits + 63) >>> 6;
    }
  }

  private static Fields readFields(Envelope envelope, FormatReader in) throws IOException {
    long offset = in.position();
    long bits = in.u64("bits per generation (m)", 1, MAX_BITS, "1 <= m <= 2^40");
    long hashes = in.u32("hashes (k)", 1, MAX_HASHES, "1 <= k <= " + MAX_HASHES);
    long generations = in.u32("generations (g)", AgePartitionedFilter.MIN_GENERATIONS,
        AgePartitionedFilter.MAX_GENERATIONS,
        AgePartitionedFilter.MIN_GENERATIONS + " <= g <= " + AgePartitionedFilter.MAX_GENERATIONS);
    long span = in.u64("span (ms)", 1, Long.MAX_VALUE, ">= 1");
    long newest = in.u64("newest generation");
    if (newest > Long.MAX_VALUE / span || newest < Long.MIN_VALUE / span) {
      throw new FilterFormatException(
          "newest generation at offset " + (offset + 24) + ": expected a generation whose start time fits 64 bits for span "
              + span + ", found " + newest);
    }
    Fields f = new Fields(bits, (int) hashes, (int) generations, span, newest);
    envelope.requireBodyLength(
        FIXED_LENGTH + f.generations() * (Long.BYTES + Long.BYTES * f.words()),
        "m = " + bits + ", g = " + f.generations() + " (32 + " + f.generations() + " x (8 + 8 x " + f.words() + "))");
    return f;
  }

  static void describe(Envelope envelope, FormatReader in, Map<String, Long> parameters) throws IOException {
    Fields f = readFields(envelope, in);
    envelope.checkedProtocol(f.bits(), f.hashes());
    parameters.put("bits", f.bits());
    parameters.put("hashes", (long) f.hashes());
    parameters.put("generations", (long) f.generations());
    parameters.put("spanMillis", f.span());
    parameters.put("newestGeneration", f.newest());
  }

  static AgePartitionedFilter read(Envelope envelope, FormatReader in) throws IOException {
    Fields f = readFields(envelope, in);
    HashProtocol protocol = envelope.checkedProtocol(f.bits(), f.hashes());
    FormatReader.WordStream[] current = {null};
    try {
      return KindAccess.aging(AgePartitionedFilter.class, AgePartitionedFilter.Snapshot.class).restore(
          protocol, envelope.seed(), f.bits(), f.hashes(), f.generations(), f.span(), f.newest(), System::currentTimeMillis,
          new KindAccess.GenerationSource() {
            @Override
            public long nextInsertedCount() throws IOException {
              long offset = in.position();
              long inserted = in.u64("inserted count");
              if (inserted < 0 || inserted > MAX_INSERTED) {
                throw new FilterFormatException(
                    "inserted count at offset " + offset + ": expected 0 <= n <= 2^62, found " + Long.toUnsignedString(inserted));
              }
              current[0] = in.words(f.words(), "generation words");
              return inserted;
            }

            @Override
            public long nextWord() throws IOException {
              return current[0].next();
            }
          });
    } catch (IllegalArgumentException e) {
      throw new FilterFormatException("age-partitioned filter rejected: " + e.getMessage(), e);
    }
  }
}
