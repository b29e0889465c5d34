package io.bloomery.sketch;

/*
 * Austin Appleby's 32-bit MurmurHash2, exactly as RedisBloom's deps/murmur2/MurmurHash2.c computes it
 * on a little-endian machine (RedisBloom b28c2945). RedisBloom's CMS and TOPK hash every item with
 * it: row i of a count-min sketch or a HeavyKeeper uses seed i, TOPK fingerprints use seed 1919.
 * hash4j ships Murmur3 but not Murmur2, hence this small implementation; it is pinned by vectors
 * generated from RedisBloom's C source (test resource vectors/redisbloom-sketches.txt).
 */
final class MurmurHash2 {
  private static final int M = 0x5bd1e995;
  private static final int R = 24;

  private MurmurHash2() {}

  /** MurmurHash2(item[offset, offset+length), seed) as an unsigned 32-bit value in an int. */
  static int hash32(byte[] item, int offset, int length, int seed) {
    int h = seed ^ length;
    int i = offset;
    int remaining = length;
    while (remaining >= 4) {
      int k = (item[i] & 0xff)
          | (item[i + 1] & 0xff) << 8
          | (item[i + 2] & 0xff) << 16
          | (item[i + 3] & 0xff) << 24;
      k *= M;
      k ^= k >>> R;
      k *= M;
      h *= M;
      h ^= k;
      i += 4;
      remaining -= 4;
    }
    // The C switch falls through: tail bytes 2, 1 and 0, then one multiply.
    if (remaining == 3) {
      h ^= (item[i + 2] & 0xff) << 16;
    }
    if (remaining >= 2) {
      h ^= (item[i + 1] & 0xff) << 8;
    }
    if (remaining >= 1) {
      h ^= item[i] & 0xff;
      h *= M;
    }
    h ^= h >>> 13;
    h *= M;
    h ^= h >>> 15;
    return h;
  }

  /** The unsigned remainder {@code hash mod modulus}, as C's {@code uint32_t % size_t} computes it. */
  static int reduce(int hash, int modulus) {
    return (int) ((hash & 0xFFFF_FFFFL) % modulus);
  }
}
