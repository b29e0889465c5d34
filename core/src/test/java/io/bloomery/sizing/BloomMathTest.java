package io.bloomery.sizing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import org.assertj.core.data.Percentage;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Pins the sizing formulas. Expected values were computed independently with 50-digit arithmetic
 * (Python mpmath, decimal): m = ceil(-n ln p / ln2^2), k = max(1, round(m/n ln2)); none of the unrounded m lies
 * within 0.05 of an integer, so the pins test the formula, not floating-point luck.
 */
class BloomMathTest {

  @ParameterizedTest(name = "n={0} p={1}")
  @CsvSource({
    // n,           p,     m,             k,  FPR(m, k, n)            , largest n' with round(m/n' ln2) >= k
    "1,             0.01,  10,            7,  0.008193722065862417,   1",
    "1000,          0.01,  9586,          7,  0.010034531962677978,   1022",
    "1000000,       0.01,  9585059,       7,  0.010039214559253861,   1022131",
    "1000000,       0.001, 14377588,      10, 0.0010000247179482117,  1049029",
    "10000000,      0.01,  95850584,      7,  0.010039217545752639,   10221317",
    "10000000000,   0.01,  95850583774,   7,  0.010039217658244112,   10221317215",
    "10000000000,   0.001, 143775875661,  10, 0.0010000249268603976,  10490299247",
    "10000000000,   1e-9,  431327626982,  30, 1.0000747824934036e-09, 10134695882",
    "1,             1e-9,  44,            30, 6.603970116801818e-10,  1",
    "1000000,       1e-9,  43132763,      30, 1.000074637176871e-09,  1013469",
  })
  void pinnedSizes(long n, double p, long m, int k, double fpr, long capacityForHashes) {
    assertThat(BloomMath.optimalBits(n, p)).isEqualTo(m);
    assertThat(BloomMath.optimalHashes(n, m)).isEqualTo(k);
    assertThat(BloomMath.falsePositiveRate(m, k, n)).isCloseTo(fpr, Percentage.withPercentage(1e-10));
    assertThat(BloomMath.capacityForHashes(m, k)).isEqualTo(capacityForHashes);
  }

  @Test
  void mIsRoundedUpAndKToNearest() {
    // 1000 items at 1%: -1000 ln 0.01 / ln2^2 = 9585.058... -> 9586 (up, although .058 is near below).
    assertThat(BloomMath.optimalBits(1000, 0.01)).isEqualTo(9586);
    // m/n ln2: 9586/1000 * 0.693 = 6.644 -> 7; 1442/1000 * ln2 = 0.9995 -> 1; 720/1000 ln2 = 0.499 -> 1 (at least 1).
    assertThat(BloomMath.optimalHashes(1000, 9586)).isEqualTo(7);
    assertThat(BloomMath.optimalHashes(1000, 1442)).isEqualTo(1);
    assertThat(BloomMath.optimalHashes(1000, 720)).isEqualTo(1);
    assertThat(BloomMath.optimalHashes(1000, 2886)).isEqualTo(2); // 2.0004
    assertThat(BloomMath.optimalHashes(1, Long.MAX_VALUE)).isEqualTo(Integer.MAX_VALUE);
  }

  @Test
  void bitsPerKeyAtOnePercentIs9Point585() {
    assertThat(BloomMath.bitsPerKey(0.01)).isCloseTo(9.585058377367439, within(1e-12));
    assertThat(BloomMath.bitsPerKey(1e-9)).isCloseTo(43.13276269815348, within(1e-11));
    assertThat(BloomMath.bitsPerKey(0.5)).isCloseTo(1 / Math.log(2), within(1e-12));
  }

  @Test
  void falsePositiveRateEdges() {
    assertThat(BloomMath.falsePositiveRate(1000, 7, 0)).isZero();
    assertThat(BloomMath.falsePositiveRate(1, 1, Long.MAX_VALUE)).isEqualTo(1.0);
    // The index16 vector file's model estimate.
    assertThat(BloomMath.falsePositiveRate(10_000, 7, 1_000)).isEqualTo(0.008193722065862417);
    // Tiny rates keep precision (expm1): k=1, n=1, m=1e12 -> 1e-12.
    assertThat(BloomMath.falsePositiveRate(1_000_000_000_000L, 1, 1)).isCloseTo(1e-12, Percentage.withPercentage(1e-6));
  }

