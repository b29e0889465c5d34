package io.bloomery.blocked;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import io.bloomery.sizing.BloomMath;
import org.junit.jupiter.api.Test;

class BlockedBloomMathTest {

  @Test
  void blockedModelMatchesPublishedFigures() {
    // RocksDB util/bloom_impl.h: 10 bits/key, 6 probes, 512-bit blocks -> theory 0.9535%.
    long n = 10_000_000;
    long blocks = n * 10 / 512;
    assertThat(BlockedBloomMath.blockedFalsePositiveRate(n, blocks, 512, 6)).isCloseTo(0.009535, within(0.00005));
  }

  @Test
  void splitBlockModelMatchesParquetSpec() {
    // Parquet BloomFilter.md: 1024 blocks, 26,214 values (10 bits/value) -> ~1.26%.
    assertThat(BlockedBloomMath.splitBlockFalsePositiveRate(26_214, 1024, 8, 32)).isCloseTo(0.0126, within(0.0002));
    // and the spec's sizing table: 10.5 bits per insert for 1%.
    assertThat(BlockedBloomMath.splitBitsPerKey(0.01)).isCloseTo(10.5, within(0.05));
  }

  @Test
  void hugeBlocksApproachTheClassicModel() {
    // One block holding everything is a classic filter: the Poisson mixture collapses.
    long n = 1000;
    double classic = BloomMath.falsePositiveRate(1 << 14, 7, n);
    double blocked = BlockedBloomMath.blockedFalsePositiveRate(n * 64, 64, 1 << 14, 7);
    assertThat(blocked).isCloseTo(classic, within(classic * 0.05));
  }

  @Test
  void blockedNeedsAFewPercentMoreThanClassic() {
    assertThat(BloomMath.bitsPerKey(0.01)).isCloseTo(9.585, within(0.001));
    double blocked = BlockedBloomMath.blockedBitsPerKey(0.01);
    assertThat(blocked).isCloseTo(9.896, within(0.01));
    assertThat(blocked / BloomMath.bitsPerKey(0.01)).isBetween(1.02, 1.05);
    assertThat(BlockedBloomMath.blockedBitsPerKey(0.001) / BloomMath.bitsPerKey(0.001)).isBetween(1.06, 1.09);
  }

  @Test
  void sizingRoundsUpAndIsTight() {
    for (double p : new double[] {0.2, 0.05, 0.01, 0.001, 1e-5}) {
      for (long n : new long[] {1, 7, 1000, 123_457, 50_000_000L}) {
        long blocks = BlockedBloomMath.blockedBlocks(n, p);
        int k = BlockedBloomMath.optimalBlockedHashes(n, blocks);
        assertThat(BlockedBloomMath.blockedFalsePositiveRate(n, blocks, 512, k)).isLessThanOrEqualTo(p);
        if (blocks > 1) {
          long fewer = blocks - 1;
          int kFewer = BlockedBloomMath.optimalBlockedHashes(n, fewer);
          assertThat(BlockedBloomMath.blockedFalsePositiveRate(n, fewer, 512, kFewer)).isGreaterThan(p);
        }
        long split = BlockedBloomMath.splitBlocks(n, p);
        assertThat(BlockedBloomMath.splitBlockFalsePositiveRate(n, split, 8, 32)).isLessThanOrEqualTo(p);
        if (split > 1) {
          assertThat(BlockedBloomMath.splitBlockFalsePositiveRate(n, split - 1, 8, 32)).isGreaterThan(p);
        }
      }
    }
  }

  @Test
  void edges() {
    assertThat(BlockedBloomMath.blockedBlocks(0, 0.01)).isEqualTo(1);
    assertThat(BlockedBloomMath.blockedFalsePositiveRate(0, 10, 512, 7)).isZero();
    assertThat(BlockedBloomMath.blockedFalsePositiveRate(1_000_000_000L, 1, 512, 7)).isCloseTo(1.0, within(1e-9));
    assertThatThrownBy(() -> BlockedBloomMath.blockedBlocks(10, 0)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("fpp");
    assertThatThrownBy(() -> BlockedBloomMath.blockedBlocks(10, 1)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> BlockedBloomMath.blockedBlocks(-1, 0.1)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("n must");
    assertThatThrownBy(() -> BlockedBloomMath.blockedBlocks(Long.MAX_VALUE / 2, 0.01))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("at most");
    assertThat(BlockedBloomMath.logFactorial(300)).isCloseTo(1414.9058499, within(1e-6));
  }
}
