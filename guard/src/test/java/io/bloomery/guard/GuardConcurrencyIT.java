package io.bloomery.guard;

import static io.bloomery.guard.ExactStoreContract.bytes;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** N threads × the same items through one guard: each item is new exactly once. */
class GuardConcurrencyIT {
  @TempDir Path directory;

  @Test
  void postgres() throws Exception {
    sameItemsFromManyThreads(PostgresStore.open(PostgresCluster.shared().createDatabase()));
  }

  @Test
  void sqlite() throws Exception {
    sameItemsFromManyThreads(SqliteStore.open(directory.resolve("seen.db")));
  }

  private static void sameItemsFromManyThreads(ExactStore store) throws Exception {
    int threads = 8;
    List<byte[]> items = new ArrayList<>();
    for (int i = 0; i < 1_500; i++) {
      items.add(bytes("https://example.org/" + i));
    }
    try (Guard guard = Guard.builder(store).expectedInsertions(5_000).open()) {
      Map<ItemDigest.Key, AtomicInteger> wins = ConcurrentOffers.race(threads, items, 30,
          (thread, batch) -> {
            if (thread % 2 == 0) {
              return guard.addIfAbsent(batch);
            }
            boolean[] isNew = new boolean[batch.size()];
            for (int i = 0; i < batch.size(); i++) {
              isNew[i] = guard.addIfAbsent(batch.get(i));
            }
            return isNew;
          });
      assertThat(wins).hasSize(items.size());
      assertThat(wins.values()).allSatisfy(count -> assertThat(count.get()).isEqualTo(1));
      Set<ItemDigest.Key> expected = new HashSet<>();
      items.forEach(item -> expected.add(new ItemDigest.Key(item)));
      assertThat(ExactStoreContract.scanAll(guard.store())).isEqualTo(expected);
      GuardStats stats = guard.stats();
      assertThat(stats.itemsSinceRebuild()).isEqualTo(items.size());
      // staleNegatives may be > 0 here: two threads can both see a new item as absent.
      assertThat(stats.storeLookupsMade() + stats.storeLookupsAvoided())
          .isEqualTo((long) threads * items.size());
    }
  }
}
