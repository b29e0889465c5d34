package io.bloomery.sketch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomery.filter.FilterTooLargeException;
import io.bloomery.filter.IncompatibleFilterException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** RedisBloom CMS semantics: the expectations are RedisBloom's tests/flow/test_cms.py (b28c2945). */
class CountMinSketchTest {

  private static final long LARGE = 1024L * 1024 * 1024 * 2 - 1;

  @Test
  void simpleIncrementQueryAndInfo() {
    CountMinSketch byDim = CountMinSketch.initByDimensions(20, 5);
    assertThat(byDim.incrementBy("a", 5)).isEqualTo(5);
    assertThat(byDim.count("a")).isEqualTo(5);
    assertThat(List.of(byDim.width(), byDim.depth(), byDim.insertedCount())).containsExactly(20L, 5L, 5L);

    CountMinSketch byProb = CountMinSketch.initByProbability(0.001, 0.01);
    assertThat(byProb.incrementBy("a", 5)).isEqualTo(5);
    assertThat(List.of(byProb.width(), byProb.depth(), byProb.insertedCount())).containsExactly(2000L, 7L, 5L);
  }

  @Test
  void incrementByThenQueryManyItems() {
    CountMinSketch cms = CountMinSketch.initByDimensions(1000, 5);
    cms.incrementBy("bar", 5);
    cms.incrementBy("baz", 42);
    assertThat(List.of(cms.count("foo"), cms.count("bar"), cms.count("baz"))).containsExactly(0L, 5L, 42L);
    CountMinSketch test = CountMinSketch.initByDimensions(1000, 5);
    assertThat(test.incrementBy("foo", 1)).isEqualTo(1);
    assertThat(test.incrementBy("foo", 1)).isEqualTo(2);
    assertThat(test.incrementBy("bar", 1)).isEqualTo(1);
  }

  /** test_overflow: a 5×2 sketch, counters saturate at 2^32 − 1 and the reply flags it. */
  @Test
  void countersSaturateAtUint32MaxExactlyAsRedisBloom() {
    CountMinSketch cms = CountMinSketch.initByDimensions(5, 2);
    assertThat(incrementAll(cms)).containsExactly(LARGE, 10L, 17L, 5L);
    assertThat(queryAll(cms)).containsExactly(LARGE, 17L, 17L, 5L);
    assertThat(incrementAll(cms)).containsExactly(LARGE * 2, 27L, 34L, 10L);
    assertThat(queryAll(cms)).containsExactly(LARGE * 2, 34L, 34L, 10L);
    List<Long> third = incrementAll(cms);
    assertThat(third.get(0)).isEqualTo(CountMinSketch.MAX_COUNTER); // the server replies its overflow error
    assertThat(third.subList(1, 4)).containsExactly(44L, 51L, 15L);
    assertThat(queryAll(cms)).containsExactly(LARGE * 2 + 1, 51L, 51L, 15L);
    assertThat(CountMinSketch.MAX_COUNTER).isEqualTo(LARGE * 2 + 1);
  }

  private static List<Long> incrementAll(CountMinSketch cms) {
    return List.of(cms.incrementBy("a", LARGE), cms.incrementBy("b", 10), cms.incrementBy("c", 7), cms.incrementBy("d", 5));
  }

  private static List<Long> queryAll(CountMinSketch cms) {
    return List.of(cms.count("a"), cms.count("b"), cms.count("c"), cms.count("d"));
  }

  @Test
  void incrementOfTwoToThe32OrMoreSaturatesEveryRow() {
    CountMinSketch cms = CountMinSketch.initByDimensions(10, 3);
    assertThat(cms.incrementBy("x", 1L << 32)).isEqualTo(CountMinSketch.MAX_COUNTER);
    assertThat(cms.incrementBy("x", 7)).isEqualTo(CountMinSketch.MAX_COUNTER);
    assertThat(cms.insertedCount()).isEqualTo((1L << 32) + 7);
  }

