package io.bloomery.server.keyspace;

import io.bloomery.aging.AgePartitionedFilter;
import io.bloomery.blocked.BlockedBloomFilter;
import io.bloomery.blocked.ScalableBlockedBloomFilter;
import io.bloomery.counting.CountingBloomFilter;
import io.bloomery.cuckoo.CuckooFilter;
import io.bloomery.filter.BloomFilter;
import io.bloomery.filter.FilterKind;
import io.bloomery.scalable.ScalableBloomFilter;
import io.bloomery.sketch.CountMinSketch;
import io.bloomery.sketch.TDigest;
import io.bloomery.sketch.TopK;
import java.util.function.LongToDoubleFunction;

/**
 * The value-type table: every kind of value a key can hold, and all the server knows of each, as Redis keeps a
 * table of module types. {@link #of} is the one place that maps a value's class to its type; no other server code
 * looks at a value's class.
 *
 * <p>Per type: its kind ({@link FilterKind}, core's name for it; {@code null} for {@link #GUARDED_SET}, which core
 * has no kind for), {@code TYPE}'s reply, RedisBloom's module type name, the label metrics, INFO and the dashboard
 * show, the BF.* family check the commands' WRONGTYPE needs, the bytes counted against {@code maxmemory}, whether
 * reads run without the key lock, what a snapshot keeps of it, and the figures {@code /metrics} and the dashboard
 * show.
 *
 * <p>Labels are what {@code /metrics} ({@code kind} tag), INFO ({@code keys_<label>}) and the dashboard have always
 * shown, and differ from core's kind names for five kinds: {@code bloom} is {@link FilterKind#SCALABLE_BLOOM},
 * {@code cms} {@link FilterKind#COUNT_MIN_SKETCH}, {@code topk} {@link FilterKind#TOP_K}, {@code tdigest} {@link
 * FilterKind#T_DIGEST} and {@code aging} {@link FilterKind#AGE_PARTITIONED_BLOOM}; the others equal {@link
 * FilterKind#kindName()}.
 *
 * <p>A new value type is one more constant here (its snapshots are core's {@code FilterFormat} envelopes of its
 * kind); its commands check for it with {@link #holds} or {@link #of}.
 */
