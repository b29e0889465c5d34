package io.bloomery.server.rdb;

import io.bloomery.cuckoo.CuckooFilter;
import io.bloomery.filter.DumpRejectedException;
import io.bloomery.filter.Summary;
import io.bloomery.format.FilterFormat;
import io.bloomery.format.FilterFormatException;
import io.bloomery.format.RedisBloomArrays;
import io.bloomery.format.RedisBloomDump;
import io.bloomery.scalable.ScalableBloomFilter;
import io.bloomery.server.keyspace.StateSeededDecay;
import io.bloomery.server.keyspace.ValueType;
import io.bloomery.sketch.CountMinSketch;
import io.bloomery.sketch.TDigest;
import io.bloomery.sketch.TopK;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/*
 * Each constant writes and reads the fields RedisBloom's rdb_save and rdb_load callbacks write and read, in their
 * order (RedisBloom b28c29451ad4: src/rebloom.c BFRdbSave/BFRdbLoad and CFRdbSave/CFRdbLoad, src/rm_cms.c
 * CMSRdbSave/CMSRdbLoad, src/rm_topk.c TopKRdbSave/TopKRdbLoad, src/rm_tdigest.c TDigestRdbSave/TDigestRdbLoad),
 * with RedisBloom's checks on load. Bloom and cuckoo filters are carried over core's SCANDUMP header and chunks,
 * whose fields are the same ones packed differently.
 *
 * Encoding versions RedisBloom reads: MBbloom-- 0 to 4 (2 added options, 4 growth; 0 had no bit count and no n2),
 * MBbloomCF 2 to 4 (before 4: no deletes, bucket size, iterations or expansion, and every sub-filter of the first's
 * size), CMSk-TYPE 0, TopK-TYPE 0, TDIS-TYPE 0. It writes the highest.
 */
/**
 * The module types whose values move as RDB module values ({@code DUMP}/{@code RESTORE}, RDB files), one constant per
 * type: RedisBloom's types byte-compatible with RedisBloom, and one of ours for the kinds RedisBloom has not. Each
 * has its name, the encoding version it writes (also the highest it reads) and the value's fields. A new type is one
 * more constant.
 */
public enum ModuleType {
  /** {@code MBbloom--}: BF's scalable Bloom filter. */
  SCALABLE_BLOOM(ValueType.SCALABLE_BLOOM, 4) {
    @Override
    void write(Object value, RdbOutput out) {
      ScalableBloomFilter filter = (ScalableBloomFilter) value;
      ByteBuffer header = littleEndian(RedisBloomDump.bloomHeader(filter));
      long size = header.getLong();
      int layers = header.getInt();
      out.moduleUnsigned(size);
      out.moduleUnsigned(layers);
      out.moduleUnsigned(header.getInt() & 0xFFFF_FFFFL);
      out.moduleUnsigned(header.getInt() & 0xFFFF_FFFFL);
      long offset = 0; // of this layer's bits in the layers' concatenated bits
      for (int i = 0; i < layers; i++) {
        long bytes = header.getLong();
        long bits = header.getLong();
        long linkSize = header.getLong();
        double error = header.getDouble();
        double bitsPerEntry = header.getDouble();
        long hashes = header.getInt() & 0xFFFF_FFFFL;
        long entries = header.getLong();
        int n2 = header.get() & 0xFF;
        out.moduleUnsigned(entries);
        out.moduleDouble(error);
        out.moduleUnsigned(hashes);
        out.moduleDouble(bitsPerEntry);
        out.moduleUnsigned(bits);
        out.moduleUnsigned(n2);
        // Besides the value, a payload's writing holds one layer's bits and LZF's try at them
        byte[] bitArray = new byte[arrayLength(bytes)];
        if (bitArray.length > 0) {
          RedisBloomDump.bloomBits(filter, offset, bitArray, bitArray.length);
        }
        offset += bytes;
        out.moduleString(bitArray);
        out.moduleUnsigned(linkSize);
      }
    }

    @Override
    Object read(RdbInput in, int encodingVersion) throws IOException {
      long size = in.moduleUnsigned();
      long layers = in.moduleUnsigned();
      if (layers <= 0 || layers > MAX_LAYERS) {
        throw new RdbFormatException("MBbloom--: " + Long.toUnsignedString(layers) + " layers, expected 1 to "
            + MAX_LAYERS);
      }
      long options = encodingVersion >= 2 ? in.moduleUnsigned() : 0;
      long growth = encodingVersion >= 4 ? in.moduleUnsigned() : 2;
      ByteBuffer header = ByteBuffer.allocate(RedisBloomDump.BF_HEADER_BYTES
          + RedisBloomDump.BF_LINK_BYTES * (int) layers).order(ByteOrder.LITTLE_ENDIAN);
      header.putLong(size).putInt((int) layers).putInt((int) options).putInt((int) growth);
      byte[][] bitArrays = new byte[(int) layers][];
      for (int i = 0; i < layers; i++) {
        long entries = in.moduleUnsigned();
        double error = in.moduleDouble();
        long hashes = in.moduleUnsigned();
        double bitsPerEntry = in.moduleDouble();
        long bits;
        long n2 = 0;
        if (encodingVersion == 0) {
          bits = (long) ((double) entries * bitsPerEntry);
        } else {
          bits = in.moduleUnsigned();
          n2 = in.moduleUnsigned();
        }
        bitArrays[i] = in.moduleString();
        long linkSize = in.moduleUnsigned();
        if (options != (int) options || growth != (int) growth || hashes != (int) hashes || n2 > 0xFF
            || bitArrays[i].length < Math.ceil(bits / 8.0)) {
          throw new RdbFormatException("MBbloom--: layer " + i + " is inconsistent");
        }
        header.putLong(bitArrays[i].length).putLong(bits).putLong(linkSize).putDouble(error).putDouble(bitsPerEntry)
            .putInt((int) hashes).putLong(entries).put((byte) n2);
      }
      try {
        ScalableBloomFilter filter = RedisBloomDump.loadHeader(header.array());
        long offset = 0;
        for (byte[] bitArray : bitArrays) {
          if (bitArray.length > 0) {
            RedisBloomDump.loadChunk(filter, offset + bitArray.length + 1, bitArray);
          }
          offset += bitArray.length;
        }
        return filter;
      } catch (DumpRejectedException e) {
        throw new RdbFormatException("MBbloom--: " + e.getMessage(), e);
      }
    }

  },

