package io.bloomery.redisbloom;

import io.bloomery.internal.KindAccess;
import io.bloomery.internal.KindAccess.DumpChunk;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Objects;

/**
 * The byte-level work of RedisBloom's {@code SCANDUMP}/{@code LOADCHUNK} codec beside the layers and tables it
 * reads and fills; its API, with the layouts and the rules, is {@code io.bloomery.format.RedisBloomDump}, which
 * reaches this class through {@link KindAccess.RedisBloomDumps} (registered by {@link ScalableBloomFilter}).
 */
final class DumpCodec {
  /** The codec as the format reaches it. */
  static final KindAccess.RedisBloomDumps ACCESS = new KindAccess.RedisBloomDumps() {
    @Override
    public DumpChunk scanDump(ScalableBloomFilter filter, long iterator) {
      return DumpCodec.scanDump(filter, iterator);
    }

    @Override
    public byte[] bloomHeader(ScalableBloomFilter filter) {
      return DumpCodec.bloomHeader(filter);
    }

    @Override
    public ScalableBloomFilter.Frozen rollingView(ScalableBloomFilter filter) {
      return filter.rollingView();
    }

    @Override
    public byte[] bloomHeader(ScalableBloomFilter.Frozen view) {
      return view.header();
    }

    @Override
    public int payloadWords(ScalableBloomFilter.Frozen view, long word, long[] into) {
      return view.words(word, into);
    }

    @Override
    public ScalableBloomFilter loadHeader(byte[] header) {
      return DumpCodec.loadHeader(header);
    }

    @Override
    public long bloomPayloadBytes(byte[] header) {
      return DumpCodec.bloomPayloadBytes(header);
    }

    @Override
    public void loadChunk(ScalableBloomFilter filter, long iterator, byte[] data) {
      DumpCodec.loadChunk(filter, iterator, data);
    }

    @Override
    public DumpChunk scanDump(CuckooFilter filter, long position) {
      return DumpCodec.scanDump(filter, position);
    }

    @Override
    public byte[] cuckooSlots(CuckooFilter filter, long offset, int length) {
      return DumpCodec.cuckooSlots(filter, offset, length);
    }

    @Override
    public void copyCuckooSlots(CuckooFilter filter, long offset, byte[] into, int length) {
      DumpCodec.cuckooSlots(filter, offset, into, length);
    }

    @Override
    public byte[] cuckooHeader(CuckooFilter filter) {
      return DumpCodec.cuckooHeader(filter);
    }

    @Override
    public void holdingWriters(CuckooFilter filter, KindAccess.IoAction action) throws java.io.IOException {
      filter.holdingWriters(action);
    }

    @Override
    public CuckooFilter loadCuckooHeader(byte[] header) {
      return DumpCodec.loadCuckooHeader(header);
    }

    @Override
    public long cuckooPayloadBytes(byte[] header) {
      return DumpCodec.cuckooPayloadBytes(header);
    }

    @Override
    public void loadChunk(CuckooFilter filter, long position, byte[] data) {
      DumpCodec.loadChunk(filter, position, data);
    }
  };

  /** {@code MAX_SCANDUMP_SIZE}: the largest chunk SCANDUMP returns. */
  static final int MAX_CHUNK_BYTES = 16 * 1024 * 1024;
  /** Fixed part of the BF header. */
  static final int BF_HEADER_BYTES = 20;
  /** Per-layer part of the BF header. */
  static final int BF_LINK_BYTES = 53;
  /** The CF header. */
  static final int CF_HEADER_BYTES = 38;

  private DumpCodec() {}

  // =========================================================================================== BF

  /** {@code BF.SCANDUMP key iterator}. */
  static DumpChunk scanDump(ScalableBloomFilter filter, long iterator) {
    Objects.requireNonNull(filter, "filter");
    if (iterator == 0) {
      return new DumpChunk(1, bloomHeader(filter));
    }
    return filter.withLayersLocked(layers -> {
      LinkPosition position = linkAt(layers, iterator);
      if (position == null) {
        return new DumpChunk(0, new byte[0]);
      }
      BloomLayer layer = layers[position.index];
      long length = Math.min(MAX_CHUNK_BYTES, layer.bytes - position.offset);
      byte[] data = new byte[(int) length];
      for (int i = 0; i < data.length; i++) {
        data[i] = layer.byteAt(position.offset + i);
      }
      return new DumpChunk(iterator + length, data);
    });
  }

