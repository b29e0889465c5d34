package io.bloomery.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomery.filter.MembershipFilter;
import io.bloomery.format.FilterFormat;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.BiConsumer;
import java.util.function.Predicate;
import java.util.function.Supplier;
import java.util.function.ToIntBiFunction;

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
    checkBatch(sequential, other, shortKeys(batch), sequential::add, partitioned::addAll);
  }

  /**
   * Adds {@code items} to {@code sequential} one by one through {@code add} and to {@code other} through
   * {@code partitioned}, and compares the count, the per-key answers and the serialized bytes.
   */
  public static <T> void checkBatch(MembershipFilter sequential, MembershipFilter other, T[] items,
      Predicate<T> add, ToIntBiFunction<T[], boolean[]> partitioned) {
    boolean[] expected = new boolean[items.length];
    int expectedCount = 0;
    for (int i = 0; i < items.length; i++) {
      expected[i] = add.test(items[i]);
      expectedCount += expected[i] ? 1 : 0;
    }
    boolean[] changed = new boolean[items.length];
    assertThat(partitioned.applyAsInt(items, changed)).isEqualTo(expectedCount);
    assertThat(changed).isEqualTo(expected);
    assertThat(FilterFormat.toBytes(other)).isEqualTo(FilterFormat.toBytes(sequential));
  }

  /**
   * Five times: a thread adds 50,000 strings one by one into a fresh filter while the caller adds a
   * 100,000-key batch through {@code parallelAdd}; afterwards every key of both is present (a concurrent
   * filter's partitioned batch sets its bits atomically, so no other thread's bit is lost).
   */
  public static <F extends MembershipFilter> void concurrentAddsAreKept(Supplier<F> filters,
      BiConsumer<F, byte[][]> parallelAdd) {
    for (int trial = 0; trial < 5; trial++) {
      F filter = filters.get();
      byte[][] batch = new byte[100_000][];
      for (int i = 0; i < batch.length; i++) {
        batch[i] = ("batch-" + trial + "-" + i).getBytes(StandardCharsets.UTF_8);
      }
      CompletableFuture<Void> adder = CompletableFuture.runAsync(() -> {
        for (int i = 0; i < 50_000; i++) {
          filter.add("single-" + i);
        }
      }, runnable -> new Thread(runnable).start());
      parallelAdd.accept(filter, batch);
      adder.join();
      for (byte[] item : batch) {
        assertThat(filter.mightContain(item)).isTrue();
      }
      for (int i = 0; i < 50_000; i++) {
        assertThat(filter.mightContain("single-" + i)).isTrue();
      }
    }
  }

  /**
   * 300,000 URLs of which 100,000 repeat an earlier one: at parallelism 2, 3 and 8 a batch of 19, 13 and 5
   * chunks, more than the parallel insert holds records for at once, so its buffers are reused.
   */
  public static byte[][] manyChunksWithRepeats() {
    byte[][] items = new byte[300_000][];
    for (int i = 0; i < items.length; i++) {
      items[i] = ("https://example.org/many/" + (i % 200_000)).getBytes(StandardCharsets.UTF_8);
    }
    return items;
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
