package io.bloomery.cuckoo;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomery.format.RedisBloomDump;
import io.bloomery.scalable.ScalableBloomFilter;
import io.bloomery.testkit.FprAssert;
import io.bloomery.testkit.Keys;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Statistical false-positive rates against each kind's model, within the 99.9 % binomial interval
 * ({@link FprAssert}), fixed key seeds. Members and non-members are disjoint URL-like keys ({@link Keys}).
 */
class FalsePositiveRateTest {
  private static final long KEY_SEED = 4_2026_0622L;

  /**
   * Scalable Bloom: the compound model 1 − Π(1 − (ones_i / m_i)^k_i) over the layers, from each layer's actual fill
   * (a non-member is a false positive if any layer reports it), and the design bound: below the error rate.
   */
  @ParameterizedTest(name = "capacity {0}, error {1}, expansion {2}, n {3}")
  @CsvSource({"1000, 0.01, 2, 10000", "5000, 0.001, 4, 60000", "2000, 0.05, 1, 9000", "20000, 0.01, 0, 20000"})
  void scalableBloomMatchesTheCompoundLayerModel(long capacity, double error, int expansion, int n) {
    ScalableBloomFilter filter = ScalableBloomFilter.create(capacity, error, expansion);
    for (byte[] key : Keys.urls(KEY_SEED, 0, n)) {
      filter.add(key);
    }
    List<RedisBloomDump.Chunk> chunks = RedisBloomDump.scanDumpAll(filter);
    List<ScalableBloomFilter.Layer> layers = filter.layers();
    double notFalsePositive = 1;
    for (int i = 0; i < layers.size(); i++) {
      long ones = 0;
      for (byte b : chunks.get(1 + i).data()) {
        ones += Integer.bitCount(b & 0xFF);
      }
      notFalsePositive *= 1 - Math.pow((double) ones / layers.get(i).bits(), layers.get(i).hashes());
    }
    double model = 1 - notFalsePositive;
    int probes = 200_000;
    long falsePositives = 0;
    for (byte[] key : Keys.urls(KEY_SEED, n, probes)) {
      if (filter.mightContain(key)) {
        falsePositives++;
      }
    }
    FprAssert.assertWithinModel("scalable " + filter.debug().get(0) + " over " + layers.size() + " layers",
        falsePositives, probes, model);
    assertThat((double) falsePositives / probes).isLessThan(error);
  }

  /**
   * Cuckoo: the exact probability that a uniformly random 64-bit hash is reported present by these tables
   * (over every residue of h modulo the largest bucket count and every fingerprint, which are independent for a
   * uniform h since 255 is odd), so the test checks the hashing and lookup path rather than an approximation.
   */
  @ParameterizedTest(name = "capacity {0}, bucket size {1}, expansion {2}, n {3}")
  @CsvSource({"4096, 2, 2, 8000", "2048, 4, 1, 4000", "1024, 1, 1, 1500"})
  void cuckooMatchesTheExactTableModel(long capacity, int bucketSize, int expansion, int n) {
    CuckooFilter filter = CuckooFilter.create(capacity, bucketSize, 500, expansion);
    for (byte[] key : Keys.urls(KEY_SEED, 0, n)) {
      filter.add(key);
    }
    double model = filter.withTablesLocked(FalsePositiveRateTest::exactCuckooRate);
    int probes = 200_000;
    long falsePositives = 0;
    for (byte[] key : Keys.urls(KEY_SEED, n, probes)) {
      if (filter.mightContain(key)) {
        falsePositives++;
      }
    }
    FprAssert.assertWithinModel("cuckoo " + filter.debug(), falsePositives, probes, model);
    double roughBound = 2.0 * bucketSize / 255 * filter.filterCount();
    assertThat((double) falsePositives / probes).isLessThan(roughBound);
  }

  private static double exactCuckooRate(CuckooTable[] tables) {
    long largest = 0;
    for (CuckooTable table : tables) {
      largest = Math.max(largest, table.numBuckets);
    }
    long hits = 0;
    for (long residue = 0; residue < largest; residue++) {
      for (int fingerprint = 1; fingerprint <= 255; fingerprint++) {
        byte fp = (byte) fingerprint;
        long alternate = CuckooFilter.altHash(fp, residue);
        for (CuckooTable table : tables) {
          if (table.find(table.bucketStart(residue), fp) >= 0 || table.find(table.bucketStart(alternate), fp) >= 0) {
            hits++;
            break;
          }
        }
      }
    }
    return (double) hits / (largest * 255);
  }
}
