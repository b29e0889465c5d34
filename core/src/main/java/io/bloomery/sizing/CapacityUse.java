package io.bloomery.sizing;

import java.util.Locale;

/**
 * How much of a filter's capacity its items use, in the three words every report uses: {@link #WITHIN} below 80%,
 * {@link #NEAR} from 80% up to and including 100%, {@link #OVER} above 100%. Capacity is the kind's own ({@link
 * BloomMath#capacityForHashes} for the classic layout): a filter planned for n items reads at most 100% at n items.
 */
public enum CapacityUse {
  /** Below {@link #NEAR_SHARE} of capacity. */
  WITHIN,
  /** At least {@link #NEAR_SHARE} of capacity, not above it. */
  NEAR,
  /** Above capacity: the false-positive rate is past the filter's design rate. */
  OVER;

  /** The share of capacity from which a filter is near capacity. */
  public static final double NEAR_SHARE = 0.8;

  /** The use of {@code capacity} by {@code items}; a filter with no capacity (0) is over it once it holds an item. */
  public static CapacityUse of(long items, long capacity) {
    if (items > capacity) {
      return OVER;
    }
    return items >= NEAR_SHARE * capacity && items > 0 ? NEAR : WITHIN;
  }

  /**
   * {@code items} as a whole percentage of {@code capacity}, rounded so that the word and the figure agree: down while
   * within capacity (at most "100%"), up when over it (at least "101%").
   */
  public static String percent(long items, long capacity) {
    if (capacity <= 0) {
      return items > 0 ? "over 100%" : "0%";
    }
    double share = 100.0 * items / capacity;
    long whole = items > capacity ? Math.max(101, (long) Math.ceil(share)) : Math.min(100, (long) Math.floor(share));
    return String.format(Locale.ROOT, "%d%%", whole);
  }
}