public enum ValueType {
  /** BF.RESERVE / BF.ADD's scalable Bloom filter. */
  SCALABLE_BLOOM(ScalableBloomFilter.class, FilterKind.SCALABLE_BLOOM, "MBbloom--", "MBbloom--", "bloom", true) {
    @Override
    public long memoryUsage(Object value) {
      return ((ScalableBloomFilter) value).memoryUsage();
    }

    @Override
    public Object copy(Object value) {
      return ((ScalableBloomFilter) value).copy();
    }

    /** A {@link ScalableBloomFilter.Frozen} view, which copies a 64 KiB page of a layer only before a write. */
    @Override
    public Object freeze(Object value) {
      return ((ScalableBloomFilter) value).freeze();
    }

    @Override
    public Figures figures(Object value) {
      ScalableBloomFilter f = (ScalableBloomFilter) value;
      ScalableBloomFilter.Info info = f.info();
      double fpr = 0;
      for (ScalableBloomFilter.Layer layer : f.layers()) {
        double fill = layer.capacity() == 0 ? 0 : Math.min(1.0, (double) layer.size() / layer.capacity());
        fpr += layer.errorRate() * fill;
      }
      return new Figures(info.itemsInserted(), info.capacity(), fpr, info.numberOfFilters());
    }

    @Override
    public Health health(Object value) {
      return HealthModels.scalable((ScalableBloomFilter) value);
    }
  },
  /** CF.RESERVE / CF.ADD's cuckoo filter. */
  CUCKOO(CuckooFilter.class, FilterKind.CUCKOO, "MBbloomCF", "MBbloomCF", "cuckoo", false) {
    @Override
    public long memoryUsage(Object value) {
      return ((CuckooFilter) value).memoryBytes();
    }

    @Override
    public Object copy(Object value) {
      return ((CuckooFilter) value).copy();
    }

    @Override
    public Figures figures(Object value) {
      CuckooFilter f = (CuckooFilter) value;
      CuckooFilter.Info info = f.info();
      return new Figures(info.itemsInserted(), f.capacity(), info.numberOfFilters() * 2.0 * f.bucketSize() / 255,
          info.numberOfFilters());
    }

    @Override
    public Health health(Object value) {
      return HealthModels.cuckoo((CuckooFilter) value);
    }
  },
  /** CMS.*'s count-min sketch; its reads take the key lock. */
  COUNT_MIN_SKETCH(CountMinSketch.class, FilterKind.COUNT_MIN_SKETCH, "CMSk-TYPE", "CMSk-TYPE", "cms", false) {
    /** RedisBloom's {@code CMSMemUsage}: the 32-byte {@code CMSketch} struct and 4 bytes per counter. */
    @Override
    public long memoryUsage(Object value) {
      CountMinSketch s = (CountMinSketch) value;
      return 32 + 4 * s.width() * s.depth();
    }

    @Override
    public boolean concurrentReads() {
      return false;
    }

    @Override
    public Object copy(Object value) {
      return ((CountMinSketch) value).copy();
    }
  },
  /** TOPK.*'s HeavyKeeper top-k; its reads take the key lock. */
  TOP_K(TopK.class, FilterKind.TOP_K, "TopK-TYPE", "TopK-TYPE", "topk", false) {
    /**
     * RedisBloom's {@code TopKMemUsage}: the {@code TopK} struct (40 bytes and its 256-entry decay table), 8 bytes per
     * bucket and a 24-byte {@code HeapBucket} per heap slot.
     */
    @Override
    public long memoryUsage(Object value) {
      TopK t = (TopK) value;
      return 40 + 8L * TopK.DECAY_LOOKUP_TABLE_SIZE + 8 * t.width() * t.depth() + 24 * t.k();
    }

    @Override
    public boolean concurrentReads() {
      return false;
    }

    @Override
    public Object copy(Object value) {
      return ((TopK) value).copy(StateSeededDecay.INSTANCE);
    }

    @Override
    public Object adopt(Object value) {
      return copy(value);
    }
  },
  /** TDIGEST.*'s t-digest; its queries compress it, so they run under the key lock. */
  T_DIGEST(TDigest.class, FilterKind.T_DIGEST, "TDIS-TYPE", "TDIS-TYPE", "tdigest", false) {
    @Override
    public long memoryUsage(Object value) {
      return ((TDigest) value).memoryUsage();
    }

    @Override
    public boolean concurrentReads() {
      return false;
    }

    @Override
    public Object copy(Object value) {
      return ((TDigest) value).copy();
    }

    @Override
    public Health health(Object value) {
      TDigest t = (TDigest) value;
      return new Health(t.insertedCount(), -1, Double.NaN, Double.NaN, Double.NaN, 1, null);
    }

    /** On a copy: a query compresses, and the dashboard must not change the digest or its journal's story. */
    @Override
    public double[] quantiles(Object value) {
      return ((TDigest) value).copy().quantiles(QUANTILE_FRACTIONS);
    }
  },
  /** BF.RESERVE's counting Bloom filter (ours: no RedisBloom type). */
  COUNTING_BLOOM(CountingBloomFilter.class, FilterKind.COUNTING_BLOOM, "BLcounting", null, "counting", false) {
    @Override
    public long memoryUsage(Object value) {
      return ((CountingBloomFilter) value).counterBytes() + 48;
    }

    @Override
    public Object copy(Object value) {
      return ((CountingBloomFilter) value).copy();
    }

    @Override
    public Figures figures(Object value) {
      CountingBloomFilter f = (CountingBloomFilter) value;
      return new Figures(f.insertedCount(), f.counterCount(), f.estimatedFpp(), 1);
    }

    @Override
    public Health health(Object value) {
      CountingBloomFilter f = (CountingBloomFilter) value;
      return HealthModels.classic(f.insertedCount(), f.capacity(), f.counterCount(), f.hashCount(),
          (double) f.nonZeroCounters() / f.counterCount(), f.estimatedFpp());
    }
  },
  /** The age-partitioned filter (ours: no RedisBloom type). */
  AGE_PARTITIONED_BLOOM(AgePartitionedFilter.class, FilterKind.AGE_PARTITIONED_BLOOM, "BLagepart", null, "aging",
      false) {
    @Override
    public long memoryUsage(Object value) {
      AgePartitionedFilter f = (AgePartitionedFilter) value;
      return f.generations() * (f.bitsPerGeneration() / 8) + 64;
    }

    @Override
    public Object copy(Object value) {
      return ((AgePartitionedFilter) value).copy(CommandClock::now);
    }

    @Override
    public Object adopt(Object value) {
      return copy(value);
    }

    @Override
    public Figures figures(Object value) {
      AgePartitionedFilter f = (AgePartitionedFilter) value;
      return new Figures(0, 0, f.estimatedFpp(), f.generations());
    }

    @Override
    public Health health(Object value) {
      return HealthModels.aging((AgePartitionedFilter) value);
    }
  },
  /** BF.RESERVE ... NONSCALING LAYOUT CLASSIC's fixed classic Bloom filter (a BF.* key; ours, no RedisBloom type). */
  CLASSIC_BLOOM(BloomFilter.class, FilterKind.CLASSIC_BLOOM, "BLbloom", null, "classic", true) {
    @Override
    public long memoryUsage(Object value) {
      return (((BloomFilter) value).bitSize() + 63) / 64 * 8 + 48;
    }

    @Override
    public Object copy(Object value) {
      return ((BloomFilter) value).copy();
    }

    @Override
    public Figures figures(Object value) {
      BloomFilter f = (BloomFilter) value;
      return new Figures(f.insertedCount(), f.capacity(), f.estimatedFpp(), 1);
    }

    @Override
    public Health health(Object value) {
      BloomFilter f = (BloomFilter) value;
      return HealthModels.classic(f.insertedCount(), f.capacity(), f.bitSize(), f.hashCount(), f.fillRatio(),
          f.estimatedFpp());
    }
  },
  /** BF.RESERVE ... NONSCALING LAYOUT BLOCKED's fixed blocked Bloom filter (a BF.* key; ours). */
  BLOCKED_BLOOM(BlockedBloomFilter.class, FilterKind.BLOCKED_BLOOM, "BLbloom", null, "blocked", true) {
    @Override
    public long memoryUsage(Object value) {
      return ((BlockedBloomFilter) value).bitSize() / 8 + 48;
    }

    @Override
    public Object copy(Object value) {
      return ((BlockedBloomFilter) value).copy();
    }

    @Override
    public Figures figures(Object value) {
      BlockedBloomFilter f = (BlockedBloomFilter) value;
      return new Figures(f.insertedCount(), f.capacity(), f.estimatedFpp(), 1);
    }

    @Override
    public Health health(Object value) {
      BlockedBloomFilter f = (BlockedBloomFilter) value;
      long capacity = f.capacity();
      return new Health(f.insertedCount(), capacity, f.fillRatio(), f.estimatedFpp(), f.modelFpp(capacity), 1,
          f::modelFpp);
    }
  },
  /** BF.RESERVE ... LAYOUT BLOCKED's scaling chain of blocked layers (a BF.* key; ours). */
  SCALABLE_BLOCKED_BLOOM(ScalableBlockedBloomFilter.class, FilterKind.SCALABLE_BLOCKED_BLOOM, "BLbloom", null,
      "scalable-blocked", true) {
    @Override
    public long memoryUsage(Object value) {
      ScalableBlockedBloomFilter f = (ScalableBlockedBloomFilter) value;
      return f.byteSize() + 48L * (f.filterCount() + 1);
    }

    @Override
    public Object copy(Object value) {
      return ((ScalableBlockedBloomFilter) value).copy();
    }

    @Override
    public Figures figures(Object value) {
      ScalableBlockedBloomFilter f = (ScalableBlockedBloomFilter) value;
      return new Figures(f.insertedCount(), f.capacity(), f.estimatedFpp(), f.filterCount());
    }

    @Override
    public Health health(Object value) {
      return HealthModels.scalingBlocked((ScalableBlockedBloomFilter) value);
    }
  },
  /**
   * A guarded set (GUARD.RESERVE): it lives in the guard package's own map, not in the keyspace, so {@link #of}
   * never answers it; {@code TYPE}, {@code SCAN ... TYPE}, {@code /metrics} and INFO name it from here, and every
   * non-GUARD write of it is refused with WRONGTYPE.
   */
  GUARDED_SET(null, null, "guard", null, "guard", false) {
    @Override
    public long memoryUsage(Object value) {
      throw notInKeyspace();
    }

    @Override
    public Object copy(Object value) {
      throw notInKeyspace();
    }

    private IllegalStateException notInKeyspace() {
      return new IllegalStateException("a guarded set is not a keyspace value");
    }
  };

