package io.bloomery.blocked;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomery.filter.FilterKind;
import io.bloomery.filter.IncompatibleFilterException;
import io.bloomery.format.FilterFormat;
import io.bloomery.hash.ProtocolId;
import io.bloomery.internal.Items;
import io.bloomery.testkit.FprAssert;
import io.bloomery.testkit.Internals;
import io.bloomery.testkit.Keys;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The scaling blocked chain: RedisBloom's growth rules, its add semantics, its error bound, merge and limits. */
class ScalableBlockedBloomFilterTest {
  private static final byte[] SEED = "chain".getBytes(StandardCharsets.UTF_8);

  private static byte[] item(String prefix, long i) {
    return (prefix + i).getBytes(StandardCharsets.UTF_8);
  }

  /** Adds distinct items until the chain has {@code layers} layers; returns the items whose add returned true. */
  private static List<byte[]> growTo(ScalableBlockedBloomFilter chain, int layers, String prefix) {
    List<byte[]> counted = new ArrayList<>();
    for (long i = 0; chain.filterCount() < layers; i++) {
      byte[] item = item(prefix, i);
      if (chain.add(item)) {
        counted.add(item);
      }
    }
    return counted;
  }

  @Test
  void layersGrowByTheExpansionAtHalfTheErrorEachSizedByTheBlockedModel() {
    ScalableBlockedBloomFilter chain = ScalableBlockedBloomFilter.create(SEED, 100, 0.01, 3);
    growTo(chain, 5, "g");
    List<ScalableBlockedBloomFilter.Layer> layers = chain.layers();
    assertThat(layers).hasSize(5);
    long capacity = 100;
    double error = 0.005;
    for (int i = 0; i < layers.size(); i++) {
      ScalableBlockedBloomFilter.Layer layer = layers.get(i);
      assertThat(layer.capacity()).as("layer %d capacity", i).isEqualTo(capacity);
      assertThat(layer.errorRate()).as("layer %d error", i).isEqualTo(error);
      long blocks = BlockedBloomMath.blockedBlocks(capacity, error);
      assertThat(layer.blocks()).as("layer %d blocks", i).isEqualTo(blocks);
      assertThat(layer.hashes()).as("layer %d k", i).isEqualTo(BlockedBloomMath.optimalBlockedHashes(capacity, blocks));
      assertThat(BlockedBloomMath.blockedFalsePositiveRate(capacity, blocks, 512, layer.hashes()))
          .as("layer %d meets its error at capacity", i).isLessThanOrEqualTo(error);
      if (i < layers.size() - 1) {
        assertThat(layer.size()).as("an older layer took exactly its capacity").isEqualTo(capacity);
      } else {
        assertThat(layer.size()).as("the newest layer took the one item that made it").isEqualTo(1);
      }
      capacity *= 3;
      error *= 0.5;
    }
    assertThat(chain.capacity()).isEqualTo(100 + 300 + 900 + 2700 + 8100);
    assertThat(chain.insertedCount()).isEqualTo(100 + 300 + 900 + 2700 + 1);
    assertThat(chain.byteSize()).isEqualTo(layers.stream().mapToLong(ScalableBlockedBloomFilter.Layer::bytes).sum());
    assertThat(chain.kind()).isEqualTo(FilterKind.SCALABLE_BLOCKED_BLOOM);
    assertThat(chain.protocolId()).isEqualTo(ProtocolId.XXH3_BLOCKED_V1);
    assertThat(chain.expansion()).isEqualTo(3);
    assertThat(chain.errorRate()).isEqualTo(0.01);
  }

  @Test
  void anItemAlreadyReportedIsNotAddedNorCountedAndAnAddNeverForgets() {
    ScalableBlockedBloomFilter chain = ScalableBlockedBloomFilter.create(50, 0.01);
    List<byte[]> counted = growTo(chain, 4, "a");
    long count = chain.insertedCount();
    assertThat(count).isEqualTo(counted.size());
    for (byte[] member : counted) {
      assertThat(chain.mightContain(member)).isTrue();
      assertThat(chain.add(member)).as("a re-add answers false").isFalse();
    }
    assertThat(chain.insertedCount()).as("re-adds are not counted").isEqualTo(count);
    long layerSum = chain.layers().stream().mapToLong(ScalableBlockedBloomFilter.Layer::size).sum();
    assertThat(layerSum).isEqualTo(count);
  }

  /** Layer 0 holds exactly the bits a plain blocked filter of its geometry holds for the items counted into it. */
  @Test
  void eachLayerIsTheBlockedFilterOfItsOwnItems() {
    ScalableBlockedBloomFilter chain = ScalableBlockedBloomFilter.create(SEED, 200, 0.02, 2);
    ScalableBlockedBloomFilter.Layer first = chain.layers().get(0);
    BlockedBloomFilter plain = BlockedBloomFilter.create(SEED, first.blocks(), first.hashes());
    for (long i = 0; chain.filterCount() == 1; i++) {
      byte[] item = item("p", i);
      boolean wasNewest = chain.layers().get(0).size() < 200;
      if (chain.add(item) && wasNewest) {
        plain.add(item);
      }
    }
    BlockedBloomFilter layer0 = io.bloomery.internal.KindAccess.scalableBlocked(ScalableBlockedBloomFilter.class, BlockedBloomFilter.class).layers(chain).layers()[0];
    for (long j = 0; j < Internals.wordCount(plain); j++) {
      assertThat(Internals.word(layer0, j)).as("word %d", j).isEqualTo(Internals.word(plain, j));
    }
  }

