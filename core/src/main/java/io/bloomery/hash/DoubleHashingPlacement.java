package io.bloomery.hash;

/**
 * A placement whose positions are {@link EnhancedDoubleHashing} of one 64-bit item hash. Filters use
 * it to walk the positions without an array per call:
 *
 * <pre>{@code
 * long x = placement.hash(item, offset, length);
 * long y = EnhancedDoubleHashing.stride(x);
 * long d = EnhancedDoubleHashing.CUBIC_SCALE;
 * for (int i = 0; i < k; i++) {
 *   long position = EnhancedDoubleHashing.reduce(x, m);
 *   ...
 *   x += y;
 *   y += d;
 *   d += EnhancedDoubleHashing.CUBIC_SCALE;
 * }
 * }</pre>
 *
 * which yields exactly the positions {@link #positions} writes. Implement this interface only if
 * {@code positions} is exactly {@link EnhancedDoubleHashing#positions EnhancedDoubleHashing.positions}
 * of {@link #hash}: filters trust it and skip {@code positions} altogether.
 */
public interface DoubleHashingPlacement extends HashProtocol.Placement {

  /** The item's 64-bit hash, the starting point of its probe sequence. */
  long hash(byte[] item, int offset, int length);
}
