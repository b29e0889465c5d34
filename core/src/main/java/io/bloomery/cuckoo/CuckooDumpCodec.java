package io.bloomery.cuckoo;

import io.bloomery.filter.DumpRejectedException;
import io.bloomery.internal.HeapBudget;
import io.bloomery.internal.KindAccess;
import io.bloomery.internal.KindAccess.DumpChunk;
import io.bloomery.internal.KindAccess.IoAction;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Objects;

/**
 * The byte-level work of RedisBloom's {@code CF.SCANDUMP}/{@code CF.LOADCHUNK} codec beside the tables it reads and
 * fills; its API, with the layouts and the rules, is {@code io.bloomery.format.RedisBloomDump}, which reaches this
 * class through {@link KindAccess.CuckooDumps<CuckooFilter>} (registered by {@link CuckooFilter}).
 */
final class CuckooDumpCodec {
  /** The codec as the format reaches it. */
  static final KindAccess.CuckooDumps<CuckooFilter> ACCESS = new KindAccess.CuckooDumps<>() {
    @Override
    public DumpChunk scanDump(CuckooFilter filter, long position) {
      return CuckooDumpCodec.scanDump(filter, position);
    }

    @Override
    public byte[] cuckooSlots(CuckooFilter filter, long offset, int length) {
      return CuckooDumpCodec.cuckooSlots(filter, offset, length);
    }

    @Override
    public void copyCuckooSlots(CuckooFilter filter, long offset, byte[] into, int length) {
      CuckooDumpCodec.cuckooSlots(filter, offset, into, length);
    }

    @Override
    public byte[] cuckooHeader(CuckooFilter filter) {
      return CuckooDumpCodec.cuckooHeader(filter);
    }

    @Override
    public void holdingWriters(CuckooFilter filter, IoAction action) throws IOException {
      filter.holdingWriters(action);
    }

    @Override
    public CuckooFilter loadCuckooHeader(byte[] header) {
      return CuckooDumpCodec.loadCuckooHeader(header);
    }

    @Override
    public long cuckooPayloadBytes(byte[] header) {
      return CuckooDumpCodec.cuckooPayloadBytes(header);
    }

    @Override
    public void loadChunk(CuckooFilter filter, long position, byte[] data) {
      CuckooDumpCodec.loadChunk(filter, position, data);
    }
  };

  /** The CF header. */
  static final int CF_HEADER_BYTES = 38;

  private CuckooDumpCodec() {}

  /**
   * {@code CF.SCANDUMP key position}.
   *
   * @throws DumpRejectedException {@code POSITION} if {@code position < 0}
   */
  static DumpChunk scanDump(CuckooFilter filter, long position) {
    Objects.requireNonNull(filter, "filter");
    if (position < 0) {
      throw rejected(DumpRejectedException.Reason.POSITION, "a scan position is at least 0, found " + position);
    }
    return filter.withTablesLocked(tables -> {
      if (filter.numItemsUnlocked() == 0) {
        return new DumpChunk(0, null);
      }
      if (position == 0) {
        return new DumpChunk(1, cuckooHeader(filter, tables));
      }
      long offset = position - 1;
      for (CuckooTable table : tables) {
        if (offset < table.slots) {
          long start;
          long length;
          if (table.slots <= KindAccess.MAX_DUMP_CHUNK_BYTES) {
            start = 0;
            length = table.slots;
          } else {
            start = offset;
            length = Math.min(KindAccess.MAX_DUMP_CHUNK_BYTES, table.slots - offset);
          }
          byte[] data = new byte[(int) length];
          table.copyOut(start, data, 0, data.length);
          return new DumpChunk(position + length, data);
        }
        offset -= table.slots;
      }
      return new DumpChunk(0, null);
    });
  }

  /**
   * {@code length} raw slot bytes at {@code offset} of the concatenated sub-filters, whether or not the filter is
   * empty (for Bloomery's own format; CF.SCANDUMP refuses to dump an empty filter).
   *
   * @throws IllegalArgumentException if the range does not lie inside one sub-filter
   */
  static byte[] cuckooSlots(CuckooFilter filter, long offset, int length) {
    byte[] data = new byte[Math.max(0, length)];
    cuckooSlots(filter, offset, data, length);
    return data;
  }

