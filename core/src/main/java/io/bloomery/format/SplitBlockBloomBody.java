package io.bloomery.format;

import io.bloomery.blocked.SplitBlockBloomFilter;
import io.bloomery.filter.FilterKind;
import io.bloomery.hash.ProtocolId;
import io.bloomery.internal.KindAccess;
import java.io.IOException;
import java.util.Map;

/**
 * The body of a {@link FilterKind#SPLIT_BLOCK_BLOOM split-block} (Parquet SBBF) Bloom filter inside
 * the {@link FilterFormat} envelope. The envelope's protocol must be {@code parquet-xxh64} and its
 * seed empty. The payload is byte for byte the Parquet bitset ({@link ParquetBloomFormat} writes the
 * same bytes after a Thrift header instead).
 *
 * <table>
 *   <caption>Split-block body; Z = blocks of 256 bits</caption>
 *   <tr><th>offset</th><th>size</th><th>field</th><th>rule</th></tr>
 *   <tr><td>0</td><td>8</td><td>blocks Z</td><td>u64, 1 ≤ Z ≤ {@link SplitBlockBloomFilter#MAX_BLOCKS}</td></tr>
 *   <tr><td>8</td><td>8</td><td>inserted count</td><td>u64, ≤ 2<sup>62</sup></td></tr>
 *   <tr><td>16</td><td>32Z</td><td>payload</td><td>the Parquet bitset: 8Z little-endian u32 words, word
 *       8z+i is word i of block z</td></tr>
 * </table>
 */
final class SplitBlockBloomBody {

  static final int FIXED_LENGTH = Long.BYTES + Long.BYTES;

  private SplitBlockBloomBody() {}

  static FilterFormat.BodyWriter writer(SplitBlockBloomFilter filter) {
    return BodyWriters.of(FilterKind.SPLIT_BLOCK_BLOOM, filter.protocolId(), new byte[0], FIXED_LENGTH + filter.byteSize(), out -> {
      out.u64(filter.blockCount());
      out.u64(filter.insertedCount());
      KindAccess.SplitBlock<SplitBlockBloomFilter> access = KindAccess.splitBlock(SplitBlockBloomFilter.class);
      for (long j = 0, words = access.wordCount(filter); j < words; j++) {
        out.word(access.word(filter, j));
      }
    });
  }

  private record Fields(long blocks, long inserted) {}

  private static Fields readFields(Envelope envelope, FormatReader in) throws IOException {
    if (envelope.protocolId != ProtocolId.PARQUET_XXH64) {
      throw new FilterFormatException("hash protocol: a split-block filter expects '" + ProtocolId.PARQUET_XXH64.protocolName()
          + "', found '" + envelope.protocolId.protocolName() + "'");
    }
    if (envelope.seed().length != 0) {
      throw new FilterFormatException("seed: the Parquet protocol has none, found " + envelope.seed().length + " bytes");
    }
    Fields fields = new Fields(
        in.u64("blocks", 1, SplitBlockBloomFilter.MAX_BLOCKS, "1 <= blocks <= " + SplitBlockBloomFilter.MAX_BLOCKS),
        in.u64("inserted count", 0, ClassicBloomBody.MAX_INSERTED, "0 <= n <= 2^62"));
    envelope.requireBodyLength(
        FIXED_LENGTH + 32 * fields.blocks(), fields.blocks() + " blocks (16 + 32 x " + fields.blocks() + " bytes)");
    return fields;
  }

  static void describe(Envelope envelope, FormatReader in, Map<String, Long> parameters) throws IOException {
    Fields fields = readFields(envelope, in);
    parameters.put("blocks", fields.blocks());
    parameters.put("bits", fields.blocks() * 256);
    parameters.put("hashes", 8L);
    parameters.put("inserted", fields.inserted());
  }

  static SplitBlockBloomFilter read(Envelope envelope, FormatReader in) throws IOException {
    Fields fields = readFields(envelope, in);
    FormatReader.WordStream payload = in.words(fields.blocks() * 4, "payload");
    try {
      return KindAccess.splitBlock(SplitBlockBloomFilter.class).restore(fields.blocks(), fields.inserted(), payload::next);
    } catch (IllegalArgumentException e) {
      throw new FilterFormatException("split-block filter rejected by SplitBlockBloomFilter.restore: " + e.getMessage(), e);
    }
  }
}
