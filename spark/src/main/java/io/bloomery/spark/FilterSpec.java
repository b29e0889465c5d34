package io.bloomery.spark;

import io.bloomery.blocked.BlockedBloomFilter;
import io.bloomery.blocked.BlockedBloomMath;
import io.bloomery.blocked.BlockedPlacement;
import io.bloomery.filter.BloomFilter;
import io.bloomery.filter.FilterKind;
import io.bloomery.filter.MembershipFilter;
import io.bloomery.hash.HashProtocol;
import io.bloomery.hash.Protocols;
import io.bloomery.sizing.BloomMath;
import io.bloomery.sizing.BloomSizing;
import java.io.Serializable;
import java.util.Locale;
import java.util.Objects;

/**
 * Everything that places a bit in a filter built by {@link BloomerySpark}: the kind (core's {@link
 * FilterKind#CLASSIC_BLOOM} or {@link FilterKind#BLOCKED_BLOOM}), its size (planned from n and p exactly as {@code bloomery build} and the library plan it,
 * or given as bits and hashes), the hash protocol and seed, and what to do with a null item.
 *
 * <p>Sizing matches the library: a classic plan is {@link BloomMath#sizing}; a blocked plan is {@link
 * BlockedBloomFilter#create(long, double)}'s ({@link BlockedBloomMath#blockedBlocks} blocks and
 * {@link BlockedBloomMath#optimalBlockedHashes}); an explicit blocked size of M bits is
 * {@code ceil(M / 512)} blocks. Immutable; every parameter is checked when the spec is made.
 */
public final class FilterSpec implements Serializable {
  private static final long serialVersionUID = 1L;

  /** What a build or a lookup does with a null item. */
  public enum Nulls {
    /** Fail, naming the column (the default: a null is not an item). */
    REFUSE,
    /** Leave null rows out: they are not added, and never kept by keepAbsent or keepMaybe. */
    SKIP
  }

  private final FilterKind kind;
  private final long bits;
  private final int hashes;
  private final String protocolName;
  private final byte[] seed;
  private final Nulls nulls;

  private FilterSpec(FilterKind kind, long bits, int hashes, String protocolName, byte[] seed, Nulls nulls) {
    this.kind = kind;
    this.bits = bits;
    this.hashes = hashes;
    this.protocolName = protocolName;
    this.seed = seed.clone();
    this.nulls = nulls;
    validate();
  }

  /** A classic filter for {@code expected} distinct items at false-positive rate {@code fpp}. */
  public static FilterSpec classic(long expected, double fpp) {
    BloomSizing plan = BloomMath.sizing(expected, fpp);
    return new FilterSpec(FilterKind.CLASSIC_BLOOM, plan.bits(), plan.hashes(), Protocols.defaultProtocol().name(),
        new byte[0], Nulls.REFUSE);
  }

  /** A classic filter of exactly {@code bits} bits and {@code hashes} positions per item. */
  public static FilterSpec classicOfSize(long bits, int hashes) {
    return new FilterSpec(FilterKind.CLASSIC_BLOOM, bits, hashes, Protocols.defaultProtocol().name(), new byte[0], Nulls.REFUSE);
  }

  /** A blocked filter for {@code expected} distinct items at false-positive rate {@code fpp}. */
  public static FilterSpec blocked(long expected, double fpp) {
    long blocks = BlockedBloomMath.blockedBlocks(expected, fpp);
    int k = BlockedBloomMath.optimalBlockedHashes(expected, blocks);
    return new FilterSpec(FilterKind.BLOCKED_BLOOM, blocks * BlockedBloomMath.BLOCKED_BLOCK_BITS, k, null, new byte[0], Nulls.REFUSE);
  }

  /** A blocked filter of {@code ceil(bits / 512)} blocks and {@code hashes} bits per item (1..16). */
  public static FilterSpec blockedOfSize(long bits, int hashes) {
    if (bits < 1) {
      throw new IllegalArgumentException("bit count must be >= 1, was " + bits);
    }
    long blocks = Filters.ceilDiv(bits, (long) BlockedBloomMath.BLOCKED_BLOCK_BITS);
    return new FilterSpec(FilterKind.BLOCKED_BLOOM, blocks * BlockedBloomMath.BLOCKED_BLOCK_BITS, hashes, null, new byte[0], Nulls.REFUSE);
  }