  /** Known answer: fixed keys, parameters and seed give an exact false-positive count (catches silent drift). */
  @Test
  void knownAnswerFalsePositiveCount() {
    ScalableBlockedBloomFilter chain = ScalableBlockedBloomFilter.create(SEED, 1_000, 0.01, 2);
    for (byte[] key : Keys.urls(20261201L, 0, 20_000)) {
      chain.add(key);
    }
    int falsePositives = 0;
    for (byte[] probe : Keys.urls(20261201L, 1_000_000, 100_000)) {
      if (chain.mightContain(probe)) {
        falsePositives++;
      }
    }
    assertThat(chain.filterCount()).isEqualTo(5);
    assertThat(chain.insertedCount()).isEqualTo(KNOWN_INSERTED);
    assertThat(falsePositives).isEqualTo(KNOWN_FALSE_POSITIVES);
  }

  private static final long KNOWN_INSERTED = 19_841;
  private static final int KNOWN_FALSE_POSITIVES = 826;

  /**
   * Statistical: over a chain filled to the end of its fifth layer, the measured rate on 400,000 non-members lies in
   * the 99.9 % binomial interval of the per-layer blocked model combined over layers, which is below the requested
   * error rate.
   */
  @Test
  void measuredRateMatchesTheModelAndStaysBelowTheRequestedError() {
    double target = 0.02;
    ScalableBlockedBloomFilter chain = ScalableBlockedBloomFilter.create(2_000, target, 2);
    long capacity = 2_000 + 4_000 + 8_000 + 16_000 + 32_000;
    for (long i = 0; chain.insertedCount() < capacity; i++) {
      chain.add(i);
    }
    assertThat(chain.filterCount()).isEqualTo(5);
    double none = 1;
    for (ScalableBlockedBloomFilter.Layer layer : chain.layers()) {
      none *= 1 - BlockedBloomMath.blockedFalsePositiveRate(layer.size(), layer.blocks(), 512, layer.hashes());
    }
    double model = 1 - none;
    assertThat(model).isLessThan(target);
    int trials = 400_000;
    long falsePositives = 0;
    for (long i = 0; i < trials; i++) {
      if (chain.mightContain(-1 - i)) { // the members are 0, 1, 2, ...
        falsePositives++;
      }
    }
    FprAssert.assertWithinModel("scaling blocked chain, 5 full layers", falsePositives, trials, model);
    assertThat(chain.estimatedFpp()).isBetween(model * 0.8, model * 1.2);
  }

  @Test
  void textAndLongItemsAreTheirUtf8AndLittleEndianBytes() {
    ScalableBlockedBloomFilter chain = ScalableBlockedBloomFilter.create(20, 0.01);
    for (int i = 0; i < 100; i++) {
      chain.add("t" + i);
      chain.add((long) i);
    }
    assertThat(chain.filterCount()).isGreaterThan(1);
    for (int i = 0; i < 100; i++) {
      assertThat(chain.mightContain(item("t", i))).isTrue();
      assertThat(chain.mightContain(Items.littleEndian(i))).isTrue();
      byte[] padded = ("xx" + "t" + i + "yy").getBytes(StandardCharsets.UTF_8);
      assertThat(chain.mightContain(padded, 2, padded.length - 4)).isTrue();
    }
  }

  @Test
  void soleWriterAddBuildsTheSameChainAsAdd() {
    ScalableBlockedBloomFilter viaAdd = ScalableBlockedBloomFilter.create(SEED, 100, 0.01, 2);
    ScalableBlockedBloomFilter viaSoleWriter = ScalableBlockedBloomFilter.create(SEED, 100, 0.01, 2);
    for (int i = 0; i < 5_000; i++) {
      byte[] item = item("s", i % 4_000); // repeats answer false and are not counted
      assertThat(viaSoleWriter.addAsSoleWriter(item, 0, item.length)).as("item %d", i).isEqualTo(viaAdd.add(item));
    }
    assertThat(viaSoleWriter.layers()).isEqualTo(viaAdd.layers());
    assertThat(FilterFormat.toBytes(viaSoleWriter)).isEqualTo(FilterFormat.toBytes(viaAdd));
  }

  @Test
  void growthBytesSaysWhatTheNextNewItemAllocates() {
    ScalableBlockedBloomFilter chain = ScalableBlockedBloomFilter.create(100, 0.01);
    assertThat(chain.growthBytes()).isZero();
    for (long i = 0; chain.insertedCount() < 100; i++) {
      chain.add(item("b", i));
      if (chain.insertedCount() < 100) {
        assertThat(chain.growthBytes()).isZero();
      }
    }
    long next = chain.growthBytes();
    long expected = BlockedBloomMath.blockedBlocks(200, 0.0025) * 64;
    assertThat(next).isEqualTo(expected);
    long before = chain.byteSize();
    byte[] fresh = item("fresh", 0);
    assertThat(chain.mightContain(fresh)).isFalse();
    chain.add(fresh);
    assertThat(chain.filterCount()).isEqualTo(2);
    assertThat(chain.byteSize() - before).isEqualTo(next);
    assertThat(chain.growthBytes()).isZero();
  }

