package io.bloomery.format;

import io.bloomery.cuckoo.CuckooFilter;
import io.bloomery.filter.DumpRejectedException;
import io.bloomery.internal.KindAccess;
import io.bloomery.internal.KindAccess.DumpChunk;
import io.bloomery.scalable.ScalableBloomFilter;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.function.LongFunction;

/**
 * Byte-compatible {@code BF.SCANDUMP}/{@code BF.LOADCHUNK} and {@code CF.SCANDUMP}/{@code CF.LOADCHUNK}, so a filter
 * can move between a real RedisBloom and Bloomery in either direction (RedisBloom master {@code b28c29451ad4},
 * {@code src/sb.c}, {@code src/cf.c}, {@code src/rebloom.c}).
 *
 * <p><b>BF dump.</b> Iterator 0 answers the header; every other iterator {@code i} answers the bytes at offset
 * {@code i-1} of the layers' bit arrays concatenated (oldest first), at most {@value #MAX_CHUNK_BYTES} bytes and
 * never across a layer boundary, with next iterator {@code i + length}; past the end, {@code [0, ""]}. Header (packed,
 * little-endian), {@code 20 + 53·n} bytes:
 *
 * <pre>
 * offset  type    field                       each 53-byte link:  +0 u64 bytes   +8 u64 bits    +16 u64 size
 *   0     u64     size (items)                                    +24 f64 error  +32 f64 bpe    +40 u32 hashes
 *   8     u32     nfilters                                        +44 u64 entries (capacity)    +52 u8  n2
 *  12     u32     options (1 NOROUND, 2 ENTS_IS_BITS, 4 FORCE64, 8 NO_SCALING)
 *  16     u32     growth
 *  20     link[nfilters]
 * </pre>
 *
 * <p><b>CF dump.</b> An empty filter (no items) dumps as {@code [0, nil]} even at iterator 0, as RedisBloom does.
 * Otherwise iterator 0 answers the 38-byte header {@code u64 numItems, u64 numBuckets, u64 numDeletes, u64
 * numFilters, u16 bucketSize, u16 maxIterations, u16 expansion}; every other iterator answers slot bytes of the
 * sub-filters concatenated: a whole sub-filter (from its start, whatever the offset) when it is at most 16 MiB,
 * otherwise a slice of at most 16 MiB from the offset.
 *
 * <p><b>Loading</b> validates the whole header, including the total size against the maximum heap, before allocating
 * anything (an allocation the heap cannot hold even after a collection is refused too, keeping nothing), and
 * rejects inconsistent headers and chunks with a {@link DumpRejectedException} whose reason says what was wrong. Where RedisBloom accepts
 * a crafted value only through C undefined behaviour or writes a chunk that starts past the end into the last
 * sub-filter, we refuse it; everything a real SCANDUMP produces loads.
 */
public final class RedisBloomDump {
  /* The byte-level work runs beside the layers and tables it reads and fills (the package-private
   * ScalableDumpCodec and CuckooDumpCodec), reached through io.bloomery.internal.KindAccess; this class is its API. */

  /** {@code MAX_SCANDUMP_SIZE}: the largest chunk SCANDUMP returns. */
  public static final int MAX_CHUNK_BYTES = KindAccess.MAX_DUMP_CHUNK_BYTES;
  /** Fixed part of the BF header. */
  public static final int BF_HEADER_BYTES = 20;
  /** Per-layer part of the BF header. */
  public static final int BF_LINK_BYTES = 53;
  /** The CF header. */
  public static final int CF_HEADER_BYTES = 38;

  private RedisBloomDump() {}

  /**
   * One SCANDUMP reply: the next iterator and the data. The final reply has iterator 0 and empty data (BF) or
   * {@code null} data (CF, a RESP nil).
   */
  public record Chunk(long iterator, byte[] data) {
    /** Whether this is the end-of-dump reply. */
    public boolean isEnd() {
      return iterator == 0;
    }
  }

  private static KindAccess.ScalableDumps<ScalableBloomFilter, ScalableBloomFilter.Frozen> codec() {
    return KindAccess.scalableDumps(ScalableBloomFilter.class, ScalableBloomFilter.Frozen.class);
  }

