package io.bloomery.filter;

import java.util.Objects;

/**
 * Thrown when two filters cannot be combined because they disagree on something that places a bit
 * (contract rule 5): kind, hash protocol, seed, bit count or hash count. The message names the
 * differing parameter and both values; nothing was changed.
 */
public final class IncompatibleFilterException extends IllegalArgumentException {
  private static final long serialVersionUID = 1L;

  private final String parameter;

  /**
   * @param parameter the differing parameter, for example {@code "bit count m"}
   * @param thisValue its value in the filter being merged into
   * @param otherValue its value in the other filter
   */
  public IncompatibleFilterException(String parameter, Object thisValue, Object otherValue) {
    super(
        "incompatible filters: "
            + parameter
            + " differs (this filter: "
            + thisValue
            + ", other filter: "
            + otherValue
            + "); filters combine only when kind, hash protocol, seed, m and k all match");
    this.parameter = Objects.requireNonNull(parameter, "parameter");
  }

  /** The name of the parameter that differs. */
  public String parameter() {
    return parameter;
  }
}
