package io.bloomery.guard;

import static io.bloomery.guard.ExactStoreContract.bytes;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Each figure of {@link GuardStats} counts exactly what its definition says. */
class GuardStatsMeaningTest {
  @TempDir Path directory;

  @Test
  void anotherWritersItemsAreStaleNegativesNotNewItemsNorNonMembers() throws Exception {
    Path file = directory.resolve("seen.db");
    try (Guard guard = Guard.builder(SqliteStore.open(file)).expectedInsertions(10_000).open();
        SqliteStore otherWriter = SqliteStore.open(file)) {
      List<byte[]> batch = new ArrayList<>();
      for (int i = 0; i < 100; i++) {
        assertThat(otherWriter.insertIfAbsent(bytes("other-" + i))).isTrue();
        batch.add(bytes("other-" + i));
      }
      for (int i = 0; i < 50; i++) {
        batch.add(bytes("new-" + i));
      }
      batch.add(bytes("new-0")); // a repeat inside the batch: a "maybe", a duplicate
      boolean[] inserted = guard.addIfAbsent(batch, answers -> { });
      long newItems = 0;
      for (boolean b : inserted) {
        newItems += b ? 1 : 0;
      }
      assertThat(newItems).isEqualTo(50);

      GuardStats stats = guard.stats();
      // The filter never saw the other writer's 100 items: "definitely absent", yet stored.
      assertThat(stats.storeLookupsAvoided()).isEqualTo(150);
      assertThat(stats.staleNegatives()).isEqualTo(100);
      assertThat(stats.storeLookupsMade()).isEqualTo(1);
      assertThat(stats.realizedFalsePositives()).isZero();
      // The identity the summary relies on: new = negatives - stale + realized false positives.
      assertThat(stats.storeLookupsAvoided() - stats.staleNegatives()
          + stats.realizedFalsePositives()).isEqualTo(newItems);
      // 50 non-members, none a false positive; the stale members are not in the denominator.
      assertThat(stats.realizedFalsePositiveRate()).isZero();
      assertThat(stats.lookupsAvoidedShare()).isEqualTo(150.0 / 151);
      assertThat(stats.itemsSinceRebuild()).isEqualTo(50);
    }
  }

  @Test
  void aFailedDeliveryCountsNothing() {
    try (Guard guard = Guard.builder(SqliteStore.open(directory.resolve("d.db")))
        .expectedInsertions(10_000).open()) {
      try {
        guard.addIfAbsent(List.of(bytes("a"), bytes("b")), answers -> {
          throw new java.io.IOException("Broken pipe");
        });
      } catch (java.io.IOException expected) {
        // the batch was rolled back
      }
      GuardStats stats = guard.stats();
      assertThat(stats.storeLookupsAvoided() + stats.storeLookupsMade()).isZero();
      assertThat(stats.itemsSinceRebuild()).isZero();
      assertThat(stats.insertFailures()).isZero(); // the store did not fail; the output did
      assertThat(guard.store().contains(bytes("a"))).isFalse();
    }
  }

  @Test
  void generationCountsTheBuildsTheSnapshotRecords() {
    Path db = directory.resolve("g.db");
    Path snapshot = directory.resolve("g.db.guard");
    try (Guard guard = Guard.builder(SqliteStore.open(db)).expectedInsertions(1_000)
        .snapshotFile(snapshot).open()) {
      assertThat(guard.stats().generation()).isEqualTo(1);
      assertThat(guard.stats().recovery()).startsWith("rebuilt from store: no snapshot");
      guard.addIfAbsent(bytes("x"));
    }
    try (Guard guard = Guard.builder(SqliteStore.open(db)).expectedInsertions(1_000)
        .snapshotFile(snapshot).open()) {
      assertThat(guard.stats().generation()).isEqualTo(1); // loaded, not built
      assertThat(guard.stats().recovery()).startsWith("replayed 0 rows");
      guard.rebuild();
      assertThat(guard.stats().generation()).isEqualTo(2);
    }
    // A rebuild on open (the sizing changed) is one more build of this store's filter.
    try (Guard guard = Guard.builder(SqliteStore.open(db)).expectedInsertions(2_000)
        .snapshotFile(snapshot).open()) {
      assertThat(guard.stats().recovery()).startsWith("rebuilt from store: sizing changed");
      assertThat(guard.stats().generation()).isEqualTo(3);
    }
    // Without a snapshot there is no history to count.
    try (Guard guard = Guard.builder(SqliteStore.open(db)).expectedInsertions(2_000).open()) {
      assertThat(guard.stats().generation()).isEqualTo(1);
      assertThat(guard.stats().recovery()).isEqualTo(
          "rebuilt from store: no snapshot file configured");
    }
  }
}
