package io.bloomery.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomery.filter.MembershipFilter;
import io.bloomery.format.FilterFormat;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;

/**
 * The check behind the partitioned-insert properties: a filter filled by a kind's partitioned {@code
 * addAll} must equal one filled by the same keys added one by one, in serialized bytes (words,
 * parameters and insertedCount, through {@link FilterFormat}), per-key "changed" answers and count.
 */
public final class PartitionedAddCheck {

  /** A kind's partitioned insert: fills {@code changed} and returns the number of keys that changed the filter. */
  @FunctionalInterface
  public interface OwnedAdd {
    int addAll(byte[][] items, boolean[] changed);
  }

  private PartitionedAddCheck() {}

  /**
   * Adds {@code before} to both filters one by one, then {@code batch} to {@code sequential} one by one
   * and to the other through {@code partitioned}, and compares. Keys are cut to their first 2 bytes so
   * that a batch holds many equal keys.
   */
  public static void check(MembershipFilter sequential, MembershipFilter other, OwnedAdd partitioned,
      List<byte[]> before, List<byte[]> batch) {
    for (byte[] item : shortKeys(before)) { // some keys of the batch then find their bits already set
      sequential.add(item);
      other.add(item);
    }
    byte[][] items = shortKeys(batch);
    boolean[] expected = new boolean[items.length];
    int expectedCount = 0;
    for (int i = 0; i < items.length; i++) {
      expected[i] = sequential.add(items[i]);
      expectedCount += expected[i] ? 1 : 0;
    }
    boolean[] changed = new boolean[items.length];
    assertThat(partitioned.addAll(items, changed)).isEqualTo(expectedCount);
    assertThat(changed).isEqualTo(expected);
    assertThat(FilterFormat.toBytes(other)).isEqualTo(FilterFormat.toBytes(sequential));
  }

  /** 50,000 URLs of which 13,000 repeat an earlier one: a batch the public calls split into several parts. */
  public static byte[][] urlsWithRepeats() {
    byte[][] items = new byte[50_000][];
    for (int i = 0; i < items.length; i++) {
      items[i] = ("https://example.org/" + (i % 37_000)).getBytes(StandardCharsets.UTF_8);
    }
    return items;
  }

  private static byte[][] shortKeys(List<byte[]> keys) {
    return keys.stream().map(key -> Arrays.copyOf(key, Math.min(2, key.length))).toArray(byte[][]::new);
  }
}