  /** {@link #cuckooSlots(CuckooFilter, long, int)} copied into the start of {@code into}. */
  static void cuckooSlots(CuckooFilter filter, long offset, byte[] into, int length) {
    filter.withTablesLocked(tables -> {
      long start = offset;
      for (CuckooTable table : tables) {
        if (start >= 0 && start < table.slots) {
          if (length < 0 || length > table.slots - start || length > into.length) {
            break;
          }
          table.copyOut(start, into, 0, length);
          return null;
        }
        start -= table.slots;
      }
      throw new IllegalArgumentException("slots [" + offset + ", " + offset + " + " + length
          + ") do not lie inside one sub-filter");
    });
  }

  /** The 38-byte CF header, whether or not the filter is empty. */
  static byte[] cuckooHeader(CuckooFilter filter) {
    return filter.withTablesLocked(tables -> cuckooHeader(filter, tables));
  }

  private static byte[] cuckooHeader(CuckooFilter filter, CuckooTable[] tables) {
    ByteBuffer out = ByteBuffer.allocate(CF_HEADER_BYTES).order(ByteOrder.LITTLE_ENDIAN);
    out.putLong(filter.numItemsUnlocked());
    out.putLong(filter.bucketCount());
    out.putLong(filter.numDeletesUnlocked());
    out.putLong(tables.length);
    out.putShort((short) filter.bucketSize());
    out.putShort((short) filter.maxIterations());
    out.putShort((short) filter.expansion());
    return out.array();
  }

  /**
   * {@code CF.LOADCHUNK key 1 header} on a missing key: a zero-filled filter with the header's sub-filters.
   *
   * @throws DumpRejectedException {@code HEADER_LENGTH} if the header is not 38 bytes, {@code HEADER_INVALID} if it
   *     fails RedisBloom's integrity checks (bucket size [1,255], sub-filters [1,65535], iterations [1,65535],
   *     expansion [0,32768], no expansion 0 with several sub-filters, bucket count a power of two below 2^56),
   *     {@code TOO_LARGE} if it does not fit in the heap; nothing is kept then
   */
  static CuckooFilter loadCuckooHeader(byte[] header) {
    ParsedCuckooHeader parsed = parseCuckooHeader(header);
    if (!HeapBudget.couldEverFit(parsed.payloadBytes)) {
      throw tooLarge(parsed.payloadBytes);
    }
    CuckooTable[] tables = new CuckooTable[parsed.bucketCounts.length];
    for (int i = 0; i < tables.length; i++) {
      tables[i] = CuckooTable.allocate(parsed.bucketCounts[i], parsed.bucketSize);
      if (tables[i] == null) {
        throw tooLarge(parsed.payloadBytes);
      }
    }
    return new CuckooFilter(parsed.numBuckets, parsed.bucketSize, parsed.maxIterations, parsed.expansion,
        parsed.numItems, parsed.numDeletes, tables);
  }

  /**
   * The slot bytes that follow a CF header (Σ buckets × bucket size), after every check
   * {@link #loadCuckooHeader} makes except the heap check, and without allocating.
   *
   * @throws DumpRejectedException as {@link #loadCuckooHeader}
   */
  static long cuckooPayloadBytes(byte[] header) {
    return parseCuckooHeader(header).payloadBytes;
  }

  private record ParsedCuckooHeader(long numItems, long numBuckets, long numDeletes, int bucketSize,
      int maxIterations, int expansion, long[] bucketCounts, long payloadBytes) {}

