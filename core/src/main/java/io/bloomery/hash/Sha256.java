package io.bloomery.hash;

import java.math.BigInteger;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/** SHA-256 helpers shared by the SHA-256 protocols; not a hot path. */
final class Sha256 {

  private static final ThreadLocal<MessageDigest> DIGEST = ThreadLocal.withInitial(Sha256::newDigest);

  private Sha256() {}

  private static MessageDigest newDigest() {
    try {
      return MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every Java platform must provide SHA-256", e);
    }
  }

  /** This thread's digest, reset. */
  static MessageDigest digest() {
    MessageDigest digest = DIGEST.get();
    digest.reset();
    return digest;
  }

  /** The 32-byte digest, read as an unsigned big-endian integer, modulo m (1 <= m). */
  static long bigEndianMod(byte[] digest, long m) {
    return new BigInteger(1, digest).mod(BigInteger.valueOf(m)).longValue();
  }
}
