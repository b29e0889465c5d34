package io.bloomery.aging;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomery.filter.IncompatibleFilterException;
import io.bloomery.hash.HashProtocol;
import io.bloomery.hash.ProtocolId;
import io.bloomery.hash.Protocols;
import io.bloomery.sizing.BloomMath;
import io.bloomery.testkit.FprAssert;
import io.bloomery.testkit.Keys;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

class AgePartitionedFilterTest {
  private static final HashProtocol XXH3 = Protocols.defaultProtocol();
  private static final byte[] SEED = "aging".getBytes(StandardCharsets.UTF_8);
  private static final long HOUR = 3_600_000L;
  private static final long START = 1_764_460_800_000L; // 2025-11-30T00:00Z, a multiple of 8 h

  private static byte[] key(long seed, long i) {
    return Keys.urlBytes(seed, i);
  }

  /**
   * A query hashes once for all generations: its answer is exactly the OR of the live generations'
   * own {@code mightContain}, for the array-free default protocol and for one that fills positions.
   */
  @ParameterizedTest
  @EnumSource(value = ProtocolId.class, names = {"XXH3_EDH_V1", "SHA256_INDEX8"})
  void answersAreTheOrOfTheLiveGenerations(ProtocolId id) {
    AtomicLong now = new AtomicLong(START);
    byte[] seed = id == ProtocolId.XXH3_EDH_V1 ? SEED : new byte[0];
    AgePartitionedFilter filter = AgePartitionedFilter.create(Protocols.of(id), seed, 2_048, 3, 3, HOUR, now::get);
    for (int g = 0; g < 3; g++) {
      for (int i = 0; i < 150; i++) {
        filter.add(key(12 + g, i));
      }
      now.addAndGet(HOUR);
    }
    now.addAndGet(-HOUR);
    AgePartitionedFilter.Snapshot snapshot = filter.snapshot();
    int maybe = 0;
    for (int probe = 0; probe < 3_000; probe++) {
      byte[] item = key(12 + probe % 4, probe / 4);
      boolean expected = false;
      for (int g = 0; g < snapshot.size(); g++) {
        expected |= snapshot.generation(g).mightContain(item);
      }
      assertThat(filter.mightContain(item)).as("probe %d", probe).isEqualTo(expected);
      maybe += expected ? 1 : 0;
    }
    assertThat(maybe).as("members of every generation were probed").isGreaterThanOrEqualTo(450);
  }

  @Test
  void itemsLiveForTheWholeWindowAndAreForgottenOneSpanLater() {
    AtomicLong now = new AtomicLong(START + 5 * HOUR); // 5 h into an 8 h span
    AgePartitionedFilter filter = AgePartitionedFilter.create(Duration.ofHours(24), 4, 10_000, 0.01, now::get);
    assertThat(filter.generationSpanMillis()).isEqualTo(8 * HOUR);
    assertThat(filter.window()).isEqualTo(Duration.ofHours(24));
    List<byte[]> batch = new ArrayList<>();
    for (int i = 0; i < 1_000; i++) {
      batch.add(key(1, i));
      filter.add(key(1, i));
    }
    long added = now.get();
    now.set(added + 24 * HOUR); // exactly the window later
    batch.forEach(item -> assertThat(filter.mightContain(item)).isTrue());
    now.set(START + 32 * HOUR - 1); // last millisecond of the item's generation's life
    batch.forEach(item -> assertThat(filter.mightContain(item)).isTrue());
    now.set(START + 32 * HOUR); // generation START/8h + 4: the item's generation is dropped
    assertThat(filter.snapshot().generation(0).bitCount()).isZero();
    for (byte[] item : batch) {
      assertThat(filter.mightContain(item)).as("forgotten: every generation is empty").isFalse();
    }
    now.set(added + 24 * HOUR + 8 * HOUR); // the contract's bound: window plus one span after the add
    for (byte[] item : batch) {
      assertThat(filter.mightContain(item)).as("forgotten by t + window + span").isFalse();
    }
  }

  /**
   * Model-based: a random timeline of adds and queries against an exact log of (item, time). Every
   * item added within the last window is reported present; every item whose last add is older than
   * window + span is reported present at most at the false-positive rate.
   */
  @ParameterizedTest
  @ValueSource(longs = {3L, 1234L, 20261130L})
  void noFalseNegativesWithinTheWindowOnARandomTimeline(long seed) {
    SplittableRandom random = new SplittableRandom(seed);
    AtomicLong now = new AtomicLong(START + random.nextLong(HOUR));
    AgePartitionedFilter filter = AgePartitionedFilter.create(Duration.ofMinutes(60), 5, 12_000, 0.01, now::get);
    long window = filter.window().toMillis();
    long span = filter.generationSpanMillis();
    long[] lastAdded = new long[20_000]; // ~9,000 adds per window: within the sized 12,000
    java.util.Arrays.fill(lastAdded, Long.MIN_VALUE);
    long forgottenProbes = 0;
    long forgottenPositives = 0;
    for (int op = 0; op < 40_000; op++) {
      now.addAndGet(random.nextLong(400)); // ~ 2.5 adds per second, monotone clock
      int item = random.nextInt(lastAdded.length);
      if (random.nextBoolean()) {
        filter.add(key(seed, item));
        lastAdded[item] = now.get();
      } else if (lastAdded[item] != Long.MIN_VALUE) {
        boolean answer = filter.mightContain(key(seed, item));
        if (now.get() - lastAdded[item] <= window) {
          assertThat(answer).as("op %d: item %d added %d ms ago", op, item, now.get() - lastAdded[item]).isTrue();
        } else if (now.get() - lastAdded[item] >= window + span) {
          forgottenProbes++;
          forgottenPositives += answer ? 1 : 0;
        }
      }
    }
    assertThat(forgottenProbes).isGreaterThan(500);
    long upper = FprAssert.interval(forgottenProbes, 0.01, 0.999)[1];
    assertThat(forgottenPositives).as("expired items answer only as false positives").isLessThanOrEqualTo(upper);
  }

