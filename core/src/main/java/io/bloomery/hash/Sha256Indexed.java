package io.bloomery.hash;

import java.security.MessageDigest;

/*
 * sha256-index8 and sha256-index16 (docs/PROTOCOLS.md; vectors/sha256-index8.json, sha256-index16.json):
 *
 *   position_i = SHA-256(u8(i) || item)    as a big-endian unsigned integer, mod m    (index8,  i < 256)
 *   position_i = SHA-256(u16be(i) || item) as a big-endian unsigned integer, mod m    (index16, i < 65536)
 *
 * for i in 0..k-1. One full SHA-256 per position: these protocols exist for reproducibility across
 * languages (a few lines of Python reproduce them) and for keys chosen by an adversary, not for speed.
 * They have no seed field, so a non-empty seed is refused rather than silently ignored. SHA-256 does
 * not anonymise anything: a filter still answers membership for guessable items.
 */
final class Sha256Indexed extends NamedProtocol {

  static final Sha256Indexed INDEX8 = new Sha256Indexed(ProtocolId.SHA256_INDEX8, 1);
  static final Sha256Indexed INDEX16 = new Sha256Indexed(ProtocolId.SHA256_INDEX16, 2);

  private final ProtocolId id;
  private final int indexBytes;

  private Sha256Indexed(ProtocolId id, int indexBytes) {
    this.id = id;
    this.indexBytes = indexBytes;
  }

  @Override
  public ProtocolId id() {
    return id;
  }

  /** The largest k: every index 0..k-1 must fit the u8 or u16 prefix. */
  int maxHashes() {
    return 1 << (8 * indexBytes);
  }

  @Override
  public void checkParameters(long bits, int hashes, byte[] seed) {
    ProtocolChecks.check(name(), bits, hashes, seed, Long.MAX_VALUE, maxHashes(), 0);
  }

  @Override
  public Placement bind(long bits, int hashes, byte[] seed) {
    checkParameters(bits, hashes, seed);
    return new Bound(bits, hashes);
  }

  private final class Bound extends BoundPlacement {
    Bound(long bits, int hashes) {
      super(bits, hashes);
    }

    @Override
    public void positions(byte[] item, int offset, int length, long[] out) {
      ProtocolChecks.checkCall(item, offset, length, out, hashes);
      MessageDigest digest = Sha256.digest();
      for (int i = 0; i < hashes; i++) {
        if (indexBytes == 2) {
          digest.update((byte) (i >>> 8));
        }
        digest.update((byte) i);
        digest.update(item, offset, length);
        out[i] = Sha256.bigEndianMod(digest.digest(), bits);
      }
    }
  }
}
