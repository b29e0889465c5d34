package io.bloomery.plan;

import io.bloomery.blocked.BlockedBloomFilter;
import io.bloomery.blocked.BlockedBloomMath;
import io.bloomery.filter.BloomFilter;
import io.bloomery.filter.FilterKind;
import io.bloomery.filter.MembershipFilter;
import io.bloomery.fuse.BinaryFuseFilter;
import io.bloomery.hash.Protocols;
import java.util.Objects;

/**
 * What {@link FilterPlanner} chose: the kind, its size and model false-positive rate, and the reason in one
 * sentence. {@link #build()} makes the empty filter it describes; {@link #build(Iterable)} makes it holding
 * a set of items (the only way for the static binary fuse kind).
 *
 * <p>This is Bloomery's one plan type; the classic sizing math it draws on returns a {@link
 * io.bloomery.sizing.BloomSizing} (m, k and the overfill table of one classic filter).
 *
 * @param kind {@link FilterKind#CLASSIC_BLOOM}, {@link FilterKind#BLOCKED_BLOOM} or {@link FilterKind#BINARY_FUSE}
 * @param bits the filter's bits (for binary fuse, slots × fingerprint bits)
 * @param hashes k (3 for binary fuse: the slots a key is spread over)
 * @param bitmapBytes the bits in bytes, without headers or object overhead
 * @param bitsPerKey bits / n
 * @param modelFpp the model false-positive rate at n items
 * @param reason why this kind, with the figures that decided it
 */
public record FilterPlan(
    FilterKind kind, long bits, int hashes, long bitmapBytes, double bitsPerKey, double modelFpp, String reason) {

  /** Checks the components. */
  public FilterPlan {
    Objects.requireNonNull(kind, "kind");
    Objects.requireNonNull(reason, "reason");
  }

  /**
   * An empty filter as planned: a classic filter with the default protocol ({@code xxh3-edh-v1}) and empty seed,
   * or a blocked filter with empty seed (so filters built from equal plans merge).
   *
   * @throws IllegalStateException for a binary fuse plan: a static filter is built from its items, {@link
   *     #build(Iterable)}
   */
  public MembershipFilter build() {
    switch (kind) {
      case CLASSIC_BLOOM:
        return BloomFilter.create(Protocols.defaultProtocol(), new byte[0], bits, hashes);
      case BLOCKED_BLOOM:
        return BlockedBloomFilter.create(new byte[0], bits / BlockedBloomMath.BLOCKED_BLOCK_BITS, hashes);
      default:
        throw new IllegalStateException("a " + kind.kindName() + " plan builds from its items: use build(items)");
    }
  }

  /**
   * The planned filter holding {@code items}: for the Bloom kinds {@link #build()} with every item added, for
   * binary fuse the static filter of the set (duplicates are allowed).
   *
   * @throws NullPointerException if {@code items} or an item is null
   */
  public MembershipFilter build(Iterable<byte[]> items) {
    Objects.requireNonNull(items, "items");
    if (kind == FilterKind.BINARY_FUSE) {
      return BinaryFuseFilter.build(items, fingerprintBits());
    }
    MembershipFilter filter = build();
    for (byte[] item : items) {
      filter.add(Objects.requireNonNull(item, "item"));
    }
    return filter;
  }

  /** A binary fuse plan's fingerprint width: its model rate is 2^-bits. */
  private int fingerprintBits() {
    return (int) Math.round(-Math.log(modelFpp) / Math.log(2));
  }
}
