package io.bloomery.server.dashboard;

import io.bloomery.server.keyspace.ValueType;
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
 * @param quantiles the estimated values at {@link ValueType#QUANTILE_FRACTIONS} (a t-digest), else {@code null}
 */
record KeyHealth(String key, String kind, long items, long capacity, double fillRatio, double estimatedFpr,
    double targetFpr, int layers, long bytes, long expireAtMillis, LongToDoubleFunction model, double[] quantiles) {

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
    ValueType type = ValueType.of(value);
    ValueType.Health h = type.health(value);
    return new KeyHealth(key, type.label(), h.items(), h.capacity(), h.fillRatio(), h.estimatedFpr(), h.targetFpr(),
        h.layers(), type.memoryUsage(value), expireAtMillis, h.model(), type.quantiles(value));
  }
}
