package io.bloomery.counting;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomery.filter.BloomFilter;
import io.bloomery.filter.IncompatibleFilterException;
import io.bloomery.hash.HashProtocol;
import io.bloomery.hash.ProtocolId;
import io.bloomery.hash.Protocols;
import io.bloomery.sizing.BloomMath;
import io.bloomery.testkit.FprAssert;
import io.bloomery.testkit.Keys;
import io.bloomery.testkit.Internals;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

class CountingBloomFilterTest {
  private static final HashProtocol XXH3 = Protocols.defaultProtocol();
  private static final byte[] SEED = "counting".getBytes(StandardCharsets.UTF_8);

  private static CountingBloomFilter counting(long n, double p, int width) {
    long m = BloomMath.optimalBits(n, p);
    return CountingBloomFilter.create(XXH3, SEED, m, BloomMath.optimalHashes(n, m), width);
  }

  private static byte[] key(long seed, long i) {
    return Keys.urlBytes(seed, i);
  }

  /**
   * Model-based fuzzing against an exact multiset: random adds, removes of present items and
   * queries. No item whose multiplicity is positive is ever reported absent, and removes of
   * present items always succeed.
   */
  @ParameterizedTest
  @ValueSource(longs = {1L, 42L, 20261130L, 7_777_777L})
  void neverAFalseNegativeForItemsAddedAndNotRemoved(long seed) {
    SplittableRandom random = new SplittableRandom(seed);
    CountingBloomFilter filter = counting(2_000, 0.01, 4);
    Map<Integer, Integer> model = new HashMap<>();
    List<Integer> present = new ArrayList<>();
    for (int op = 0; op < 30_000; op++) {
      int choice = random.nextInt(10);
      if (choice < 5 || present.isEmpty()) {
        int item = random.nextInt(3_000);
        filter.add(key(seed, item));
        if (model.merge(item, 1, Integer::sum) == 1) {
          present.add(item);
        }
      } else if (choice < 8) {
        int index = random.nextInt(present.size());
        int item = present.get(index);
        assertThat(filter.remove(key(seed, item))).as("op %d: remove of present item %d", op, item).isTrue();
        if (model.merge(item, -1, Integer::sum) == 0) {
          model.remove(item);
          present.set(index, present.get(present.size() - 1));
          present.remove(present.size() - 1);
        }
      } else {
        int item = random.nextInt(3_000);
        if (model.containsKey(item)) {
          assertThat(filter.mightContain(key(seed, item))).as("op %d: item %d (x%d)", op, item, model.get(item)).isTrue();
        }
      }
    }
    for (int item : model.keySet()) {
      assertThat(filter.mightContain(key(seed, item))).isTrue();
    }
    assertThat(filter.insertedCount()).isEqualTo(model.values().stream().mapToLong(Integer::longValue).sum());
  }

  /**
   * The documented hazard: removing a false positive (never added) decrements other items'
   * counters, and some member becomes a false negative.
   */
  @Test
  void removingANeverAddedItemCanCauseFalseNegativesForOthers() {
    CountingBloomFilter filter = CountingBloomFilter.create(XXH3, SEED, 256, 3, 4);
    List<byte[]> members = new ArrayList<>();
    for (int i = 0; i < 60; i++) {
      members.add(key(1, i));
      filter.add(key(1, i));
    }
    int harmful = 0;
    for (int candidate = 1_000; candidate < 50_000 && harmful == 0; candidate++) {
      byte[] stranger = key(1, candidate);
      if (!filter.mightContain(stranger)) {
        continue; // a definite non-member: remove() refuses it and changes nothing
      }
      CountingBloomFilter victim = filter.copy();
      assertThat(victim.remove(stranger)).as("remove cannot tell a false positive from a member").isTrue();
      for (byte[] member : members) {
        if (!victim.mightContain(member)) {
          harmful++;
        }
      }
    }
    assertThat(harmful).as("members lost after removing a false positive").isPositive();
  }