  /**
   * Statistical FPR over the window: generations filled to different loads; the measured rate on
   * known non-members is within the 99.9% binomial interval of 1 − Π(1 − pᵢ).
   */
  @ParameterizedTest
  @CsvSource({"4, 3000, 0.02", "3, 5000, 0.01", "6, 2000, 0.05"})
  void falsePositiveRateMatchesTheProductModel(int generations, long perGeneration, double generationFpp) {
    AtomicLong now = new AtomicLong(START);
    long bits = BloomMath.optimalBits(perGeneration, generationFpp);
    int hashes = BloomMath.optimalHashes(perGeneration, bits);
    AgePartitionedFilter filter = AgePartitionedFilter.create(XXH3, SEED, bits, hashes, generations, HOUR, now::get);
    double[] rates = new double[generations];
    long next = 0;
    for (int g = 0; g < generations; g++) {
      long load = perGeneration * (g + 1) / generations; // uneven loads, the newest at design load
      for (long i = 0; i < load; i++) {
        filter.add(key(7, next++));
      }
      rates[g] = BloomMath.falsePositiveRate(bits, hashes, load);
      if (g < generations - 1) {
        now.addAndGet(HOUR);
      }
    }
    double model = AgePartitionedFilter.windowFpp(rates);
    long trials = 200_000;
    long falsePositives = 0;
    for (long i = 0; i < trials; i++) {
      falsePositives += filter.mightContain(key(8, i)) ? 1 : 0;
    }
    FprAssert.assertWithinModel("age-partitioned g=" + generations + " m=" + bits + " k=" + hashes, falsePositives, trials, model);
    assertThat(filter.estimatedFpp()).isBetween(model * 0.8, model * 1.25);
  }

  @Test
  void sizingMeetsTheTargetOverTheWindowAtSteadyRate() {
    for (int generations : new int[] {2, 3, 4, 8, 24}) {
      double target = 0.01;
      double perGeneration = AgePartitionedFilter.generationFpp(target, generations);
      assertThat(AgePartitionedFilter.windowFpp(repeat(perGeneration, generations))).isCloseTo(target, org.assertj.core.data.Offset.offset(1e-12));
      AgePartitionedFilter filter = AgePartitionedFilter.create(Duration.ofHours(24), generations, 1_000_000, target, () -> START);
      long load = (1_000_000 + generations - 2) / (generations - 1);
      double actual = BloomMath.falsePositiveRate(filter.bitsPerGeneration(), filter.hashCount(), load);
      assertThat(AgePartitionedFilter.windowFpp(repeat(actual, generations))).as("g = %d", generations).isLessThanOrEqualTo(target * 1.02);
      assertThat(filter.window()).isGreaterThanOrEqualTo(Duration.ofHours(24));
    }
  }

  private static double[] repeat(double value, int times) {
    double[] out = new double[times];
    java.util.Arrays.fill(out, value);
    return out;
  }

  @Test
  void aClockThatGoesBackwardsNeverResurrectsAGeneration() {
    AtomicLong now = new AtomicLong(START);
    AgePartitionedFilter filter = AgePartitionedFilter.create(XXH3, SEED, 4096, 4, 3, HOUR, now::get);
    filter.add("old");
    now.set(START + 10 * HOUR);
    assertThat(filter.mightContain("old")).isFalse();
    now.set(START); // back in time
    assertThat(filter.mightContain("old")).isFalse();
    filter.add("late"); // lands in the newest generation
    now.set(START + 12 * HOUR);
    assertThat(filter.mightContain("late")).isTrue();
    assertThat(filter.snapshot().newestGeneration()).isEqualTo((START + 12 * HOUR) / HOUR);
  }

