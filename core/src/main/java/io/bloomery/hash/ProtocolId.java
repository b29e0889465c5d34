package io.bloomery.hash;

/**
 * The frozen registry of hash protocol identifiers, as recorded in every serialized filter.
 *
 * <p>Identifiers are persisted: they are append-only. Never renumber, reorder or reuse one; a test
 * fails if an existing entry changes. The registry is closed: every protocol a file can name is one of
 * these constants, shipped with Bloomery.
 */
public enum ProtocolId {
  /** Fast default for classic Bloom filters: XXH3-64 plus enhanced double hashing. */
  XXH3_EDH_V1(1, "xxh3-edh-v1"),
  /** Domain-separated SHA-256 document-membership protocol (docs/PROTOCOLS.md). */
  SHA256_DOC_V1(2, "sha256-doc-v1"),
  /** SHA-256(u8(i) ‖ item) mod m. */
  SHA256_INDEX8(3, "sha256-index8"),
  /** SHA-256(u16be(i) ‖ item) mod m. */
  SHA256_INDEX16(4, "sha256-index16"),
  /** Guava's {@code BloomFilterStrategies.MURMUR128_MITZ_64}, for the {@code writeTo} format. */
  GUAVA_MURMUR128_MITZ64(5, "guava-murmur128-mitz64"),
  /** Apache Parquet split-block Bloom filter hashing: XXH64 with seed 0. */
  PARQUET_XXH64(6, "parquet-xxh64"),
  /** RedisBloom's MurmurHash64A double hashing for BF.* filters. */
  REDISBLOOM_MURMUR64A(7, "redisbloom-murmur64a"),
  /** XXH3-64 feeding a cache-line-blocked layout (block from the high bits, in-block bits from the rest). */
  XXH3_BLOCKED_V1(8, "xxh3-blocked-v1"),
  /**
   * RedisBloom's 32-bit MurmurHash2 with per-row seeds (row i uses seed i; TOPK fingerprints seed
   * 1919), as CMS.* and TOPK.* place items. The layout is defined by the kind (count-min sketch,
   * top-k), not by a bit-placement {@link HashProtocol}; recorded so that a file says how its
   * counters were placed.
   */
  REDISBLOOM_MURMUR2(9, "redisbloom-murmur2"),
  /**
   * XXH3-64 (seed 0) of the item, mixed with the construction seed, placing a key in the three slots
   * of a binary fuse filter (defined in {@code io.bloomery.fuse.BinaryFuseFilter}).
   */
  XXH3_FUSE_V1(10, "xxh3-fuse-v1"),
  /**
   * No hashing: the kind stores numbers, not hashed items (the t-digest). Recorded so that every envelope names a
   * protocol; a body of such a kind takes no seed.
   */
  UNHASHED(11, "unhashed");

  private final int code;
  private final String protocolName;

  ProtocolId(int code, String protocolName) {
    this.code = code;
    this.protocolName = protocolName;
  }

  /** The byte recorded in serialized filters. */
  public int code() {
    return code;
  }

  /** The stable, human-readable protocol name used by the CLI and in JSON output. */
  public String protocolName() {
    return protocolName;
  }

  /**
   * Looks up an identifier by its persisted code.
   *
   * @throws IllegalArgumentException if no protocol has that code
   */
  public static ProtocolId ofCode(int code) {
    for (ProtocolId id : values()) {
      if (id.code == code) {
        return id;
      }
    }
    throw new IllegalArgumentException("unknown hash protocol id " + code);
  }

  /**
   * Looks up an identifier by its name (for example {@code "sha256-doc-v1"}).
   *
   * @throws IllegalArgumentException if no protocol has that name
   */
  public static ProtocolId ofName(String name) {
    for (ProtocolId id : values()) {
      if (id.protocolName.equals(name)) {
        return id;
      }
    }
    StringBuilder known = new StringBuilder();
    for (ProtocolId id : values()) {
      known.append(known.length() == 0 ? "" : ", ").append(id.protocolName);
    }
    throw new IllegalArgumentException("unknown hash protocol '" + name + "' (expected one of: " + known + ")");
  }
}