  private static ParsedCuckooHeader parseCuckooHeader(byte[] header) {
    Objects.requireNonNull(header, "header");
    if (header.length != CF_HEADER_BYTES) {
      throw rejected(DumpRejectedException.Reason.HEADER_LENGTH, "a CF header has " + CF_HEADER_BYTES
          + " bytes, found " + header.length);
    }
    ByteBuffer in = ByteBuffer.wrap(header).order(ByteOrder.LITTLE_ENDIAN);
    long numItems = in.getLong();
    long numBuckets = in.getLong();
    long numDeletes = in.getLong();
    // RedisBloom keeps the sub-filter count in a 16-bit field: a header's 64-bit count is cut to its low 16 bits
    // before it is checked (a count of 65537 loads one sub-filter, 65536 none)
    long numFilters = in.getLong() & 0xFFFF;
    int bucketSize = in.getShort() & 0xFFFF;
    int maxIterations = in.getShort() & 0xFFFF;
    int expansion = in.getShort() & 0xFFFF;
    if (bucketSize < 1 || bucketSize > CuckooFilter.MAX_BUCKET_SIZE
        || numFilters < 1 || numFilters > 0xFFFF
        || maxIterations < 1 || maxIterations > CuckooFilter.MAX_ITERATIONS
        || expansion > CuckooFilter.MAX_EXPANSION
        || (expansion == 0 && numFilters > 1)
        || numBuckets <= 0 || numBuckets > CuckooFilter.MAX_NUM_BUCKETS || Long.bitCount(numBuckets) != 1) {
      throw invalid();
    }
    long[] bucketCounts = new long[(int) numFilters];
    long totalSlots = 0;
    long growth = 1; // expansion^i, built up one factor per sub-filter (linear in the sub-filter count)
    for (int i = 0; i < bucketCounts.length; i++) {
      if (i > 0) {
        if (expansion == 0 || growth > CuckooFilter.MAX_NUM_BUCKETS / numBuckets / expansion) {
          throw invalid();
        }
        growth *= expansion;
      }
      bucketCounts[i] = numBuckets * growth;
      long slots = bucketCounts[i] * bucketSize;
      if (slots / bucketSize != bucketCounts[i] || totalSlots + slots < totalSlots) {
        throw invalid();
      }
      totalSlots += slots;
    }
    return new ParsedCuckooHeader(numItems, numBuckets, numDeletes, bucketSize, maxIterations, expansion,
        bucketCounts, totalSlots);
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
  static void loadChunk(CuckooFilter filter, long position, byte[] data) {
    Objects.requireNonNull(filter, "filter");
    Objects.requireNonNull(data, "data");
    if (position == 0) {
      throw rejected(DumpRejectedException.Reason.POSITION, "a chunk's position is above 0, found 0");
    }
    if (position == 1) {
      throw rejected(DumpRejectedException.Reason.HEADER_AGAIN, "position 1 is the header's, and the filter exists");
    }
    if (data.length == 0 || position <= 0 || position - 1 < data.length) {
      throw rejected(DumpRejectedException.Reason.NO_LAYER_AT_OFFSET, "a chunk of " + data.length
          + " slots at position " + position + " lies in no sub-filter");
    }
    long offset = position - data.length - 1;
    CuckooTable[] tables = filter.withTablesLocked(current -> current);
    CuckooTable table = null;
    for (CuckooTable t : tables) {
      table = t;
      if (offset < t.slots) {
        break;
      }
      offset -= t.slots;
    }
    // As RedisBloom's CF_LoadEncodedChunk: the walk subtracts each sub-filter's size, so an offset past the end is
    // left at the last sub-filter with the remainder, and the chunk is written there if it fits.
    if (table == null || offset > table.slots || table.slots - offset < data.length) {
      throw rejected(DumpRejectedException.Reason.PAST_LAYER_END, "a chunk of " + data.length
          + " slots at position " + position + " runs past the end of its sub-filter");
    }
    filter.writeSlots(table, offset, data, 0, data.length);
  }

  private static DumpRejectedException rejected(DumpRejectedException.Reason reason, String message) {
    return new DumpRejectedException(reason, message);
  }

  private static DumpRejectedException invalid() {
    return rejected(DumpRejectedException.Reason.HEADER_INVALID, "CF header: a field is out of range (bucket size"
        + " [1, 255], sub-filters [1, 65535], iterations [1, 65535], expansion [0, 32768], bucket count a power of"
        + " two below 2^56) or the sub-filters' sizes overflow");
  }

  private static DumpRejectedException tooLarge(long slots) {
    return rejected(DumpRejectedException.Reason.TOO_LARGE, "the header's sub-filters of " + slots
        + " slots do not fit in the heap");
  }
}
