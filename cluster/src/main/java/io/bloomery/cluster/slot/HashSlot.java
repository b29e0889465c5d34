package io.bloomery.cluster.slot;

import java.util.Objects;

/*
 * Redis Cluster's key-to-slot function (the Redis Cluster specification, "Key distribution model" and "Hash tags"):
 * HASH_SLOT = CRC16(key) mod 16384, where CRC16 is the XMODEM variant (polynomial 0x1021, initial value 0, no
 * reflection, no final XOR; its check value, the CRC of ASCII "123456789", is 0x31C3). If the key contains a '{'
 * and a '}' after it with at least one byte between them, only the bytes between the first '{' and the first '}'
 * after it are hashed: that is what lets a client put related keys in one slot. The table below is Redis's own
 * (crc16.c), computed here from the polynomial instead of being spelled out.
 */

/**
 * The slot of a key in a Redis Cluster keyspace of {@value #SLOTS} slots, exactly as Redis computes it
 * ({@code CLUSTER KEYSLOT}), so that any cluster-aware client and Bloomery agree on where a key lives. Keys are
 * bytes; a {@code {hashtag}} selects the part that is hashed. Pure and thread-safe.
 */
public final class HashSlot {
  /** Number of slots in a cluster's keyspace. */
  public static final int SLOTS = 16384;

  private static final int[] TABLE = new int[256];

  static {
    for (int b = 0; b < 256; b++) {
      int crc = b << 8;
      for (int bit = 0; bit < 8; bit++) {
        crc = (crc & 0x8000) != 0 ? (crc << 1) ^ 0x1021 : crc << 1;
      }
      TABLE[b] = crc & 0xFFFF;
    }
  }

  private HashSlot() {}

  /**
   * The slot of {@code key}: in [0, {@value #SLOTS}).
   *
   * @throws NullPointerException if {@code key} is null
   */
  public static int of(byte[] key) {
    Objects.requireNonNull(key, "key");
    int open = indexOf(key, (byte) '{', 0);
    if (open >= 0) {
      int close = indexOf(key, (byte) '}', open + 1);
      if (close > open + 1) {
        return crc16(key, open + 1, close) & (SLOTS - 1);
      }
    }
    return crc16(key, 0, key.length) & (SLOTS - 1);
  }

  /**
   * CRC16/XMODEM of {@code bytes[from, to)}: polynomial 0x1021, initial value 0, not reflected, no final XOR.
   *
   * @throws IndexOutOfBoundsException if the range is not within {@code bytes}
   */
  public static int crc16(byte[] bytes, int from, int to) {
    Objects.checkFromToIndex(from, to, bytes.length);
    int crc = 0;
    for (int i = from; i < to; i++) {
      crc = ((crc << 8) ^ TABLE[((crc >>> 8) ^ bytes[i]) & 0xFF]) & 0xFFFF;
    }
    return crc;
  }

  private static int indexOf(byte[] bytes, byte b, int from) {
    for (int i = from; i < bytes.length; i++) {
      if (bytes[i] == b) {
        return i;
      }
    }
    return -1;
  }
}
