package io.bloomery.guard;

import static io.bloomery.guard.ExactStoreContract.bytes;
import static io.bloomery.guard.GuardFilterKindTest.items;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomery.filter.FilterKind;
import io.bloomery.plan.FilterPlan;
import io.bloomery.plan.FilterPlanner;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A guard built from a {@link FilterPlan} (SQLite store): the first filter is the plan's own, a rebuild for a
 * grown store keeps the plan's kind, k and bits per key, snapshots of the same plan replay, another plan's are
 * rebuilt, and plans a guard cannot build from are refused before anything opens.
 */
class GuardPlanTest {
  @TempDir Path directory;

  private Guard open(FilterPlan plan) {
    return Guard.builder(SqliteStore.open(directory.resolve("seen.db"))).plan(plan)
        .snapshotFile(directory.resolve("seen.guard")).open();
  }

  @Test
  void theFirstFilterIsThePlansOwnAndItsSnapshotReplays() {
    FilterPlan plan = FilterPlanner.plan(5_000, 0.01);
    assertThat(plan.kind()).isEqualTo(FilterKind.BLOCKED_BLOOM);
    try (Guard guard = open(plan)) {
      assertThat(guard.filterKind()).isEqualTo(FilterKind.BLOCKED_BLOOM);
      assertThat(guard.stats().bits()).isEqualTo(plan.bits());
      assertThat(guard.stats().hashes()).isEqualTo(plan.hashes());
      assertThat(guard.addIfAbsent(items("a", 300))).doesNotContain(false);
    }
    try (Guard guard = open(FilterPlanner.plan(5_000, 0.01))) {
      assertThat(guard.stats().recovery()).startsWith("replayed 0 rows");
      assertThat(guard.addIfAbsent(items("a", 300))).doesNotContain(true);
      assertThat(guard.lookup(bytes("a7"))).isEqualTo(new Verdict(true, true, true));
    }
  }

  @Test
  void aClassicPlanGivesAClassicFilter() {
    FilterPlan plan = FilterPlanner.plan(5_000, 1e-9); // blocked needs > 15% more memory at this rate
    assertThat(plan.kind()).isEqualTo(FilterKind.CLASSIC_BLOOM);
    try (Guard guard = open(plan)) {
      assertThat(guard.filterKind()).isEqualTo(FilterKind.CLASSIC_BLOOM);
      assertThat(guard.stats().bits()).isEqualTo(plan.bits());
      assertThat(guard.stats().hashes()).isEqualTo(plan.hashes());
      assertThat(guard.addIfAbsent(items("c", 200))).doesNotContain(false);
      guard.rebuild();
      assertThat(guard.stats().bits()).isEqualTo(plan.bits());
      assertThat(guard.addIfAbsent(items("c", 200))).doesNotContain(true);
    }
  }

  @Test
  void aRebuildForAGrownStoreKeepsThePlansBitsPerKeyAndK() {
    FilterPlan plan = FilterPlanner.plan(1_000, 0.01);
    try (Guard guard = open(plan)) {
      guard.addIfAbsent(items("g", 900)); // 90% of the plan's n: the next build is for 2 × the rows
      guard.rebuild();
      GuardStats stats = guard.stats();
      assertThat(guard.filterKind()).isEqualTo(plan.kind());
      assertThat(stats.hashes()).isEqualTo(plan.hashes());
      long rows = guard.store().estimatedRows();
      long blocks = (long) Math.ceil(2 * rows * plan.bitsPerKey() / 512);
      assertThat(stats.bits()).isEqualTo(blocks * 512).isGreaterThan(plan.bits());
      for (byte[] item : items("g", 900)) {
        assertThat(guard.lookup(item).duplicate()).isTrue();
      }
    }
    try (Guard guard = open(plan)) { // the grown filter is still the plan's: its snapshot replays
      assertThat(guard.stats().recovery()).startsWith("replayed 0 rows");
    }
  }

  @Test
  void aSnapshotOfAnotherPlanIsRebuiltFromTheStore() {
    try (Guard guard = open(FilterPlanner.plan(5_000, 0.01))) {
      guard.addIfAbsent(items("p", 100));
    }
    FilterPlan other = FilterPlanner.plan(5_000, 0.001);
    try (Guard guard = open(other)) {
      assertThat(guard.stats().recovery()).startsWith("rebuilt from store: sizing changed");
      assertThat(guard.stats().hashes()).isEqualTo(other.hashes());
      assertThat(guard.addIfAbsent(items("p", 100))).doesNotContain(true);
    }
  }

  @Test
  void aRebuildAtAnotherRateSizesThePlansKindByItsModel() {
    FilterPlan plan = FilterPlanner.plan(5_000, 0.01);
    try (Guard guard = open(plan)) {
      guard.addIfAbsent(items("r", 100));
      guard.rebuild(5_000, 0.0001);
      assertThat(guard.filterKind()).isEqualTo(plan.kind());
      assertThat(guard.stats().bits()).isGreaterThan(plan.bits());
      assertThat(guard.addIfAbsent(items("r", 100))).doesNotContain(true);
    }
  }

  @Test
  void plansAGuardCannotBuildFromAreRefused() {
    Guard.Builder builder = Guard.builder(SqliteStore.open(directory.resolve("refused.db")));
    try {
      FilterPlan fuse = FilterPlanner.planStatic(5_000, 0.005, Long.MAX_VALUE);
      assertThat(fuse.kind()).isEqualTo(FilterKind.BINARY_FUSE);
      assertThatThrownBy(() -> builder.plan(fuse)).isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("binary-fuse");
      FilterPlan partialBlock = new FilterPlan(FilterKind.BLOCKED_BLOOM, 1000, 7, 125, 1.0, 0.01, "hand-made");
      assertThatThrownBy(() -> builder.plan(partialBlock)).isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("bits=1000");
      FilterPlan noRate = new FilterPlan(FilterKind.CLASSIC_BLOOM, 1024, 7, 128, 1.0, 0, "hand-made");
      assertThatThrownBy(() -> builder.plan(noRate)).isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("modelFpp=0.0");
      assertThatThrownBy(() -> builder.plan(null)).isInstanceOf(NullPointerException.class);
    } finally {
      builder.open().close();
    }
  }

  @Test
  void aPlanAndExplicitSizingExcludeEachOther() {
    FilterPlan plan = FilterPlanner.plan(5_000, 0.01);
    Guard.Builder planned = Guard.builder(SqliteStore.open(directory.resolve("a.db"))).plan(plan);
    Guard.Builder sized = Guard.builder(SqliteStore.open(directory.resolve("b.db"))).fpp(0.02);
    try {
      assertThatThrownBy(() -> planned.expectedInsertions(10)).isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("expectedInsertions");
      assertThatThrownBy(() -> planned.fpp(0.02)).isInstanceOf(IllegalStateException.class);
      assertThatThrownBy(() -> planned.filterKind(FilterKind.CLASSIC_BLOOM)).isInstanceOf(IllegalStateException.class);
      assertThatThrownBy(() -> planned.plan(plan)).isInstanceOf(IllegalStateException.class);
      assertThatThrownBy(() -> sized.plan(plan)).isInstanceOf(IllegalStateException.class);
    } finally {
      planned.open().close();
      sized.open().close();
    }
  }
}
