package io.bloomery.server.dashboard;

import io.bloomery.aging.AgePartitionedFilter;
import io.bloomery.blocked.BlockedBloomFilter;
import io.bloomery.blocked.BlockedBloomMath;
import io.bloomery.blocked.ScalableBlockedBloomFilter;
import io.bloomery.counting.CountingBloomFilter;
import io.bloomery.filter.BloomFilter;
import io.bloomery.redisbloom.CuckooFilter;
import io.bloomery.redisbloom.ScalableBloomFilter;
import io.bloomery.server.keyspace.Values;
import io.bloomery.sizing.BloomMath;
import java.util.List;
import java.util.function.LongToDoubleFunction;

/**
 * One key's health as the dashboard shows it: how many items it holds against how many it was sized for, how
 * full its bits (or slots, or counters) are, the false-positive rate estimated now against the rate it was
 * configured for, and the model curve of that rate against the number of items.
 *
 * <p>Figures a kind does not have are {@code NaN} (rates, fill) or {@code -1} (counts): a count-min sketch has no
 * false-positive rate, an age-partitioned filter records no configured rate.
 *
 * @param items distinct items counted by the filter (RedisBloom's "Number of items inserted" for BF and CF, net of
 *     deletions for CF)
 * @param capacity items the filter is sized for, -1 where the kind has no such figure
 * @param fillRatio share of bits (counters, slots) in use, in [0, 1]
 * @param estimatedFpr the false-positive rate now, from the model at the present items (or the fill)
 * @param targetFpr the rate the key was configured for (BF.RESERVE's error rate; the model rate at capacity for
 *     kinds configured by size)
 * @param layers layers (BF), sub-filters (CF), generations (AGE), 1 otherwise
 * @param expireAtMillis absolute expiry in Unix ms, -1 for none
 * @param model the model false-positive rate after n items, {@code null} for the sketches
 */
