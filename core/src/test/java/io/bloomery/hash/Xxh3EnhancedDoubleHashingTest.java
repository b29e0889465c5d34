package io.bloomery.hash;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.dynatrace.hash4j.hashing.Hashing;
import io.bloomery.testkit.Keys;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Known answers for {@code xxh3-edh-v1} (docs/PROTOCOLS.md). The positions below were produced by
 * this implementation and checked independently against the closed form
 * {@code high64((h + i*stride(h) + G*(i^3-i)/6) * m)} evaluated with arbitrary-precision integers
 * (Python) from the listed XXH3 hashes; a change to any of them is a change of protocol.
 */
class Xxh3EnhancedDoubleHashingTest {

  private static final HashProtocol PROTOCOL = Protocols.defaultProtocol();

  private static long[] positions(String seed, String item, long m, int k) {
    byte[] bytes = item.getBytes(StandardCharsets.UTF_8);
    long[] out = new long[k];
    PROTOCOL.bind(m, k, seed.getBytes(StandardCharsets.UTF_8)).positions(bytes, 0, bytes.length, out);
    return out;
  }

  @Test
  void hash4jIsTheReferenceXxh3() {
    // XXH3_64bits("") from the xxHash reference implementation.
    assertThat(Hashing.xxh3_64().hashBytesToLong(new byte[0])).isEqualTo(0x2D06800538D394C2L);
    assertThat(Hashing.xxh3_64(0).hashBytesToLong(new byte[0])).isEqualTo(0x2D06800538D394C2L);
  }

  @Test
  void seedBecomesTheXxh3SeedThroughXxh3OfItsBytes() {
    assertThat(Xxh3EnhancedDoubleHashing.seedToXxh3Seed(new byte[0])).isZero();
    assertThat(Long.toUnsignedString(Xxh3EnhancedDoubleHashing.seedToXxh3Seed("seed".getBytes(StandardCharsets.UTF_8))))
        .isEqualTo("4016059303108400682");
  }

  @ParameterizedTest(name = "seed=''{0}'' item=''{1}''")
  @CsvSource(
      delimiter = '|',
      quoteCharacter = '"',
      value = {
        "\"\"|\"\"|3244421341483603138|175,447,338,464,444,897,439|24172822695,61568928730,46468025917,63812058880,61104018771",
        "\"\"|a|16629034431890738719|901,619,955,527,953,851,840|123895961283,85126880310,131299743961,72478589916,131044316271",
        "\"\"|hello|10760762337991515389|583,584,203,59,768,950,221|80173927083,80344832339,28018728747,8137560931,105643273514",
        "\"\"|https://example.org/|10244629399500999497|555,373,809,481,7,5,94|76328437026,51309934638,111233376873,66162801413,1040152880",
        "seed|\"\"|4539538005965174833|246,413,198,219,94,441,879|33822193786,56779341829,27239481024,30144555995,12997557894",
        "seed|hello|7478937252772002393|405,661,535,646,610,46,573|55722424781,90929932058,73640430486,88795864691,83899225823",
        "seed|doc-00|2999330687942451737|162,857,170,719,122,997,962|22346755027,117834780133,23386842919,98822794952,16767720442",
      })
  void knownAnswers(String seed, String item, String hash, String small, String large) {
    byte[] bytes = item.getBytes(StandardCharsets.UTF_8);
    DoubleHashingPlacement placement =
        (DoubleHashingPlacement) PROTOCOL.bind(1000, 7, seed.getBytes(StandardCharsets.UTF_8));
    assertThat(Long.toUnsignedString(placement.hash(bytes, 0, bytes.length))).isEqualTo(hash);
    assertThat(positions(seed, item, 1000, 7)).containsExactly(parse(small));
    long[] big = positions(seed, item, 1L << 37, 5);
    assertThat(big).containsExactly(parse(large));
  }

  @Test
  void positionsInA2To37BitFilterReachFarBeyond2To32() {
    long m = 1L << 37;
    long max = 0;
    long aboveHalf = 0;
    int items = 2_000;
    int k = 5;
    for (int i = 0; i < items; i++) {
      byte[] key = Keys.urlBytes(37, i);
      long[] out = new long[k];
      PROTOCOL.bind(m, k, new byte[0]).positions(key, 0, key.length, out);
      for (long position : out) {
        assertThat(position).isBetween(0L, m - 1);
        max = Math.max(max, position);
        if (position >= m / 2) {
          aboveHalf++;
        }
      }
    }
    assertThat(max).isGreaterThan(1L << 36);
    // Uniform positions: the upper half gets Binomial(10000, 1/2) of them; 99.9% interval ~ [4835, 5165].
    assertThat(aboveHalf).isBetween(4_835L, 5_165L);
  }

  @Test
  void reduceIsTheUnsignedHighProductForEveryQuadrant() {
    long[] xs = {0, 1, -1, Long.MIN_VALUE, Long.MAX_VALUE, 0x9E3779B97F4A7C15L, 12345};
    long[] ms = {1, 2, 1000, 1L << 37, Long.MAX_VALUE};
    for (long x : xs) {
      for (long m : ms) {
        java.math.BigInteger product =
            new java.math.BigInteger(Long.toUnsignedString(x)).multiply(java.math.BigInteger.valueOf(m)).shiftRight(64);
        assertThat(EnhancedDoubleHashing.reduce(x, m)).as("x=%s m=%s", Long.toUnsignedString(x), m).isEqualTo(product.longValueExact());
      }
    }
  }

  @Test
  void rejectsWhatTheFormatCannotHold() {
    assertThatThrownBy(() -> PROTOCOL.bind(0, 3, new byte[0])).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("m must be");
    assertThatThrownBy(() -> PROTOCOL.bind(100, 0, new byte[0])).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("k must be");
    assertThatThrownBy(() -> PROTOCOL.bind(100, 65536, new byte[0])).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> PROTOCOL.bind(100, 3, new byte[65536])).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("seed");
    assertThatThrownBy(() -> PROTOCOL.bind(100, 3, null)).isInstanceOf(NullPointerException.class).hasMessageContaining("seed");
  }

  private static long[] parse(String csv) {
    String[] parts = csv.split(",");
    long[] values = new long[parts.length];
    for (int i = 0; i < parts.length; i++) {
      values[i] = Long.parseLong(parts[i]);
    }
    return values;
  }
}
