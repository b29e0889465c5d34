package io.bloomery.format;

import io.bloomery.blocked.BlockedBloomFilter;
import io.bloomery.filter.BloomFilter;
import io.bloomery.filter.FilterKind;
import io.bloomery.hash.ProtocolId;
import io.bloomery.internal.KindAccess;
import java.io.IOException;
import java.util.Map;

/**
 * The body of a {@link FilterKind#BLOCKED_BLOOM blocked} Bloom filter inside the {@link FilterFormat}
 * envelope. The envelope's protocol must be {@code xxh3-blocked-v1}; its seed is at most 255 bytes.
 *
 * <table>
 *   <caption>Blocked body; B = blocks of 512 bits</caption>
 *   <tr><th>offset</th><th>size</th><th>field</th><th>rule</th></tr>
 *   <tr><td>0</td><td>8</td><td>blocks B</td><td>u64, 1 ≤ B ≤ {@link BlockedBloomFilter#MAX_BLOCKS}</td></tr>
 *   <tr><td>8</td><td>4</td><td>hashes k</td><td>u32, 1 ≤ k ≤ 16</td></tr>
 *   <tr><td>12</td><td>8</td><td>inserted count</td><td>u64, ≤ 2<sup>62</sup></td></tr>
 *   <tr><td>20</td><td>64B</td><td>payload</td><td>8B little-endian u64 words; word j = bits
 *       64j..64j+63; block b is words 8b..8b+7</td></tr>
 * </table>
 */
final class BlockedBloomBody {

  static final int FIXED_LENGTH = Long.BYTES + Integer.BYTES + Long.BYTES;

  private BlockedBloomBody() {}

  /** A writer for {@code filter}'s body recording {@code insertedCount}, fed from the filter's words. */
  static FilterFormat.BodyWriter writer(BlockedBloomFilter filter, long insertedCount) {
    KindAccess.Blocked<BlockedBloomFilter> access = KindAccess.blocked(BlockedBloomFilter.class);
    long[] next = {0};
    return streamingWriter(filter.seed(), filter.blockCount(), filter.hashCount(), insertedCount,
        () -> access.word(filter, next[0]++));
  }

  /**
   * A writer for a blocked body whose words come from {@code words} (see {@link
   * FilterFormat#writeBlocked}); every parameter is checked here, before the first byte is written.
   */
  static FilterFormat.BodyWriter streamingWriter(
      byte[] seed, long blocks, int hashes, long insertedCount, FilterFormat.WordSource words) {
    java.util.Objects.requireNonNull(seed, "seed");
    java.util.Objects.requireNonNull(words, "words");
    if (blocks < 1 || blocks > BlockedBloomFilter.MAX_BLOCKS) {
      throw new IllegalArgumentException("blocks must be in [1, " + BlockedBloomFilter.MAX_BLOCKS + "], was " + blocks);
    }
    if (hashes < 1 || hashes > 16) {
      throw new IllegalArgumentException("hashes must be in [1, 16], was " + hashes);
    }
    if (seed.length > BlockedBloomFilter.MAX_SEED_BYTES) {
      throw new IllegalArgumentException("seed must be at most 255 bytes, was " + seed.length);
    }
    if (insertedCount < 0 || insertedCount > ClassicBloomBody.MAX_INSERTED) {
      throw new IllegalArgumentException("inserted count must be in [0, 2^62], was " + insertedCount);
    }
    byte[] seedCopy = seed.clone();
    return BodyWriters.of(FilterKind.BLOCKED_BLOOM, ProtocolId.XXH3_BLOCKED_V1, seedCopy, FIXED_LENGTH + Long.BYTES * 8 * blocks, out -> {
      out.u64(blocks);
      out.u32(hashes);
      out.u64(insertedCount);
      for (long j = 0, count = 8 * blocks; j < count; j++) {
        out.word(words.nextWord());
      }
    });
  }

  private record Fields(long blocks, int hashes, long inserted) {}

  private static Fields readFields(Envelope envelope, FormatReader in) throws IOException {
    if (envelope.protocolId != ProtocolId.XXH3_BLOCKED_V1) {
      throw new FilterFormatException("hash protocol: a blocked filter expects '" + ProtocolId.XXH3_BLOCKED_V1.protocolName()
          + "', found '" + envelope.protocolId.protocolName() + "'");
    }
    if (envelope.seed().length > BlockedBloomFilter.MAX_SEED_BYTES) {
      throw new FilterFormatException("seed: a blocked filter expects at most 255 bytes, found " + envelope.seed().length);
    }
    Fields fields = new Fields(
        in.u64("blocks", 1, BlockedBloomFilter.MAX_BLOCKS, "1 <= blocks <= " + BlockedBloomFilter.MAX_BLOCKS),
        (int) in.u32("hashes (k)", 1, 16, "1 <= k <= 16"),
        in.u64("inserted count", 0, ClassicBloomBody.MAX_INSERTED, "0 <= n <= 2^62"));
    envelope.requireBodyLength(
        FIXED_LENGTH + 64 * fields.blocks(), fields.blocks() + " blocks (20 + 64 x " + fields.blocks() + " bytes)");
    return fields;
  }

  static void describe(Envelope envelope, FormatReader in, Map<String, Long> parameters) throws IOException {
    Fields fields = readFields(envelope, in);
    parameters.put("blocks", fields.blocks());
    parameters.put("bits", fields.blocks() * 512);
    parameters.put("hashes", (long) fields.hashes());
    parameters.put("inserted", fields.inserted());
  }

  static BlockedBloomFilter read(Envelope envelope, FormatReader in) throws IOException {
    Fields fields = readFields(envelope, in);
    FormatReader.WordStream payload = in.words(fields.blocks() * 8, "payload");
    try {
      return KindAccess.blocked(BlockedBloomFilter.class).restore(envelope.seed(), fields.blocks(), fields.hashes(), fields.inserted(), payload::next);
    } catch (IllegalArgumentException e) {
      throw new FilterFormatException("blocked filter rejected: " + e.getMessage(), e);
    }
  }
}
