package io.bloomery.guard;

import static io.bloomery.guard.ExactStoreContract.bytes;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Rebuilds while several threads hammer inserts; afterwards every stored key must be in the new
 * filter. Each rebuild changes the sizing, so the new filter shares no bits with the old one: a key
 * the rebuild missed (committed after the snapshot but not dual-written) would be a false negative.
 */
class GuardRebuildUnderLoadIT {
  @TempDir Path directory;

  @Test
  void postgresRebuildUnderLoadLeavesNoGap() throws Exception {
    String url = PostgresCluster.shared().createDatabase();
    hammerDuringRebuilds(() -> PostgresStore.open(url), 4);
  }

  @Test
  void sqliteRebuildUnderLoadLeavesNoGap() throws Exception {
    Path file = directory.resolve("seen.db");
    hammerDuringRebuilds(() -> SqliteStore.open(file), 3);
  }

  private static void hammerDuringRebuilds(Supplier<ExactStore> stores, int writers)
      throws Exception {
    // Pre-load so that each snapshot scan takes a while and overlaps many inserts.
    try (ExactStore store = stores.get()) {
      List<byte[]> preload = new ArrayList<>();
      for (int i = 0; i < 20_000; i++) {
        preload.add(bytes("preloaded-" + i));
        if (preload.size() == 1_000) {
          store.insertAllIfAbsent(preload);
          preload.clear();
        }
      }
    }
    try (Guard guard = Guard.builder(stores.get()).expectedInsertions(50_000).open()) {
      AtomicBoolean stop = new AtomicBoolean();
      AtomicLong insertedDuringRebuilds = new AtomicLong();
      ExecutorService pool = Executors.newFixedThreadPool(writers);
      List<Future<Long>> futures = new ArrayList<>();
      for (int w = 0; w < writers; w++) {
        int writer = w;
        futures.add(pool.submit(() -> {
          long n = 0;
          while (!stop.get()) {
            List<byte[]> batch = new ArrayList<>();
            for (int i = 0; i < 20; i++) {
              batch.add(bytes("w" + writer + "-" + (n++)));
            }
            boolean rebuilding = guard.stats().rebuilding();
            boolean[] inserted = guard.addIfAbsent(batch);
            for (boolean b : inserted) {
              assertThat(b).isTrue();
            }
            if (rebuilding) {
              insertedDuringRebuilds.addAndGet(batch.size());
            }
          }
          return n;
        }));
      }
      double[] fpps = {0.02, 0.005, 0.01};
      long total = 0;
      try {
        for (int round = 0; round < fpps.length; round++) {
          Thread.sleep(50);
          guard.rebuild(60_000 + round * 10_000L, fpps[round]);
        }
        stop.set(true);
        for (Future<Long> future : futures) {
          total += future.get();
        }
      } finally {
        stop.set(true); // a failed rebuild must not leave writers hammering the store
        pool.shutdown();
      }
      assertThat(guard.stats().generation()).isEqualTo(1 + fpps.length);
      assertThat(insertedDuringRebuilds.get()).isPositive();

      long[] stored = {0};
      List<String> missing = new ArrayList<>();
      guard.store().scan(item -> {
        stored[0]++;
        if (!guard.lookup(item).maybePresent()) {
          missing.add(new String(item));
        }
      });
      assertThat(missing).as("stored keys missing from the rebuilt filter").isEmpty();
      assertThat(stored[0]).isEqualTo(20_000 + total);
    }
  }
}