  /** The BF header bytes (SCANDUMP iterator 0). */
  static byte[] bloomHeader(ScalableBloomFilter filter) {
    return filter.withLayersLocked(layers -> bloomHeader(filter, layers));
  }

  /** The BF header bytes for {@code layers}; the caller holds the filter's read lock. */
  static byte[] bloomHeader(ScalableBloomFilter filter, BloomLayer[] layers) {
    ByteBuffer out = ByteBuffer.allocate(BF_HEADER_BYTES + BF_LINK_BYTES * layers.length)
        .order(ByteOrder.LITTLE_ENDIAN);
    out.putLong(filter.sizeUnlocked());
    out.putInt(layers.length);
    out.putInt(filter.options());
    out.putInt((int) filter.growth());
    for (BloomLayer layer : layers) {
      out.putLong(layer.bytes);
      out.putLong(layer.bits);
      out.putLong(layer.size);
      out.putDouble(layer.error);
      out.putDouble(layer.bitsPerEntry);
      out.putInt(layer.hashes);
      out.putLong(layer.entries);
      out.put((byte) layer.n2);
    }
    return out.array();
  }

  /**
   * {@code BF.LOADCHUNK key 1 header} on a missing key: a zero-filled filter with the header's layers, to be filled
   * by {@link #loadChunk(ScalableBloomFilter, long, byte[])}.
   *
   * @throws RedisBloomException {@value RedisBloomErrors#BF_BAD_DATA} for a header RedisBloom rejects (wrong
   *     length, no layers, a layer failing RedisBloom's integrity checks, unknown option bits, item counts that do
   *     not add up) or whose layers do not fit in the heap; nothing is kept in that case
   */
  static ScalableBloomFilter loadHeader(byte[] header) {
    ParsedBloomHeader parsed = parseBloomHeader(header);
    if (!HeapBudget.couldEverFit(parsed.payloadBytes)) {
      throw badBloomData();
    }
    BloomLayer[] layers = new BloomLayer[parsed.plans.length];
    for (int i = 0; i < layers.length; i++) {
      layers[i] = parsed.plans[i].allocate();
      if (layers[i] == null) {
        throw badBloomData();
      }
    }
    return new ScalableBloomFilter(parsed.options, parsed.growth, parsed.size, layers);
  }

  /**
   * The bytes of bit arrays that follow a BF header (Σ layer bytes), after every check {@link #loadHeader} makes
   * except the heap check, and without allocating.
   *
   * @throws RedisBloomException {@value RedisBloomErrors#BF_BAD_DATA} as {@link #loadHeader}
   */
  static long bloomPayloadBytes(byte[] header) {
    return parseBloomHeader(header).payloadBytes;
  }

  private record ParsedBloomHeader(long size, int options, long growth, BloomLayer[] plans, long payloadBytes) {}

