package io.bloomery.filter;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomery.hash.ProtocolId;
import io.bloomery.hash.Protocols;
import io.bloomery.sizing.BloomMath;
import io.bloomery.testkit.FprAssert;
import io.bloomery.testkit.Keys;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

/**
 * Statistical checks with fixed seeds: the realised false-positive count on known non-members lies
 * in the 99.9% binomial interval of the model (FprAssert), and concurrency loses nothing.
 */
class BloomFilterStatisticsTest {

  private static final int NON_MEMBER_QUERIES = 1_000_000;

  @ParameterizedTest(name = "n={0} p={1}")
  @CsvSource({"10000, 0.01", "10000, 0.001", "100000, 0.01", "100000, 0.001"})
  void realisedFalsePositiveRateMatchesTheModel(long n, double p) {
    BloomFilter filter = BloomFilter.create(n, p);
    long keySeed = 1000 + n;
    for (long i = 0; i < n; i++) {
      filter.add(Keys.urlBytes(keySeed, i));
    }
    long falsePositives = 0;
    for (long i = n; i < n + NON_MEMBER_QUERIES; i++) {
      if (filter.mightContain(Keys.urlBytes(keySeed, i))) {
        falsePositives++;
      }
    }
    double model = BloomMath.falsePositiveRate(filter.bitSize(), filter.hashCount(), n);
    String what = String.format(java.util.Locale.ROOT, "xxh3-edh-v1 n=%d m=%d k=%d", n, filter.bitSize(), filter.hashCount());
    // Against the (m, k, n) model, and against this filter's own fill (X/m)^k, which is the exact
    // per-query probability for uniform probes into this particular bit array.
    System.out.printf(java.util.Locale.ROOT, "%s queries=%d false_positives=%d realised=%.6f model=%.6f fill^k=%.6f%n",
        what, NON_MEMBER_QUERIES, falsePositives, (double) falsePositives / NON_MEMBER_QUERIES, model, filter.estimatedFpp());
    FprAssert.assertWithinModel(what + " vs (1-e^(-kn/m))^k", falsePositives, NON_MEMBER_QUERIES, model);
    FprAssert.assertWithinModel(what + " vs fill^k", falsePositives, NON_MEMBER_QUERIES, filter.estimatedFpp());
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource({"GUAVA_MURMUR128_MITZ64, 1000000", "SHA256_DOC_V1, 100000", "SHA256_INDEX8, 100000", "SHA256_INDEX16, 100000"})
  void otherProtocolsAlsoMeetTheModel(ProtocolId protocol, int queries) {
    long n = 5_000;
    long m = BloomMath.optimalBits(n, 0.01) / 64 * 64 + 64;
    int k = BloomMath.optimalHashes(n, m);
    BloomFilter filter = BloomFilter.create(Protocols.of(protocol), new byte[0], m, k);
    for (long i = 0; i < n; i++) {
      filter.add(Keys.urlBytes(77, i));
    }
    long falsePositives = 0;
    for (long i = n; i < n + queries; i++) {
      if (filter.mightContain(Keys.urlBytes(77, i))) {
        falsePositives++;
      }
    }
    System.out.printf(java.util.Locale.ROOT, "%s n=%d m=%d k=%d queries=%d false_positives=%d realised=%.6f model=%.6f%n",
        protocol, n, m, k, queries, falsePositives, (double) falsePositives / queries, BloomMath.falsePositiveRate(m, k, n));
    FprAssert.assertWithinModel(protocol + " m=" + m + " k=" + k, falsePositives, queries, BloomMath.falsePositiveRate(m, k, n));
  }

  @Test
  void fourThreadsAddingDisjointSetsLoseNothingAndCountConsistently() throws Exception {
    BloomFilter filter = BloomFilter.create(200_000, 0.01);
    int threads = 4;
    int perThread = 50_000;
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    List<Future<Long>> changed = new ArrayList<>();
    try {
      for (int t = 0; t < threads; t++) {
        long from = (long) t * perThread;
        changed.add(pool.submit(() -> {
          long count = 0;
          for (long i = from; i < from + perThread; i++) {
            if (filter.add(Keys.urlBytes(99, i))) {
              count++;
            }
          }
          return count;
        }));
      }
      long totalChanged = 0;
      for (Future<Long> future : changed) {
        totalChanged += future.get(120, TimeUnit.SECONDS);
      }
      assertThat(filter.insertedCount()).isEqualTo(totalChanged);
      assertThat(totalChanged).isLessThanOrEqualTo((long) threads * perThread);
      // Only items whose bits were all already set (false positives at insert time) do not count.
      assertThat(totalChanged).isGreaterThan((long) threads * perThread * 99 / 100);
    } finally {
      pool.shutdownNow();
    }
    for (long i = 0; i < (long) threads * perThread; i++) {
      assertThat(filter.mightContain(Keys.urlBytes(99, i))).isTrue();
    }
    long set = 0;
    for (long word : BloomFilterTest.wordsOf(filter)) {
      set += Long.bitCount(word);
    }
    assertThat(filter.bitCount()).as("every flipped bit counted exactly once").isEqualTo(set);
    // Sequential build of the same items gives the same bits: concurrency lost no update.
    BloomFilter sequential = BloomFilter.create(200_000, 0.01);
    for (long i = 0; i < (long) threads * perThread; i++) {
      sequential.add(Keys.urlBytes(99, i));
    }
    assertThat(BloomFilterTest.wordsOf(filter)).isEqualTo(BloomFilterTest.wordsOf(sequential));
  }

  @Test
  void singleWriterFilterMatchesTheConcurrentOneWhileReadersQuery() throws Exception {
    BloomFilter concurrent = BloomFilter.create(io.bloomery.hash.Protocols.defaultProtocol(), new byte[0], 500_000, 7);
    BloomFilter single = BloomFilter.createSingleWriter(io.bloomery.hash.Protocols.defaultProtocol(), new byte[0], 500_000, 7);
    assertThat(single.isSingleWriter()).isTrue();
    assertThat(concurrent.isSingleWriter()).isFalse();
    int n = 50_000;
    java.util.concurrent.atomic.AtomicLong published = new java.util.concurrent.atomic.AtomicLong();
    ExecutorService readers = Executors.newFixedThreadPool(2);
    List<Future<Long>> checks = new ArrayList<>();
    try {
      for (int r = 0; r < 2; r++) {
        checks.add(readers.submit(() -> {
          long checked = 0;
          long upTo;
          do {
            upTo = published.get(); // a volatile read: every add before the matching write is visible
            for (long i = Math.max(0, upTo - 200); i < upTo; i++) {
              if (!single.mightContain(Keys.urlBytes(5, i))) {
                throw new AssertionError("false negative for published item " + i);
              }
              checked++;
            }
          } while (upTo < n);
          return checked;
        }));
      }
      for (long i = 0; i < n; i++) {
        byte[] key = Keys.urlBytes(5, i);
        assertThat(single.add(key)).isEqualTo(concurrent.add(key));
        published.set(i + 1);
      }
      for (Future<Long> check : checks) {
        assertThat(check.get(120, TimeUnit.SECONDS)).isPositive();
      }
    } finally {
      readers.shutdownNow();
    }
    assertThat(BloomFilterTest.wordsOf(single)).isEqualTo(BloomFilterTest.wordsOf(concurrent));
    assertThat(single.bitCount()).isEqualTo(concurrent.bitCount());
    assertThat(single.insertedCount()).isEqualTo(concurrent.insertedCount());
    BloomFilter copy = single.copy();
    assertThat(copy.isSingleWriter()).isFalse();
    assertThat(copy.insertedCount()).isEqualTo(single.insertedCount());
    BloomFilter other = BloomFilter.create(io.bloomery.hash.Protocols.defaultProtocol(), new byte[0], 500_000, 7);
    other.add("merged in");
    single.mergeFrom(other);
    assertThat(single.mightContain("merged in")).isTrue();
    assertThat(single.insertedCount()).isEqualTo(concurrent.insertedCount() + 1);
  }
}