  @Test
  void removeOfADefiniteNonMemberChangesNothing() {
    CountingBloomFilter filter = counting(100, 0.01, 4);
    filter.add("present");
    CountingBloomFilter before = filter.copy();
    assertThat(filter.remove("absent-for-sure")).isFalse();
    for (long j = 0; j < Internals.wordCount(filter); j++) {
      assertThat(Internals.word(filter, j)).isEqualTo(Internals.word(before, j));
    }
    assertThat(filter.insertedCount()).isEqualTo(1);
  }

  /** Saturated counters stay put, so overflow never turns into a false negative. */
  @ParameterizedTest
  @CsvSource({"4, 16", "4, 100", "8, 256", "8, 1000", "16, 70000"})
  void overflowSaturatesAndNeverCausesFalseNegatives(int width, int adds) {
    CountingBloomFilter filter = CountingBloomFilter.create(XXH3, SEED, 1024, 4, width);
    byte[] heavy = "heavy".getBytes(StandardCharsets.UTF_8);
    byte[] light = "light".getBytes(StandardCharsets.UTF_8);
    for (int i = 0; i < adds; i++) {
      filter.add(heavy);
    }
    filter.add(light);
    assertThat(filter.mightContain(heavy)).isTrue();
    long distinctHeavyCounters = distinctPositions(filter, heavy);
    assertThat(filter.saturatedCounters()).isGreaterThanOrEqualTo(distinctHeavyCounters);
    // Removing heavy as often as it was added leaves its saturated counters at the maximum:
    // a possible false positive for heavy, never a false negative for light.
    for (int i = 0; i < adds; i++) {
      assertThat(filter.remove(heavy)).isTrue();
    }
    assertThat(filter.mightContain(light)).isTrue();
    assertThat(filter.mightContain(heavy)).as("saturated counters are never decremented").isTrue();
    assertThat(filter.maxCounterValue()).isEqualTo((1L << width) - 1);
  }

  private static long distinctPositions(CountingBloomFilter filter, byte[] item) {
    long[] positions = new long[filter.hashCount()];
    filter.hashProtocol().bind(filter.counterCount(), filter.hashCount(), filter.seed()).positions(item, 0, item.length, positions);
    return java.util.Arrays.stream(positions).distinct().count();
  }

  /**
   * add and remove move exactly the counters the protocol's {@code positions} names, with
   * multiplicity: pins the array-free walk of the default protocol and the array path of the others
   * against the protocol definition.
   */
  @ParameterizedTest
  @EnumSource(value = ProtocolId.class, names = {"XXH3_EDH_V1", "SHA256_INDEX8"})
  void countersMoveExactlyAtTheProtocolsPositions(ProtocolId id) {
    HashProtocol protocol = Protocols.of(id);
    byte[] seed = id == ProtocolId.XXH3_EDH_V1 ? SEED : new byte[0];
    int m = 1_000;
    int k = 5;
    CountingBloomFilter filter = CountingBloomFilter.create(protocol, seed, m, k, 8);
    HashProtocol.Placement placement = protocol.bind(m, k, seed);
    long[] expected = new long[m];
    long[] positions = new long[k];
    for (int i = 0; i < 200; i++) {
      byte[] item = key(11, i);
      filter.add(item);
      placement.positions(item, 0, item.length, positions);
      for (long position : positions) {
        expected[(int) position]++;
      }
    }
    for (int i = 0; i < 200; i += 2) {
      byte[] item = key(11, i);
      assertThat(filter.remove(item)).isTrue();
      placement.positions(item, 0, item.length, positions);
      for (long position : positions) {
        expected[(int) position]--;
      }
    }
    for (int j = 0; j < m; j++) {
      assertThat(filter.counterAt(j)).as("counter %d", j).isEqualTo(expected[j]);
    }
  }

