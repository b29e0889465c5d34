package io.bloomery.cli;

import io.bloomery.filter.BloomFilter;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.security.DigestOutputStream;
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
    return filter.toPackedBytes();
  }

  /** SHA-256 of the packed bytes, hex: identifies a filter's bits at any size. */
  static String sha256Hex(BloomFilter filter) {
    MessageDigest digest;
    try {
      digest = MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every JDK has SHA-256", e);
    }
    try (DigestOutputStream out = new DigestOutputStream(OutputStream.nullOutputStream(), digest)) {
      filter.writePackedBytes(out);
    } catch (IOException e) {
      throw new UncheckedIOException("a null stream does not fail", e);
    }
    return Hex.encode(digest.digest());
  }

  static long byteCount(BloomFilter filter) {
    return (filter.bitSize() + 7) >>> 3;
  }
}
