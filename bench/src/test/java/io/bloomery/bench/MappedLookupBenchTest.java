package io.bloomery.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;

/** The mapped-lookup workload answers every member (timings are not checked: they live in docs/BENCHMARKS.md). */
class MappedLookupBenchTest {

  @Test
  void smallRun_answersEveryMember_andReportsEveryFigure() throws Exception {
    // run() throws on a false negative, heap or mapped.
    Map<String, Object> result = MappedLookupBench.run(30_000, 10_000, 1);
    assertThat(result).containsKeys("heap_vs_mapped_classic_single_absent", "heap_vs_mapped_blocked_batched_present",
        "heap_before_vs_after_mapping_classic_single_absent", "map_with_checksum_ms_blocked", "load_average_at_start");
    assertThat((long) result.get("file_bytes_classic")).isPositive();
  }
}