  @Test
  void totalCountWrapsLikeSizeT() {
    CountMinSketch cms = CountMinSketch.initByDimensions(2, 1);
    cms.incrementBy("a", Long.MAX_VALUE);
    cms.incrementBy("b", Long.MAX_VALUE);
    cms.incrementBy("c", 2);
    assertThat(cms.insertedCount()).isZero(); // 2^64 wraps to 0, as RedisBloom's size_t
  }

  @Test
  void smallSet() {
    CountMinSketch cms = CountMinSketch.initByDimensions(2, 2);
    assertThat(List.of(cms.incrementBy("foo", 10), cms.incrementBy("bar", 42))).containsExactly(10L, 42L);
    assertThat(List.of(cms.count("foo"), cms.count("bar"))).containsExactly(10L, 42L);
    assertThat(cms.insertedCount()).isEqualTo(52);
    assertThat(List.of(cms.incrementBy("foo", 0), cms.incrementBy("bar", 0))).containsExactly(10L, 42L);
  }

  @Test
  void invalidArgumentsAreRefusedNamingTheValue() {
    assertThatThrownBy(() -> CountMinSketch.initByDimensions(0, 5)).hasMessageStartingWith("width ");
    assertThatThrownBy(() -> CountMinSketch.initByDimensions(5, 0)).hasMessageStartingWith("depth ");
    assertThatThrownBy(() -> CountMinSketch.initByDimensions(0, 0)).hasMessageStartingWith("width ");
    assertThatThrownBy(() -> CountMinSketch.initByDimensions(100_000_000_000_000L, 100_000_000_000_000L))
        .hasMessageStartingWith("dimensions ");
    assertThatThrownBy(() -> CountMinSketch.initByDimensions(1_000_000_000L, 1_000_000_000L))
        .isInstanceOf(FilterTooLargeException.class);
    assertThatThrownBy(() -> CountMinSketch.initByDimensions(2_294_967_296L, 2_294_967_296L))
        .isInstanceOf(FilterTooLargeException.class);
    assertThatThrownBy(() -> CountMinSketch.initByDimensions(8_589_934_592L, 8_589_934_592L))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> CountMinSketch.initByProbability(0, 0.1)).hasMessageStartingWith("error ");
    assertThatThrownBy(() -> CountMinSketch.initByProbability(1, 0.1)).hasMessageStartingWith("error ");
    assertThatThrownBy(() -> CountMinSketch.initByProbability(Double.NaN, 0.1)).hasMessageStartingWith("error ");
    assertThatThrownBy(() -> CountMinSketch.initByProbability(0.1, 0)).hasMessageStartingWith("probability ");
    assertThatThrownBy(() -> CountMinSketch.initByProbability(0.1, 1)).hasMessageStartingWith("probability ");
    // float precision: 0.9999999999999999f == 1.0f, so log10f gives depth 0
    assertThatThrownBy(() -> CountMinSketch.initByProbability(0.9, 0.9999999999999999)).hasMessageStartingWith("dimensions ");
    // width ceil(2e19) does not fit a signed 64-bit value
    assertThatThrownBy(() -> CountMinSketch.initByProbability(0.0000000000000000001, 0.9)).hasMessageStartingWith("dimensions ");
    assertThatThrownBy(() -> CountMinSketch.initByProbability(0.0000000000000001, 0.0000000000000001))
        .isInstanceOf(FilterTooLargeException.class);
    CountMinSketch cms = CountMinSketch.initByDimensions(10, 2);
    assertThatThrownBy(() -> cms.incrementBy("item", -1)).hasMessage("increment -1 is negative");
  }

  @Test
  void mergeOverwritesDestinationWithTheSum() {
    CountMinSketch small1 = CountMinSketch.initByDimensions(20, 5);
    CountMinSketch small2 = CountMinSketch.initByDimensions(20, 5);
    CountMinSketch small3 = CountMinSketch.initByDimensions(20, 5);
    small3.incrementBy("stale", 99);
    small3.replaceWithWeightedSum(List.of(small1, small2), null);
    assertThat(small3.insertedCount()).isZero();
    assertThat(small3.count("stale")).isZero();
    small1.incrementBy("a", 21);
    small2.incrementBy("a", 21);
    small3.replaceWithWeightedSum(List.of(small1, small2), null);
    assertThat(small3.count("a")).isEqualTo(42);
    CountMinSketch large = CountMinSketch.initByDimensions(2000, 10);
    assertThatThrownBy(() -> small3.replaceWithWeightedSum(List.of(small2, large), null)).hasMessageStartingWith("a source is ");
    assertThatThrownBy(() -> small3.replaceWithWeightedSum(List.of(), null)).hasMessage("no sources to merge");
    assertThatThrownBy(() -> small3.replaceWithWeightedSum(List.of(small1), new long[] {1, 2})).hasMessage("2 weights for 1 sources");
  }

  /** test_merge_success: negative weights subtract a sketch merged in before. */
  @Test
  void mergeWithNegativeWeightsRemovesASketch() {
    CountMinSketch[] cms = new CountMinSketch[7];
    for (int i = 1; i <= 6; i++) {
      cms[i] = CountMinSketch.initByDimensions(1000, 5);
    }
    for (int i = 0; i < 100; i++) {
      cms[1].incrementBy("foo" + i, 1);
      cms[2].incrementBy("bar" + i, 1);
      cms[3].incrementBy("baz" + i, 1);
    }
    cms[4].replaceWithWeightedSum(List.of(cms[1], cms[2]), new long[] {1, 1});
    cms[5].replaceWithWeightedSum(List.of(cms[1], cms[2], cms[3]), new long[] {1, 1, 1});
    for (int i = 0; i < 100; i++) {
      assertThat(cms[4].count("foo" + i)).isEqualTo(1);
      assertThat(cms[5].count("baz" + i)).isEqualTo(1);
    }
    cms[6].replaceWithWeightedSum(List.of(cms[5], cms[3]), new long[] {1, -1});
    assertThat(cms[6].insertedCount()).isEqualTo(200);
    for (int i = 0; i < 100; i++) {
      assertThat(List.of(cms[6].count("foo" + i), cms[6].count("bar" + i), cms[6].count("baz" + i))).containsExactly(1L, 1L, 0L);
    }
    cms[6].replaceWithWeightedSum(List.of(cms[3], cms[5]), new long[] {-1, 1});
    assertThat(cms[6].insertedCount()).isEqualTo(200);
    assertThatThrownBy(() -> cms[6].replaceWithWeightedSum(List.of(cms[6], cms[3]), new long[] {1, -1})).hasMessage("the weighted sum leaves the counter or count range");
    assertThatThrownBy(() -> cms[6].replaceWithWeightedSum(List.of(cms[3], cms[6]), new long[] {-1, 1})).hasMessage("the weighted sum leaves the counter or count range");
    assertThat(cms[6].insertedCount()).isEqualTo(200);
  }

  @Test
  void mergeIntoASourceReadsEachCellBeforeWritingIt() {
    CountMinSketch cms1 = CountMinSketch.initByDimensions(3000, 30);
    CountMinSketch cms2 = CountMinSketch.initByDimensions(3000, 30);
    for (int i = 0; i < 1000; i++) {
      cms1.incrementBy("foo" + i, 1);
      cms2.incrementBy("foo" + i, 1);
    }
    cms1.replaceWithWeightedSum(List.of(cms1, cms2), new long[] {1, -1});
    assertThat(cms1.insertedCount()).isZero();
    cms1.replaceWithWeightedSum(List.of(cms1, cms2), new long[] {1, 2});
    assertThat(cms1.insertedCount()).isEqualTo(2000);
    assertThat(cms1.count("foo7")).isEqualTo(2);
  }

  /** test_merge_overflow_large_cell and _large_weight: refused, and nothing changes. */
  @Test
  void mergeOverflowIsRefusedAtomically() {
    CountMinSketch cms1 = CountMinSketch.initByDimensions(2, 2);
    CountMinSketch cms2 = CountMinSketch.initByDimensions(2, 2);
    assertThat(cms1.incrementBy("foo", 4_000_000_000L)).isEqualTo(4_000_000_000L);
    assertThat(cms2.incrementBy("foo", 4_000_000_000L)).isEqualTo(4_000_000_000L);
    long[][] bad = {{1, -2}, {-2, -2}, {-2, 1}, {2, 0}, {0, 2}, {-1, -1}};
    for (long[] weights : bad) {
      assertThatThrownBy(() -> cms1.replaceWithWeightedSum(List.of(cms1, cms2), weights))
          .isInstanceOf(ArithmeticException.class)
          .hasMessage("the weighted sum leaves the counter or count range");
    }
    assertThat(List.of(cms1.insertedCount(), cms1.count("foo"), cms2.insertedCount())).containsExactly(4_000_000_000L, 4_000_000_000L, 4_000_000_000L);

    CountMinSketch w1 = CountMinSketch.initByDimensions(2, 2);
    CountMinSketch w2 = CountMinSketch.initByDimensions(2, 2);
    w1.incrementBy("foo", 4);
    w2.incrementBy("foo", 4);
    long[][] badWeights = {
      {Long.MAX_VALUE, -4_000_000_000L}, {8_000_000_000L, -4_000_000_000L}, {-8_000_000_000L, 4_000_000_000L},
      {-800_000_000_000L, 8_000_000_000L}, {-1, -1}, {-5, -4}
    };
    for (long[] weights : badWeights) {
      assertThatThrownBy(() -> w1.replaceWithWeightedSum(List.of(w1, w2), weights)).hasMessage("the weighted sum leaves the counter or count range");
    }
    assertThat(List.of(w1.insertedCount(), w1.count("foo"))).containsExactly(4L, 4L);
    w1.replaceWithWeightedSum(List.of(w1, w2), new long[] {-922_337_203_685_477_500L, 922_337_203_685_477_502L});
    assertThat(List.of(w1.insertedCount(), w1.count("foo"))).containsExactly(8L, 8L);
  }

  @Test
  void restoreRebuildsTheSameSketch() throws Exception {
    CountMinSketch cms = CountMinSketch.initByDimensions(50, 4);
    for (int i = 0; i < 500; i++) {
      cms.incrementBy("k" + (i % 37), i);
    }
    long[] next = {0};
    CountMinSketch restored = CountMinSketch.restore(50, 4, cms.insertedCount(), () -> cms.counterAt(next[0]++));
    for (int i = 0; i < 37; i++) {
      assertThat(restored.count("k" + i)).isEqualTo(cms.count("k" + i));
    }
    assertThat(restored.insertedCount()).isEqualTo(cms.insertedCount());
    assertThatThrownBy(() -> CountMinSketch.restore(2, 1, 0, () -> 1L << 32)).isInstanceOf(IllegalArgumentException.class);
  }

  /**
   * Model-based: against an exact multiset, the estimate is never below the truth, and exceeds it by
   * more than ε·N for at most a δ share of items (binomial bound at 99.9%), with RedisBloom's
   * INITBYPROB dimensions (w = ⌈2/ε⌉, d = ⌈log2(1/δ)⌉).
   */
  @ParameterizedTest
  @ValueSource(longs = {1L, 20261130L, 77L})
  void estimatesNeverUndercountAndRespectTheErrorBound(long seed) {
    double epsilon = 0.01;
    double delta = 0.05;
    CountMinSketch cms = CountMinSketch.initByProbability(epsilon, delta);
    assertThat(List.of(cms.width(), cms.depth())).containsExactly(200L, 5L);
    SplittableRandom random = new SplittableRandom(seed);
    Map<String, Long> truth = new HashMap<>();
    int universe = 5_000;
    for (int i = 0; i < 60_000; i++) {
      // Zipf-like: item index skewed towards 0
      int index = (int) Math.floor(Math.pow(universe, random.nextDouble())) - 1;
      long increment = 1 + random.nextInt(5);
      String item = "item-" + index;
      truth.merge(item, increment, Long::sum);
      cms.incrementBy(item, increment);
    }
    long total = truth.values().stream().mapToLong(Long::longValue).sum();
    assertThat(cms.insertedCount()).isEqualTo(total);
    long exceeded = 0;
    long probes = 0;
    for (int index = 0; index < universe; index++) {
      String item = "item-" + index;
      long exact = truth.getOrDefault(item, 0L);
      long estimate = cms.count(item);
      assertThat(estimate).as("never below the truth: %s", item).isGreaterThanOrEqualTo(exact);
      if (estimate - exact > epsilon * total) {
        exceeded++;
      }
      probes++;
    }
    long upper = io.bloomery.testkit.FprAssert.interval(probes, delta, 0.999)[1];
    assertThat(exceeded).as("items beyond eps*N (delta = %s, %d probes)", delta, probes).isLessThanOrEqualTo(upper);
  }

  @Test
  void mergeFromAddsLikeEveryOtherKindWhileReplaceWithWeightedSumOverwrites() {
    CountMinSketch into = CountMinSketch.initByDimensions(50, 4);
    CountMinSketch other = CountMinSketch.initByDimensions(50, 4);
    into.incrementBy("a", 3);
    other.incrementBy("a", 4);
    other.incrementBy("b", 5);
    into.mergeFrom(other);
    assertThat(List.of(into.count("a"), into.count("b"), into.insertedCount())).containsExactly(7L, 5L, 12L);
    assertThat(List.of(other.count("a"), other.insertedCount())).as("source unchanged").containsExactly(4L, 9L);

    CountMinSketch overwritten = CountMinSketch.initByDimensions(50, 4);
    overwritten.incrementBy("stale", 9);
    overwritten.replaceWithWeightedSum(List.of(other), null);
    assertThat(List.of(overwritten.count("stale"), overwritten.insertedCount())).containsExactly(0L, 9L);
  }

  @Test
  void mergeRulesMatchTheFilterKinds() {
    CountMinSketch sketch = CountMinSketch.initByDimensions(50, 4);
    sketch.incrementBy("a", 1);
    assertThatThrownBy(() -> sketch.isCompatible(null)).isInstanceOf(NullPointerException.class).hasMessageContaining("other");
    assertThatThrownBy(() -> sketch.mergeFrom(null)).isInstanceOf(NullPointerException.class).hasMessageContaining("other");
    assertThat(sketch.isCompatible(sketch)).isFalse();
    assertThatThrownBy(() -> sketch.mergeFrom(sketch)).isInstanceOf(IllegalArgumentException.class);
    CountMinSketch wider = CountMinSketch.initByDimensions(51, 4);
    assertThat(sketch.isCompatible(wider)).isFalse();
    assertThatThrownBy(() -> sketch.mergeFrom(wider)).isInstanceOf(IncompatibleFilterException.class).hasMessageContaining("width");
    assertThat(List.of(sketch.count("a"), sketch.insertedCount())).as("refused merges change nothing").containsExactly(1L, 1L);
    CountMinSketch full = CountMinSketch.initByDimensions(50, 4);
    full.incrementBy("a", CountMinSketch.MAX_COUNTER);
    assertThatThrownBy(() -> sketch.mergeFrom(full)).isInstanceOf(ArithmeticException.class);
    assertThat(sketch.count("a")).isEqualTo(1L);
  }
}
