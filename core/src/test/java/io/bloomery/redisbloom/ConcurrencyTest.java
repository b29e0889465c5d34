package io.bloomery.redisbloom;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomery.cuckoo.CuckooFilter;
import io.bloomery.filter.FilterFullException;
import io.bloomery.scalable.ScalableBloomFilter;
import io.bloomery.testkit.RedisItems;
import io.bloomery.testkit.Rejections;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * Thread-safety claims: lookups concurrent with adds, layer growth, deletes and compaction never miss an item whose
 * add completed before the lookup started (and was not deleted). No timing is asserted.
 */
class ConcurrencyTest {

  private static final int WRITERS = 2;
  private static final int READERS = 2;

  /**
   * The server's path: writers serialize on their own lock (as the server's key lock does) and call
   * {@code addAsSoleWriter}; lock-free readers on other threads never miss an item whose add was published.
   */
  @Test
  void soleWriterAddsUnderAnExternalLockAreSeenByLockFreeReaders() throws Exception {
    ScalableBloomFilter filter = ScalableBloomFilter.create(50, 0.01, 2);
    Object externalLock = new Object();
    assertReadersNeverMissCompletedAdds(filter, item -> {
      synchronized (externalLock) {
        filter.addAsSoleWriter(item, 0, item.length);
      }
    });
  }

  /** The sole-writer path answers, counts and grows exactly as {@code add}: same layers, same bits. */
  @Test
  void soleWriterAddBuildsTheSameFilterAsAdd() {
    ScalableBloomFilter viaAdd = ScalableBloomFilter.create(100, 0.01, 2);
    ScalableBloomFilter viaSoleWriter = ScalableBloomFilter.create(100, 0.01, 2);
    for (int i = 0; i < 5_000; i++) {
      byte[] item = RedisItems.of("item-" + (i % 4_000)); // repeats answer false and are not counted
      assertThat(viaSoleWriter.addAsSoleWriter(item, 0, item.length)).as("item %d", i).isEqualTo(viaAdd.add(item));
    }
    assertThat(viaSoleWriter.debug()).isEqualTo(viaAdd.debug());
    assertThat(viaSoleWriter.insertedCount()).isEqualTo(viaAdd.insertedCount());
    assertThat(viaSoleWriter.bitCount()).isEqualTo(viaAdd.bitCount());
    ScalableBloomFilter full = ScalableBloomFilter.createNonScaling(10, 0.01);
    for (int i = 0; full.insertedCount() < 10; i++) {
      byte[] item = RedisItems.of("n-" + i);
      full.addAsSoleWriter(item, 0, item.length);
    }
    byte[] more = RedisItems.of("one more");
    assertThat(Rejections.fullReason(() -> full.addAsSoleWriter(more, 0, more.length)))
        .isEqualTo(FilterFullException.Reason.AT_CAPACITY);
  }

  @Test
  void scalableBloomReadersNeverMissCompletedAddsWhileLayersGrow() throws Exception {
    ScalableBloomFilter filter = ScalableBloomFilter.create(50, 0.01, 2); // grows ~10 layers below
    assertReadersNeverMissCompletedAdds(filter, filter::add);
  }

  /** The generic check below, then the RedisBloom chain's own accounting: layers grew and their counts add up. */
  private static void assertReadersNeverMissCompletedAdds(ScalableBloomFilter filter,
      java.util.function.Consumer<byte[]> add) throws Exception {
    assertReadersNeverMissCompletedAdds((io.bloomery.filter.MembershipFilter) filter, add);
    assertThat(filter.filterCount()).isGreaterThan(5);
    assertThat(filter.insertedCount()).isLessThanOrEqualTo((long) WRITERS * PER_WRITER);
    long layerSum = filter.layers().stream().mapToLong(ScalableBloomFilter.Layer::size).sum();
    assertThat(layerSum).isEqualTo(filter.insertedCount());
  }

