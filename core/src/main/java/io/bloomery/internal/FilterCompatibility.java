package io.bloomery.internal;

import io.bloomery.hash.HashProtocol;
import java.util.Arrays;
import java.util.Objects;

/**
 * The placement parameters every Bloom-family filter must share to be combined (contract rule 5):
 * hash protocol, seed, m and k. Filters compare theirs with {@link #mismatch} before a merge.
 */
public final class FilterCompatibility {
  private FilterCompatibility() {}

  /** Makes the failure for one differing parameter (a kind passes its exception's constructor). */
  @FunctionalInterface
  public interface Difference<E> {
    E differs(String parameter, Object thisValue, Object otherValue);
  }

  /**
   * The first difference between two filters' placement parameters, made by {@code difference}, or {@code null} if
   * they agree.
   *
   * @param sizeName how the filter names m in messages, for example {@code "bit count m"}
   */
  public static <E> E mismatch(
      Difference<E> difference,
      String sizeName,
      HashProtocol protocol,
      byte[] seed,
      long size,
      int hashes,
      HashProtocol otherProtocol,
      byte[] otherSeed,
      long otherSize,
      int otherHashes) {
    Objects.requireNonNull(sizeName, "sizeName");
    if (protocol.id() != otherProtocol.id()) {
      return difference.differs("hash protocol", protocol.name(), otherProtocol.name());
    }
    if (!Arrays.equals(seed, otherSeed)) {
      return difference.differs("seed", hex(seed), hex(otherSeed));
    }
    if (size != otherSize) {
      return difference.differs(sizeName, size, otherSize);
    }
    if (hashes != otherHashes) {
      return difference.differs("hash count k", hashes, otherHashes);
    }
    return null;
  }

  private static String hex(byte[] bytes) {
    if (bytes.length == 0) {
      return "(empty)";
    }
    StringBuilder out = new StringBuilder(bytes.length * 2);
    for (byte b : bytes) {
      out.append(Character.forDigit((b >> 4) & 0xF, 16)).append(Character.forDigit(b & 0xF, 16));
    }
    return out.toString();
  }
}