  @Test
  void capacityIsTheLargestNWithinTheRate() {
    long m = 9_585_059;
    int k = 7;
    long capacity = BloomMath.capacity(m, k, 0.01);
    assertThat(capacity).isEqualTo(999_176);
    assertThat(BloomMath.falsePositiveRate(m, k, capacity)).isLessThanOrEqualTo(0.01);
    assertThat(BloomMath.falsePositiveRate(m, k, capacity + 1)).isGreaterThan(0.01);
    // Huge: 10^10 at 1e-9 -> the planned filter holds 9,999,963,990 items at <= 1e-9 (k rounded to 30).
    long hugeCapacity = BloomMath.capacity(431_327_626_982L, 30, 1e-9);
    assertThat(hugeCapacity).isEqualTo(9_999_963_990L);
    assertThat(BloomMath.falsePositiveRate(431_327_626_982L, 30, hugeCapacity)).isLessThanOrEqualTo(1e-9);
    assertThat(BloomMath.falsePositiveRate(431_327_626_982L, 30, hugeCapacity + 1)).isGreaterThan(1e-9);
    // A filter too small for even one item at this rate holds zero.
    assertThat(BloomMath.capacity(8, 1, 0.01)).isZero();
  }

  @Test
  void planForTenMillionUrlsAtOnePercent() {
    BloomSizing plan = BloomMath.sizing(10_000_000, 0.01);
    assertThat(plan.expectedInsertions()).isEqualTo(10_000_000);
    assertThat(plan.fpp()).isEqualTo(0.01);
    assertThat(plan.bits()).isEqualTo(95_850_584);
    assertThat(plan.hashes()).isEqualTo(7);
    assertThat(plan.bitsPerKey()).isCloseTo(9.5850584, within(1e-12));
    assertThat(plan.bitmapBytes()).isEqualTo(11_981_323); // ~12 MB of bitmap, as docs/ARCHITECTURE.md, contract 6 says
    assertThat(plan.overfill()).extracting(BloomSizing.Overfill::percentOfExpected).containsExactly(50, 80, 100, 150, 200);
    assertThat(plan.overfill()).extracting(BloomSizing.Overfill::insertions)
        .containsExactly(5_000_000L, 8_000_000L, 10_000_000L, 15_000_000L, 20_000_000L);
    double[] expected = {2.506929055997732E-4, 0.0033204806854881053, 0.01003921754575264, 0.05788294227787601, 0.1574529334903834};
    for (int i = 0; i < expected.length; i++) {
      assertThat(plan.overfill().get(i).falsePositiveRate()).isCloseTo(expected[i], Percentage.withPercentage(1e-9));
    }
  }

  @Test
  void planForTenBillionAtOnePerBillionDoesNotOverflow() {
    BloomSizing plan = BloomMath.sizing(10_000_000_000L, 1e-9);
    assertThat(plan.bits()).isEqualTo(431_327_626_982L);
    assertThat(plan.hashes()).isEqualTo(30);
    assertThat(plan.bitmapBytes()).isEqualTo(53_915_953_373L);
    assertThat(plan.overfill().get(4).insertions()).isEqualTo(20_000_000_000L);
    assertThat(plan.overfill().get(2).falsePositiveRate()).isCloseTo(1.0000747824934036e-09, Percentage.withPercentage(1e-9));
  }

  @Test
  void invalidInputsAreRefusedWithClearMessages() {
    for (double p : new double[] {0, 1, -0.1, 1.5, Double.NaN, Double.POSITIVE_INFINITY}) {
      assertThatThrownBy(() -> BloomMath.optimalBits(100, p))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("false-positive rate p must be in (0, 1)");
      assertThatThrownBy(() -> BloomMath.sizing(100, p)).isInstanceOf(IllegalArgumentException.class);
      assertThatThrownBy(() -> BloomMath.bitsPerKey(p)).isInstanceOf(IllegalArgumentException.class);
      assertThatThrownBy(() -> BloomMath.capacity(1000, 3, p)).isInstanceOf(IllegalArgumentException.class);
    }
    assertThatThrownBy(() -> BloomMath.optimalBits(0, 0.01)).hasMessageContaining("expected insertions n must be > 0, was 0");
    assertThatThrownBy(() -> BloomMath.optimalBits(-5, 0.01)).hasMessageContaining("was -5");
    assertThatThrownBy(() -> BloomMath.optimalHashes(10, 0)).hasMessageContaining("bit count m must be > 0");
    assertThatThrownBy(() -> BloomMath.optimalHashes(0, 10)).hasMessageContaining("expected insertions n");
    assertThatThrownBy(() -> BloomMath.falsePositiveRate(0, 3, 10)).hasMessageContaining("bit count m");
    assertThatThrownBy(() -> BloomMath.falsePositiveRate(10, 0, 10)).hasMessageContaining("hash count k must be > 0");
    assertThatThrownBy(() -> BloomMath.falsePositiveRate(10, 3, -1)).hasMessageContaining("insertions n must be >= 0");
    assertThatThrownBy(() -> BloomMath.capacity(-1, 3, 0.01)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> BloomMath.capacityForHashes(100, -1)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> BloomMath.optimalBits(Long.MAX_VALUE, 1e-9))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("beyond 2^63");
  }
}
