package io.bloomery.hash;


/**
 * {@code redisbloom-murmur64a}: RedisBloom's BF.* bit placement, so a Bloom layout with this protocol sets the
 * same bits as one RedisBloom layer of the same size ({@code deps/bloom/bloom.c}, {@code bloom_calc_hash64} and
 * {@code CHECK_ADD_FUNC}).
 *
 * <pre>
 *   a = MurmurHash64A(item, 0xc6a4a7935bd1e995)     b = MurmurHash64A(item, a)
 *   position_i = ((a + i·b) mod 2^64) mod m,  i = 0 .. k-1      (unsigned; LSB-first bits within each byte)
 * </pre>
 *
 * RedisBloom's seed is fixed, so the protocol takes no seed. {@code io.bloomery.scalable.ScalableBloomFilter} is
 * the full RedisBloom chain; this protocol lets any other Bloom layout share its placement. Immutable and
 * thread-safe.
 */
final class RedisBloomMurmur64A implements HashProtocol {
  static final RedisBloomMurmur64A INSTANCE = new RedisBloomMurmur64A();
  static final long MAX_BITS = Long.MAX_VALUE;
  /** RedisBloom stores hashes as u32; the smallest positive double error rate needs ~1100. */
  static final int MAX_HASHES = 65535;

  private RedisBloomMurmur64A() {}

  @Override
  public ProtocolId id() {
    return ProtocolId.REDISBLOOM_MURMUR64A;
  }

  @Override
  public void checkParameters(long bits, int hashes, byte[] seed) {
    ProtocolChecks.check(name(), bits, hashes, seed, MAX_BITS, MAX_HASHES, 0);
  }

  @Override
  public Placement bind(long bits, int hashes, byte[] seed) {
    checkParameters(bits, hashes, seed);
    return new Placement() {
      @Override
      public long bits() {
        return bits;
      }

      @Override
      public int hashes() {
        return hashes;
      }

      @Override
      public void positions(byte[] item, int offset, int length, long[] out) {
        ProtocolChecks.checkCall(item, offset, length, out, hashes);
        long a = MurmurHash2.hash64A(item, offset, length, MurmurHash2.REDISBLOOM_BF_SEED);
        long b = MurmurHash2.hash64A(item, offset, length, a);
        for (int i = 0; i < hashes; i++) {
          out[i] = Long.remainderUnsigned(a + i * b, bits);
        }
      }
    };
  }

  @Override
  public String toString() {
    return name();
  }
}
