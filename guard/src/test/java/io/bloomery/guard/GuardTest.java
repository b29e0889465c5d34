package io.bloomery.guard;

import static io.bloomery.guard.ExactStoreContract.bytes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Verdicts, addIfAbsent and the honesty figures, on the embedded store. */
class GuardTest {
  @TempDir Path directory;

  private Guard open(long expected) {
    return Guard.builder(SqliteStore.open(directory.resolve("seen.db")))
        .expectedInsertions(expected).fpp(0.01).open();
  }

  @Test
  void negativeSkipsTheStoreAndMaybeIsConfirmedExactly() {
    try (Guard guard = open(10_000)) {
      assertThat(guard.addIfAbsent("https://example.org/a")).isTrue();
      assertThat(guard.addIfAbsent("https://example.org/a")).isFalse();

      Verdict present = guard.lookup("https://example.org/a");
      assertThat(present).isEqualTo(new Verdict(true, true, true));

      Verdict absent = guard.lookup("https://example.org/never-added");
      assertThat(absent.maybePresent()).isFalse(); // holds for this key; the filter is 1% at n=10k
      assertThat(absent).isEqualTo(new Verdict(false, false, false));

      GuardStats stats = guard.stats();
      assertThat(stats.storeLookupsAvoided()).isEqualTo(2); // first insert + the absent lookup
      assertThat(stats.storeLookupsMade()).isEqualTo(2); // the duplicate insert + the lookup
      assertThat(stats.realizedFalsePositives()).isZero();
      assertThat(stats.itemsSinceRebuild()).isEqualTo(1);
      assertThat(stats.generation()).isEqualTo(1);
      assertThat(stats.insertFailures()).isZero();
    }
  }

  @Test
  void verdictRejectsImpossibleCombinations() {
    assertThatThrownBy(() -> new Verdict(false, true, false))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> new Verdict(true, false, true))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void realizedFalsePositivesAreCountedAgainstTheStore() {
    // A tiny filter (n=50) loaded with 2000 items answers "maybe" for most non-members; the
    // store tells the truth, and every such maybe is counted as a realized false positive.
    try (Guard guard = open(50)) {
      List<byte[]> members = new ArrayList<>();
      for (int i = 0; i < 2_000; i++) {
        members.add(bytes("member-" + i));
      }
      boolean[] inserted = guard.addIfAbsent(members);
      for (boolean b : inserted) {
        assertThat(b).isTrue(); // a false "maybe" never turns a new item into a duplicate
      }
      int maybes = 0;
      int duplicates = 0;
      for (int i = 0; i < 1_000; i++) {
        Verdict v = guard.lookup("non-member-" + i);
        maybes += v.maybePresent() ? 1 : 0;
        duplicates += v.duplicate() ? 1 : 0;
      }
      GuardStats stats = guard.stats();
      assertThat(duplicates).isZero();
      assertThat(maybes).isGreaterThan(500);
      assertThat(stats.nearCapacity()).isTrue();
      assertThat(stats.realizedFalsePositives()).isGreaterThanOrEqualTo(maybes);
      assertThat(stats.realizedFalsePositiveRate()).isGreaterThan(0.5);
      assertThat(stats.modelFalsePositiveRate()).isGreaterThan(0.5);
    }
  }

  @Test
  void batchAddReportsEachItem() {
    try (Guard guard = open(1_000)) {
      guard.addIfAbsent(bytes("b"));
      boolean[] inserted = guard.addIfAbsent(
          List.of(bytes("a"), bytes("b"), bytes("c"), bytes("a")));
      assertThat(inserted).containsExactly(true, false, true, false);
      assertThat(guard.stats().itemsSinceRebuild()).isEqualTo(3);
      List<byte[]> withNull = new ArrayList<>();
      withNull.add(bytes("z"));
      withNull.add(null);
      assertThatThrownBy(() -> guard.addIfAbsent(withNull))
          .isInstanceOf(NullPointerException.class).hasMessageContaining("items[1]");
      assertThat(guard.lookup("z").maybePresent()).isFalse(); // refused before any bit was set
    }
  }

  @Test
  void closedStoreSurfacesAsErrorAndCountsFailures() {
    Guard guard = open(1_000);
    guard.addIfAbsent("kept");
    guard.store().close(); // the store goes away underneath the guard
    assertThatThrownBy(() -> guard.addIfAbsent("https://example.org/x"))
        .isInstanceOf(StoreUnavailableException.class);
    assertThatThrownBy(() -> guard.addIfAbsent(List.of(bytes("p"), bytes("q"))))
        .isInstanceOf(StoreUnavailableException.class);
    assertThatThrownBy(() -> guard.lookup("kept")).isInstanceOf(StoreUnavailableException.class);
    assertThat(guard.lookup("never-seen-anywhere").maybePresent()).isFalse(); // no store needed
    assertThat(guard.stats().insertFailures()).isEqualTo(3);
    // Write order: the bit was added before the failed insert and stays (a harmless "maybe"):
    // the lookup goes to the store, which fails loudly instead of answering.
    assertThatThrownBy(() -> guard.lookup("https://example.org/x"))
        .isInstanceOf(StoreUnavailableException.class);
    guard.close();
  }
}
