package io.bloomery.sketch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomery.filter.FilterTooLargeException;
import io.bloomery.hash.MurmurHash2;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** RedisBloom TOPK semantics: the expectations are RedisBloom's tests/flow/test_topk.py (b28c2945). */
class TopKTest {

  private static List<String> listed(TopK topK) {
    return topK.list().stream().map(h -> new String(h.item(), StandardCharsets.UTF_8)).collect(Collectors.toList());
  }

  private static List<Object> listedWithCount(TopK topK) {
    List<Object> out = new ArrayList<>();
    for (TopK.HeavyHitter hitter : topK.list()) {
      out.add(new String(hitter.item(), StandardCharsets.UTF_8));
      out.add(hitter.count());
    }
    return out;
  }

  private static String text(byte[] bytes) {
    return bytes == null ? null : new String(bytes, StandardCharsets.UTF_8);
  }

  private static void addAll(TopK topK, String... items) {
    for (String item : items) {
      topK.add(item);
    }
  }

  @Test
  void simpleAddAndQuery() {
    TopK topK = TopK.reserve(20, 50, 5, 0.9, DecayRandom.glibc(1));
    assertThat(topK.add("a")).isNull();
    assertThat(topK.add("a")).isNull();
    assertThat(topK.add("b")).isNull();
    assertThat(topK.query("a")).isTrue();
    assertThat(topK.query("c")).isFalse();
  }

  @Test
  void addQueryCount() {
    TopK topK = TopK.reserve(20, 50, 5, 0.9, DecayRandom.glibc(1));
    addAll(topK, "bar", "baz", "42");
    assertThat(List.of(topK.query("foo"), topK.query("bar"), topK.query("baz"))).containsExactly(false, true, true);
    assertThat(List.of(topK.count("foo"), topK.count("bar"), topK.count("baz"))).containsExactly(0L, 1L, 1L);
    addAll(topK, "bar", "baz");
    assertThat(List.of(topK.count("foo"), topK.count("bar"), topK.count("baz"), topK.count("42"))).containsExactly(0L, 2L, 2L, 1L);
    assertThat(topK.add("foo")).isNull();
    assertThat(topK.query("foo")).isTrue();
    assertThat(topK.query("xyxxy")).isFalse();
    for (String item : new String[] {"foo", "1", "bar", "1"}) {
      assertThat(topK.add(item)).isNull();
    }
  }

  /** test_incrby: decay 1 makes every collision decay, so the answer is deterministic. */
  @Test
  void incrementByExpelsAndCounts() {
    TopK topK = TopK.reserve(3, 10, 3, 1, DecayRandom.glibc(1));
    assertThat(Arrays.asList(text(topK.incrementBy("bar", 3)), text(topK.incrementBy("baz", 6)), text(topK.incrementBy("42", 2))))
        .containsExactly(null, null, null);
    assertThat(Arrays.asList(text(topK.incrementBy("42", 8)), text(topK.incrementBy("xyzzy", 4)))).containsExactly(null, "bar");
    assertThat(List.of(topK.count("bar"), topK.count("baz"), topK.count("42"), topK.count("xyzzy"), topK.count("4")))
        .containsExactly(3L, 6L, 10L, 4L, 0L);
    assertThatThrownBy(() -> topK.incrementBy("foo", -5)).hasMessage("increment -5 is outside [0, 100000]");
    assertThatThrownBy(() -> topK.incrementBy("foo", 123456)).hasMessage("increment 123456 is outside [0, 100000]");
  }

  @ParameterizedTest
  @ValueSource(ints = {1, 2, 3, 42, 1000})
  void decayTableAndPowPathKeepTheHeaviest(int seed) {
    TopK topK = TopK.reserve(1, 3, 3, .9, DecayRandom.glibc(seed));
    topK.incrementBy("bar", 300);
    topK.incrementBy("baz", 600);
    topK.incrementBy("42", 200);
    topK.incrementBy("42", 80);
    topK.incrementBy("xyzzy", 400);
    assertThat(listed(topK)).containsExactly("baz");
  }