  /** The fractions {@link #quantiles} estimates: 0, 0.02, …, 1. */
  public static final double[] QUANTILE_FRACTIONS = java.util.stream.IntStream.rangeClosed(0, 50)
      .mapToDouble(i -> i / 50.0).toArray();

  private static final ClassValue<ValueType> BY_CLASS = new ClassValue<>() {
    @Override
    protected ValueType computeValue(Class<?> type) {
      for (ValueType t : values()) {
        if (type.equals(t.valueClass)) {
          return t;
        }
      }
      return null;
    }
  };

  private final Class<?> valueClass;
  private final FilterKind kind;
  private final String typeReply;
  private final String moduleTypeName;
  private final String label;
  private final boolean bloomFamily;

  ValueType(Class<?> valueClass, FilterKind kind, String typeReply, String moduleTypeName, String label,
      boolean bloomFamily) {
    this.valueClass = valueClass;
    this.kind = kind;
    this.typeReply = typeReply;
    this.moduleTypeName = moduleTypeName;
    this.label = label;
    this.bloomFamily = bloomFamily;
  }

  /**
   * The type of a keyspace value: the one place that maps a class to its type.
   *
   * @throws IllegalArgumentException if {@code value} is of no type in this table (it names the class)
   */
  public static ValueType of(Object value) {
    ValueType t = BY_CLASS.get(value.getClass());
    if (t == null) {
      throw new IllegalArgumentException("not a keyspace value: " + value.getClass().getName());
    }
    return t;
  }

