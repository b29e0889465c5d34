package io.bloomery.sketch;

/*
 * Austin Appleby's 32-bit MurmurHash2, exactly as RedisBloom's deps/murmur2/MurmurHash2.c computes it
 * on a little-endian machine (RedisBloom b28c2945). RedisBloom's CMS and TOPK hash every item with
 * it: row i of a count-min sketch or a HeavyKeeper uses seed i, TOPK fingerprints use seed 1919.
 * The hash itself is the one io.bloomery.hash.MurmurHash2 implements for RedisBloom's BF
 * chains; this class adds the CMS/TOPK reduction. Pinned by vectors generated from RedisBloom's C
 * source (test resource vectors/redisbloom-sketches.txt).
 */
final class MurmurHash2 {
  private MurmurHash2() {}

  /** MurmurHash2(item[offset, offset+length), seed) as an unsigned 32-bit value in an int. */
  static int hash32(byte[] item, int offset, int length, int seed) {
    return io.bloomery.hash.MurmurHash2.hash32(item, offset, length, seed);
  }

  /** The unsigned remainder {@code hash mod modulus}, as C's {@code uint32_t % size_t} computes it. */
  static int reduce(int hash, int modulus) {
    return Integer.remainderUnsigned(hash, modulus); // modulus > 0: a 32-bit division, not a 64-bit one
  }
}
