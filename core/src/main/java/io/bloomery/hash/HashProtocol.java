package io.bloomery.hash;

/**
 * A named, versioned function from (item bytes, parameters) to bit positions.
 *
 * <p>Writer and reader of a filter must agree on everything that places a bit; a protocol's
 * {@link #id()} and its parameters (bit count, hash count, seed) are therefore recorded in every
 * serialized filter, and filters are only merged or loaded under the same protocol. A protocol's
 * definition is frozen once shipped: a new derivation is a new protocol with a new id.
 *
 * <p>Implementations are immutable and thread-safe.
 */
public interface HashProtocol {

  /** The persisted identifier of this protocol. */
  ProtocolId id();

  /** The stable name, for example {@code "sha256-doc-v1"}. */
  default String name() {
    return id().protocolName();
  }

  /**
   * Checks that this protocol's definition can express the parameters.
   *
   * @throws IllegalArgumentException with a message naming the offending parameter, its value and
   *     the allowed range (for example {@code m > 65535} for {@code sha256-doc-v1})
   */
  void checkParameters(long bits, int hashes, byte[] seed);

  /**
   * Binds the protocol to a filter's parameters.
   *
   * @throws IllegalArgumentException if {@link #checkParameters} would
   */
  Placement bind(long bits, int hashes, byte[] seed);

  /**
   * A protocol bound to (bits, hashes, seed): computes the positions of an item. Immutable and
   * thread-safe.
   */
  interface Placement {

    /** The number of bits m; positions lie in [0, m). */
    long bits();

    /** The number of positions k per item. */
    int hashes();

    /**
     * Writes the item's {@link #hashes()} positions, each in [0, {@link #bits()}), into
     * {@code out[0..hashes)}. Positions may repeat.
     *
     * @param out an array of at least {@link #hashes()} elements
     */
    void positions(byte[] item, int offset, int length, long[] out);
  }
}
