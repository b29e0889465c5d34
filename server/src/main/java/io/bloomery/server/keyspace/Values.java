package io.bloomery.server.keyspace;

import io.bloomery.aging.AgePartitionedFilter;
import io.bloomery.blocked.BlockedBloomFilter;
import io.bloomery.blocked.ScalableBlockedBloomFilter;
import io.bloomery.counting.CountingBloomFilter;
import io.bloomery.filter.BloomFilter;
import io.bloomery.redisbloom.CuckooFilter;
import io.bloomery.redisbloom.ScalableBloomFilter;
import io.bloomery.sketch.CountMinSketch;
import io.bloomery.sketch.TopK;

/**
 * What the server needs to know about each kind of value a key can hold: the {@code TYPE} name (RedisBloom's module
 * type names, ours for our own kinds), the bytes counted against {@code maxmemory}, whether reads may run without
 * the key's lock, and what a snapshot's copy on write keeps of it.
 */
public final class Values {
  private Values() {}

  /** {@code TYPE}'s answer: RedisBloom's module type names for its kinds. */
  public static String typeName(Object value) {
    return switch (value) {
      case ScalableBloomFilter f -> "MBbloom--";
      case CuckooFilter f -> "MBbloomCF";
      case CountMinSketch s -> "CMSk-TYPE";
      case TopK t -> "TopK-TYPE";
      case CountingBloomFilter f -> "BLcounting";
      case AgePartitionedFilter f -> "BLagepart";
      case BloomFilter f -> "BLbloom";
      case BlockedBloomFilter f -> "BLbloom";
      case ScalableBlockedBloomFilter f -> "BLbloom";
      default -> throw new IllegalArgumentException("not a keyspace value: " + value.getClass().getName());
    };
  }

  /**
   * A short kind name for metrics and INFO: bloom, cuckoo, cms, topk, counting, aging, classic, blocked,
   * scalable-blocked.
   */
  public static String kindName(Object value) {
    return switch (value) {
      case ScalableBloomFilter f -> "bloom";
      case CuckooFilter f -> "cuckoo";
      case CountMinSketch s -> "cms";
      case TopK t -> "topk";
      case CountingBloomFilter f -> "counting";
      case AgePartitionedFilter f -> "aging";
      case BloomFilter f -> "classic";
      case BlockedBloomFilter f -> "blocked";
      case ScalableBlockedBloomFilter f -> "scalable-blocked";
      default -> "unknown";
    };
  }

  /**
   * The bytes the value's arrays hold: the server's own accounting for {@code maxmemory} (RedisBloom's C-struct
   * formula for BF and CF, counters and cells for the others), not a JVM heap estimate.
   */
  public static long bytes(Object value) {
    return switch (value) {
      case ScalableBloomFilter f -> f.memoryUsage();
      case CuckooFilter f -> f.info().size();
      case CountMinSketch s -> 4 * s.width() * s.depth() + 48;
      case TopK t -> 8 * t.width() * t.depth() + 16 * t.k() + 48;
      case CountingBloomFilter f -> f.counterBytes() + 48;
      case AgePartitionedFilter f -> f.generations() * (f.bitsPerGeneration() / 8) + 64;
      case BloomFilter f -> (f.bitSize() + 63) / 64 * 8 + 48;
      case BlockedBloomFilter f -> f.bitSize() / 8 + 48;
      case ScalableBlockedBloomFilter f -> f.byteSize() + 48L * (f.filterCount() + 1);
      default -> 0;
    };
  }

  /** Whether reads of this kind are safe while a writer of the same key runs (else reads take the key lock). */
  public static boolean concurrentReads(Object value) {
    return !(value instanceof CountMinSketch || value instanceof TopK);
  }

  /**
   * The value as it is now, kept so while the live value changes, for a snapshot's copy on write. A scalable Bloom
   * filter gives a {@link ScalableBloomFilter.Frozen} view, which copies a 64 KiB page of a layer only when a later
   * write is about to change it (close it once written); every other kind gives a deep {@link #copy}.
   */
  public static Object freeze(Object value) {
    return value instanceof ScalableBloomFilter f ? f.freeze() : copy(value);
  }

  /** An independent deep copy. */
  public static Object copy(Object value) {
    return switch (value) {
      case ScalableBloomFilter f -> f.copy();
      case CuckooFilter f -> f.copy();
      case CountMinSketch s -> s.copy();
      case TopK t -> t.copy(StateSeededDecay.INSTANCE);
      case CountingBloomFilter f -> f.copy();
      case AgePartitionedFilter f -> f.copy(CommandClock::now);
      case BloomFilter f -> f.copy();
      case BlockedBloomFilter f -> f.copy();
      case ScalableBlockedBloomFilter f -> f.copy();
      default -> throw new IllegalArgumentException("not a keyspace value: " + value.getClass().getName());
    };
  }
}