  private static ParsedBloomHeader parseBloomHeader(byte[] header) {
    Objects.requireNonNull(header, "header");
    if (header.length < BF_HEADER_BYTES) {
      throw badBloomData();
    }
    ByteBuffer in = ByteBuffer.wrap(header).order(ByteOrder.LITTLE_ENDIAN);
    long size = in.getLong();
    long nfilters = in.getInt() & 0xFFFF_FFFFL;
    int options = in.getInt();
    long growth = in.getInt() & 0xFFFF_FFFFL;
    if (nfilters == 0 || header.length != BF_HEADER_BYTES + BF_LINK_BYTES * nfilters) {
      throw badBloomData();
    }
    if ((options & ~BloomLayer.OPT_ALL) != 0) {
      throw badBloomData();
    }
    BloomLayer[] plans = new BloomLayer[(int) nfilters];
    long sum = 0;
    long totalBytes = 0;
    for (int i = 0; i < plans.length; i++) {
      long bytes = in.getLong();
      long bits = in.getLong();
      long linkSize = in.getLong();
      double error = in.getDouble();
      double bpe = in.getDouble();
      long hashes = in.getInt() & 0xFFFF_FFFFL;
      long entries = in.getLong();
      int n2 = in.get() & 0xFF;
      if (!BloomLayer.validLoaded(bytes, bits, hashes, error, bpe, n2)) {
        throw badBloomData();
      }
      long newSum = sum + linkSize;
      if (Long.compareUnsigned(newSum, sum) < 0) {
        throw badBloomData();
      }
      sum = newSum;
      totalBytes += bytes;
      if (totalBytes < 0 || bytes > HeapBudget.MAX_LONG_ARRAY_BYTES) {
        throw badBloomData();
      }
      plans[i] = new BloomLayer(bytes, bits, (int) hashes, entries, error, bpe, n2, linkSize, null);
    }
    if (sum != size) {
      throw badBloomData();
    }
    return new ParsedBloomHeader(size, options, growth, plans, totalBytes);
  }

  /**
   * {@code BF.LOADCHUNK key iterator data} on an existing filter: copies {@code data} to byte offset
   * {@code iterator - data.length - 1} of the concatenated layers.
   *
   * @throws RedisBloomException {@value RedisBloomErrors#BF_BAD_DATA} if {@code iterator <= 0} or
   *     {@code iterator < data.length} (this includes re-sending a header), {@value RedisBloomErrors#BF_NO_LINK} if
   *     no layer holds that offset, {@value RedisBloomErrors#BF_CHUNK_TOO_BIG} if the chunk crosses the layer's end
   */
  static void loadChunk(ScalableBloomFilter filter, long iterator, byte[] data) {
    Objects.requireNonNull(filter, "filter");
    Objects.requireNonNull(data, "data");
    if (iterator <= 0 || iterator < data.length) {
      throw badBloomData();
    }
    BloomLayer[] layers = filter.withLayersLocked(current -> current);
    LinkPosition position = linkAt(layers, iterator - data.length);
    if (position == null) {
      throw new RedisBloomException(RedisBloomErrors.BF_NO_LINK);
    }
    BloomLayer layer = layers[position.index];
    if (data.length > layer.bytes - position.offset) {
      throw new RedisBloomException(RedisBloomErrors.BF_CHUNK_TOO_BIG);
    }
    filter.writeBytes(layer, position.offset, data, 0, data.length);
  }

  private record LinkPosition(int index, long offset) {}

  /** RedisBloom's {@code getLinkPos}: the layer holding byte {@code iterator - 1}, or {@code null}. */
  private static LinkPosition linkAt(BloomLayer[] layers, long iterator) {
    if (iterator < 1) {
      return null;
    }
    long target = iterator - 1;
    long seek = 0;
    for (int i = 0; i < layers.length; i++) {
      if (seek + layers[i].bytes > target) {
        return new LinkPosition(i, target - seek);
      }
      seek += layers[i].bytes;
    }
    return null;
  }

  private static RedisBloomException badBloomData() {
    return new RedisBloomException(RedisBloomErrors.BF_BAD_DATA);
  }

  // =========================================================================================== CF