  @Test
  void mergeIsTheUnionOfAlignedGenerations() {
    AtomicLong leftClock = new AtomicLong(START);
    AtomicLong rightClock = new AtomicLong(START + HOUR);
    AgePartitionedFilter left = AgePartitionedFilter.create(XXH3, SEED, 4096, 4, 3, HOUR, leftClock::get);
    AgePartitionedFilter right = AgePartitionedFilter.create(XXH3, SEED, 4096, 4, 3, HOUR, rightClock::get);
    left.add("left");
    right.add("right");
    left.mergeFrom(right); // right is one generation ahead: left advances to it
    assertThat(left.mightContain("left")).isTrue();
    assertThat(left.mightContain("right")).isTrue();
    assertThat(left.snapshot().newestGeneration()).isEqualTo(START / HOUR + 1);
    leftClock.set(START + 3 * HOUR); // "left" (generation START/h) expires, "right" (one later) lives
    assertThat(left.mightContain("left")).isFalse();
    assertThat(left.mightContain("right")).isTrue();

    assertThatThrownBy(() -> left.mergeFrom(AgePartitionedFilter.create(XXH3, SEED, 4096, 4, 3, 2 * HOUR, leftClock::get)))
        .isInstanceOf(IncompatibleFilterException.class)
        .hasMessageContaining("generation span");
    assertThatThrownBy(() -> left.mergeFrom(AgePartitionedFilter.create(XXH3, SEED, 4096, 4, 4, HOUR, leftClock::get)))
        .isInstanceOf(IncompatibleFilterException.class)
        .hasMessageContaining("generations");
    assertThatThrownBy(() -> left.mergeFrom(AgePartitionedFilter.create(XXH3, SEED, 4160, 4, 3, HOUR, leftClock::get)))
        .isInstanceOf(IncompatibleFilterException.class)
        .hasMessageContaining("bit count m");
  }

  @Test
  void parametersAreValidated() {
    assertThatThrownBy(() -> AgePartitionedFilter.create(XXH3, SEED, 4096, 4, 1, HOUR, () -> START)).hasMessageContaining("generations");
    assertThatThrownBy(() -> AgePartitionedFilter.create(XXH3, SEED, 4096, 4, 3, 0, () -> START)).hasMessageContaining("span");
    assertThatThrownBy(() -> AgePartitionedFilter.create(Duration.ZERO, 3, 10, 0.01, () -> START)).hasMessageContaining("window");
    assertThatThrownBy(() -> AgePartitionedFilter.generationFpp(1, 3)).hasMessageContaining("(0, 1)");
    assertThat(AgePartitionedFilter.spanFor(Duration.ofMillis(10), 4)).isEqualTo(4); // rounded up: 3 x 4 >= 10
  }

  /**
   * Concurrency: adders run while another thread moves the clock on (forcing rotations). Every item
   * whose add started within the window of the final time is present afterwards.
   */
  @Test
  void concurrentAddsDuringRotationsLoseNothingWithinTheWindow() throws Exception {
    AtomicLong now = new AtomicLong(START);
    AgePartitionedFilter filter = AgePartitionedFilter.create(XXH3, SEED, 1 << 16, 5, 4, 50, now::get);
    long window = filter.window().toMillis();
    ConcurrentLinkedQueue<long[]> log = new ConcurrentLinkedQueue<>();
    AtomicLong logged = new AtomicLong();
    int adders = 3;
    int perAdder = 20_000;
    // The clock is driven by the adds, not by wall time: tick j comes once j/(ticks+1) of all adds are logged, so
    // 400 ticks (8 generations of 50 ms) always fall among the adds, however fast or starved the threads are.
    int ticks = 400;
    ExecutorService pool = Executors.newFixedThreadPool(adders + 1);
    CountDownLatch start = new CountDownLatch(1);
    try {
      List<Future<?>> futures = new ArrayList<>();
      for (int t = 0; t < adders; t++) {
        long thread = t;
        futures.add(pool.submit(() -> {
          start.await();
          for (long i = 0; i < perAdder; i++) {
            long time = now.get();
            long id = thread * 1_000_000 + i;
            filter.add(key(11, id));
            log.add(new long[] {id, time});
            logged.incrementAndGet();
            boolean present = filter.mightContain(key(11, id));
            long after = now.get();
            if (!present && after - time <= window) {
              throw new AssertionError("item " + id + " added at " + time + " absent at " + after);
            }
          }
          return null;
        }));
      }
      Future<?> ticker = pool.submit(() -> {
        start.await();
        for (int tick = 1; tick <= ticks; tick++) {
          long due = (long) tick * adders * perAdder / (ticks + 1);
          while (logged.get() < due) {
            if (Thread.currentThread().isInterrupted()) {
              return null; // an adder failed and the pool is shutting down
            }
            java.util.concurrent.locks.LockSupport.parkNanos(20_000);
          }
          now.addAndGet(1);
        }
        return null;
      });
      start.countDown();
      for (Future<?> future : futures) {
        future.get(120, TimeUnit.SECONDS);
      }
      ticker.get(10, TimeUnit.SECONDS);
    } finally {
      pool.shutdownNow();
    }
    long end = now.get();
    long checked = 0;
    for (long[] entry : log) {
      if (end - entry[1] <= window) {
        assertThat(filter.mightContain(key(11, entry[0]))).as("item %d added at %d, now %d", entry[0], entry[1], end).isTrue();
        checked++;
      }
    }
    assertThat(log).hasSize(adders * perAdder);
    assertThat(end - START).as("the clock moved through several generations").isEqualTo(ticks).isGreaterThan(4 * 50);
    assertThat(checked).isPositive();
  }
}