  /** The projection is the classic filter over the items present, bit for bit. */
  @ParameterizedTest
  @ValueSource(ints = {4, 8, 16})
  void toBloomFilterEqualsTheClassicFilterOfThePresentItems(int width) {
    long n = 3_000;
    CountingBloomFilter filter = counting(n, 0.01, width);
    BloomFilter classic = BloomFilter.create(XXH3, SEED, filter.counterCount(), filter.hashCount());
    for (int i = 0; i < n; i++) {
      filter.add(key(9, i));
      if (i % 2 == 1) {
        classic.add(key(9, i));
      }
    }
    for (int i = 0; i < n; i += 2) {
      assertThat(filter.remove(key(9, i))).isTrue();
    }
    BloomFilter projection = filter.toBloomFilter();
    assertThat(projection.bitSize()).isEqualTo(classic.bitSize());
    assertThat(projection.hashCount()).isEqualTo(classic.hashCount());
    for (long j = 0; j < Internals.wordCount(classic); j++) {
      assertThat(Internals.word(projection, j)).as("word %d", j).isEqualTo(Internals.word(classic, j));
    }
    for (int i = 0; i < 20_000; i++) {
      byte[] probe = key(10, i);
      assertThat(filter.mightContain(probe)).isEqualTo(classic.mightContain(probe)).isEqualTo(projection.mightContain(probe));
    }
    assertThat(filter.nonZeroCounters()).isEqualTo(classic.bitCount());
  }

  /**
   * Statistical FPR: the same false positives as a classic filter of the same m, k, n (exactly),
   * and within the 99.9% binomial interval of the model (1 − e^(−kn/m))^k.
   */
  @ParameterizedTest
  @CsvSource({"2000, 0.01", "5000, 0.05", "1000, 0.001"})
  void falsePositiveRateIsTheClassicOne(long n, double p) {
    CountingBloomFilter filter = counting(n, p, 4);
    BloomFilter classic = BloomFilter.create(XXH3, SEED, filter.counterCount(), filter.hashCount());
    for (long i = 0; i < n; i++) {
      filter.add(key(3, i));
      classic.add(key(3, i));
    }
    long trials = 200_000;
    long falsePositives = 0;
    long classicFalsePositives = 0;
    for (long i = 0; i < trials; i++) {
      byte[] probe = key(4, i);
      falsePositives += filter.mightContain(probe) ? 1 : 0;
      classicFalsePositives += classic.mightContain(probe) ? 1 : 0;
    }
    assertThat(falsePositives).isEqualTo(classicFalsePositives);
    FprAssert.assertWithinModel(
        "counting n=" + n + " m=" + filter.counterCount() + " k=" + filter.hashCount(),
        falsePositives, trials, BloomMath.falsePositiveRate(filter.counterCount(), filter.hashCount(), n));
    assertThat(filter.estimatedFpp()).isEqualTo(BloomMath.falsePositiveRate(filter.counterCount(), filter.hashCount(), n));
  }

  @Test
  void memoryIsWidthTimesTheClassicBitmap() {
    CountingBloomFilter four = CountingBloomFilter.create(XXH3, SEED, 64 * 1000, 7, 4);
    CountingBloomFilter eight = CountingBloomFilter.create(XXH3, SEED, 64 * 1000, 7, 8);
    CountingBloomFilter sixteen = CountingBloomFilter.create(XXH3, SEED, 64 * 1000, 7, 16);
    long classicBytes = 64 * 1000 / 8;
    assertThat(four.counterBytes()).isEqualTo(4 * classicBytes);
    assertThat(eight.counterBytes()).isEqualTo(8 * classicBytes);
    assertThat(sixteen.counterBytes()).isEqualTo(16 * classicBytes);
    assertThat(CountingBloomFilter.create(1000, 0.01).counterBits()).isEqualTo(4);
  }

