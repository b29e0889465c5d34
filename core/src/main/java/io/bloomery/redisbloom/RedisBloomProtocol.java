package io.bloomery.redisbloom;

import io.bloomery.hash.HashProtocol;
import io.bloomery.hash.ProtocolId;
import java.util.Objects;

/**
 * {@code redisbloom-murmur64a}: RedisBloom's BF.* bit placement as a {@link HashProtocol}, so any Bloom layout with
 * this protocol sets the same bits as one RedisBloom layer of the same size.
 *
 * <pre>
 *   a = MurmurHash64A(item, 0xc6a4a7935bd1e995)     b = MurmurHash64A(item, a)
 *   position_i = ((a + i·b) mod 2^64) mod m,  i = 0 .. k-1        (LSB-first bit order within each byte)
 * </pre>
 *
 * RedisBloom's seed is fixed, so the protocol takes no seed: {@link #checkParameters} refuses a non-empty one.
 * Immutable and thread-safe.
 */
public final class RedisBloomProtocol implements HashProtocol {
  /** The one instance. */
  public static final RedisBloomProtocol INSTANCE = new RedisBloomProtocol();

  private RedisBloomProtocol() {}

  @Override
  public ProtocolId id() {
    return ProtocolId.REDISBLOOM_MURMUR64A;
  }

  @Override
  public void checkParameters(long bits, int hashes, byte[] seed) {
    Objects.requireNonNull(seed, "seed");
    if (bits < 1) {
      throw new IllegalArgumentException(name() + ": bits must be >= 1, got " + bits);
    }
    if (hashes < 1) {
      throw new IllegalArgumentException(name() + ": hashes must be >= 1, got " + hashes);
    }
    if (seed.length != 0) {
      throw new IllegalArgumentException(name() + ": RedisBloom's seed is fixed, so the seed must be empty, got "
          + seed.length + " bytes");
    }
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
        long a = MurmurHash2.hash64A(item, offset, length, ScalableBloomFilter.BLOOM_SEED_64);
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
