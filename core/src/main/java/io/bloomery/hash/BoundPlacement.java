package io.bloomery.hash;

/** The (m, k) every placement carries; subclasses add the position derivation. */
abstract class BoundPlacement implements HashProtocol.Placement {
  final long bits;
  final int hashes;

  BoundPlacement(long bits, int hashes) {
    this.bits = bits;
    this.hashes = hashes;
  }

  @Override
  public final long bits() {
    return bits;
  }

  @Override
  public final int hashes() {
    return hashes;
  }
}
