package io.bloomery.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;

/** The static-filter workload computes the right answers (timings are not checked: they live in docs/BENCHMARKS.md). */
class StaticFilterBenchTest {

  @Test
  void smallRunReportsEveryFigureWithRealizedRatesNearTheModels() {
    Map<String, Object> result = StaticFilterBench.run(50_000, 20_000, 1);
    // run() throws on any false negative; the realized rates must sit near the models (20,000 probes).
    assertThat((double) result.get("fuse8_realized_fpr_percent")).isBetween(0.25, 0.55);
    assertThat((double) result.get("fuse16_realized_fpr_percent")).isLessThan(0.03);
    assertThat((double) result.get("blocked_realized_fpr_percent")).isBetween(0.75, 1.3);
    double sized = io.bloomery.fuse.BinaryFuseFilter.shapeFor(50_000).slots() * 8.0 / 50_000; // 1.194 slots/key here
    assertThat((double) result.get("fuse8_bits_per_key")).isCloseTo(sized, org.assertj.core.api.Assertions.within(0.001));
    assertThat((double) result.get("fuse16_bits_per_key")).isCloseTo(2 * sized, org.assertj.core.api.Assertions.within(0.001));
    assertThat(result).containsKeys("fuse8_absent_vs_guava", "build_ms_fuse8", "blocked_present_ns");
  }
}