  /** {@code MBbloomCF}: CF's cuckoo filter. */
  CUCKOO(ValueType.CUCKOO, 4) {
    @Override
    void write(Object value, RdbOutput out) {
      CuckooFilter filter = (CuckooFilter) value;
      ByteBuffer header = littleEndian(RedisBloomDump.cuckooHeader(filter));
      long numItems = header.getLong();
      long numBuckets = header.getLong();
      long numDeletes = header.getLong();
      long numFilters = header.getLong();
      int bucketSize = header.getShort() & 0xFFFF;
      out.moduleUnsigned(numFilters);
      out.moduleUnsigned(numBuckets);
      out.moduleUnsigned(numItems);
      out.moduleUnsigned(numDeletes);
      out.moduleUnsigned(bucketSize);
      out.moduleUnsigned(header.getShort() & 0xFFFF);
      int expansion = header.getShort() & 0xFFFF;
      out.moduleUnsigned(expansion);
      long buckets = numBuckets;
      long offset = 0;
      for (int i = 0; i < numFilters; i++) {
        out.moduleUnsigned(buckets);
        byte[] slots = new byte[arrayLength(buckets * bucketSize)];
        RedisBloomDump.cuckooSlots(filter, offset, slots, slots.length);
        out.moduleString(slots);
        offset += slots.length;
        buckets *= expansion;
      }
    }

    @Override
    Object read(RdbInput in, int encodingVersion) throws IOException {
      long numFilters = in.moduleUnsigned();
      long numBuckets = in.moduleUnsigned();
      if (numFilters == 0 || numBuckets == 0 || numFilters > 0xFFFF) {
        throw new RdbFormatException("MBbloomCF: " + Long.toUnsignedString(numFilters) + " sub-filters of "
            + Long.toUnsignedString(numBuckets) + " buckets");
      }
      long numItems = in.moduleUnsigned();
      long numDeletes = 0;
      long bucketSize = CuckooFilter.DEFAULT_BUCKET_SIZE;
      long maxIterations = CuckooFilter.DEFAULT_MAX_ITERATIONS;
      long expansion = CuckooFilter.DEFAULT_EXPANSION;
      if (encodingVersion >= 4) {
        numDeletes = in.moduleUnsigned();
        bucketSize = in.moduleUnsigned();
        maxIterations = in.moduleUnsigned();
        expansion = in.moduleUnsigned();
      }
      if (bucketSize > 0xFFFF || maxIterations > 0xFFFF || expansion > 0xFFFF) {
        throw new RdbFormatException("MBbloomCF: a 16-bit field is out of range");
      }
      ByteBuffer header = ByteBuffer.allocate(RedisBloomDump.CF_HEADER_BYTES).order(ByteOrder.LITTLE_ENDIAN);
      header.putLong(numItems).putLong(numBuckets).putLong(numDeletes).putLong(numFilters)
          .putShort((short) bucketSize).putShort((short) maxIterations).putShort((short) expansion);
      CuckooFilter filter;
      try {
        filter = RedisBloomDump.loadCuckooHeader(header.array());
      } catch (DumpRejectedException e) {
        throw new RdbFormatException("MBbloomCF: " + e.getMessage(), e);
      }
      long expected = numBuckets;
      long offset = 0;
      for (int i = 0; i < numFilters; i++) {
        long buckets = encodingVersion >= 4 ? in.moduleUnsigned() : numBuckets;
        if (encodingVersion < 4) {
          expected = numBuckets;
        }
        if (buckets != expected) {
          throw new RdbFormatException("MBbloomCF: sub-filter " + i + " has " + Long.toUnsignedString(buckets)
              + " buckets, expected " + expected + " (the first's times the expansion " + expansion + "^" + i + ")");
        }
        byte[] slots = in.moduleString();
        if (slots.length != buckets * bucketSize) {
          throw new RdbFormatException("MBbloomCF: sub-filter " + i + " has " + slots.length + " slot bytes, expected "
              + buckets * bucketSize);
        }
        try {
          RedisBloomDump.loadChunk(filter, offset + slots.length + 1, slots);
        } catch (DumpRejectedException e) {
          throw new RdbFormatException("MBbloomCF: " + e.getMessage(), e);
        }
        offset += slots.length;
        expected *= expansion;
      }
      return filter;
    }

  },

