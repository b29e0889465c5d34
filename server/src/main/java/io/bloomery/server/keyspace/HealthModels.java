package io.bloomery.server.keyspace;

import io.bloomery.aging.AgePartitionedFilter;
import io.bloomery.blocked.BlockedBloomMath;
import io.bloomery.blocked.ScalableBlockedBloomFilter;
import io.bloomery.cuckoo.CuckooFilter;
import io.bloomery.scalable.ScalableBloomFilter;
import io.bloomery.sizing.BloomMath;
import java.util.List;
import java.util.function.LongToDoubleFunction;

/**
 * The dashboard's figures ({@link ValueType#health}) of the types whose false-positive model takes more than a few
 * lines.
 */
final class HealthModels {
  private HealthModels() {}

  /**
   * One layer of m bits (or counters) and k probes anywhere in it: the classic model at {@code capacity} items is
   * the configured rate.
   */
  static ValueType.Health classic(long items, long capacity, long m, int k, double fill, double estimated) {
    return new ValueType.Health(items, capacity, fill, estimated, BloomMath.falsePositiveRate(m, k, capacity), 1,
        n -> BloomMath.falsePositiveRate(m, k, n));
  }

  /**
   * A scalable filter fills its layers in order; the model puts n items into the present layers up to each one's
   * capacity and, if the filter scales, into the layers it would add (capacity times the expansion, error rate
   * halved, RedisBloom's rule); a NONSCALING filter's last layer takes the overflow. Layers fail independently, so
   * the filter's rate is {@code 1 - prod(1 - p_i)}.
   */
  static ValueType.Health scalable(ScalableBloomFilter f) {
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
    return new ValueType.Health(f.insertedCount(), f.capacity(), bits == 0 ? 0 : (double) f.bitCount() / bits,
        1 - estimated, target, layers.size(), model);
  }

  /**
   * A scaling blocked chain fills its layers in order, as the scalable kind does; the model puts n items into the
   * present layers up to each one's capacity, then into the layers it would add (capacity times the expansion, error
   * halved, each sized by the blocked model), and combines them as {@code 1 - prod(1 - p_i)}.
   */
  static ValueType.Health scalingBlocked(ScalableBlockedBloomFilter f) {
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
    return new ValueType.Health(f.insertedCount(), f.capacity(), bits == 0 ? 0 : (double) f.bitCount() / bits,
        1 - estimated, f.errorRate(), layers.size(), model);
  }

  /**
   * A cuckoo lookup compares the item's 8-bit fingerprint with the slots of two buckets in every sub-filter: each
   * occupied slot matches by chance with probability 1/255, so a sub-filter at load l answers a false "maybe" with
   * probability {@code 1 - (1 - 1/255)^(2 b l)}, and the sub-filters' rates add up. Items fill the sub-filters in the
   * order they were made (a new one is made only when an add finds the others full), so the curve fills them in that
   * order. Capacity and fill count the slots of every sub-filter.
   */
  static ValueType.Health cuckoo(CuckooFilter f) {
    int bucket = f.bucketSize();
    long[] slots = subFilterSlots(f);
    long capacity = 0;
    for (long s : slots) {
      capacity += s;
    }
    long items = f.insertedCount();
    LongToDoubleFunction model = n -> {
      double rate = 0;
      long left = n;
      for (long s : slots) {
        long here = Math.min(left, s);
        rate += -Math.expm1(2.0 * bucket * ((double) here / s) * Math.log1p(-1.0 / 255));
        left -= here;
      }
      return Math.min(1.0, rate);
    };
    return new ValueType.Health(items, capacity, capacity == 0 ? 0 : Math.min(1.0, (double) items / capacity),
        model.applyAsDouble(items), model.applyAsDouble(capacity), slots.length, model);
  }

  /**
   * The fingerprint slots of each sub-filter, oldest first: the first has {@code buckets × bucket size}, each later
   * one {@code expansion} times its predecessor's buckets (as the filter grows them), and together they are {@link
   * CuckooFilter#capacity()}; the last one takes whatever that rule leaves short of it.
   */
  static long[] subFilterSlots(CuckooFilter f) {
    int filters = Math.max(1, f.filterCount());
    long[] slots = new long[filters];
    long before = 0;
    long size = f.bucketCount() * f.bucketSize();
    for (int i = 0; i < filters - 1; i++) {
      slots[i] = size;
      before += size;
      size = f.expansion() <= 1 || size > Long.MAX_VALUE / f.expansion() ? size : size * f.expansion();
    }
    slots[filters - 1] = Math.max(1, f.capacity() - before);
    return slots;
  }

  /** Items counted over the window's generations; the curve spreads n items evenly across them. */
  static ValueType.Health aging(AgePartitionedFilter f) {
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
    return new ValueType.Health(items, capacity, fill,
        f.estimatedFpp(), model.applyAsDouble(capacity), g, model);
  }
}
