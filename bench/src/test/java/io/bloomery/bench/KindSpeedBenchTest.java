package io.bloomery.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;

/** The kinds' workload computes the right answers (timings are not checked: they live in docs/BENCHMARKS.md). */
class KindSpeedBenchTest {

  @Test
  void smallRun_answersEveryMember_andReportsEveryFigure() throws Exception {
    // run() throws on a false negative and when a parallel build sets other bits than the one-thread build.
    Map<String, Object> result = KindSpeedBench.run(40_000, 20_000, 1);
    assertThat((double) result.get("realized_fpr_percent_fuse8")).isBetween(0.2, 0.6);
    assertThat((double) result.get("realized_fpr_percent_classic_0.39")).isBetween(0.2, 0.6);
    assertThat((double) result.get("bits_per_key_fuse8")).isLessThan((double) result.get("bits_per_key_classic_0.39"));
    assertThat(result).containsKeys("lookup_vs_guava_classic_batched_p1_absent", "lookup_p2_vs_p1_classic_present",
        "build_p2_vs_p1_blocked", "alloc_bytes_per_lookup_classic_string", "alloc_bytes_per_lookup_blocked_string_non_ascii",
        "load_average_at_start");
  }

  @Test
  void buildsOnlyRun_reportsTheRatioOfEveryKind() throws Exception {
    // runBuilds() throws when a parallel build sets other bits or counts than the one-thread build.
    Map<String, Object> result = KindSpeedBench.runBuilds(40_000, 2);
    assertThat(result).containsKeys("build_p2_vs_p1_classic", "build_p2_vs_p1_classic_single_writer",
        "build_p2_vs_p1_blocked", "build_ns_per_key_blocked_p2", "pass_1");
    assertThat((java.util.List<?>) result.get("build_p2_vs_p1_blocked_passes")).hasSize(2);
  }
}