  /** {@code CMSk-TYPE}: CMS's count-min sketch. */
  COUNT_MIN_SKETCH(ValueType.COUNT_MIN_SKETCH, 0) {
    @Override
    void write(Object value, RdbOutput out) {
      CountMinSketch sketch = (CountMinSketch) value;
      out.moduleUnsigned(sketch.width());
      out.moduleUnsigned(sketch.depth());
      out.moduleUnsigned(sketch.insertedCount());
      out.moduleString(RedisBloomArrays.countMinCounters(sketch));
    }

    @Override
    Object read(RdbInput in, int encodingVersion) throws IOException {
      long width = in.moduleUnsigned();
      long depth = in.moduleUnsigned();
      long count = in.moduleUnsigned();
      if (width == 0 || depth == 0) {
        throw new RdbFormatException("CMSk-TYPE: width " + width + ", depth " + depth);
      }
      byte[] counters = in.moduleString();
      try {
        return RedisBloomArrays.countMin(width, depth, count, counters);
      } catch (IllegalArgumentException e) {
        throw new RdbFormatException("CMSk-TYPE: " + e.getMessage(), e);
      }
    }
  },

  /** {@code TopK-TYPE}: TOPK's HeavyKeeper sketch. */
  TOP_K(ValueType.TOP_K, 0) {
    @Override
    void write(Object value, RdbOutput out) {
      TopK topK = (TopK) value;
      out.moduleUnsigned(topK.k());
      out.moduleUnsigned(topK.width());
      out.moduleUnsigned(topK.depth());
      out.moduleDouble(topK.decay());
      out.moduleString(RedisBloomArrays.topKBuckets(topK));
      out.moduleString(RedisBloomArrays.topKHeap(topK));
      for (int slot = 0; slot < topK.k(); slot++) {
        byte[] item = RedisBloomArrays.topKItem(topK, slot);
        int length = 0;
        while (item != null && length < item.length && item[length] != 0) {
          length++; // RedisBloom saves strlen(item) + 1 bytes: the item up to its first NUL, and the NUL
        }
        out.moduleString(java.util.Arrays.copyOf(item == null ? new byte[0] : item, length + 1));
      }
    }

    @Override
    Object read(RdbInput in, int encodingVersion) throws IOException {
      long k = in.moduleUnsigned();
      long width = in.moduleUnsigned();
      long depth = in.moduleUnsigned();
      double decay = in.moduleDouble();
      if (k == 0 || width == 0 || depth == 0 || k > 0xFFFF_FFFFL || width > 0xFFFF_FFFFL || depth > 0xFFFF_FFFFL) {
        throw new RdbFormatException("TopK-TYPE: k " + Long.toUnsignedString(k) + ", width "
            + Long.toUnsignedString(width) + ", depth " + Long.toUnsignedString(depth));
      }
      byte[] buckets = in.moduleString();
      if (buckets.length != width * depth * RedisBloomArrays.TOPK_BUCKET_BYTES) {
        throw new RdbFormatException("TopK-TYPE: " + buckets.length + " bucket bytes for " + width + " x " + depth);
      }
      byte[] heap = in.moduleString();
      if (heap.length != k * RedisBloomArrays.HEAP_BUCKET_BYTES) {
        throw new RdbFormatException("TopK-TYPE: " + heap.length + " heap bytes for k " + k);
      }
      byte[][] items = new byte[(int) k][];
      for (int slot = 0; slot < k; slot++) {
        byte[] item = in.moduleString();
        items[slot] = item.length <= 1 ? null : java.util.Arrays.copyOf(item, item.length - 1);
      }
      try {
        return RedisBloomArrays.topK(k, width, depth, decay, buckets, heap, items, StateSeededDecay.INSTANCE);
      } catch (IllegalArgumentException e) {
        throw new RdbFormatException("TopK-TYPE: " + e.getMessage(), e);
      }
    }
  },

