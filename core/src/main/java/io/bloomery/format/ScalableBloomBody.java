package io.bloomery.format;

import io.bloomery.filter.DumpRejectedException;
import io.bloomery.filter.FilterKind;
import io.bloomery.internal.KindAccess;
import io.bloomery.scalable.ScalableBloomFilter;
import java.io.IOException;
import java.util.Map;

/**
 * The body of a {@link FilterKind#SCALABLE_BLOOM scalable} Bloom filter ({@link ScalableBloomFilter}) inside the
 * {@link FilterFormat} envelope: exactly RedisBloom's BF.SCANDUMP header followed by every layer's bit array, so
 * the body is also a ready-made BF.LOADCHUNK source. Protocol {@code redisbloom-murmur64a}, empty seed (the hash of
 * chains without the FORCE64 option is RedisBloom's legacy 32-bit MurmurHash2, as the options field says).
 *
 * <table>
 *   <caption>Scalable body; n layers, L = Σ layer bytes; little-endian</caption>
 *   <tr><th>offset</th><th>size</th><th>field</th><th>rule</th></tr>
 *   <tr><td>0</td><td>8</td><td>size</td><td>u64 items counted, = Σ layer sizes</td></tr>
 *   <tr><td>8</td><td>4</td><td>nfilters n</td><td>u32 ≥ 1</td></tr>
 *   <tr><td>12</td><td>4</td><td>options</td><td>u32, bits of 1 NOROUND | 2 ENTS_IS_BITS | 4 FORCE64 | 8 NO_SCALING</td></tr>
 *   <tr><td>16</td><td>4</td><td>growth</td><td>u32</td></tr>
 *   <tr><td>20</td><td>53n</td><td>layers</td><td>per layer u64 bytes, u64 bits, u64 size, f64 error, f64 bpe,
 *       u32 hashes, u64 capacity, u8 n2; RedisBloom's integrity checks apply</td></tr>
 *   <tr><td>20+53n</td><td>L</td><td>payload</td><td>each layer's bytes, oldest first; bit x of a layer is bit
 *       (x mod 8) of its byte ⌊x/8⌋</td></tr>
 * </table>
 */
final class ScalableBloomBody {
  /** Payload is streamed in pieces of this many bytes. */
  private static final int PIECE = 1 << 20;
  /** Payload words read from the filter at a time (one copy-on-write page). */
  private static final int PAGE_WORDS = ScalableBloomFilter.Frozen.PAGE_BYTES / Long.BYTES;

  private ScalableBloomBody() {}

  /**
   * Streams the live filter: its header and layers as they are now, each layer's words read in place (no copy), so
   * adds made during the write may show in the payload (a rolling snapshot, as {@link FilterFormat} promises).
   */
  static FilterFormat.BodyWriter writer(ScalableBloomFilter filter) {
    return writer(KindAccess.scalableDumps(ScalableBloomFilter.class, ScalableBloomFilter.Frozen.class).rollingView(filter));
  }

  /** Streams a view: exactly the filter as it was when the view was taken. */
  static FilterFormat.BodyWriter writer(ScalableBloomFilter.Frozen view) {
    KindAccess.ScalableDumps<ScalableBloomFilter, ScalableBloomFilter.Frozen> dumps = KindAccess.scalableDumps(ScalableBloomFilter.class, ScalableBloomFilter.Frozen.class);
    byte[] header = dumps.viewHeader(view);
    long payload = RedisBloomDump.bloomPayloadBytes(header);
    return RedisBloomBodies.writer(FilterKind.SCALABLE_BLOOM, header.length + payload, out -> {
      out.bytes(header);
      long[] words = new long[PAGE_WORDS];
      for (long word = 0, total = payload / Long.BYTES; word < total; ) {
        int n = dumps.payloadWords(view, word, words);
        for (int i = 0; i < n; i++) {
          out.word(words[i]);
        }
        word += n;
      }
    });
  }

  private static byte[] readHeader(Envelope envelope, FormatReader in) throws IOException {
    RedisBloomBodies.requireProtocol(envelope);
    long offset = in.position();
    byte[] fixed = in.bytes(RedisBloomDump.BF_HEADER_BYTES, "scalable header");
    long layers = (fixed[8] & 0xFFL) | (fixed[9] & 0xFFL) << 8 | (fixed[10] & 0xFFL) << 16 | (fixed[11] & 0xFFL) << 24;
    long linkBytes = RedisBloomDump.BF_LINK_BYTES * layers;
    if (layers < 1 || linkBytes > Integer.MAX_VALUE - RedisBloomDump.BF_HEADER_BYTES) {
      throw new FilterFormatException("layer count at offset " + (offset + 8) + ": expected 1 <= n <= "
          + (Integer.MAX_VALUE - RedisBloomDump.BF_HEADER_BYTES) / RedisBloomDump.BF_LINK_BYTES + ", found " + layers);
    }
    byte[] links = in.bytes((int) linkBytes, "scalable layer headers");
    byte[] header = new byte[fixed.length + links.length];
    System.arraycopy(fixed, 0, header, 0, fixed.length);
    System.arraycopy(links, 0, header, fixed.length, links.length);
    long payload;
    try {
      payload = RedisBloomDump.bloomPayloadBytes(header);
    } catch (DumpRejectedException e) {
      throw new FilterFormatException("scalable header at offset " + offset
          + ": RedisBloom's integrity checks reject it (" + e.getMessage() + ")", e);
    }
    envelope.requireBodyLength(header.length + payload, layers + " layers holding " + payload + " bytes");
    return header;
  }

  static void describe(Envelope envelope, FormatReader in, Map<String, Long> parameters) throws IOException {
    byte[] header = readHeader(envelope, in);
    java.nio.ByteBuffer fields = java.nio.ByteBuffer.wrap(header).order(java.nio.ByteOrder.LITTLE_ENDIAN);
    parameters.put("items", fields.getLong(0));
    parameters.put("layers", fields.getInt(8) & 0xFFFF_FFFFL);
    parameters.put("options", fields.getInt(12) & 0xFFFF_FFFFL);
    parameters.put("growth", fields.getInt(16) & 0xFFFF_FFFFL);
    parameters.put("payloadBytes", RedisBloomDump.bloomPayloadBytes(header));
  }

  static ScalableBloomFilter read(Envelope envelope, FormatReader in) throws IOException {
    byte[] header = readHeader(envelope, in);
    ScalableBloomFilter filter;
    try {
      filter = RedisBloomDump.loadHeader(header);
    } catch (DumpRejectedException e) {
      throw new FilterFormatException("scalable filter of " + RedisBloomDump.bloomPayloadBytes(header)
          + " bytes does not fit in this JVM's heap (" + e.getMessage() + ")", e);
    }
    long offset = 0;
    for (ScalableBloomFilter.Layer layer : filter.layers()) {
      for (long done = 0; done < layer.bytes(); ) {
        int piece = (int) Math.min(PIECE, layer.bytes() - done);
        byte[] data = in.bytes(piece, "scalable payload");
        RedisBloomDump.loadChunk(filter, offset + done + piece + 1, data);
        done += piece;
      }
      offset += layer.bytes();
    }
    return filter;
  }
}
