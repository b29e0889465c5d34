package io.bloomery.format;

import io.bloomery.cuckoo.CuckooFilter;
import io.bloomery.filter.DumpRejectedException;
import io.bloomery.filter.FilterKind;
import io.bloomery.internal.KindAccess;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Map;

/**
 * The body of a {@link FilterKind#CUCKOO cuckoo} filter ({@link CuckooFilter}) inside the {@link FilterFormat}
 * envelope: exactly RedisBloom's 38-byte CF.SCANDUMP header followed by every sub-filter's slots (written even for
 * an empty filter, which CF.SCANDUMP itself refuses to dump). Recorded protocol {@code redisbloom-murmur64a} with an
 * empty seed, the RedisBloom hashing family; the cuckoo derivation itself (MurmurHash64A seed 0, fp = h mod 255 + 1)
 * is fixed by the kind.
 *
 * <table>
 *   <caption>Cuckoo body; S = Σ sub-filter buckets × bucket size; little-endian</caption>
 *   <tr><th>offset</th><th>size</th><th>field</th><th>rule</th></tr>
 *   <tr><td>0</td><td>8</td><td>numItems</td><td>u64</td></tr>
 *   <tr><td>8</td><td>8</td><td>numBuckets</td><td>u64, buckets of the first sub-filter, a power of two &lt; 2^56</td></tr>
 *   <tr><td>16</td><td>8</td><td>numDeletes</td><td>u64</td></tr>
 *   <tr><td>24</td><td>8</td><td>numFilters</td><td>u64 in [1, 65535]; 1 if expansion is 0</td></tr>
 *   <tr><td>32</td><td>2</td><td>bucketSize</td><td>u16 in [1, 255]</td></tr>
 *   <tr><td>34</td><td>2</td><td>maxIterations</td><td>u16 in [1, 65535]</td></tr>
 *   <tr><td>36</td><td>2</td><td>expansion</td><td>u16 in [0, 32768]; sub-filter i has numBuckets·expansion^i buckets</td></tr>
 *   <tr><td>38</td><td>S</td><td>payload</td><td>one byte per slot (0 = empty, else a fingerprint 1..255), sub-filters in
 *       order, bucket b of a sub-filter at slots [b·bucketSize, (b+1)·bucketSize)</td></tr>
 * </table>
 */
final class CuckooBody {
  private static final int PIECE = 1 << 20;

  private CuckooBody() {}

  /**
   * Streams the live filter with its adds and deletes held off for the duration of the body (lookups go on), so the
   * slots are one consistent state (a relocation cannot move an item from a piece not yet written into one already
   * written) and nothing is copied. The header is taken again once writers wait: adds that landed between the length
   * and the body are in both; a growth or compaction in that gap changes the length and fails the write.
   */
  static FilterFormat.BodyWriter writer(CuckooFilter filter) {
    long payload = RedisBloomDump.cuckooPayloadBytes(RedisBloomDump.cuckooHeader(filter));
    return RedisBloomBodies.writer(FilterKind.CUCKOO, RedisBloomDump.CF_HEADER_BYTES + payload, out ->
        KindAccess.cuckooDumps(CuckooFilter.class).holdingWriters(filter, () -> {
          byte[] header = RedisBloomDump.cuckooHeader(filter);
          if (RedisBloomDump.cuckooPayloadBytes(header) != payload) {
            throw new java.util.ConcurrentModificationException(
                "the cuckoo filter grew or was compacted while it was being written; write it again");
          }
          out.bytes(header);
          byte[] piece = new byte[(int) Math.min(PIECE, payload)];
          forEachPiece(filter, (offset, length) -> {
            RedisBloomDump.cuckooSlots(filter, offset, piece, length);
            out.bytes(piece, 0, length);
          });
        }));
  }

  private interface PieceAction {
    void accept(long offset, int length) throws IOException;
  }

  /** Visits the payload in pieces of at most {@link #PIECE} bytes that never cross a sub-filter. */
  private static void forEachPiece(CuckooFilter filter, PieceAction action) throws IOException {
    long offset = 0;
    long buckets = filter.bucketCount();
    for (int i = 0; i < filter.filterCount(); i++) {
      long slots = buckets * filter.bucketSize();
      for (long done = 0; done < slots; ) {
        int piece = (int) Math.min(PIECE, slots - done);
        action.accept(offset + done, piece);
        done += piece;
      }
      offset += slots;
      buckets *= filter.expansion();
    }
  }

  private static byte[] readHeader(Envelope envelope, FormatReader in) throws IOException {
    RedisBloomBodies.requireProtocol(envelope);
    long offset = in.position();
    byte[] header = in.bytes(RedisBloomDump.CF_HEADER_BYTES, "cuckoo header");
    long payload;
    try {
      payload = RedisBloomDump.cuckooPayloadBytes(header);
    } catch (DumpRejectedException e) {
      throw new FilterFormatException("cuckoo header at offset " + offset
          + ": RedisBloom's integrity checks reject it (" + e.getMessage() + ")", e);
    }
    envelope.requireBodyLength(header.length + payload, payload + " slots");
    return header;
  }

  static void describe(Envelope envelope, FormatReader in, Map<String, Long> parameters) throws IOException {
    ByteBuffer fields = ByteBuffer.wrap(readHeader(envelope, in)).order(ByteOrder.LITTLE_ENDIAN);
    parameters.put("items", fields.getLong(0));
    parameters.put("buckets", fields.getLong(8));
    parameters.put("deletes", fields.getLong(16));
    parameters.put("filters", fields.getLong(24));
    parameters.put("bucketSize", (long) (fields.getShort(32) & 0xFFFF));
    parameters.put("maxIterations", (long) (fields.getShort(34) & 0xFFFF));
    parameters.put("expansion", (long) (fields.getShort(36) & 0xFFFF));
  }

  static CuckooFilter read(Envelope envelope, FormatReader in) throws IOException {
    byte[] header = readHeader(envelope, in);
    CuckooFilter filter;
    try {
      filter = RedisBloomDump.loadCuckooHeader(header);
    } catch (DumpRejectedException e) {
      throw new FilterFormatException("cuckoo filter of " + RedisBloomDump.cuckooPayloadBytes(header)
          + " slots does not fit in this JVM's heap (" + e.getMessage() + ")", e);
    }
    forEachPiece(filter, (offset, length) ->
        RedisBloomDump.loadChunk(filter, offset + length + 1, in.bytes(length, "cuckoo payload")));
    return filter;
  }
}