  /**
   * {@code TDIS-TYPE}: TDIGEST's t-digest, as RedisBloom's TDigestRdbSave writes it after compressing: compression,
   * min, max (doubles), capacity, merged and unmerged nodes, total compressions (RedisModule_SaveSigned, which Redis
   * writes as an unsigned field), merged and unmerged weight (doubles), then each merged centroid's mean and each
   * one's weight (doubles). The digest written is a compressed copy; RedisBloom compresses the live one. A digest of
   * one observation is saved with its observation buffered and not written, so RESTORE refuses it.
   */
  T_DIGEST(ValueType.T_DIGEST, 0) {
    @Override
    void write(Object value, RdbOutput out) {
      TDigest digest = ((TDigest) value).copy();
      RedisBloomArrays.TDigestFields fields = RedisBloomArrays.tDigest(digest);
      out.moduleDouble(digest.compression());
      out.moduleDouble(fields.min());
      out.moduleDouble(fields.max());
      out.moduleUnsigned(digest.capacity());
      out.moduleUnsigned(digest.mergedNodes());
      out.moduleUnsigned(digest.unmergedNodes());
      out.moduleUnsigned(digest.totalCompressions());
      out.moduleDouble(digest.mergedWeight());
      out.moduleDouble(digest.unmergedWeight());
      for (int i = 0; i < digest.mergedNodes(); i++) {
        out.moduleDouble(fields.means()[i]);
      }
      for (int i = 0; i < digest.mergedNodes(); i++) {
        out.moduleDouble(fields.weights()[i]);
      }
    }

    @Override
    Object read(RdbInput in, int encodingVersion) throws IOException {
      double compression = in.moduleDouble();
      double min = in.moduleDouble();
      double max = in.moduleDouble();
      long capacity = in.moduleUnsigned();
      long merged = in.moduleUnsigned();
      long unmerged = in.moduleUnsigned();
      long totalCompressions = in.moduleUnsigned();
      double mergedWeight = in.moduleDouble();
      double unmergedWeight = in.moduleDouble();
      if (!(compression >= 1 && compression <= TDigest.MAX_COMPRESSION) || compression != Math.rint(compression)
          || capacity != 6 * (long) compression + 10 || merged < 0 || merged > capacity) {
        throw new RdbFormatException("TDIS-TYPE: compression " + compression + ", capacity " + capacity
            + ", merged nodes " + merged);
      }
      if (unmerged != 0) { // RedisBloom saves no buffered centroid, so it loads them as zeros
        throw new RdbFormatException("TDIS-TYPE: " + unmerged + " unmerged nodes without their centroids (a digest"
            + " of one observation)");
      }
      double[] means = new double[(int) merged];
      long[] weights = new long[(int) merged];
      for (int i = 0; i < merged; i++) {
        means[i] = in.moduleDouble();
      }
      double total = 0;
      for (int i = 0; i < merged; i++) {
        double weight = in.moduleDouble();
        if (!(weight >= 1 && weight < 0x1p63) || weight != Math.rint(weight)) {
          throw new RdbFormatException("TDIS-TYPE: centroid " + i + " weight " + weight);
        }
        weights[i] = (long) weight;
        total += weight;
      }
      if (total != mergedWeight || unmergedWeight != 0) {
        throw new RdbFormatException("TDIS-TYPE: weights " + total + " recorded as " + mergedWeight + " and "
            + unmergedWeight);
      }
      try {
        return RedisBloomArrays.tDigest((long) compression, min, max, totalCompressions, means, weights);
      } catch (IllegalArgumentException e) {
        throw new RdbFormatException("TDIS-TYPE: " + e.getMessage(), e);
      }
    }
  },

