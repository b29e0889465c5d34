package io.bloomery.guard;

import static io.bloomery.guard.ExactStoreContract.bytes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomery.filter.FilterKind;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The guard over each Bloom kind it takes (SQLite store): the same verdicts, snapshots of that kind
 * replayed on reopen, and a snapshot of another kind loaded when no kind is configured (so snapshots
 * written when the guard was classic-only still load) but rebuilt when another kind is configured.
 */
class GuardFilterKindTest {
  @TempDir Path directory;

  private Guard open(FilterKind kind) {
    Guard.Builder builder = Guard.builder(SqliteStore.open(directory.resolve("seen.db"))).expectedInsertions(5_000)
        .fpp(0.01).snapshotFile(directory.resolve("seen.guard"));
    return (kind == null ? builder : builder.filterKind(kind)).open();
  }

  /** {@code count} distinct items: {@code prefix} followed by 0, 1, 2, .... */
  static List<byte[]> items(String prefix, int count) {
    List<byte[]> items = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      items.add(bytes(prefix + i));
    }
    return items;
  }

  @ParameterizedTest
  @EnumSource(value = FilterKind.class, names = {"CLASSIC_BLOOM", "BLOCKED_BLOOM", "SPLIT_BLOCK_BLOOM"})
  void everyBloomKindGuardsAndSnapshots(FilterKind kind) {
    try (Guard guard = open(kind)) {
      assertThat(guard.filterKind()).isEqualTo(kind);
      boolean[] fresh = guard.addIfAbsent(items("a", 500));
      assertThat(fresh).doesNotContain(false);
      assertThat(guard.addIfAbsent(items("a", 500))).doesNotContain(true);
      for (byte[] item : items("a", 500)) {
        assertThat(guard.lookup(item)).isEqualTo(new Verdict(true, true, true));
      }
      assertThat(guard.lookup(bytes("never added")).duplicate()).isFalse();
      GuardStats stats = guard.stats();
      assertThat(stats.bits()).isPositive();
      assertThat(stats.fillRatio()).isBetween(0.0, 1.0).isPositive();
      guard.rebuild();
      assertThat(guard.filterKind()).isEqualTo(kind);
      assertThat(guard.lookup(items("a", 500).get(7)).duplicate()).isTrue();
    }
    try (Guard guard = open(kind)) {
      assertThat(guard.stats().recovery()).startsWith("replayed 0 rows");
      assertThat(guard.filterKind()).isEqualTo(kind);
      assertThat(guard.addIfAbsent(items("a", 500))).doesNotContain(true);
    }
  }

  @Test
  void theDefaultIsThePlannersBlockedFilterAndItLoadsAClassicSnapshot() {
    try (Guard guard = open(null)) {
      assertThat(guard.filterKind()).isEqualTo(FilterKind.BLOCKED_BLOOM);
    }
    try (Guard guard = open(FilterKind.CLASSIC_BLOOM)) {
      assertThat(guard.stats().recovery()).startsWith("rebuilt from store: filter kind changed from blocked");
      guard.addIfAbsent(items("c", 100));
    }
    try (Guard guard = open(null)) {
      assertThat(guard.stats().recovery()).startsWith("replayed 0 rows");
      assertThat(guard.filterKind()).isEqualTo(FilterKind.CLASSIC_BLOOM);
      assertThat(guard.addIfAbsent(items("c", 100))).doesNotContain(true);
      guard.rebuild(); // the next generation is the planned kind
      assertThat(guard.filterKind()).isEqualTo(FilterKind.BLOCKED_BLOOM);
      assertThat(guard.addIfAbsent(items("c", 100))).doesNotContain(true);
    }
  }

  @Test
  void kindsThatCannotGuardAreRefused() {
    Guard.Builder builder = Guard.builder(SqliteStore.open(directory.resolve("refused.db")));
    try {
      assertThatThrownBy(() -> builder.filterKind(FilterKind.COUNTING_BLOOM)).isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("counting").hasMessageContaining("blocked");
    } finally {
      builder.open().close();
    }
  }
}