  /** The same for the scaling blocked chain, whose server path is the same sole-writer add. */
  @Test
  void scalingBlockedSoleWriterAddsAreSeenByLockFreeReadersWhileLayersGrow() throws Exception {
    io.bloomery.blocked.ScalableBlockedBloomFilter filter = io.bloomery.blocked.ScalableBlockedBloomFilter.create(50, 0.01);
    Object externalLock = new Object();
    assertReadersNeverMissCompletedAdds(filter, item -> {
      synchronized (externalLock) {
        filter.addAsSoleWriter(item, 0, item.length);
      }
    });
    assertThat(filter.filterCount()).isGreaterThan(5);
    long layerSum = filter.layers().stream().mapToLong(io.bloomery.blocked.ScalableBlockedBloomFilter.Layer::size).sum();
    assertThat(layerSum).isEqualTo(filter.insertedCount());
  }

  @Test
  void scalingBlockedReadersNeverMissCompletedAddsWhileLayersGrow() throws Exception {
    io.bloomery.blocked.ScalableBlockedBloomFilter filter = io.bloomery.blocked.ScalableBlockedBloomFilter.create(50, 0.01);
    assertReadersNeverMissCompletedAdds(filter, filter::add);
    assertThat(filter.filterCount()).isGreaterThan(5);
  }

  private static final int PER_WRITER = 20_000;

  /** WRITERS threads add through {@code add} while READERS threads check items whose add has returned. */
  private static void assertReadersNeverMissCompletedAdds(io.bloomery.filter.MembershipFilter filter,
      java.util.function.Consumer<byte[]> add) throws Exception {
    int perWriter = PER_WRITER;
    AtomicInteger[] published = new AtomicInteger[WRITERS];
    for (int w = 0; w < WRITERS; w++) {
      published[w] = new AtomicInteger();
    }
    AtomicBoolean done = new AtomicBoolean();
    AtomicLong misses = new AtomicLong();
    AtomicLong checks = new AtomicLong();
    ExecutorService pool = Executors.newFixedThreadPool(WRITERS + READERS);
    try {
      List<Future<?>> writers = new ArrayList<>();
      for (int w = 0; w < WRITERS; w++) {
        int writer = w;
        writers.add(pool.submit(() -> {
          for (int i = 0; i < perWriter; i++) {
            add.accept(RedisItems.of(writer + ":" + i));
            published[writer].set(i + 1);
          }
        }));
      }
      List<Future<?>> readers = new ArrayList<>();
      for (int r = 0; r < READERS; r++) {
        int seed = r;
        readers.add(pool.submit(() -> {
          java.util.Random random = new java.util.Random(seed);
          while (!done.get()) {
            int writer = random.nextInt(WRITERS);
            int visible = published[writer].get();
            if (visible > 0) {
              int i = random.nextInt(visible);
              checks.incrementAndGet();
              if (!filter.mightContain(RedisItems.of(writer + ":" + i))) {
                misses.incrementAndGet();
              }
            }
          }
        }));
      }
      for (Future<?> writer : writers) {
        writer.get(120, TimeUnit.SECONDS);
      }
      done.set(true);
      for (Future<?> reader : readers) {
        reader.get(120, TimeUnit.SECONDS);
      }
    } finally {
      pool.shutdownNow();
    }
    assertThat(misses.get()).as("false negatives in %d concurrent checks", checks.get()).isZero();
    for (int w = 0; w < WRITERS; w++) {
      for (int i = 0; i < perWriter; i++) {
        assertThat(filter.mightContain(RedisItems.of(w + ":" + i))).isTrue();
      }
    }
  }

  /**
   * The server's CF path: writers serialize on their own lock and call {@code addAsSoleWriter}, which fills free
   * slots with no lock; the filter kicks out and grows meanwhile, and lock-free readers never miss a published item.
   */
  @Test
  void cuckooSoleWriterAddsUnderAnExternalLockAreSeenByLockFreeReaders() throws Exception {
    CuckooFilter filter = CuckooFilter.create(256, 2, 50, 2);
    Object externalLock = new Object();
    assertReadersNeverMissCompletedAdds(filter, item -> {
      synchronized (externalLock) {
        filter.addAsSoleWriter(item, false);
      }
    });
    assertThat(filter.filterCount()).isGreaterThan(5);
    assertThat(filter.insertedCount()).isEqualTo((long) WRITERS * PER_WRITER);
  }

