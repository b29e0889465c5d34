package io.bloomery.hash;

import java.util.Objects;

/** Parameter checks shared by the protocol implementations; each failure names the parameter. */
final class ProtocolChecks {

  private ProtocolChecks() {}

  /** Checks 1 <= bits <= maxBits, 1 <= hashes <= maxHashes and seed.length <= maxSeedBytes. */
  static void check(
      String protocol, long bits, int hashes, byte[] seed, long maxBits, int maxHashes, int maxSeedBytes) {
    Objects.requireNonNull(seed, "seed");
    if (bits < 1 || bits > maxBits) {
      throw new IllegalArgumentException(
          protocol + ": bit count m must be in [1, " + maxBits + "], was " + bits);
    }
    if (hashes < 1 || hashes > maxHashes) {
      throw new IllegalArgumentException(
          protocol + ": hash count k must be in [1, " + maxHashes + "], was " + hashes);
    }
    if (seed.length > maxSeedBytes) {
      throw new IllegalArgumentException(
          protocol
              + (maxSeedBytes == 0
                  ? ": takes no seed (its definition has no seed field), was given " + seed.length + " bytes"
                  : ": seed must be at most " + maxSeedBytes + " bytes, was " + seed.length));
    }
  }

  /** Checks that {@code out} can hold {@code hashes} positions and the item range is valid. */
  static void checkCall(byte[] item, int offset, int length, long[] out, int hashes) {
    Objects.requireNonNull(item, "item");
    Objects.requireNonNull(out, "out");
    Objects.checkFromIndexSize(offset, length, item.length);
    if (out.length < hashes) {
      throw new IllegalArgumentException("out must hold " + hashes + " positions, has " + out.length);
    }
  }
}
