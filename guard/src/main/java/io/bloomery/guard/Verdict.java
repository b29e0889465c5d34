package io.bloomery.guard;

/**
 * The three-valued answer of {@link Guard#lookup(byte[])}.
 *
 * <ul>
 *   <li>{@code maybePresent = false}: the filter says definitely absent; the store was not consulted
 *       ({@code exactChecked = false}, {@code duplicate = false}). This is exact as long as the
 *       filter contains every committed row, which the guard maintains (see {@link Guard}).
 *   <li>{@code maybePresent = true, exactChecked = true}: the store was asked; {@code duplicate}
 *       says whether it holds a byte-for-byte equal item. {@code duplicate = false} here is a
 *       realized false positive of the filter.
 * </ul>
 *
 * <p>A store that cannot answer raises {@link StoreUnavailableException} instead of a verdict.
 *
 * @param maybePresent the filter answered "maybe"
 * @param exactChecked the exact store was consulted
 * @param duplicate the store confirmed the item by byte equality
 */
public record Verdict(boolean maybePresent, boolean exactChecked, boolean duplicate) {

  static final Verdict ABSENT = new Verdict(false, false, false);
  static final Verdict CHECKED_ABSENT = new Verdict(true, true, false);
  static final Verdict DUPLICATE = new Verdict(true, true, true);

  public Verdict {
    if (!maybePresent && (exactChecked || duplicate)) {
      throw new IllegalArgumentException("a filter negative is never checked against the store");
    }
    if (duplicate && !exactChecked) {
      throw new IllegalArgumentException("a duplicate is only ever confirmed by the store");
    }
  }
}