  @Test
  void cuckooReadersNeverMissLiveItemsDuringSoleWriterKickOutsDeletesAndCompaction() throws Exception {
    cuckooReadersNeverMissLiveItems(true);
  }

  @Test
  void cuckooReadersNeverMissLiveItemsDuringDeletesKickOutsAndCompaction() throws Exception {
    cuckooReadersNeverMissLiveItems(false);
  }

  /** Readers of stable items while one writer churns: adds (kick-outs), deletes and compactions. */
  private static void cuckooReadersNeverMissLiveItems(boolean soleWriter) throws Exception {
    CuckooFilter filter = CuckooFilter.create(256, 2, 50, 2);
    int stable = 3000;
    for (int i = 0; i < stable; i++) {
      filter.add(RedisItems.of("stable-" + i));
    }
    AtomicBoolean done = new AtomicBoolean();
    AtomicLong misses = new AtomicLong();
    AtomicLong checks = new AtomicLong();
    ExecutorService pool = Executors.newFixedThreadPool(1 + READERS);
    try {
      List<Future<?>> readers = new ArrayList<>();
      for (int r = 0; r < READERS; r++) {
        int seed = r;
        readers.add(pool.submit(() -> {
          java.util.Random random = new java.util.Random(seed);
          while (!done.get()) {
            byte[] item = RedisItems.of("stable-" + random.nextInt(stable));
            checks.incrementAndGet();
            if (!filter.mightContain(item) || filter.count(item) < 1) {
              misses.incrementAndGet();
            }
          }
        }));
      }
      Future<?> writer = pool.submit(() -> {
        for (int round = 0; round < 20; round++) {
          for (int i = 0; i < 1500; i++) {
            byte[] item = RedisItems.of("churn-" + round + "-" + i);
            if (soleWriter) {
              filter.addAsSoleWriter(item, false); // kick-outs move stable fingerprints
            } else {
              filter.add(item);
            }
          }
          for (int i = 0; i < 1500; i++) {
            filter.remove(RedisItems.of("churn-" + round + "-" + i)); // triggers auto-compaction
          }
          filter.compact();
        }
      });
      writer.get(300, TimeUnit.SECONDS);
      done.set(true);
      for (Future<?> reader : readers) {
        reader.get(120, TimeUnit.SECONDS);
      }
    } finally {
      pool.shutdownNow();
    }
    assertThat(misses.get()).as("false negatives in %d concurrent checks", checks.get()).isZero();
    assertThat(filter.insertedCount()).isEqualTo(stable);
    assertThat(filter.occupiedSlots()).isEqualTo(stable);
  }

  @Test
  void concurrentCuckooWritersKeepCountsExact() throws Exception {
    CuckooFilter filter = CuckooFilter.create(1024, 4, 100, 1);
    ExecutorService pool = Executors.newFixedThreadPool(WRITERS);
    try {
      List<Future<?>> futures = new ArrayList<>();
      for (int w = 0; w < WRITERS; w++) {
        int writer = w;
        futures.add(pool.submit(() -> {
          for (int i = 0; i < 5000; i++) {
            filter.add(RedisItems.of(writer + "/" + i));
          }
          for (int i = 0; i < 2500; i++) {
            filter.remove(RedisItems.of(writer + "/" + i));
          }
        }));
      }
      for (Future<?> future : futures) {
        future.get(120, TimeUnit.SECONDS);
      }
    } finally {
      pool.shutdownNow();
    }
    assertThat(filter.insertedCount()).isEqualTo(WRITERS * 2500L);
    assertThat(filter.occupiedSlots()).isEqualTo(WRITERS * 2500L);
    for (int w = 0; w < WRITERS; w++) {
      for (int i = 2500; i < 5000; i++) {
        assertThat(filter.mightContain(RedisItems.of(w + "/" + i))).isTrue();
      }
    }
  }
}
