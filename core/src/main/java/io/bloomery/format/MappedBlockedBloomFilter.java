package io.bloomery.format;

import io.bloomery.blocked.BlockedBloomFilter;
import io.bloomery.blocked.BlockedBloomMath;
import io.bloomery.blocked.BlockedPlacement;
import io.bloomery.filter.FilterKind;
import io.bloomery.hash.ProtocolId;
import io.bloomery.internal.Items;
import io.bloomery.internal.KindAccess;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Objects;

/**
 * A read-only {@link FilterKind#BLOCKED_BLOOM blocked} Bloom filter answered from its serialized bytes
 * in place ({@link FilterFormat#map(java.nio.file.Path)}, {@link FilterFormat#wrap(java.nio.ByteBuffer)});
 * the contract is {@link MappedFilter}'s and {@link BlockedBloomFilter}'s, less adding and merging.
 *
 * <p>A lookup reads one 512-bit block, as on the heap; the file's payload starts at byte 38 + seed
 * length, so a block is not aligned to a 64-byte cache line and usually spans two (the heap filter
 * aligns its array instead).
 */
public final class MappedBlockedBloomFilter extends MappedViews implements MappedFilter {
  /* Separate from BlockedBloomFilter for the reason MappedBloomFilter gives; the placement (block from
   * the hash's high half, k positions inside it from the low half) comes from BlockedPlacement, which
   * BlockedBloomFilter's own add sets bit for bit. */

  /** Keys hashed before their blocks are read, so the reads' misses overlap (as the heap kind's batches). */
  private static final int BATCH = 32;

  private final BlockedPlacement placement;
  private final long blocks;
  private final int hashes;

  MappedBlockedBloomFilter(MappedImage image) {
    super(image);
    this.blocks = image.parameters.get("blocks");
    this.hashes = parameter("hashes");
    this.placement = BlockedPlacement.of(image.envelope.seed(), blocks, hashes);
  }

  @Override
  public FilterKind kind() {
    return FilterKind.BLOCKED_BLOOM;
  }

  @Override
  public boolean mightContain(byte[] item) {
    Objects.requireNonNull(item, "item");
    return containsHash(placement.hash(item, 0, item.length));
  }

  /** Queries {@code item[offset, offset + length)}. */
  public boolean mightContain(byte[] item, int offset, int length) {
    return containsHash(placement.hash(item, offset, length));
  }

  @Override
  public boolean mightContain(CharSequence item) {
    Objects.requireNonNull(item, "item");
    return mightContain(item instanceof String
        ? ((String) item).getBytes(StandardCharsets.UTF_8) : Items.utf8(item, "item"));
  }

  private boolean containsHash(long hash) {
    long base = placement.block(hash) * 8;
    for (int i = 0; i < hashes; i++) {
      int p = placement.position(hash, i);
      if ((words.word(base + (p >>> 6)) & (1L << p)) == 0) {
        return false;
      }
    }
    return true;
  }

  private boolean containsHashBranchFree(long hash) {
    long base = placement.block(hash) * 8;
    long all = 1;
    for (int i = 0; i < hashes; i++) {
      int p = placement.position(hash, i);
      all &= words.word(base + (p >>> 6)) >>> p;
    }
    return all != 0;
  }

  /** Hashes batches of 32 keys, then reads their blocks branch-free so the misses overlap. */
  @Override
  public int mightContainAll(byte[][] items, boolean[] out) {
    checkBatch(items, out);
    long[] batch = new long[BATCH];
    int maybe = 0;
    for (int start = 0; start < items.length; start += BATCH) {
      int size = Math.min(BATCH, items.length - start);
      for (int j = 0; j < size; j++) {
        byte[] item = Objects.requireNonNull(items[start + j], "items[]");
        batch[j] = placement.hash(item, 0, item.length);
      }
      for (int j = 0; j < size; j++) {
        boolean answer = containsHashBranchFree(batch[j]);
        out[start + j] = answer;
        maybe += answer ? 1 : 0;
      }
    }
    return maybe;
  }

  @Override
  public ProtocolId protocolId() {
    return ProtocolId.XXH3_BLOCKED_V1;
  }

  @Override
  public byte[] seed() {
    return placement.seed();
  }

  /** Number of 512-bit blocks. */
  public long blockCount() {
    return blocks;
  }

  @Override
  public long bitSize() {
    return blocks * 512;
  }

  @Override
  public int hashCount() {
    return hashes;
  }

  /** The mean over blocks of (block fill)^k, as {@link BlockedBloomFilter#estimatedFpp()}. */
  @Override
  public double estimatedFpp() {
    double sum = 0;
    for (long b = 0; b < blocks; b++) {
      sum += Math.pow(words.bitCount(8 * b, 8 * b + 8) / 512.0, hashes);
    }
    return sum / blocks;
  }

  /** The per-block Swamidass–Baldi sum, as {@link BlockedBloomFilter#estimatedCardinality()}. */
  @Override
  public long estimatedCardinality() {
    double sum = 0;
    for (long b = 0; b < blocks; b++) {
      long set = words.bitCount(8 * b, 8 * b + 8);
      double empty = set == 512 ? 1.0 / 512 : 1 - set / 512.0;
      sum += -512.0 / hashes * Math.log(empty);
    }
    return Math.round(sum);
  }

  /** {@link BlockedBloomMath#blockedCapacity}, as {@link BlockedBloomFilter#capacity()}. */
  @Override
  public long capacity() {
    return BlockedBloomMath.blockedCapacity(blocks, hashes);
  }

  /** Whether {@code other} has the same seed, block count and k. */
  public boolean isCompatible(BlockedBloomFilter other) {
    Objects.requireNonNull(other, "other");
    return other.blockCount() == blocks && other.hashCount() == hashes
        && java.util.Arrays.equals(other.seed(), placement.seed());
  }

  @Override
  public BlockedBloomFilter toHeap() {
    try {
      return KindAccess.blocked(BlockedBloomFilter.class).restore(placement.seed(), blocks, hashes, inserted, words.source());
    } catch (IOException e) {
      throw new AssertionError("reading mapped words cannot fail with an IOException", e);
    }
  }

  @Override
  public String toString() {
    return "MappedBlockedBloomFilter{blocks=" + blocks + ", hashes=" + hashes + ", inserted=" + inserted
        + ", bytes=" + image.size() + "}";
  }
}
