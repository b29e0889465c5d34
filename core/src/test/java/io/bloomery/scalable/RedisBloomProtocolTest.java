package io.bloomery.scalable;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomery.filter.BloomFilter;
import io.bloomery.format.RedisBloomDump;
import io.bloomery.hash.HashProtocol;
import io.bloomery.hash.ProtocolId;
import io.bloomery.hash.Protocols;
import io.bloomery.testkit.Internals;
import io.bloomery.testkit.RedisItems;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** {@code redisbloom-murmur64a} places exactly the bits of one RedisBloom layer. */
class RedisBloomProtocolTest {

  @ParameterizedTest(name = "capacity {0}, error {1}")
  @CsvSource({"10, 0.1", "100, 0.001", "1000, 0.01", "3, 0.25"})
  void aClassicFilterUnderTheProtocolEqualsANonScalingLayer(long capacity, double error) {
    ScalableBloomFilter layer = ScalableBloomFilter.createNonScaling(capacity, error);
    ScalableBloomFilter.Layer geometry = layer.layers().get(0);
    HashProtocol protocol = Protocols.byName("redisbloom-murmur64a");
    assertThat(protocol.id()).isEqualTo(ProtocolId.REDISBLOOM_MURMUR64A);
    BloomFilter classic = BloomFilter.create(protocol, new byte[0], geometry.bits(), geometry.hashes());
    for (int i = 0; i < capacity; i++) {
      assertThat(classic.add(RedisItems.number(i))).isEqualTo(layer.add(RedisItems.number(i)));
    }
    ByteBuffer bytes = ByteBuffer.wrap(RedisBloomDump.scanDump(layer, 1).data()).order(ByteOrder.LITTLE_ENDIAN);
    for (long j = 0; j < Internals.wordCount(classic); j++) {
      assertThat(Internals.word(classic, j)).as("word %d", j).isEqualTo(bytes.getLong());
    }
  }

  @ParameterizedTest
  @CsvSource({"item1, 64, 5"})
  void positionsFollowTheDocumentedFormula(String item, long bits, int hashes) {
    HashProtocol.Placement placement = Protocols.of(ProtocolId.REDISBLOOM_MURMUR64A).bind(bits, hashes, new byte[0]);
    long[] out = new long[hashes];
    byte[] bytes = RedisItems.of(item);
    placement.positions(bytes, 0, bytes.length, out);
    long a = 0xa053790e072b2e8bL; // RedisBloom's MurmurHash64A test value
    long b = 0x707e5d60182eb075L;
    for (int i = 0; i < hashes; i++) {
      assertThat(out[i]).isEqualTo(Long.remainderUnsigned(a + i * b, bits));
    }
    // the docs example layer (BF.RESERVE bf 0.1 10; BF.ADD bf item1) sets bits 0, 11, 31, 42, 53
    assertThat(out).containsExactlyInAnyOrder(0L, 11L, 31L, 42L, 53L);
  }

  @ParameterizedTest
  @CsvSource({"0, 1", "64, 0"})
  void parametersOutsideTheDefinitionAreRefused(long bits, int hashes) {
    assertThatThrownBy(() -> Protocols.of(ProtocolId.REDISBLOOM_MURMUR64A).checkParameters(bits, hashes, new byte[0]))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("redisbloom-murmur64a");
    assertThatThrownBy(() -> Protocols.of(ProtocolId.REDISBLOOM_MURMUR64A).checkParameters(64, 1, new byte[1]))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("seed");
  }
}