  private static KindAccess.CuckooDumps<CuckooFilter> cuckooCodec() {
    return KindAccess.cuckooDumps(CuckooFilter.class);
  }

  private static Chunk chunk(DumpChunk reply) {
    return new Chunk(reply.iterator(), reply.data());
  }

  // =========================================================================================== BF

  /** {@code BF.SCANDUMP key iterator}. */
  public static Chunk scanDump(ScalableBloomFilter filter, long iterator) {
    return chunk(codec().scanDump(filter, iterator));
  }

  /**
   * Copies {@code length} bytes at {@code offset} of the concatenated layers' bit arrays (oldest first) into the start
   * of {@code into}: the bytes SCANDUMP's chunks carry, read without a chunk of its own (a caller writing a layer whole
   * needs no second copy of it).
   *
   * @throws IllegalArgumentException if the range does not lie inside one layer or {@code into}
   */
  public static void bloomBits(ScalableBloomFilter filter, long offset, byte[] into, int length) {
    codec().copyBloomBits(Objects.requireNonNull(filter, "filter"), offset, into, length);
  }

  /** Every reply of a full BF dump, from iterator 0 up to (not including) the end reply. */
  public static List<Chunk> scanDumpAll(ScalableBloomFilter filter) {
    Objects.requireNonNull(filter, "filter");
    return scanAll(iterator -> scanDump(filter, iterator));
  }

  /** Follows SCANDUMP's iterator from 0 until the end reply. */
  private static List<Chunk> scanAll(LongFunction<Chunk> scan) {
    List<Chunk> chunks = new ArrayList<>();
    long iterator = 0;
    while (true) {
      Chunk chunk = scan.apply(iterator);
      if (chunk.isEnd()) {
        return Collections.unmodifiableList(chunks);
      }
      chunks.add(chunk);
      iterator = chunk.iterator();
    }
  }

  /** The BF header bytes (SCANDUMP iterator 0). */
  public static byte[] bloomHeader(ScalableBloomFilter filter) {
    return codec().bloomHeader(Objects.requireNonNull(filter, "filter"));
  }

  /**
   * {@code BF.LOADCHUNK key 1 header} on a missing key: a zero-filled filter with the header's layers, to be filled
   * by {@link #loadChunk(ScalableBloomFilter, long, byte[])}.
   *
   * @throws DumpRejectedException for a header RedisBloom rejects (wrong
   *     length, no layers, a layer failing RedisBloom's integrity checks, unknown option bits, item counts that do
   *     not add up) or whose layers do not fit in the heap; nothing is kept in that case
   */
  public static ScalableBloomFilter loadHeader(byte[] header) {
    return codec().loadHeader(header);
  }

  /**
   * The bytes of bit arrays that follow a BF header (Σ layer bytes), after every check {@link #loadHeader} makes
   * except the heap check, and without allocating.
   *
   * @throws DumpRejectedException as {@link #loadHeader}
   */
  public static long bloomPayloadBytes(byte[] header) {
    return codec().bloomPayloadBytes(header);
  }

  /**
   * {@code BF.LOADCHUNK key iterator data} on an existing filter: copies {@code data} to byte offset
   * {@code iterator - data.length - 1} of the concatenated layers.
   *
   * @throws DumpRejectedException {@code POSITION} if {@code iterator <= 0} or {@code iterator < data.length} (this
   *     includes re-sending a header), {@code NO_LAYER_AT_OFFSET} if no layer holds that offset, {@code
   *     PAST_LAYER_END} if the chunk crosses the layer's end
   */
  public static void loadChunk(ScalableBloomFilter filter, long iterator, byte[] data) {
    codec().loadChunk(filter, iterator, data);
  }

  /** Rebuilds a BF from a complete dump: the header reply (iterator 1) followed by every chunk reply. */
  public static ScalableBloomFilter loadBloom(List<Chunk> chunks) {
    Objects.requireNonNull(chunks, "chunks");
    if (chunks.isEmpty() || chunks.get(0).iterator() != 1) {
      throw new DumpRejectedException(DumpRejectedException.Reason.POSITION,
          "a dump starts with the header reply (iterator 1)");
    }
    ScalableBloomFilter filter = loadHeader(chunks.get(0).data());
    for (Chunk chunk : chunks.subList(1, chunks.size())) {
      loadChunk(filter, chunk.iterator(), chunk.data());
    }
    return filter;
  }

