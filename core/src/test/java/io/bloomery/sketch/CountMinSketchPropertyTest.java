package io.bloomery.sketch;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;
import net.jqwik.api.constraints.Size;

/** Properties of the count-min sketch against an exact multiset (fixed jqwik seed). */
class CountMinSketchPropertyTest {

  @Property(tries = 200, seed = "20261130")
  void neverBelowTheTrueCountAndCountIsTheSum(
      @ForAll @IntRange(min = 1, max = 64) int width,
      @ForAll @IntRange(min = 1, max = 6) int depth,
      @ForAll @Size(max = 200) List<@IntRange(min = 0, max = 50) Integer> items,
      @ForAll @LongRange(min = 0, max = 1_000_000) long increment) {
    CountMinSketch cms = CountMinSketch.initByDimensions(width, depth);
    Map<Integer, Long> truth = new HashMap<>();
    long total = 0;
    for (int item : items) {
      long step = increment + item;
      long reply = cms.incrementBy("p" + item, step);
      truth.merge(item, step, Long::sum);
      total += step;
      assertThat(reply).isEqualTo(cms.count("p" + item)).isGreaterThanOrEqualTo(Math.min(truth.get(item), CountMinSketch.MAX_COUNTER));
    }
    for (Map.Entry<Integer, Long> entry : truth.entrySet()) {
      assertThat(cms.count("p" + entry.getKey())).isGreaterThanOrEqualTo(Math.min(entry.getValue(), CountMinSketch.MAX_COUNTER));
    }
    assertThat(cms.insertedCount()).isEqualTo(total);
  }

  @Property(tries = 100, seed = "20261130")
  void mergeWithUnitWeightsEqualsIncrementingOneSketch(
      @ForAll @Size(max = 100) List<@IntRange(min = 0, max = 30) Integer> left,
      @ForAll @Size(max = 100) List<@IntRange(min = 0, max = 30) Integer> right) {
    CountMinSketch a = CountMinSketch.initByDimensions(16, 3);
    CountMinSketch b = CountMinSketch.initByDimensions(16, 3);
    CountMinSketch both = CountMinSketch.initByDimensions(16, 3);
    left.forEach(i -> {
      a.incrementBy("m" + i, i + 1);
      both.incrementBy("m" + i, i + 1);
    });
    right.forEach(i -> {
      b.incrementBy("m" + i, i + 1);
      both.incrementBy("m" + i, i + 1);
    });
    CountMinSketch merged = CountMinSketch.initByDimensions(16, 3);
    merged.replaceWithWeightedSum(List.of(a, b), null);
    for (long cell = 0; cell < 48; cell++) {
      assertThat(merged.counterAt(cell)).isEqualTo(both.counterAt(cell));
    }
    assertThat(merged.insertedCount()).isEqualTo(both.insertedCount());
  }
}
