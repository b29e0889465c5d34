package io.bloomery.format;

import io.bloomery.filter.BloomFilter;
import io.bloomery.filter.FilterKind;
import io.bloomery.hash.DoubleHashingPlacement;
import io.bloomery.hash.EnhancedDoubleHashing;
import io.bloomery.hash.HashProtocol;
import io.bloomery.hash.ProtocolId;
import io.bloomery.internal.ClassicProbe;
import io.bloomery.internal.Items;
import io.bloomery.internal.KindAccess;
import io.bloomery.sizing.BloomMath;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Objects;

/**
 * A read-only {@link FilterKind#CLASSIC_BLOOM classic} Bloom filter answered from its serialized
 * bytes in place ({@link FilterFormat#map(java.nio.file.Path)}, {@link
 * FilterFormat#wrap(java.nio.ByteBuffer)}); the contract is {@link MappedFilter}'s and {@link
 * BloomFilter}'s, less adding and merging.
 */
public final class MappedBloomFilter extends MappedViews implements MappedFilter {
  /* A separate class rather than a storage mode of BloomFilter: the heap filter's probe loops read a
   * long[][] through a VarHandle, and a second storage behind the same call sites would make them
   * polymorphic. This class repeats the one-key classic probe (the enhanced double hashing walk of
   * DoubleHashingPlacement, or the protocol's positions array) over MappedWords instead, and shares
   * the grouped batch probe (ClassicProbe), handing it its own round of loads; the heap filter hands
   * it its own, so each round is a loop over one storage. The contract suite and MappedFilterTest
   * check that both answer every query alike. */

  private final HashProtocol protocol;
  private final byte[] seed;
  private final long bits;
  private final int hashes;
  private final HashProtocol.Placement placement;
  private final DoubleHashingPlacement doubleHashing;
  /** The batched probe, or null when batch calls go key by key. */
  private final ClassicProbe probe;
  private final ClassicProbe.Gather gather = this::gatherRound;

  MappedBloomFilter(MappedImage image) throws FilterFormatException {
    super(image);
    this.bits = image.parameters.get("bits");
    this.hashes = parameter("hashes");
    this.protocol = image.envelope.checkedProtocol(bits, hashes);
    this.seed = image.envelope.seed().clone();
    this.placement = protocol.bind(bits, hashes, seed);
    this.doubleHashing = placement instanceof DoubleHashingPlacement ? (DoubleHashingPlacement) placement : null;
    this.probe = ClassicProbe.of(placement, bits, hashes);
  }

  @Override
  public FilterKind kind() {
    return FilterKind.CLASSIC_BLOOM;
  }

  @Override
  public boolean mightContain(byte[] item) {
    Objects.requireNonNull(item, "item");
    return mightContain(item, 0, item.length);
  }

  /** Whether the UTF-8 bytes of {@code item} may be present. */
  @Override
  public boolean mightContain(CharSequence item) {
    Objects.requireNonNull(item, "item");
    return mightContain(item instanceof String
        ? ((String) item).getBytes(StandardCharsets.UTF_8) : Items.utf8(item, "item"));
  }

  /** Queries {@code item[offset .. offset+length)}. */
  public boolean mightContain(byte[] item, int offset, int length) {
    Objects.requireNonNull(item, "item");
    Objects.checkFromIndexSize(offset, length, item.length);
    if (doubleHashing != null) {
      long x = doubleHashing.hash(item, offset, length);
      long y = EnhancedDoubleHashing.stride(x);
      long d = EnhancedDoubleHashing.CUBIC_SCALE;
      for (int i = 0; i < hashes; i++) {
        if (!isSet(EnhancedDoubleHashing.reduce(x, bits))) {
          return false;
        }
        x += y;
        y += d;
        d += EnhancedDoubleHashing.CUBIC_SCALE;
      }
      return true;
    }
    long[] positions = new long[hashes];
    placement.positions(item, offset, length, positions);
    for (long position : positions) {
      if (!isSet(position)) {
        return false;
      }
    }
    return true;
  }

  private boolean isSet(long position) {
    return (words.word(position >>> 6) & (1L << position)) != 0;
  }

  /**
   * Queries every item, in groups as {@link BloomFilter#mightContainAll(byte[][], boolean[])} does
   * (every position of a group first, then the words round by round), with the default protocol and
   * k up to {@value ClassicProbe#MAX_HASHES}; other protocols query one by one.
   */
  @Override
  public int mightContainAll(byte[][] items, boolean[] out) {
    checkBatch(items, out);
    if (probe != null) {
      return probe.probe(items, 0, items.length, out, gather);
    }
    int maybe = 0;
    for (int i = 0; i < items.length; i++) {
      out[i] = mightContain(Objects.requireNonNull(items[i], "items[]"));
      maybe += out[i] ? 1 : 0;
    }
    return maybe;
  }

  /** {@link ClassicProbe.Gather} over the mapped words. */
  private void gatherRound(long[] positions, int base, int[] alive, int live, long[] hit) {
    if (alive == null) {
      for (int a = 0; a < live; a++) {
        long position = positions[base + a];
        hit[a] &= words.word(position >>> 6) >>> position;
      }
    } else {
      for (int a = 0; a < live; a++) {
        long position = positions[base + alive[a]];
        hit[a] &= words.word(position >>> 6) >>> position;
      }
    }
  }

  @Override
  public ProtocolId protocolId() {
    return protocol.id();
  }

  /** The implementation of {@link #protocolId()}. */
  public HashProtocol hashProtocol() {
    return protocol;
  }

  @Override
  public byte[] seed() {
    return seed.clone();
  }

  @Override
  public long bitSize() {
    return bits;
  }

  @Override
  public int hashCount() {
    return hashes;
  }

  /** {@code (X/m)^k}, as {@link BloomFilter#estimatedFpp()}. */
  @Override
  public double estimatedFpp() {
    return Math.pow(fillRatio(), hashes);
  }

  /** The Swamidass–Baldi estimate, as {@link BloomFilter#estimatedCardinality()}. */
  @Override
  public long estimatedCardinality() {
    long set = bitCount();
    if (set >= bits) {
      return Long.MAX_VALUE;
    }
    return Math.round(-((double) bits / hashes) * Math.log1p(-(double) set / bits));
  }

  @Override
  public long capacity() {
    return BloomMath.capacityForHashes(bits, hashes);
  }

  /** Whether {@code other} has the same protocol, seed, m and k (its words could be ORed with these). */
  public boolean isCompatible(BloomFilter other) {
    Objects.requireNonNull(other, "other");
    return other.protocolId() == protocol.id() && java.util.Arrays.equals(other.seed(), seed)
        && other.bitSize() == bits && other.hashCount() == hashes;
  }

  @Override
  public BloomFilter toHeap() {
    try {
      return KindAccess.classic(BloomFilter.class).restore(protocol, seed, bits, hashes, inserted, words.source());
    } catch (IOException e) {
      throw new AssertionError("reading mapped words cannot fail with an IOException", e);
    }
  }

  @Override
  public String toString() {
    return "MappedBloomFilter{protocol=" + protocol.name() + ", m=" + bits + ", k=" + hashes + ", inserted="
        + inserted + ", bytes=" + image.size() + "}";
  }
}
