package io.bloomery.scalable;

import io.bloomery.filter.DumpRejectedException;
import io.bloomery.internal.HeapBudget;
import io.bloomery.internal.KindAccess;
import io.bloomery.internal.KindAccess.DumpChunk;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Objects;

/**
 * The byte-level work of RedisBloom's {@code BF.SCANDUMP}/{@code BF.LOADCHUNK} codec beside the layers it reads and
 * fills; its API, with the layouts and the rules, is {@code io.bloomery.format.RedisBloomDump}, which reaches this
 * class through {@link KindAccess.ScalableDumps<ScalableBloomFilter, ScalableBloomFilter.Frozen>} (registered by {@link ScalableBloomFilter}).
 */
final class ScalableDumpCodec {
  /** The codec as the format reaches it. */
  static final KindAccess.ScalableDumps<ScalableBloomFilter, ScalableBloomFilter.Frozen> ACCESS =
      new KindAccess.ScalableDumps<>() {
      @Override
      public DumpChunk scanDump(ScalableBloomFilter filter, long iterator) {
        return ScalableDumpCodec.scanDump(filter, iterator);
      }

      @Override
      public byte[] bloomHeader(ScalableBloomFilter filter) {
        return ScalableDumpCodec.bloomHeader(filter);
      }

      @Override
      public void copyBloomBits(ScalableBloomFilter filter, long offset, byte[] into, int length) {
        ScalableDumpCodec.copyBloomBits(filter, offset, into, length);
      }

      @Override
      public ScalableBloomFilter.Frozen rollingView(ScalableBloomFilter filter) {
        return filter.rollingView();
      }

      @Override
      public byte[] viewHeader(ScalableBloomFilter.Frozen view) {
        return view.header();
      }

      @Override
      public int payloadWords(ScalableBloomFilter.Frozen view, long word, long[] into) {
        return view.words(word, into);
      }

      @Override
      public ScalableBloomFilter loadHeader(byte[] header) {
        return ScalableDumpCodec.loadHeader(header);
      }

      @Override
      public long bloomPayloadBytes(byte[] header) {
        return ScalableDumpCodec.bloomPayloadBytes(header);
      }

      @Override
      public void loadChunk(ScalableBloomFilter filter, long iterator, byte[] data) {
        ScalableDumpCodec.loadChunk(filter, iterator, data);
      }
      };

  /** Fixed part of the BF header. */
  static final int BF_HEADER_BYTES = 20;
  /** Per-layer part of the BF header. */
  static final int BF_LINK_BYTES = 53;

