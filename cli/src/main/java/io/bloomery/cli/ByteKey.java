package io.bloomery.cli;

import java.util.Arrays;

/** An item's bytes as a hash-set key (content equality), for the exact truth set of {@code query}. */
final class ByteKey {
  private final byte[] bytes;
  private final int hash;

  private ByteKey(byte[] bytes) {
    this.bytes = bytes;
    this.hash = Arrays.hashCode(bytes);
  }

  /** A key holding a copy of {@code bytes[offset, offset + length)}. */
  static ByteKey copyOf(byte[] bytes, int offset, int length) {
    return new ByteKey(Arrays.copyOfRange(bytes, offset, offset + length));
  }

  @Override
  public boolean equals(Object other) {
    return other instanceof ByteKey key && hash == key.hash && Arrays.equals(bytes, key.bytes);
  }

  @Override
  public int hashCode() {
    return hash;
  }
}
