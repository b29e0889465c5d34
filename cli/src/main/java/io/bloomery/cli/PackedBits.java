package io.bloomery.cli;

import io.bloomery.filter.BloomFilter;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/**
 * A classic filter's bits as packed little-endian bytes (logical bit 0 is the least significant bit
 * of byte 0; ceil(m / 8) bytes), the form the known-answer vectors and {@code docs/FORMAT.md} use.
 */
final class PackedBits {
  /** {@code info} prints the packed bits themselves up to this many bits. */
  static final long MAX_BITS_SHOWN = 4096;

  private PackedBits() {}

  /** The packed bytes of a filter of at most {@link #MAX_BITS_SHOWN} bits. */
  static byte[] bytes(BloomFilter filter) {
    if (filter.bitSize() > MAX_BITS_SHOWN) {
      throw new IllegalArgumentException("filter too large to show: " + filter.bitSize() + " bits");
    }
    byte[] packed = new byte[(int) byteCount(filter)];
    for (int i = 0; i < packed.length; i++) {
      packed[i] = byteAt(filter, i);
    }
    return packed;
  }

  /** SHA-256 of the packed bytes, hex: identifies a filter's bits at any size. */
  static String sha256Hex(BloomFilter filter) {
    MessageDigest digest;
    try {
      digest = MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every JDK has SHA-256", e);
    }
    long bytes = byteCount(filter);
    byte[] chunk = new byte[1 << 16];
    for (long start = 0; start < bytes; start += chunk.length) {
      int length = (int) Math.min(chunk.length, bytes - start);
      for (int i = 0; i < length; i++) {
        chunk[i] = byteAt(filter, start + i);
      }
      digest.update(chunk, 0, length);
    }
    return Hex.encode(digest.digest());
  }

  static long byteCount(BloomFilter filter) {
    return (filter.bitSize() + 7) >>> 3;
  }

  private static byte byteAt(BloomFilter filter, long byteIndex) {
    return (byte) (filter.word(byteIndex >>> 3) >>> ((byteIndex & 7) << 3));
  }
}
