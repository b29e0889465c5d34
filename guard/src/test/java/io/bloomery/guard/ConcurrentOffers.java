package io.bloomery.guard;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;

/** Offers the same items from many threads at once and counts who was told "new" for each. */
final class ConcurrentOffers {
  /** One thread's offer of a batch: returns, per item, whether it was new. */
  @FunctionalInterface
  interface Offer {
    boolean[] offer(int thread, List<byte[]> batch);
  }

  private ConcurrentOffers() {}

  /**
   * Each of {@code threads} threads offers every item, in its own shuffled order (seeded by its
   * index), in batches of {@code batchSize}, all starting together.
   *
   * @return for each item reported new at least once, how many times it was
   */
  static Map<ItemDigest.Key, AtomicInteger> race(
      int threads, List<byte[]> items, int batchSize, Offer offer) throws Exception {
    Map<ItemDigest.Key, AtomicInteger> wins = new ConcurrentHashMap<>();
    CyclicBarrier start = new CyclicBarrier(threads);
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      List<Future<?>> futures = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        int thread = t;
        futures.add(pool.submit(() -> {
          List<byte[]> mine = new ArrayList<>(items);
          Collections.shuffle(mine, new Random(thread));
          start.await();
          for (int from = 0; from < mine.size(); from += batchSize) {
            List<byte[]> batch = mine.subList(from, Math.min(mine.size(), from + batchSize));
            boolean[] isNew = offer.offer(thread, batch);
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
    } finally {
      pool.shutdownNow();
    }
    return wins;
  }
}
