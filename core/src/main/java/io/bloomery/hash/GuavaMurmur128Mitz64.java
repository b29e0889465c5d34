package io.bloomery.hash;

import com.dynatrace.hash4j.hashing.HashValue128;
import com.dynatrace.hash4j.hashing.Hasher128;
import com.dynatrace.hash4j.hashing.Hashing;

/*
 * guava-murmur128-mitz64: the position derivation of Guava's BloomFilterStrategies.MURMUR128_MITZ_64
 * (strategy ordinal 1, Guava's default since 17.0), so filters written by Guava's BloomFilter.writeTo
 * can be imported and answer identically. Definition (from Guava's source):
 *
 *   (h1, h2) = murmur3_x64_128(item bytes, seed 0)     h1 = first 8 output bytes little-endian,
 *                                                      h2 = last 8 (hash4j: least / most significant bits)
 *   combined = h1
 *   for i in 0..k-1: position[i] = (combined & Long.MAX_VALUE) % m; combined += h2   (mod 2^64)
 *
 * For Funnels.byteArrayFunnel() the hashed bytes are the item; for Funnels.stringFunnel(UTF_8) they
 * are the string's UTF-8 bytes, which is exactly how Bloomery encodes CharSequence items. The limits
 * are those of Guava's writeTo format: m is a whole number of 64-bit words (1 .. 2^31-1 words),
 * k in 1..255 (u8), and there is no seed. hash4j's murmur3_128 is byte-for-byte Guava's murmur3_128
 * (verified in GuavaMurmur128Mitz64Test against Guava itself) and allocation-free apart from its
 * result object.
 */
final class GuavaMurmur128Mitz64 extends NamedProtocol {

  static final GuavaMurmur128Mitz64 INSTANCE = new GuavaMurmur128Mitz64();

  static final long MAX_BITS = 64L * Integer.MAX_VALUE;
  static final int MAX_HASHES = 255;

  private static final Hasher128 MURMUR3_128 = Hashing.murmur3_128();

  private GuavaMurmur128Mitz64() {}

  @Override
  public ProtocolId id() {
    return ProtocolId.GUAVA_MURMUR128_MITZ64;
  }

  @Override
  public void checkParameters(long bits, int hashes, byte[] seed) {
    ProtocolChecks.check(name(), bits, hashes, seed, MAX_BITS, MAX_HASHES, 0);
    if (bits % Long.SIZE != 0) {
      throw new IllegalArgumentException(
          name() + ": bit count m must be a multiple of 64 (Guava stores whole 64-bit words), was " + bits);
    }
  }

  @Override
  public Placement bind(long bits, int hashes, byte[] seed) {
    checkParameters(bits, hashes, seed);
    return new Bound(bits, hashes);
  }

  private static final class Bound extends BoundPlacement {
    Bound(long bits, int hashes) {
      super(bits, hashes);
    }

    @Override
    public void positions(byte[] item, int offset, int length, long[] out) {
      ProtocolChecks.checkCall(item, offset, length, out, hashes);
      HashValue128 hash = MURMUR3_128.hashBytesTo128Bits(item, offset, length);
      long combined = hash.getLeastSignificantBits();
      long increment = hash.getMostSignificantBits();
      for (int i = 0; i < hashes; i++) {
        out[i] = (combined & Long.MAX_VALUE) % bits;
        combined += increment;
      }
    }
  }
}