  @Test
  void mergeAddsCountersAndSaturates() {
    CountingBloomFilter left = CountingBloomFilter.create(XXH3, SEED, 512, 3, 4);
    CountingBloomFilter right = CountingBloomFilter.create(XXH3, SEED, 512, 3, 4);
    for (int i = 0; i < 10; i++) {
      left.add("x");
      right.add("x");
    }
    left.add("left-only");
    right.add("right-only");
    left.mergeFrom(right);
    assertThat(left.insertedCount()).isEqualTo(22);
    assertThat(left.mightContain("right-only")).isTrue();
    assertThat(left.saturatedCounters()).isGreaterThanOrEqualTo(1); // 10 + 10 > 15
    assertThat(left.remove("right-only")).isTrue();
    assertThat(left.mightContain("left-only")).isTrue();
    assertThat(left.mightContain("x")).isTrue();

    assertThatThrownBy(() -> left.mergeFrom(CountingBloomFilter.create(XXH3, SEED, 512, 3, 8)))
        .isInstanceOf(IncompatibleFilterException.class)
        .hasMessageContaining("counter width");
    assertThatThrownBy(() -> left.mergeFrom(CountingBloomFilter.create(XXH3, SEED, 513, 3, 4)))
        .isInstanceOf(IncompatibleFilterException.class)
        .hasMessageContaining("counter count m");
    assertThatThrownBy(() -> left.mergeFrom(CountingBloomFilter.create(XXH3, SEED, 512, 4, 4)))
        .isInstanceOf(IncompatibleFilterException.class)
        .hasMessageContaining("hash count k");
    assertThatThrownBy(() -> left.mergeFrom(CountingBloomFilter.create(XXH3, new byte[0], 512, 3, 4)))
        .isInstanceOf(IncompatibleFilterException.class)
        .hasMessageContaining("seed");
    assertThatThrownBy(() -> left.mergeFrom(left)).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void parametersAreValidated() {
    assertThatThrownBy(() -> CountingBloomFilter.create(XXH3, SEED, 100, 3, 5)).hasMessageContaining("4, 8 or 16");
    assertThatThrownBy(() -> CountingBloomFilter.create(XXH3, SEED, 0, 3, 4)).hasMessageContaining("counters m");
    assertThatThrownBy(() -> CountingBloomFilter.create(XXH3, SEED, CountingBloomFilter.maxCounters(16) + 1, 3, 16))
        .hasMessageContaining("counters m");
    assertThatThrownBy(() -> CountingBloomFilter.restore(XXH3, SEED, 10, 3, 4, 0, () -> -1L))
        .hasMessageContaining("beyond counter m - 1");
    assertThatThrownBy(() -> CountingBloomFilter.restore(XXH3, SEED, 10, 3, 4, -1, () -> 0L))
        .hasMessageContaining("inserted count");
  }

  /**
   * Concurrent adds and removes on shared words lose no update: 16-bit counters (no saturation),
   * four threads each add the same 2,000 items three times and remove them once, interleaved;
   * the counters then equal a sequential build of the same multiset.
   */
  @Test
  void concurrentAddsAndRemovesLoseNoUpdate() throws Exception {
    CountingBloomFilter filter = CountingBloomFilter.create(XXH3, SEED, 8_192, 5, 16);
    List<byte[]> items = new ArrayList<>();
    for (int i = 0; i < 2_000; i++) {
      items.add(key(5, i));
    }
    int threads = 4;
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    CountDownLatch start = new CountDownLatch(1);
    try {
      List<Future<?>> futures = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        futures.add(pool.submit(() -> {
          start.await();
          for (byte[] item : items) {
            filter.add(item);
            filter.add(item);
          }
          for (byte[] item : items) {
            filter.add(item);
            filter.remove(item);
          }
          return null;
        }));
      }
      start.countDown();
      for (Future<?> future : futures) {
        future.get(60, TimeUnit.SECONDS);
      }
    } finally {
      pool.shutdownNow();
    }
    CountingBloomFilter sequential = CountingBloomFilter.create(XXH3, SEED, 8_192, 5, 16);
    for (int t = 0; t < threads; t++) {
      for (byte[] item : items) {
        sequential.add(item);
        sequential.add(item);
      }
    }
    for (long j = 0; j < Internals.wordCount(filter); j++) {
      assertThat(Internals.word(filter, j)).as("word %d", j).isEqualTo(Internals.word(sequential, j));
    }
    assertThat(filter.insertedCount()).isEqualTo(sequential.insertedCount());
  }
}