  @Test
  void listAndInfo() {
    TopK topK = TopK.reserve(2, 50, 5, 0.9, DecayRandom.glibc(1));
    addAll(topK, "foo", "bar", "baz", "42", "foo", "bar", "baz");
    addAll(topK, "foo", "baz", "42", "foo", "baz");
    addAll(topK, "foo", "bar", "baz", "foo", "baz");
    assertThat(listed(topK)).containsExactly("foo", "baz");
    List<String> expelled = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      expelled.add(text(topK.add("bar")));
    }
    assertThat(expelled).containsExactly(null, null, "foo", null, null);
    assertThat(listed(topK)).containsExactly("bar", "baz");
    assertThat(List.of(topK.k(), topK.width(), topK.depth())).containsExactly(2L, 50L, 5L);
    assertThat(topK.decay()).isEqualTo(0.9);
  }

  @Test
  void defaultsAreWidth8Depth7Decay09() {
    TopK topK = TopK.reserve(3, DecayRandom.glibc(1));
    addAll(topK, "foo", "bar", "baz", "42", "foo", "bar", "baz", "foo", "foo", "foo", "foo");
    addAll(topK, "foo", "baz", "42", "foo", "baz", "foo", "foo", "foo", "foo", "foo");
    addAll(topK, "foo", "bar", "baz", "foo", "baz", "baz", "baz", "baz");
    assertThat(listed(topK)).containsExactly("foo", "baz", "bar");
    assertThat(List.of(topK.k(), topK.width(), topK.depth())).containsExactly(3L, 8L, 7L);
    assertThat(topK.decay()).isEqualTo(Double.parseDouble("0.90000000000000002"));
  }

  @Test
  void listWithCount() {
    TopK topK = TopK.reserve(3, DecayRandom.glibc(1));
    addAll(topK, "foo", "bar", "baz", "42", "foo", "bar", "baz");
    addAll(topK, "foo", "baz", "42", "foo");
    addAll(topK, "foo", "bar", "baz", "foo");
    assertThat(listedWithCount(topK)).containsExactly("foo", 6L, "baz", 4L, "bar", 3L);
  }

  @Test
  void listHasNoDuplicates() {
    TopK topK = TopK.reserve(10, 8, 7, 1, DecayRandom.glibc(1));
    addAll(topK, "j", "h", "d", "j", "h", "h", "j", "g", "e", "g", "i", "f", "g", "f", "a", "j", "c", "i", "a", "d");
    List<String> list = listed(topK);
    assertThat(new HashSet<>(list)).hasSameSizeAs(list);
  }

  @Test
  void emptyAndControlCharacterItems() {
    TopK newline = TopK.reserve(3, DecayRandom.glibc(1));
    newline.add("Lets\nCrash");
    assertThat(listed(newline)).containsExactly("Lets\nCrash");

    TopK topK = TopK.reserve(3, DecayRandom.glibc(1));
    topK.add("");
    assertThat(listedWithCount(topK)).containsExactly("", 1L);
    assertThat(topK.query("")).isTrue();
    assertThat(topK.count("")).isEqualTo(1);
    topK.incrementBy("", 100);
    assertThat(listedWithCount(topK)).containsExactly("", 101L);
    addAll(topK, "foo", "bar", "baz");
    addAll(topK, "foo", "bar", "baz", "");
    addAll(topK, "foo", "bar", "");
    addAll(topK, "foo", "");
    assertThat(listedWithCount(topK)).containsExactly("", 104L, "foo", 4L, "bar", 3L);
    assertThat(List.of(topK.query("bla"), topK.query("foo"), topK.query(""))).containsExactly(false, true, true);
    topK.incrementBy("foo", 500);
    topK.incrementBy("bar", 500);
    topK.incrementBy("baz", 500);
    assertThat(listedWithCount(topK)).containsExactly("foo", 504L, "bar", 503L, "baz", 502L);
  }

  @Test
  void incrementByZeroPutsAnUnlistedItemInTheHeapAsRedisBloomDoes() {
    TopK topK = TopK.reserve(3, DecayRandom.glibc(1));
    assertThat(topK.incrementBy("zero", 0)).isNull();
    assertThat(topK.query("zero")).isTrue();
    assertThat(topK.list()).isEmpty();
  }

  @Test
  void itemsAreComparedAsFullByteStrings() {
    TopK topK = TopK.reserve(3, DecayRandom.glibc(1));
    byte[] withNul = {'a', 0, 'b'};
    topK.add(withNul);
    assertThat(topK.query(withNul)).isTrue();
    assertThat(topK.query(new byte[] {'a'})).isFalse();
    assertThat(topK.list().get(0).item()).containsExactly(withNul);
  }

  @Test
  void timeScenarioFindsTheRepeatedHundreds() {
    TopK topK = TopK.reserve(100, 1000, 5, 0.9, DecayRandom.glibc(1));
    for (int r = 0; r < 10; r++) {
      for (int i = 0; i < 50; i++) {
        topK.add(Integer.toString(i * 100));
      }
    }
    for (int r = 0; r < 5; r++) {
      for (int i = 0; i < 5000; i++) {
        topK.add(Integer.toString(i));
      }
    }
    for (int r = 0; r < 5; r++) {
      for (int i = 0; i < 100; i++) {
        topK.add(Integer.toString(i * 50));
      }
    }
    List<String> list = listed(topK);
    assertThat(list).hasSize(100);
    assertThat(list.stream().filter(s -> Integer.parseInt(s) % 100 == 0).count()).isGreaterThan(45);
  }

  @Test
  void reserveRefusesInvalidParametersNamingThem() {
    DecayRandom random = DecayRandom.seeded(1);
    assertThatThrownBy(() -> TopK.reserve(0, random)).hasMessageStartingWith("k ");
    assertThatThrownBy(() -> TopK.reserve(4294967296L, 1, 1, 0.1, random)).hasMessageStartingWith("k ");
    assertThatThrownBy(() -> TopK.reserve(1, 4294967296L, 1, 0.1, random)).hasMessageStartingWith("width ");
    assertThatThrownBy(() -> TopK.reserve(1, 1, 4294967296L, 0.1, random)).hasMessageStartingWith("depth ");
    assertThatThrownBy(() -> TopK.reserve(20, 0, 5, 0.9, random)).hasMessageStartingWith("width ");
    assertThatThrownBy(() -> TopK.reserve(20, 50, 0, 0.9, random)).hasMessageStartingWith("depth ");
    assertThatThrownBy(() -> TopK.reserve(20, 50, 5, 42, random)).hasMessageStartingWith("decay ");
    assertThatThrownBy(() -> TopK.reserve(20, 50, 5, 0, random)).hasMessageStartingWith("decay ");
    assertThatThrownBy(() -> TopK.reserve(20, 50, 5, Double.NaN, random)).hasMessageStartingWith("decay ");
    assertThatThrownBy(() -> TopK.reserve(3, 2_000_000_000L, 200_000_000L, 1, random))
        .isInstanceOf(FilterTooLargeException.class);
    // width x depth beyond 2^63 (negative as a signed long) must not slip past the cell limit.
    assertThatThrownBy(() -> TopK.reserve(3, 0xFFFF_FFFFL, 0xFFFF_FFFFL, 1, random))
        .isInstanceOf(FilterTooLargeException.class);
    assertThatThrownBy(() -> TopK.reserve(3, 0xFFFF_FFFFL, 0x8000_0001L, 1, random))
        .isInstanceOf(FilterTooLargeException.class);
    assertThat(TopK.reserve(1, 1, 1, 1, random).k()).isEqualTo(1);
  }

  @Test
  void sameSeedSameAnswers() {
    List<List<Object>> runs = new ArrayList<>();
    for (int run = 0; run < 2; run++) {
      TopK topK = TopK.reserve(5, 16, 4, 0.9, DecayRandom.seeded(99));
      SplittableRandom items = new SplittableRandom(5);
      for (int i = 0; i < 5000; i++) {
        topK.add("x" + items.nextInt(200));
      }
      runs.add(listedWithCount(topK));
    }
    assertThat(runs.get(0)).isEqualTo(runs.get(1)).isNotEmpty();
  }

  /**
   * On a Zipf(1.1) stream over 10,000 items, the true heaviest items are listed, and (HeavyKeeper's
   * guarantee, for items whose 32-bit fingerprints are distinct) no reported count exceeds the truth.
   */
  @ParameterizedTest
  @ValueSource(longs = {7L, 20261130L})
  void zipfStreamListsTheTrueHeavyHittersAndNeverOvercounts(long seed) {
    int universe = 10_000;
    double[] cumulative = new double[universe];
    double sum = 0;
    for (int r = 0; r < universe; r++) {
      sum += 1 / Math.pow(r + 1, 1.1);
      cumulative[r] = sum;
    }
    SplittableRandom random = new SplittableRandom(seed);
    TopK topK = TopK.reserve(10, 1000, 5, 0.9, DecayRandom.seeded(seed));
    Map<String, Long> truth = new HashMap<>();
    for (int i = 0; i < 200_000; i++) {
      int index = Arrays.binarySearch(cumulative, random.nextDouble() * sum);
      int rank = index >= 0 ? index : -index - 1;
      String item = "z" + rank;
      long increment = i % 10 == 0 ? 1 + random.nextInt(3) : 1;
      truth.merge(item, increment, Long::sum);
      topK.incrementBy(item, increment);
    }
    List<String> trueTop = truth.entrySet().stream()
        .sorted((a, b) -> Long.compare(b.getValue(), a.getValue()))
        .limit(10)
        .map(Map.Entry::getKey)
        .collect(Collectors.toList());
    List<String> list = listed(topK);
    assertThat(list).hasSize(10).containsAll(trueTop.subList(0, 5));
    assertThat(list.stream().filter(trueTop::contains).count()).isGreaterThanOrEqualTo(8);

    Set<Integer> fingerprints = new HashSet<>();
    for (String item : truth.keySet()) {
      byte[] bytes = item.getBytes(StandardCharsets.UTF_8);
      fingerprints.add(MurmurHash2.hash32(bytes, 0, bytes.length, TopK.FINGERPRINT_SEED));
    }
    assertThat(fingerprints).as("precondition: distinct fingerprints").hasSameSizeAs(truth.keySet());
    for (TopK.HeavyHitter hitter : topK.list()) {
      assertThat(hitter.count()).isLessThanOrEqualTo(truth.get(new String(hitter.item(), StandardCharsets.UTF_8)));
    }
    for (Map.Entry<String, Long> entry : truth.entrySet()) {
      assertThat(topK.count(entry.getKey())).as(entry.getKey()).isLessThanOrEqualTo(entry.getValue());
    }
  }

  @Test
  void restoreRebuildsTheSameSketch() throws Exception {
    TopK topK = TopK.reserve(4, 16, 3, 0.9, DecayRandom.glibc(3));
    SplittableRandom random = new SplittableRandom(3);
    for (int i = 0; i < 2000; i++) {
      topK.add("r" + random.nextInt(50));
    }
    int[] bucket = {0, 0};
    int[] slot = {0, 0};
    TopK restored = TopK.restore(4, 16, 3, 0.9, DecayRandom.glibc(3), new io.bloomery.internal.KindAccess.TopKStateSource() {
      @Override
      public int nextBucketFingerprint() {
        return topK.bucketFingerprint(bucket[0]++);
      }

      @Override
      public long nextBucketCount() {
        return topK.bucketCount(bucket[1]++);
      }

      @Override
      public byte[] nextHeapItem() {
        return topK.heapItem(slot[0]++);
      }

      @Override
      public long nextHeapCount() {
        return topK.heapCount(slot[1]++);
      }
    });
    assertThat(restored.list()).isEqualTo(topK.list());
    for (int i = 0; i < 50; i++) {
      assertThat(restored.count("r" + i)).isEqualTo(topK.count("r" + i));
    }
  }
}