  /**
   * {@code CF.SCANDUMP key position}.
   *
   * @throws RedisBloomException {@value RedisBloomErrors#CF_INVALID_POSITION} if {@code position < 0}
   */
  static DumpChunk scanDump(CuckooFilter filter, long position) {
    Objects.requireNonNull(filter, "filter");
    if (position < 0) {
      throw new RedisBloomException(RedisBloomErrors.CF_INVALID_POSITION);
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
          if (table.slots <= MAX_CHUNK_BYTES) {
            start = 0;
            length = table.slots;
          } else {
            start = offset;
            length = Math.min(MAX_CHUNK_BYTES, table.slots - offset);
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
   * @throws RedisBloomException {@value RedisBloomErrors#CF_INVALID_HEADER} if the header is not 38 bytes,
   *     {@value RedisBloomErrors#CF_COULD_NOT_CREATE_FROM_HEADER} if it fails RedisBloom's integrity checks (bucket
   *     size [1,255], sub-filters [1,65535], iterations [1,65535], expansion [0,32768], no expansion 0 with several
   *     sub-filters, bucket count a power of two below 2^56) or does not fit in the heap; nothing is kept then
   */
  static CuckooFilter loadCuckooHeader(byte[] header) {
    ParsedCuckooHeader parsed = parseCuckooHeader(header);
    if (!HeapBudget.couldEverFit(parsed.payloadBytes)) {
      throw couldNotCreate();
    }
    CuckooTable[] tables = new CuckooTable[parsed.bucketCounts.length];
    for (int i = 0; i < tables.length; i++) {
      tables[i] = CuckooTable.allocate(parsed.bucketCounts[i], parsed.bucketSize);
      if (tables[i] == null) {
        throw couldNotCreate();
      }
    }
    return new CuckooFilter(parsed.numBuckets, parsed.bucketSize, parsed.maxIterations, parsed.expansion,
        parsed.numItems, parsed.numDeletes, tables);
  }

  /**
   * The slot bytes that follow a CF header (Σ buckets × bucket size), after every check
   * {@link #loadCuckooHeader} makes except the heap check, and without allocating.
   *
   * @throws RedisBloomException as {@link #loadCuckooHeader}
   */
  static long cuckooPayloadBytes(byte[] header) {
    return parseCuckooHeader(header).payloadBytes;
  }

  private record ParsedCuckooHeader(long numItems, long numBuckets, long numDeletes, int bucketSize,
      int maxIterations, int expansion, long[] bucketCounts, long payloadBytes) {}

  private static ParsedCuckooHeader parseCuckooHeader(byte[] header) {
    Objects.requireNonNull(header, "header");
    if (header.length != CF_HEADER_BYTES) {
      throw new RedisBloomException(RedisBloomErrors.CF_INVALID_HEADER);
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
      throw couldNotCreate();
    }
    long[] bucketCounts = new long[(int) numFilters];
    long totalSlots = 0;
    long growth = 1; // expansion^i, built up one factor per sub-filter (linear in the sub-filter count)
    for (int i = 0; i < bucketCounts.length; i++) {
      if (i > 0) {
        if (expansion == 0 || growth > CuckooFilter.MAX_NUM_BUCKETS / numBuckets / expansion) {
          throw couldNotCreate();
        }
        growth *= expansion;
      }
      bucketCounts[i] = numBuckets * growth;
      long slots = bucketCounts[i] * bucketSize;
      if (slots / bucketSize != bucketCounts[i] || totalSlots + slots < totalSlots) {
        throw couldNotCreate();
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
   * @throws RedisBloomException {@value RedisBloomErrors#CF_INVALID_POSITION} for position 0,
   *     {@value RedisBloomErrors#ITEM_EXISTS} for position 1 (a header sent to an existing key),
   *     {@value RedisBloomErrors#CF_COULD_NOT_LOAD_CHUNK} for an empty chunk or one that does not lie inside one
   *     sub-filter (an offset past the end counts, as in RedisBloom, from the start of the last sub-filter with
   *     the remainder left after subtracting every sub-filter's size)
   */
  static void loadChunk(CuckooFilter filter, long position, byte[] data) {
    Objects.requireNonNull(filter, "filter");
    Objects.requireNonNull(data, "data");
    if (position == 0) {
      throw new RedisBloomException(RedisBloomErrors.CF_INVALID_POSITION);
    }
    if (position == 1) {
      throw new RedisBloomException(RedisBloomErrors.ITEM_EXISTS);
    }
    if (data.length == 0 || position <= 0 || position - 1 < data.length) {
      throw couldNotLoad();
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
      throw couldNotLoad();
    }
    filter.writeSlots(table, offset, data, 0, data.length);
  }

  private static RedisBloomException couldNotCreate() {
    return new RedisBloomException(RedisBloomErrors.CF_COULD_NOT_CREATE_FROM_HEADER);
  }

  private static RedisBloomException couldNotLoad() {
    return new RedisBloomException(RedisBloomErrors.CF_COULD_NOT_LOAD_CHUNK);
  }
}