  /** This spec with the named hash protocol (classic filters only; for example {@code sha256-index8}). */
  public FilterSpec withProtocol(String name) {
    if (kind != FilterKind.CLASSIC_BLOOM) {
      throw new IllegalArgumentException("a blocked filter always uses protocol xxh3-blocked-v1; --protocol applies to classic filters");
    }
    return new FilterSpec(kind, bits, hashes, Protocols.byName(name).name(), seed, nulls);
  }

  /** This spec with {@code seed} as the protocol's seed or domain prefix (copied). */
  public FilterSpec withSeed(byte[] seed) {
    return new FilterSpec(kind, bits, hashes, protocolName, Objects.requireNonNull(seed, "seed"), nulls);
  }

  /** This spec with the given null handling. */
  public FilterSpec withNulls(Nulls nulls) {
    return new FilterSpec(kind, bits, hashes, protocolName, seed, Objects.requireNonNull(nulls, "nulls"));
  }

  private void validate() {
    if (kind == FilterKind.CLASSIC_BLOOM) {
      if (bits < 1 || bits > BloomFilter.MAX_BITS) {
        throw new IllegalArgumentException("bit count m must be in [1, 2^40], was " + bits);
      }
      protocol().checkParameters(bits, hashes, seed);
    } else {
      BlockedPlacement.of(seed, blockCount(), hashes);
    }
  }

  /** The kind: {@link FilterKind#CLASSIC_BLOOM} or {@link FilterKind#BLOCKED_BLOOM}. */
  public FilterKind kind() {
    return kind;
  }

  /** The number of bits m (for a blocked filter, 512 × blocks). */
  public long bitSize() {
    return bits;
  }

  /** The number of blocks of a blocked filter; for a classic filter, {@code ceil(m / 512)}. */
  public long blockCount() {
    return Filters.ceilDiv(bits, (long) BlockedBloomMath.BLOCKED_BLOCK_BITS);
  }

  /** k: positions (classic) or bits (blocked) per item. */
  public int hashCount() {
    return hashes;
  }

  /** The classic filter's hash protocol; {@code xxh3-blocked-v1} is implied for blocked filters. */
  public HashProtocol protocol() {
    if (kind != FilterKind.CLASSIC_BLOOM) {
      throw new IllegalStateException("a blocked filter has no pluggable protocol (it is always xxh3-blocked-v1)");
    }
    return Protocols.byName(protocolName);
  }

  /** The seed (a copy). */
  public byte[] seed() {
    return seed.clone();
  }

  /** What happens to null items. */
  public Nulls nulls() {
    return nulls;
  }

  /** A new, empty filter with exactly these parameters. */
  public MembershipFilter newFilter() {
    return kind == FilterKind.CLASSIC_BLOOM
        ? BloomFilter.create(protocol(), seed, bits, hashes)
        : BlockedBloomFilter.create(seed, blockCount(), hashes);
  }

  /** The spec that places bits exactly like {@code filter} (a classic or blocked filter). */
  public static FilterSpec of(MembershipFilter filter) {
    if (filter instanceof BloomFilter classic) {
      return new FilterSpec(FilterKind.CLASSIC_BLOOM, classic.bitSize(), classic.hashCount(), classic.protocolId().protocolName(),
          classic.seed(), Nulls.REFUSE);
    }
    if (filter instanceof BlockedBloomFilter blocked) {
      return new FilterSpec(FilterKind.BLOCKED_BLOOM, blocked.bitSize(), blocked.hashCount(), null, blocked.seed(), Nulls.REFUSE);
    }
    throw new IllegalArgumentException(Filters.needsBloom(filter));
  }

  /** Equal when every parameter that places a bit, and the null handling, are equal. */
  @Override
  public boolean equals(Object other) {
    return other instanceof FilterSpec that && kind == that.kind && bits == that.bits && hashes == that.hashes
        && Objects.equals(protocolName, that.protocolName) && java.util.Arrays.equals(seed, that.seed) && nulls == that.nulls;
  }

  @Override
  public int hashCode() {
    return Objects.hash(kind, bits, hashes, protocolName, java.util.Arrays.hashCode(seed), nulls);
  }

  @Override
  public String toString() {
    return String.format(Locale.ROOT, "%s filter, m = %d, k = %d, protocol %s, seed %d bytes, nulls %s",
        kind.kindName(), bits, hashes, kind == FilterKind.CLASSIC_BLOOM ? protocolName : "xxh3-blocked-v1",
        seed.length, nulls.name().toLowerCase(Locale.ROOT));
  }
}