  /**
   * {@code Bloomery-}: every keyspace type RedisBloom has not (counting, age-partitioned, classic, blocked and
   * scaling blocked filters), as one string field holding core's filter format; Redis refuses it as a module it does
   * not have loaded.
   */
  BLOOMERY_FORMAT(null, "Bloomery-", 1) {
    @Override
    void write(Object value, RdbOutput out) {
      out.moduleString(FilterFormat.toBytes((Summary) value));
    }

    @Override
    Object read(RdbInput in, int encodingVersion) throws IOException {
      Object value;
      try {
        value = FilterFormat.fromBytes(in.moduleString());
      } catch (FilterFormatException e) {
        throw new RdbFormatException("Bloomery-: " + e.getMessage(), e);
      }
      if (of(keyspaceType(value)) != this) {
        throw new RdbFormatException("Bloomery-: a " + value.getClass().getSimpleName() + " is no keyspace value here");
      }
      return value;
    }
  };

  /* A layer is at least one byte and ours are at most a few thousand; the bound keeps a hostile count from sizing
   * the header. */
  private static final long MAX_LAYERS = 1 << 16;

  private final ValueType valueType;
  private final ModuleTypeId id;

  ModuleType(ValueType valueType, int encodingVersion) {
    this(valueType, valueType.moduleTypeName(), encodingVersion);
  }

  ModuleType(ValueType valueType, String name, int encodingVersion) {
    this.valueType = valueType;
    this.id = new ModuleTypeId(name, encodingVersion);
  }

  /** RedisBloom's module type name. */
  public String typeName() {
    return id.name();
  }

  /** The encoding version written, also the highest read. */
  int encodingVersion() {
    return id.encodingVersion();
  }

  /** The module id this server writes. */
  long moduleId() {
    return id.encode();
  }

  /** The module type that carries values of {@code valueType}; {@code null} for {@link ValueType#GUARDED_SET}. */
  public static ModuleType of(ValueType valueType) {
    for (ModuleType t : values()) {
      if (t.valueType == valueType) {
        return t;
      }
    }
    return valueType.kind() == null ? null : BLOOMERY_FORMAT;
  }

  private static ValueType keyspaceType(Object value) throws RdbFormatException {
    try {
      return ValueType.of(value);
    } catch (IllegalArgumentException e) {
      throw new RdbFormatException(e.getMessage(), e);
    }
  }

  /** The module type with RedisBloom's type name {@code name}, or {@code null}. */
  static ModuleType named(String name) {
    for (ModuleType t : values()) {
      if (t.typeName().equals(name)) {
        return t;
      }
    }
    return null;
  }

  /**
   * Writes {@code value}'s fields (without the module id or the end marker). The caller holds the value still (its
   * key lock, as every keyspace write takes it): a BF or CF value is written from its own arrays, not a copy, so that
   * a key of gigabytes does not need as much again to be dumped.
   *
   * @throws IllegalArgumentException if one of its arrays is larger than a Java array can be
   */
  abstract void write(Object value, RdbOutput out);

  /**
   * Reads a value's fields (without the module id or the end marker), checking them as RedisBloom's loader does and
   * as the keyspace's own type needs.
   */
  abstract Object read(RdbInput in, int encodingVersion) throws IOException;

  /** {@code length} as an array length, refusing (IllegalArgumentException) what no Java array holds. */
  private static int arrayLength(long length) {
    if (length < 0 || length > RedisBloomArrays.MAX_ARRAY_BYTES) {
      throw new IllegalArgumentException("an array of " + length + " bytes is past the largest DUMP payload field, "
          + RedisBloomArrays.MAX_ARRAY_BYTES + " bytes");
    }
    return (int) length;
  }

  private static ByteBuffer littleEndian(byte[] bytes) {
    return ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
  }
}
