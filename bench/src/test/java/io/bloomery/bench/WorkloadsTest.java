package io.bloomery.bench;

import io.bloomery.cli.SyntheticUrls;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Every workload computes the answers it should: nothing a benchmark measures is dead or wrong. */
class WorkloadsTest {

  @Test
  void syntheticUrlsAreDeterministicDistinctAndAbout80Bytes() {
    SyntheticUrls urls = new SyntheticUrls(SyntheticUrls.BENCH_SEED);
    assertThat(urls.url(12345)).isEqualTo(new SyntheticUrls(SyntheticUrls.BENCH_SEED).url(12345));
    Set<String> seen = new HashSet<>();
    long bytes = 0;
    int n = 200_000;
    for (int i = 0; i < n; i++) {
      String url = urls.url(i);
      assertThat(seen.add(url)).isTrue();
      bytes += url.getBytes(StandardCharsets.UTF_8).length;
    }
    assertThat(bytes / (double) n).isBetween(75.0, 88.0);
  }

  @Test
  void quickBenchAnswersAreTheExpectedCounts() {
    int queries = 5_000;
    Map<String, Object> figures = QuickBench.run(new QuickBench.Options(20_000, 0.01, queries, 1), null);
    // Members are always maybe-present (no false negatives), in both filters.
    assertThat(figures.get("present_maybe")).isEqualTo((long) queries);
    assertThat(figures.get("guava_present_maybe")).isEqualTo((long) queries);
    long falsePositives = (Long) figures.get("false_positives");
    assertThat((Double) figures.get("realized_fpp")).isEqualTo(falsePositives / (double) queries);
    assertThat(falsePositives).isBetween(10L, 120L);
    assertThat((Double) figures.get("bits_per_key")).isBetween(9.8, 10.1);
    assertThat((Double) figures.get("guava_bits_per_key")).isBetween(9.5, 9.7);
    assertThat(figures).containsKeys("lookup_batched_vs_guava", "lookup_single_vs_guava", "insert_vs_guava",
        "model_fpp", "floor_ns", "split_realized_fpp", "register_realized_fpp");
    assertThat(QuickBench.toJson(figures)).startsWith("{\"keys\": 20000,").contains("\"lookup_batched_vs_guava\": ");
    assertThat(QuickBench.toTable(figures)).contains("| lookup, batched, absent (ns) |");
  }

  @Test
  void lookupBenchmarksReturnTheFiltersAnswers() {
    LookupBenchmark bench = new LookupBenchmark();
    bench.keys = 50_000;
    bench.setUp(true, true, true);
    int guavaAbsent = bench.guavaAbsent();
    assertThat(guavaAbsent).isBetween(0, 60);
    int blockedAbsent = bench.blockedSingleAbsent();
    assertThat(bench.blockedBatchedAbsent()).isBetween(0, 60);
    assertThat(bench.guavaPresent()).isEqualTo(LookupBenchmark.BATCH);
    assertThat(bench.blockedSinglePresent()).isEqualTo(LookupBenchmark.BATCH);
    assertThat(bench.blockedBatchedPresent()).isEqualTo(LookupBenchmark.BATCH);
    // The batched answer for a window equals the single-key answers over the same window.
    for (int window = 0; window < 8; window++) {
      bench.cursor = window * LookupBenchmark.BATCH;
      int single = bench.blockedSingleAbsent();
      bench.cursor = window * LookupBenchmark.BATCH;
      assertThat(bench.blockedBatchedAbsent()).isEqualTo(single);
    }
    assertThat(blockedAbsent).isBetween(0, 60);
    assertThat(bench.hashXxh3()).isNotZero();
    assertThat(bench.floor()).isZero(); // the floor array holds zeros: it only pays for the reads
  }

  @Test
  void realDataTruthIsExactAndFiltersHaveNoFalseNegatives() {
    RealData.Workload workload = RealData.load();
    assertThat(workload.inserted()).hasSize(226_995);
    assertThat(workload.queries()).hasSize(295_441);
    Set<String> npm = new HashSet<>(workload.inserted());
    int members = 0;
    for (String query : workload.queries()) {
      members += npm.contains(query) ? 1 : 0;
    }
    assertThat(workload.members()).isEqualTo(members).isPositive();

    RealDataBenchmark bench = new RealDataBenchmark();
    bench.setUp();
    int guava = bench.guavaQueryAll();
    int strings = bench.blockedQueryAllStrings();
    assertThat(bench.blockedQueryAllBatched()).isEqualTo(strings);
    for (int i = 0; i < workload.truth().length; i++) {
      if (workload.truth()[i]) {
        assertThat(bench.out[i]).as(workload.queries().get(i)).isTrue();
      }
    }
    int nonMembers = workload.queries().size() - members;
    // Realized FPR on the real non-members, within a generous 99.9% bound of 1% for both filters.
    double bound = 0.01 * nonMembers + 3.3 * Math.sqrt(0.01 * nonMembers) + 1;
    assertThat(strings - members).isBetween(0, (int) (bound * 1.1));
    assertThat(guava - members).isBetween(0, (int) (bound * 1.1));
  }
}
