package io.bloomery.filter;

/**
 * The frozen registry of filter kinds, as recorded in every serialized filter.
 *
 * <p>Codes are persisted: append-only, never renumbered or reused (a retired code stays retired); a
 * test fails if an existing entry changes. The kind fixes the memory layout (how positions map to bits, words or buckets); the
 * {@link io.bloomery.hash.ProtocolId protocol} fixes how item bytes become positions.
 */
public enum FilterKind {
  /** m bits, k independent probes anywhere in the bit array. */
  CLASSIC_BLOOM(1, "classic"),
  /** One 512-bit cache line per key. */
  BLOCKED_BLOOM(2, "blocked"),
  /** Apache Parquet's split-block Bloom filter: 256-bit blocks of eight 32-bit words. */
  SPLIT_BLOCK_BLOOM(3, "split-block"),
  // Code 4 is retired: it was reserved for a register-blocked layout that was measured and not shipped
  // (docs/BENCHMARKS.md); no file carries it, and it is never to be reused.
  /** RedisBloom-style chain of growing layers. */
  SCALABLE_BLOOM(5, "scalable"),
  /** Counters instead of bits: supports delete. */
  COUNTING_BLOOM(6, "counting"),
  /** RedisBloom-style cuckoo filter. */
  CUCKOO(7, "cuckoo"),
  /** Count-min sketch (RedisBloom CMS semantics). */
  COUNT_MIN_SKETCH(8, "count-min"),
  /** HeavyKeeper top-k (RedisBloom TOPK semantics). */
  TOP_K(9, "top-k"),
  /** Age-partitioned filter whose members expire after a window. */
  AGE_PARTITIONED_BLOOM(10, "age-partitioned"),
  /** Static binary fuse filter (8- or 16-bit fingerprints), built once from a whole set. */
  BINARY_FUSE(11, "binary-fuse"),
  /** A scaling chain of blocked layers (RedisBloom's growth rules, one cache line per key per layer). */
  SCALABLE_BLOCKED_BLOOM(12, "scalable-blocked"),
  /** Merging t-digest of doubles (RedisBloom TDIGEST semantics): quantiles, ranks, CDF, trimmed mean. */
  T_DIGEST(13, "t-digest");

  private final int code;
  private final String kindName;

  FilterKind(int code, String kindName) {
    this.code = code;
    this.kindName = kindName;
  }

  /** The byte recorded in serialized filters. */
  public int code() {
    return code;
  }

  /** The stable name used by the CLI and in JSON output. */
  public String kindName() {
    return kindName;
  }

  /**
   * Looks up a kind by its persisted code.
   *
   * @throws IllegalArgumentException if no kind has that code
   */
  public static FilterKind ofCode(int code) {
    for (FilterKind kind : values()) {
      if (kind.code == code) {
        return kind;
      }
    }
    throw new IllegalArgumentException("unknown filter kind " + code);
  }

  /**
   * Looks up a kind by its name (for example {@code "classic"}).
   *
   * @throws IllegalArgumentException if no kind has that name
   */
  public static FilterKind ofName(String name) {
    for (FilterKind kind : values()) {
      if (kind.kindName.equals(name)) {
        return kind;
      }
    }
    throw new IllegalArgumentException("unknown filter kind '" + name + "'");
  }
}
