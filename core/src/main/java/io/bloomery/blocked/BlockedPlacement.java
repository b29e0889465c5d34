package io.bloomery.blocked;

import com.dynatrace.hash4j.hashing.Hasher64;
import java.util.Objects;

/**
 * Where protocol {@code xxh3-blocked-v1} puts an item, without a filter: its 64-bit hash, the one
 * 512-bit block that hash selects, and the bits it sets inside that block. For building a blocked
 * filter as independent block ranges (each range held and written by a different task, the
 * ranges then concatenated into one file with {@code FilterFormat.writeBlocked}); the bits are
 * exactly those {@link BlockedBloomFilter#add(byte[])} sets in a filter with the same seed, block
 * count and k.
 *
 * <p>Immutable and thread-safe.
 */
public final class BlockedPlacement {
  private final byte[] seed;
  private final long blocks;
  private final int hashes;
  private final Hasher64 hasher;

  private BlockedPlacement(byte[] seed, long blocks, int hashes) {
    BlockedBloomFilter.checkParameters(seed, blocks, hashes);
    this.seed = seed.clone();
    this.blocks = blocks;
    this.hashes = hashes;
    this.hasher = BlockedBloomFilter.hasher(this.seed);
  }

  /**
   * The placement of a blocked filter with these parameters.
   *
   * @throws IllegalArgumentException if {@link BlockedBloomFilter#create(byte[], long, int)} would
   */
  public static BlockedPlacement of(byte[] seed, long blocks, int hashes) {
    return new BlockedPlacement(Objects.requireNonNull(seed, "seed"), blocks, hashes);
  }

  /** The placement of {@code filter}'s seed, block count and k. */
  public static BlockedPlacement of(BlockedBloomFilter filter) {
    return new BlockedPlacement(filter.seed(), filter.blockCount(), filter.hashCount());
  }

  /** The number of blocks B. */
  public long blockCount() {
    return blocks;
  }

  /** The number of bits k set per item. */
  public int hashCount() {
    return hashes;
  }

  /** The seed (a copy). */
  public byte[] seed() {
    return seed.clone();
  }

  /** The item's 64-bit hash; everything else about its placement derives from it. */
  public long hash(byte[] item, int offset, int length) {
    Objects.checkFromIndexSize(offset, length, Objects.requireNonNull(item, "item").length);
    return hasher.hashBytesToLong(item, offset, length);
  }

  /** The block, in [0, B), whose words 8b .. 8b+7 hold every bit of the item with this hash. */
  public long block(long hash) {
    return ((hash >>> 32) * blocks) >>> 32;
  }

  /**
   * The position in [0, 512) of the item's {@code i}-th bit inside its {@link #block block}: bit
   * {@code p & 63} of the block's word {@code p >>> 6}. Positions may repeat. For readers that hold a
   * filter's words somewhere other than a {@code long[]} (a mapped file); {@link #setBits} sets
   * exactly these bits.
   *
   * @throws IndexOutOfBoundsException unless {@code 0 <= i < k}
   */
  public int position(long hash, int i) {
    Objects.checkIndex(i, hashes);
    return ((int) hash * BlockedBloomFilter.SALTS[i]) >>> 23;
  }

  /**
   * Sets the item's k bits in its block, whose 8 words are {@code words[offset .. offset+8)}.
   *
   * @return whether any bit was newly set
   */
  public boolean setBits(long hash, long[] words, int offset) {
    Objects.checkFromIndexSize(offset, 8, words.length);
    int x = (int) hash;
    boolean changed = false;
    for (int i = 0; i < hashes; i++) {
      int y = x * BlockedBloomFilter.SALTS[i];
      int index = offset + (y >>> 29);
      long mask = 1L << (y >>> 23);
      changed |= (words[index] & mask) == 0;
      words[index] |= mask;
    }
    return changed;
  }
}