  @Test
  void nearCapacityAtEightyPercentOfTheSummedCapacities() {
    ScalableBlockedBloomFilter chain = ScalableBlockedBloomFilter.create(100, 0.01);
    for (long i = 0; chain.insertedCount() < 79; i++) {
      chain.add(i);
    }
    assertThat(chain.isNearCapacity()).isFalse();
    for (long i = 1_000; chain.insertedCount() < 80; i++) {
      chain.add(i);
    }
    assertThat(chain.isNearCapacity()).isTrue();
    for (long i = 2_000; chain.insertedCount() < 101; i++) {
      chain.add(i);
    }
    assertThat(chain.capacity()).isEqualTo(300);
    assertThat(chain.isNearCapacity()).isFalse();
  }

  @Test
  void mergeUnionsLayerByLayerAndSumsCounts() {
    ScalableBlockedBloomFilter left = ScalableBlockedBloomFilter.create(SEED, 100, 0.01, 2);
    ScalableBlockedBloomFilter right = ScalableBlockedBloomFilter.create(SEED, 100, 0.01, 2);
    List<byte[]> a = growTo(left, 3, "left");
    List<byte[]> b = growTo(right, 3, "right");
    assertThat(left.isCompatible(right)).isTrue();
    long sum = left.insertedCount() + right.insertedCount();
    left.mergeFrom(right);
    for (byte[] member : a) {
      assertThat(left.mightContain(member)).isTrue();
    }
    for (byte[] member : b) {
      assertThat(left.mightContain(member)).isTrue();
    }
    assertThat(left.insertedCount()).isEqualTo(sum);
    assertThat(left.layers().get(0).size()).isEqualTo(200);

    ScalableBlockedBloomFilter shorter = ScalableBlockedBloomFilter.create(SEED, 100, 0.01, 2);
    growTo(shorter, 2, "short");
    byte[] before = FilterFormat.toBytes(left);
    assertThat(left.isCompatible(shorter)).isFalse();
    assertThatThrownBy(() -> left.mergeFrom(shorter)).isInstanceOf(IncompatibleFilterException.class)
        .hasMessageContaining("number of layers");
    assertThat(FilterFormat.toBytes(left)).as("a refused merge changes nothing").isEqualTo(before);
    ScalableBlockedBloomFilter otherSeed = ScalableBlockedBloomFilter.create(new byte[] {1}, 100, 0.01, 2);
    assertThatThrownBy(() -> ScalableBlockedBloomFilter.create(SEED, 100, 0.01, 2).mergeFrom(otherSeed))
        .isInstanceOf(IncompatibleFilterException.class).hasMessageContaining("seed");
    assertThatThrownBy(() -> ScalableBlockedBloomFilter.create(SEED, 100, 0.01, 2)
        .mergeFrom(ScalableBlockedBloomFilter.create(SEED, 100, 0.01, 4)))
        .isInstanceOf(IncompatibleFilterException.class).hasMessageContaining("expansion");
  }

  @Test
  void expansionOneKeepsTheCapacityAndStillHalvesTheError() {
    ScalableBlockedBloomFilter chain = ScalableBlockedBloomFilter.create(64, 0.1, 1);
    growTo(chain, 4, "one");
    assertThat(chain.layers()).extracting(ScalableBlockedBloomFilter.Layer::capacity).containsExactly(64L, 64L, 64L, 64L);
    assertThat(chain.layers()).extracting(ScalableBlockedBloomFilter.Layer::errorRate)
        .containsExactly(0.05, 0.025, 0.0125, 0.00625);
  }

  @Test
  void parameterErrorsNameTheParameter() {
    assertThatThrownBy(() -> ScalableBlockedBloomFilter.create(0, 0.01)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("capacity");
    assertThatThrownBy(() -> ScalableBlockedBloomFilter.create(10, 1.5)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("errorRate");
    assertThatThrownBy(() -> ScalableBlockedBloomFilter.create(10, 0.01, 0))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("expansion");
    assertThatThrownBy(() -> ScalableBlockedBloomFilter.create(Long.MAX_VALUE / 2, 0.01))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("blocks");
    assertThatThrownBy(() -> ScalableBlockedBloomFilter.plannedFirstLayer(10, Double.NaN))
        .isInstanceOf(IllegalArgumentException.class);
    ScalableBlockedBloomFilter.Layer planned = ScalableBlockedBloomFilter.plannedFirstLayer(1_000, 0.01);
    assertThat(planned.blocks()).isEqualTo(ScalableBlockedBloomFilter.create(1_000, 0.01).layers().get(0).blocks());
    assertThat(planned.errorRate()).isEqualTo(0.005);
  }
}