  // =========================================================================================== CF

  /**
   * {@code CF.SCANDUMP key position}.
   *
   * @throws DumpRejectedException {@code POSITION} if {@code position < 0}
   */
  public static Chunk scanDump(CuckooFilter filter, long position) {
    return chunk(cuckooCodec().scanDump(filter, position));
  }

  /** Every reply of a full CF dump up to (not including) the end reply; empty for a filter without items. */
  public static List<Chunk> scanDumpAll(CuckooFilter filter) {
    Objects.requireNonNull(filter, "filter");
    return scanAll(position -> scanDump(filter, position));
  }

  /**
   * Copies {@code length} raw slot bytes at {@code offset} of the concatenated sub-filters into the start of {@code
   * into}, whether or not the filter is empty (for Bloomery's own format; CF.SCANDUMP refuses to dump an empty
   * filter).
   *
   * @throws IllegalArgumentException if the range does not lie inside one sub-filter or {@code into}
   */
  public static void cuckooSlots(CuckooFilter filter, long offset, byte[] into, int length) {
    cuckooCodec().copyCuckooSlots(Objects.requireNonNull(filter, "filter"), offset, into, length);
  }

  /** The 38-byte CF header, whether or not the filter is empty. */
  public static byte[] cuckooHeader(CuckooFilter filter) {
    return cuckooCodec().cuckooHeader(Objects.requireNonNull(filter, "filter"));
  }

  /**
   * {@code CF.LOADCHUNK key 1 header} on a missing key: a zero-filled filter with the header's sub-filters.
   *
   * @throws DumpRejectedException {@code HEADER_LENGTH} if the header is not 38 bytes, {@code HEADER_INVALID} if
   *     it fails RedisBloom's integrity checks (bucket
   *     size [1,255], sub-filters [1,65535], iterations [1,65535], expansion [0,32768], no expansion 0 with several
   *     sub-filters, bucket count a power of two below 2^56) or does not fit in the heap; nothing is kept then
   */
  public static CuckooFilter loadCuckooHeader(byte[] header) {
    return cuckooCodec().loadCuckooHeader(header);
  }

  /**
   * The slot bytes that follow a CF header (Σ buckets × bucket size), after every check
   * {@link #loadCuckooHeader} makes except the heap check, and without allocating.
   *
   * @throws DumpRejectedException as {@link #loadCuckooHeader}
   */
  public static long cuckooPayloadBytes(byte[] header) {
    return cuckooCodec().cuckooPayloadBytes(header);
  }

  /**
   * {@code CF.LOADCHUNK key position data} on an existing filter: copies {@code data} to slot offset
   * {@code position - data.length - 1} of the concatenated sub-filters.
   *
   * @throws DumpRejectedException {@code POSITION} for position 0, {@code HEADER_AGAIN} for position 1 (a header
   *     sent to an existing key), {@code NO_LAYER_AT_OFFSET} or {@code PAST_LAYER_END} for an empty chunk or one that
   *     does not lie inside one
   *     sub-filter (an offset past the end counts, as in RedisBloom, from the start of the last sub-filter with
   *     the remainder left after subtracting every sub-filter's size)
   */
  public static void loadChunk(CuckooFilter filter, long position, byte[] data) {
    cuckooCodec().loadChunk(filter, position, data);
  }

  /** Rebuilds a CF from a complete dump: the header reply (iterator 1) followed by every chunk reply. */
  public static CuckooFilter loadCuckoo(List<Chunk> chunks) {
    Objects.requireNonNull(chunks, "chunks");
    if (chunks.isEmpty() || chunks.get(0).iterator() != 1) {
      throw new DumpRejectedException(DumpRejectedException.Reason.POSITION,
          "a dump starts with the header reply (position 1)");
    }
    CuckooFilter filter = loadCuckooHeader(chunks.get(0).data());
    for (Chunk chunk : chunks.subList(1, chunks.size())) {
      loadChunk(filter, chunk.iterator(), chunk.data());
    }
    return filter;
  }
}
