package io.bloomery.guard;

import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.HexFormat;

/**
 * SHA-256 of an item's bytes: the unique-index key of both stores.
 *
 * <p>Why a digest and not the item: PostgreSQL's btree refuses index entries above about 2.7 kB,
 * and an index on whole documents would double their storage. A 32-byte digest fits any item; a
 * conflict on the digest is then confirmed by comparing the stored bytes, so "duplicate" always
 * means byte-for-byte equal.
 */
final class ItemDigest {
  private ItemDigest() {}

  /**
   * One SHA-256 instance per thread: {@code MessageDigest.getInstance} looks the algorithm up in the
   * provider list on every call, and single-item adds take a digest per item (another when its pending
   * mark is cleared). {@code digest} resets the instance after each use.
   */
  private static final ThreadLocal<MessageDigest> SHA_256 = ThreadLocal.withInitial(() -> {
    try {
      return MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new AssertionError("every JDK ships SHA-256", e);
    }
  });

  static byte[] of(byte[] item) {
    return SHA_256.get().digest(item);
  }

  /** Returns {@code true}, or throws {@link DigestCollisionException} if the bytes differ. */
  static boolean confirmSameBytes(byte[] stored, byte[] item) {
    if (!Arrays.equals(stored, item)) {
      throw new DigestCollisionException(
          "two different items share SHA-256 " + HexFormat.of().formatHex(of(item))
              + " (stored " + stored.length + " bytes, offered " + item.length + " bytes)");
    }
    return true;
  }

  /** Item bytes usable as a hash-map key (content equality). */
  record Key(byte[] bytes) {
    @Override
    public boolean equals(Object other) {
      return other instanceof Key k && Arrays.equals(bytes, k.bytes);
    }

    @Override
    public int hashCode() {
      return Arrays.hashCode(bytes);
    }

    @Override
    public String toString() {
      return HexFormat.of().formatHex(bytes);
    }
  }
}