  private ScalableDumpCodec() {}

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
      long length = Math.min(KindAccess.MAX_DUMP_CHUNK_BYTES, layer.bytes - position.offset);
      byte[] data = new byte[(int) length];
      for (int i = 0; i < data.length; i++) {
        data[i] = layer.byteAt(position.offset + i);
      }
      return new DumpChunk(iterator + length, data);
    });
  }

  /**
   * {@code length} bytes at {@code offset} of the concatenated layers' bits into the start of {@code into}: what
   * SCANDUMP's chunks carry, without a chunk's copy.
   *
   * @throws IllegalArgumentException if the range does not lie inside one layer or {@code into}
   */
  static void copyBloomBits(ScalableBloomFilter filter, long offset, byte[] into, int length) {
    Objects.requireNonNull(into, "into");
    filter.withLayersLocked(layers -> {
      LinkPosition position = offset < 0 || offset == Long.MAX_VALUE ? null : linkAt(layers, offset + 1);
      if (position == null || length < 0 || length > into.length
          || length > layers[position.index].bytes - position.offset) {
        throw new IllegalArgumentException(length + " bytes at " + offset + " do not lie inside one layer of "
            + layers.length + " or an array of " + into.length);
      }
      BloomLayer layer = layers[position.index];
      for (int i = 0; i < length; i++) {
        into[i] = layer.byteAt(position.offset + i);
      }
      return null;
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
   * @throws DumpRejectedException for a header RedisBloom rejects: {@code HEADER_LENGTH} (wrong length, no layers),
   *     {@code HEADER_INVALID} (a layer failing RedisBloom's integrity checks, unknown option bits, item counts that
   *     do not add up) or {@code TOO_LARGE} (layers that do not fit in the heap); nothing is kept in that case
   */
  static ScalableBloomFilter loadHeader(byte[] header) {
    ParsedBloomHeader parsed = parseBloomHeader(header);
    if (!HeapBudget.couldEverFit(parsed.payloadBytes)) {
      throw tooLarge(parsed.payloadBytes);
    }
    BloomLayer[] layers = new BloomLayer[parsed.plans.length];
    for (int i = 0; i < layers.length; i++) {
      layers[i] = parsed.plans[i].allocate();
      if (layers[i] == null) {
        throw tooLarge(parsed.payloadBytes);
      }
    }
    return new ScalableBloomFilter(parsed.options, parsed.growth, parsed.size, layers);
  }

  /**
   * The bytes of bit arrays that follow a BF header (Σ layer bytes), after every check {@link #loadHeader} makes
   * except the heap check, and without allocating.
   *
   * @throws DumpRejectedException as {@link #loadHeader}
   */
  static long bloomPayloadBytes(byte[] header) {
    return parseBloomHeader(header).payloadBytes;
  }

  private record ParsedBloomHeader(long size, int options, long growth, BloomLayer[] plans, long payloadBytes) {}

  private static ParsedBloomHeader parseBloomHeader(byte[] header) {
    Objects.requireNonNull(header, "header");
    if (header.length < BF_HEADER_BYTES) {
      throw rejected(DumpRejectedException.Reason.HEADER_LENGTH, "a BF header has at least " + BF_HEADER_BYTES
          + " bytes, found " + header.length);
    }
    ByteBuffer in = ByteBuffer.wrap(header).order(ByteOrder.LITTLE_ENDIAN);
    long size = in.getLong();
    long nfilters = in.getInt() & 0xFFFF_FFFFL;
    int options = in.getInt();
    long growth = in.getInt() & 0xFFFF_FFFFL;
    if (nfilters == 0 || header.length != BF_HEADER_BYTES + BF_LINK_BYTES * nfilters) {
      throw rejected(DumpRejectedException.Reason.HEADER_LENGTH, "a BF header of " + nfilters + " layers has "
          + (BF_HEADER_BYTES + BF_LINK_BYTES * nfilters) + " bytes (at least one layer), found " + header.length);
    }
    if ((options & ~BloomLayer.OPT_ALL) != 0) {
      throw invalid("unknown option bits " + Integer.toHexString(options & ~BloomLayer.OPT_ALL));
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
        throw invalid("layer " + i + " fails the layer checks (bytes, bits, hashes, error, bits per entry, n2)");
      }
      long newSum = sum + linkSize;
      if (Long.compareUnsigned(newSum, sum) < 0) {
        throw invalid("the layers' item counts overflow 64 bits");
      }
      sum = newSum;
      totalBytes += bytes;
      if (totalBytes < 0 || bytes > HeapBudget.MAX_LONG_ARRAY_BYTES) {
        throw tooLarge(totalBytes < 0 ? -1 : totalBytes);
      }
      plans[i] = new BloomLayer(bytes, bits, (int) hashes, entries, error, bpe, n2, linkSize, null);
    }
    if (sum != size) {
      throw invalid("the layers hold " + Long.toUnsignedString(sum) + " items, the header says "
          + Long.toUnsignedString(size));
    }
    return new ParsedBloomHeader(size, options, growth, plans, totalBytes);
  }

  /**
   * {@code BF.LOADCHUNK key iterator data} on an existing filter: copies {@code data} to byte offset
   * {@code iterator - data.length - 1} of the concatenated layers.
   *
   * @throws DumpRejectedException {@code POSITION} if {@code iterator <= 0} or {@code iterator < data.length} (this
   *     includes re-sending a header), {@code NO_LAYER_AT_OFFSET} if no layer holds that offset, {@code
   *     PAST_LAYER_END} if the chunk crosses the layer's end
   */
  static void loadChunk(ScalableBloomFilter filter, long iterator, byte[] data) {
    Objects.requireNonNull(filter, "filter");
    Objects.requireNonNull(data, "data");
    if (iterator <= 0 || iterator < data.length) {
      throw rejected(DumpRejectedException.Reason.POSITION, "a chunk of " + data.length
          + " bytes needs an iterator of at least its length and above 0, found " + iterator);
    }
    BloomLayer[] layers = filter.withLayersLocked(current -> current);
    LinkPosition position = linkAt(layers, iterator - data.length);
    if (position == null) {
      throw rejected(DumpRejectedException.Reason.NO_LAYER_AT_OFFSET, "no layer holds byte offset "
          + (iterator - data.length - 1));
    }
    BloomLayer layer = layers[position.index];
    if (data.length > layer.bytes - position.offset) {
      throw rejected(DumpRejectedException.Reason.PAST_LAYER_END, "a chunk of " + data.length
          + " bytes at offset " + position.offset + " runs past the end of layer " + position.index + " ("
          + layer.bytes + " bytes)");
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

  private static DumpRejectedException rejected(DumpRejectedException.Reason reason, String message) {
    return new DumpRejectedException(reason, message);
  }

  private static DumpRejectedException invalid(String what) {
    return rejected(DumpRejectedException.Reason.HEADER_INVALID, "BF header: " + what);
  }

  private static DumpRejectedException tooLarge(long payloadBytes) {
    return rejected(DumpRejectedException.Reason.TOO_LARGE, "the header's layers of "
        + (payloadBytes < 0 ? "more than 2^63" : Long.toString(payloadBytes)) + " bytes do not fit in the heap");
  }
}
