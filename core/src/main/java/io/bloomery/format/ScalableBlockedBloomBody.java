package io.bloomery.format;

import io.bloomery.blocked.BlockedBloomFilter;
import io.bloomery.blocked.ScalableBlockedBloomFilter;
import io.bloomery.filter.FilterKind;
import io.bloomery.hash.ProtocolId;
import io.bloomery.internal.KindAccess;
import java.io.IOException;
import java.util.Map;

/**
 * The body of a {@link FilterKind#SCALABLE_BLOCKED_BLOOM scaling blocked} Bloom filter ({@link
 * ScalableBlockedBloomFilter}) inside the {@link FilterFormat} envelope. The envelope's protocol must be {@code
 * xxh3-blocked-v1} (every layer places bits by it) and its seed, the chain's, at most 255 bytes. Layer i's error rate
 * is not stored: it is {@code error × 0.5^(i+1)}.
 *
 * <table>
 *   <caption>Scaling blocked body; n layers, B_i = layer i's blocks of 512 bits; little-endian</caption>
 *   <tr><th>offset</th><th>size</th><th>field</th><th>rule</th></tr>
 *   <tr><td>0</td><td>4</td><td>expansion</td><td>u32, 1 ≤ x ≤ 32768</td></tr>
 *   <tr><td>4</td><td>8</td><td>error rate</td><td>f64 (IEEE 754 bits), 0 &lt; e &lt; 1</td></tr>
 *   <tr><td>12</td><td>4</td><td>layers n</td><td>u32, 1 ≤ n ≤ 1024, 28n ≤ what the body has left</td></tr>
 *   <tr><td>16</td><td>28n</td><td>layer headers</td><td>per layer: u64 blocks B_i (1 ≤ B_i ≤ {@link
 *       BlockedBloomFilter#MAX_BLOCKS}), u32 hashes k_i (1..16), u64 capacity c_i (c_0 ≥ 1, c_i = c_(i-1) × x),
 *       u64 item count (≤ 2<sup>62</sup>)</td></tr>
 *   <tr><td>16+28n</td><td>64ΣB_i</td><td>payload</td><td>each layer's words, oldest layer first, as a blocked
 *       body's payload: 8B_i little-endian u64 words, word j = bits 64j..64j+63</td></tr>
 * </table>
 *
 * <p>Every header field is read and checked, and the body length is compared with what the headers declare, before
 * any layer is allocated.
 */
final class ScalableBlockedBloomBody {
  static final int FIXED_LENGTH = Integer.BYTES + Double.BYTES + Integer.BYTES;
  static final int LAYER_HEADER = Long.BYTES + Integer.BYTES + Long.BYTES + Long.BYTES;

  private ScalableBlockedBloomBody() {}

  static FilterFormat.BodyWriter writer(ScalableBlockedBloomFilter filter) {
    KindAccess.ChainState<BlockedBloomFilter> chain = KindAccess.scalableBlocked(ScalableBlockedBloomFilter.class, BlockedBloomFilter.class).layers(filter);
    BlockedBloomFilter[] layers = chain.layers();
    long length = FIXED_LENGTH + (long) LAYER_HEADER * layers.length;
    for (BlockedBloomFilter layer : layers) {
      length += layer.bitSize() / 8;
    }
    KindAccess.Blocked<BlockedBloomFilter> words = KindAccess.blocked(BlockedBloomFilter.class);
    return BodyWriters.of(FilterKind.SCALABLE_BLOCKED_BLOOM, ProtocolId.XXH3_BLOCKED_V1, filter.seed(), length, out -> {
      out.u32(filter.expansion());
      out.u64(Double.doubleToRawLongBits(filter.errorRate()));
      out.u32(layers.length);
      for (int i = 0; i < layers.length; i++) {
        out.u64(layers[i].blockCount());
        out.u32(layers[i].hashCount());
        out.u64(chain.capacities()[i]);
        out.u64(chain.sizes()[i]);
      }
      for (BlockedBloomFilter layer : layers) {
        for (long j = 0, count = layer.blockCount() * 8; j < count; j++) {
          out.word(words.word(layer, j));
        }
      }
    });
  }

  private record Header(int expansion, double errorRate, long[] blocks, int[] hashes, long[] capacities,
      long[] sizes) {}

