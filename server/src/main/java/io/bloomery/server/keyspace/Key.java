package io.bloomery.server.keyspace;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/** A key's bytes, compared and hashed by content. The array is owned by the key: callers must not change it. */
public final class Key implements Comparable<Key> {
  private final byte[] bytes;
  private final int hash;

  private Key(byte[] bytes) {
    this.bytes = bytes;
    this.hash = Arrays.hashCode(bytes);
  }

  /** Wraps {@code bytes} without copying. */
  public static Key of(byte[] bytes) {
    return new Key(bytes);
  }

  public static Key of(String text) {
    return new Key(text.getBytes(StandardCharsets.UTF_8));
  }

  /** The key's bytes (not a copy). */
  public byte[] bytes() {
    return bytes;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Key other && hash == other.hash && Arrays.equals(bytes, other.bytes);
  }

  @Override
  public int hashCode() {
    return hash;
  }

  /** A total order (hash first, then bytes) used to take several key locks without deadlock. */
  @Override
  public int compareTo(Key o) {
    int c = Integer.compare(hash, o.hash);
    return c != 0 ? c : Arrays.compareUnsigned(bytes, o.bytes);
  }

  @Override
  public String toString() {
    return new String(bytes, StandardCharsets.UTF_8);
  }
}
