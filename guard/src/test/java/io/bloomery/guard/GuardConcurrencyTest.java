package io.bloomery.guard;

import static io.bloomery.guard.ExactStoreContract.bytes;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** N threads × the same items through one guard: each item is new exactly once. */
class GuardConcurrencyTest {
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
    ConcurrentHashMap<ItemDigest.Key, AtomicInteger> wins = new ConcurrentHashMap<>();
    try (Guard guard = Guard.builder(store).expectedInsertions(5_000).open()) {
      CyclicBarrier start = new CyclicBarrier(threads);
      ExecutorService pool = Executors.newFixedThreadPool(threads);
      List<Future<?>> futures = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        int thread = t;
        futures.add(pool.submit(() -> {
          List<byte[]> mine = new ArrayList<>(items);
          Collections.shuffle(mine, new Random(thread));
          start.await();
          for (int from = 0; from < mine.size(); from += 30) {
            List<byte[]> batch = mine.subList(from, from + 30);
            boolean[] isNew = new boolean[batch.size()];
            if (thread % 2 == 0) {
              isNew = guard.addIfAbsent(batch);
            } else {
              for (int i = 0; i < batch.size(); i++) {
                isNew[i] = guard.addIfAbsent(batch.get(i));
              }
            }
            for (int i = 0; i < batch.size(); i++) {
              if (isNew[i]) {
                wins.computeIfAbsent(new ItemDigest.Key(batch.get(i)), k -> new AtomicInteger())
                    .incrementAndGet();
              }
            }
          }
          return null;
        }));
      }
      for (Future<?> future : futures) {
        future.get();
      }
      pool.shutdown();
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