  private static Header readHeader(Envelope envelope, FormatReader in) throws IOException {
    if (envelope.protocolId != ProtocolId.XXH3_BLOCKED_V1) {
      throw new FilterFormatException("hash protocol: a scaling blocked filter expects '"
          + ProtocolId.XXH3_BLOCKED_V1.protocolName() + "', found '" + envelope.protocolId.protocolName() + "'");
    }
    if (envelope.seed().length > BlockedBloomFilter.MAX_SEED_BYTES) {
      throw new FilterFormatException(
          "seed: a scaling blocked filter expects at most 255 bytes, found " + envelope.seed().length);
    }
    int expansion = (int) in.u32("expansion", 1, ScalableBlockedBloomFilter.MAX_EXPANSION,
        "1 <= expansion <= " + ScalableBlockedBloomFilter.MAX_EXPANSION);
    long rateOffset = in.position();
    double errorRate = Double.longBitsToDouble(in.u64("error rate"));
    if (!(errorRate > 0 && errorRate < 1)) {
      throw new FilterFormatException("error rate at offset " + rateOffset + ": expected 0 < e < 1, found " + errorRate);
    }
    long maxLayers = Math.min(ScalableBlockedBloomFilter.MAX_LAYERS,
        Math.max(0, envelope.bodyLength - FIXED_LENGTH) / LAYER_HEADER);
    int n = (int) in.u32("layer count", 1, maxLayers, "1 <= n <= " + maxLayers
        + " (at most " + ScalableBlockedBloomFilter.MAX_LAYERS + ", and 28 header bytes each in the body)");
    long[] blocks = new long[n];
    int[] hashes = new int[n];
    long[] capacities = new long[n];
    long[] sizes = new long[n];
    long payload = 0;
    for (int i = 0; i < n; i++) {
      blocks[i] = in.u64("layer " + i + " blocks", 1, BlockedBloomFilter.MAX_BLOCKS,
          "1 <= blocks <= " + BlockedBloomFilter.MAX_BLOCKS);
      hashes[i] = (int) in.u32("layer " + i + " hashes (k)", 1, 16, "1 <= k <= 16");
      capacities[i] = in.u64("layer " + i + " capacity", 1, Long.MAX_VALUE, "1 <= capacity < 2^63");
      sizes[i] = in.u64("layer " + i + " item count", 0, 1L << 62, "0 <= n <= 2^62");
      payload += 64 * blocks[i]; // n <= 1024 layers of < 2^34 bytes: no overflow
    }
    try {
      KindAccess.scalableBlocked(ScalableBlockedBloomFilter.class, BlockedBloomFilter.class).checkChain(expansion, errorRate, capacities);
    } catch (IllegalArgumentException e) {
      throw new FilterFormatException("scaling blocked chain rejected: " + e.getMessage(), e);
    }
    envelope.requireBodyLength(FIXED_LENGTH + (long) LAYER_HEADER * n + payload,
        n + " layers holding " + payload + " bytes");
    return new Header(expansion, errorRate, blocks, hashes, capacities, sizes);
  }

  static void describe(Envelope envelope, FormatReader in, Map<String, Long> parameters) throws IOException {
    Header header = readHeader(envelope, in);
    long blocks = 0;
    long items = 0;
    for (int i = 0; i < header.blocks().length; i++) {
      blocks += header.blocks()[i];
      items = Math.min(1L << 62, items + header.sizes()[i]);
    }
    parameters.put("layers", (long) header.blocks().length);
    parameters.put("expansion", (long) header.expansion());
    parameters.put("blocks", blocks);
    parameters.put("bits", blocks * 512);
    parameters.put("firstCapacity", header.capacities()[0]);
    parameters.put("inserted", items);
  }

  static ScalableBlockedBloomFilter read(Envelope envelope, FormatReader in) throws IOException {
    Header header = readHeader(envelope, in);
    int n = header.blocks().length;
    BlockedBloomFilter[] layers = new BlockedBloomFilter[n];
    try {
      for (int i = 0; i < n; i++) {
        FormatReader.WordStream words = in.words(header.blocks()[i] * 8, "layer " + i + " payload");
        layers[i] = KindAccess.blocked(BlockedBloomFilter.class).restore(envelope.seed(), header.blocks()[i], header.hashes()[i], 0, words::next);
      }
      return KindAccess.scalableBlocked(ScalableBlockedBloomFilter.class, BlockedBloomFilter.class).restore(envelope.seed(), header.expansion(), header.errorRate(),
          new KindAccess.ChainState<>(layers, header.capacities(), header.sizes()));
    } catch (IllegalArgumentException e) {
      throw new FilterFormatException("scaling blocked filter rejected: " + e.getMessage(), e);
    }
  }
}