record KeyHealth(String key, String kind, long items, long capacity, double fillRatio, double estimatedFpr,
    double targetFpr, int layers, long bytes, long expireAtMillis, LongToDoubleFunction model) {

  /** Where the "near capacity" warning starts, as in the CLI and the core filters. */
  static final double NEAR_CAPACITY = 0.8;

  /** Items over capacity, NaN where the kind has no capacity. */
  double capacityUsed() {
    return capacity > 0 && items >= 0 ? (double) items / capacity : Double.NaN;
  }

  boolean nearCapacity() {
    return capacityUsed() >= NEAR_CAPACITY;
  }

  /** The figures of {@code value}, held under {@code key}. */
  static KeyHealth of(String key, Object value, long expireAtMillis) {
    String kind = Values.kindName(value);
    long bytes = Values.bytes(value);
    return switch (value) {
      case ScalableBloomFilter f -> scalable(key, kind, f, bytes, expireAtMillis);
      case ScalableBlockedBloomFilter f -> scalingBlocked(key, kind, f, bytes, expireAtMillis);
      case CuckooFilter f -> cuckoo(key, kind, f, bytes, expireAtMillis);
      case CountingBloomFilter f -> {
        long m = f.counterCount();
        int k = f.hashCount();
        long capacity = f.capacity();
        yield new KeyHealth(key, kind, f.insertedCount(), capacity, (double) f.nonZeroCounters() / m, f.estimatedFpp(),
            BloomMath.falsePositiveRate(m, k, capacity), 1, bytes, expireAtMillis,
            n -> BloomMath.falsePositiveRate(m, k, n));
      }
      case BlockedBloomFilter f -> {
        long capacity = f.capacity();
        yield new KeyHealth(key, kind, f.insertedCount(), capacity, f.fillRatio(), f.estimatedFpp(),
            f.modelFpp(capacity), 1, bytes, expireAtMillis, f::modelFpp);
      }
      case BloomFilter f -> {
        long m = f.bitSize();
        int k = f.hashCount();
        long capacity = f.capacity();
        yield new KeyHealth(key, kind, f.insertedCount(), capacity, f.fillRatio(), f.estimatedFpp(),
            BloomMath.falsePositiveRate(m, k, capacity), 1, bytes, expireAtMillis,
            n -> BloomMath.falsePositiveRate(m, k, n));
      }
      case AgePartitionedFilter f -> aging(key, kind, f, bytes, expireAtMillis);
      default -> new KeyHealth(key, kind, -1, -1, Double.NaN, Double.NaN, Double.NaN, 1, bytes, expireAtMillis, null);
    };
  }

  /**
   * A scalable filter fills its layers in order; the model puts n items into the present layers up to each one's
   * capacity and, if the filter scales, into the layers it would add (capacity times the expansion, error rate
   * halved, RedisBloom's rule); a NONSCALING filter's last layer takes the overflow. Layers fail independently, so
   * the filter's rate is {@code 1 - prod(1 - p_i)}.
   */
  private static KeyHealth scalable(String key, String kind, ScalableBloomFilter f, long bytes, long expireAt) {
    List<ScalableBloomFilter.Layer> layers = f.layers();
    long bits = 0;
    for (ScalableBloomFilter.Layer layer : layers) {
      bits += layer.bits();
    }
    ScalableBloomFilter.Layer first = layers.get(0);
    double target = f.isScaling() ? first.errorRate() / ScalableBloomFilter.ERROR_TIGHTENING_RATIO : first.errorRate();
    boolean scaling = f.isScaling();
    long growth = Math.max(1, f.growth());
    LongToDoubleFunction model = n -> {
      double pass = 1;
      long left = n;
      for (int i = 0; i < layers.size() && left > 0; i++) {
        ScalableBloomFilter.Layer layer = layers.get(i);
        boolean last = i == layers.size() - 1;
        long here = last && !scaling ? left : Math.min(left, layer.capacity());
        pass *= 1 - BloomMath.falsePositiveRate(layer.bits(), layer.hashes(), here);
        left -= here;
      }
      long capacity = layers.get(layers.size() - 1).capacity();
      double error = layers.get(layers.size() - 1).errorRate();
      while (left > 0) {
        capacity = capacity > Long.MAX_VALUE / growth ? Long.MAX_VALUE / 2 : capacity * growth;
        error *= ScalableBloomFilter.ERROR_TIGHTENING_RATIO;
        long m = BloomMath.optimalBits(capacity, error);
        long here = Math.min(left, capacity);
        pass *= 1 - BloomMath.falsePositiveRate(m, BloomMath.optimalHashes(capacity, m), here);
        left -= here;
      }
      return 1 - pass;
    };
    double estimated = 1;
    for (ScalableBloomFilter.Layer layer : layers) {
      estimated *= 1 - BloomMath.falsePositiveRate(layer.bits(), layer.hashes(), layer.size());
    }
    return new KeyHealth(key, kind, f.insertedCount(), f.capacity(), bits == 0 ? 0 : (double) f.bitCount() / bits,
        1 - estimated, target, layers.size(), bytes, expireAt, model);
  }

  /**
   * A scaling blocked chain fills its layers in order, as the scalable kind does; the model puts n items into the
   * present layers up to each one's capacity, then into the layers it would add (capacity times the expansion, error
   * halved, each sized by the blocked model), and combines them as {@code 1 - prod(1 - p_i)}.
   */
  private static KeyHealth scalingBlocked(String key, String kind, ScalableBlockedBloomFilter f, long bytes,
      long expireAt) {
    List<ScalableBlockedBloomFilter.Layer> layers = f.layers();
    long expansion = f.expansion();
    LongToDoubleFunction model = n -> {
      double pass = 1;
      long left = n;
      for (int i = 0; i < layers.size() && left > 0; i++) {
        ScalableBlockedBloomFilter.Layer layer = layers.get(i);
        long here = Math.min(left, layer.capacity());
        pass *= 1 - BlockedBloomMath.blockedFalsePositiveRate(here, layer.blocks(), 512, layer.hashes());
        left -= here;
      }
      long capacity = layers.get(layers.size() - 1).capacity();
      double error = layers.get(layers.size() - 1).errorRate();
      while (left > 0 && error > 0) {
        capacity = capacity > Long.MAX_VALUE / expansion ? Long.MAX_VALUE / 2 : capacity * expansion;
        error *= ScalableBlockedBloomFilter.ERROR_TIGHTENING_RATIO;
        long here = Math.min(left, capacity);
        double rate;
        try {
          long blocks = BlockedBloomMath.blockedBlocks(capacity, error);
          rate = BlockedBloomMath.blockedFalsePositiveRate(here, blocks, 512,
              BlockedBloomMath.optimalBlockedHashes(capacity, blocks));
        } catch (IllegalArgumentException tooLarge) {
          rate = error; // a layer the blocked model cannot size: its bound at capacity
        }
        pass *= 1 - rate;
        left -= here;
      }
      return 1 - pass;
    };
    double estimated = 1;
    for (ScalableBlockedBloomFilter.Layer layer : layers) {
      estimated *= 1 - BlockedBloomMath.blockedFalsePositiveRate(layer.size(), layer.blocks(), 512, layer.hashes());
    }
    long bits = 8 * f.byteSize();
    return new KeyHealth(key, kind, f.insertedCount(), f.capacity(), bits == 0 ? 0 : (double) f.bitCount() / bits,
        1 - estimated, f.errorRate(), layers.size(), bytes, expireAt, model);
  }

  /**
   * A cuckoo lookup compares the item's 8-bit fingerprint with the slots of two buckets: each occupied slot matches
   * by chance with probability 1/255, so at load a sub-filter answers a false "maybe" with probability {@code 1 -
   * (1 - 1/255)^(2 b load)}; the filter's sub-filters add up. At full load that is the configured rate.
   */
  private static KeyHealth cuckoo(String key, String kind, CuckooFilter f, long bytes, long expireAt) {
    CuckooFilter.Info info = f.info();
    long slots = Math.max(1, f.bucketCount() * f.bucketSize());
    int filters = Math.max(1, f.filterCount());
    long items = f.insertedCount();
    int bucket = f.bucketSize();
    LongToDoubleFunction model = n -> {
      double load = Math.min(1.0, (double) n / slots);
      return Math.min(1.0, filters * -Math.expm1(2.0 * bucket * load * Math.log1p(-1.0 / 255)));
    };
    return new KeyHealth(key, kind, items, slots, Math.min(1.0, (double) items / slots), model.applyAsDouble(items),
        model.applyAsDouble(slots), (int) info.numberOfFilters(), bytes, expireAt, model);
  }

  /** Items counted over the window's generations; the curve spreads n items evenly across them. */
  private static KeyHealth aging(String key, String kind, AgePartitionedFilter f, long bytes, long expireAt) {
    long items = f.insertedCount();
    double fill = f.fillRatio();
    int g = f.generations();
    long m = f.bitsPerGeneration();
    int k = f.hashCount();
    long capacity = f.capacity();
    LongToDoubleFunction model = n -> {
      double pass = Math.pow(1 - BloomMath.falsePositiveRate(m, k, n / g), g);
      return 1 - pass;
    };
    return new KeyHealth(key, kind, items, capacity, fill,
        f.estimatedFpp(), model.applyAsDouble(capacity), g, bytes, expireAt, model);
  }
}