  /** Whether {@code value} is of this type; {@code false} for {@code null} and for a value of no type. */
  public boolean holds(Object value) {
    return value != null && BY_CLASS.get(value.getClass()) == this;
  }

  /** The class of this type's values, {@code null} for {@link #GUARDED_SET} (never in the keyspace). */
  public Class<?> valueClass() {
    return valueClass;
  }

  /** Core's kind of this type's values; {@code null} for {@link #GUARDED_SET}, which is the server's own. */
  public FilterKind kind() {
    return kind;
  }

  /** {@code TYPE}'s reply: RedisBloom's module type name for its kinds, ours ({@code BL...}, guard) for our own. */
  public String typeReply() {
    return typeReply;
  }

  /** RedisBloom's module type name ({@code MBbloom--}, {@code MBbloomCF}, ...), {@code null} for our own kinds. */
  public String moduleTypeName() {
    return moduleTypeName;
  }

  /** The label of this type in {@code /metrics} ({@code kind} tag), INFO ({@code keys_<label>}) and the dashboard. */
  public String label() {
    return label;
  }

  /** Whether BF.* commands apply to this type (scalable, scaling blocked, or a fixed classic or blocked filter). */
  public boolean isBloom() {
    return bloomFamily;
  }

  /**
   * The bytes the value's arrays hold: the server's own accounting for {@code maxmemory} (RedisBloom's {@code
   * mem_usage} formula, its C structs and arrays, for BF, CF, CMS, TOPK and TDIGEST; counters and cells for the
   * others), not a JVM heap estimate.
   */
  public abstract long memoryUsage(Object value);

  /** Whether reads of this type are safe while a writer of the same key runs (else reads take the key lock). */
  public boolean concurrentReads() {
    return true;
  }

  /** An independent deep copy of {@code value}. */
  public abstract Object copy(Object value);

  /**
   * The value as the keyspace keeps it when it arrives from outside (a loaded file, a snapshot): itself, or, for a
   * type whose value carries a clock or a random source, a copy bound to the keyspace's own ({@link CommandClock},
   * {@link StateSeededDecay}), so replay and the live server decide alike.
   */
  public Object adopt(Object value) {
    return value;
  }

  /**
   * The value as it is now, kept so while the live value changes, for a snapshot's copy on write: a deep {@link
   * #copy} unless the type has a cheaper frozen view (close that once written, if it is {@link AutoCloseable}).
   */
  public Object freeze(Object value) {
    return copy(value);
  }

  /**
   * The value's estimated quantiles at {@link #QUANTILE_FRACTIONS} (NaN where it has no estimate yet), for the
   * dashboard's quantile chart; {@code null} for the types that hold no distribution. Leaves the value unchanged.
   */
  public double[] quantiles(Object value) {
    return null;
  }

  /** The figures {@code /metrics} shows of the value (the sketches, read under the key lock, show none). */
  public Figures figures(Object value) {
    return new Figures(0, 0, 0, 1);
  }

  /** The figures the dashboard shows of the value; counts -1 and rates NaN where the type has none. */
  public Health health(Object value) {
    return new Health(-1, -1, Double.NaN, Double.NaN, Double.NaN, 1, null);
  }

  /**
   * One key's {@code /metrics} figures.
   *
   * @param items items inserted
   * @param capacity items (or slots, counters) the value is sized for
   * @param fpr the false-positive rate estimated now
   * @param layers layers, sub-filters or generations; 1 otherwise
   */
  public record Figures(long items, long capacity, double fpr, long layers) {}

  /**
   * One key's dashboard figures: counts are -1 and rates {@code NaN} where the type has none.
   *
   * @param items distinct items counted (RedisBloom's "Number of items inserted" for BF and CF, net of deletions for
   *     CF)
   * @param capacity items the value is sized for, -1 where the type has no such figure
   * @param fillRatio share of bits (counters, slots) in use, in [0, 1]
   * @param estimatedFpr the false-positive rate now, from the model at the present items (or the fill)
   * @param targetFpr the rate the key was configured for (BF.RESERVE's error rate; the model rate at capacity for
   *     types configured by size)
   * @param layers layers (BF), sub-filters (CF), generations (AGE), 1 otherwise
   * @param model the model false-positive rate after n items, {@code null} for the sketches
   */
  public record Health(long items, long capacity, double fillRatio, double estimatedFpr, double targetFpr, int layers,
      LongToDoubleFunction model) {}
}
