package io.bloomery.hash;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;

/*
 * sha256-doc-v1: domain-separated SHA-256 framing for document membership (docs/PROTOCOLS.md,
 * vectors/sha256-doc-v1.json). For i in 0..k-1:
 *
 *   message_i  = "doc-membership-v1\0" || u16be(m) || u8(k) || u8(len seed) || seed
 *                || u8(i) || u16be(len item) || item
 *   position_i = SHA-256(message_i) as a big-endian unsigned integer, mod m
 *
 * Every variable-length field is length-prefixed, so no two (seed, item) pairs share a message
 * (vectors: framing_distinct), and m and k are inside the hash, so a filter re-read with other
 * parameters places nothing where the writer did. The fixed-width fields are the protocol's limits:
 * m <= 65535, k <= 255, seed <= 255 bytes, item <= 65535 bytes. Larger values are refused with an
 * error, never truncated.
 */
final class Sha256DocV1 extends NamedProtocol {

  static final Sha256DocV1 INSTANCE = new Sha256DocV1();

  static final long MAX_BITS = 0xFFFF;
  static final int MAX_HASHES = 0xFF;
  static final int MAX_SEED_BYTES = 0xFF;
  static final int MAX_ITEM_BYTES = 0xFFFF;

  private static final byte[] DOMAIN = "doc-membership-v1\0".getBytes(StandardCharsets.US_ASCII);

  private Sha256DocV1() {}

  @Override
  public ProtocolId id() {
    return ProtocolId.SHA256_DOC_V1;
  }

  @Override
  public void checkParameters(long bits, int hashes, byte[] seed) {
    ProtocolChecks.check(name(), bits, hashes, seed, MAX_BITS, MAX_HASHES, MAX_SEED_BYTES);
  }

  @Override
  public Placement bind(long bits, int hashes, byte[] seed) {
    checkParameters(bits, hashes, seed);
    return new Bound(bits, hashes, seed);
  }

  /** The framed message for index i, exactly as hashed; for tests and documentation. */
  static byte[] message(long bits, int hashes, byte[] seed, int index, byte[] item) {
    INSTANCE.checkParameters(bits, hashes, seed);
    checkItemLength(item.length);
    byte[] header = header(bits, hashes, seed);
    byte[] message = new byte[header.length + 3 + item.length];
    System.arraycopy(header, 0, message, 0, header.length);
    int at = header.length;
    message[at++] = (byte) index;
    message[at++] = (byte) (item.length >>> 8);
    message[at++] = (byte) item.length;
    System.arraycopy(item, 0, message, at, item.length);
    return message;
  }

  /** The message prefix shared by every (item, i): domain, u16be(m), u8(k), u8(len seed), seed. */
  private static byte[] header(long bits, int hashes, byte[] seed) {
    byte[] header = new byte[DOMAIN.length + 4 + seed.length];
    System.arraycopy(DOMAIN, 0, header, 0, DOMAIN.length);
    int at = DOMAIN.length;
    header[at++] = (byte) (bits >>> 8);
    header[at++] = (byte) bits;
    header[at++] = (byte) hashes;
    header[at++] = (byte) seed.length;
    System.arraycopy(seed, 0, header, at, seed.length);
    return header;
  }

  private static void checkItemLength(int length) {
    if (length > MAX_ITEM_BYTES) {
      throw new IllegalArgumentException(
          "sha256-doc-v1: item must be at most " + MAX_ITEM_BYTES + " bytes (u16 length field), was " + length);
    }
  }

  private static final class Bound extends BoundPlacement {
    private final byte[] header;

    Bound(long bits, int hashes, byte[] seed) {
      super(bits, hashes);
      this.header = header(bits, hashes, seed);
    }

    /** @throws IllegalArgumentException if the item is longer than 65535 bytes */
    @Override
    public void positions(byte[] item, int offset, int length, long[] out) {
      ProtocolChecks.checkCall(item, offset, length, out, hashes);
      checkItemLength(length);
      MessageDigest digest = Sha256.digest();
      for (int i = 0; i < hashes; i++) {
        digest.update(header);
        digest.update((byte) i);
        digest.update((byte) (length >>> 8));
        digest.update((byte) length);
        digest.update(item, offset, length);
        out[i] = Sha256.bigEndianMod(digest.digest(), bits);
      }
    }
  }
}
