package io.bloomery.format;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomery.blocked.ScalableBlockedBloomFilter;
import io.bloomery.filter.FilterFullException;
import io.bloomery.filter.FilterKind;
import io.bloomery.testkit.FormatCorruptionSweep;
import java.io.ByteArrayInputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;

/**
 * The scaling blocked body ({@link ScalableBlockedBloomBody}) under valid and hostile bytes. The crafted files below
 * carry a recomputed CRC-32C, so each one reaches the field check it targets instead of failing on the checksum.
 */
class ScalableBlockedBodyTest {
  private static final byte[] SEED = {9, 9, 9};
  /** Envelope prefix (10) + seed (3) + body length (8). */
  private static final int BODY = 10 + SEED.length + 8;
  private static final int LAYERS_AT = BODY + 12;
  private static final int FIRST_LAYER = BODY + 16;

  /** A chain of three small layers (capacity 8, 16, 32) holding 30 items. */
  private static ScalableBlockedBloomFilter chain() {
    ScalableBlockedBloomFilter chain = ScalableBlockedBloomFilter.create(SEED, 8, 0.1, 2);
    for (int i = 0; chain.filterCount() < 3 || chain.insertedCount() < 30; i++) {
      chain.add(("c" + i).getBytes(StandardCharsets.UTF_8));
    }
    return chain;
  }

  private static byte[] file() {
    return FilterFormat.toBytes(chain());
  }

  private static ByteBuffer le(byte[] bytes) {
    return ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
  }

  /** Recomputes the trailing CRC-32C over everything before it. */
  private static byte[] withCrc(byte[] bytes) {
    CRC32C crc = new CRC32C();
    crc.update(bytes, 0, bytes.length - 4);
    le(bytes).putInt(bytes.length - 4, (int) crc.getValue());
    return bytes;
  }

  private static void assertRefused(byte[] crafted, String message) {
    assertThatThrownBy(() -> FilterFormat.fromBytes(withCrc(crafted))).isInstanceOf(FilterFormatException.class)
        .hasMessageContaining(message);
    assertThatThrownBy(() -> FilterFormat.read(new ByteArrayInputStream(crafted)))
        .isInstanceOf(FilterFormatException.class);
  }

  @Test
  void roundTripsEveryLayerCountAndAnswer() throws Exception {
    ScalableBlockedBloomFilter chain = chain();
    byte[] bytes = FilterFormat.toBytes(chain);
    ScalableBlockedBloomFilter back = FilterFormat.fromBytes(bytes, ScalableBlockedBloomFilter.class);
    assertThat(back.layers()).isEqualTo(chain.layers());
    assertThat(back.insertedCount()).isEqualTo(chain.insertedCount());
    assertThat(back.seed()).isEqualTo(SEED);
    assertThat(back.expansion()).isEqualTo(2);
    assertThat(back.errorRate()).isEqualTo(0.1);
    for (int i = 0; i < 2_000; i++) {
      byte[] probe = ("c" + i).getBytes(StandardCharsets.UTF_8);
      assertThat(back.mightContain(probe)).isEqualTo(chain.mightContain(probe));
    }
    assertThat(FilterFormat.toBytes(back)).isEqualTo(bytes);
    long blocks = chain.layers().stream().mapToLong(ScalableBlockedBloomFilter.Layer::blocks).sum();
    assertThat(bytes.length).isEqualTo(BODY + 16 + 28 * 3 + 64 * blocks + 4);
    FilterHeader header = FilterFormat.describe(bytes);
    assertThat(header.kind()).isEqualTo(FilterKind.SCALABLE_BLOCKED_BLOOM);
    assertThat(header.parameters()).containsEntry("layers", 3L).containsEntry("expansion", 2L)
        .containsEntry("blocks", blocks).containsEntry("firstCapacity", 8L)
        .containsEntry("inserted", chain.insertedCount());
    // the chain keeps growing after a read
    for (int i = 0; back.filterCount() < 4; i++) {
      back.add(("more" + i).getBytes(StandardCharsets.UTF_8));
    }
    assertThat(back.layers().get(3).capacity()).isEqualTo(64);
  }

  @Test
  void everySingleByteChangeTruncationAndExtensionIsRefused() {
    byte[] valid = file();
    assertThat(FormatCorruptionSweep.assertEveryCorruptionRejected(valid)).isEqualTo(valid.length * 255 + valid.length + 256);
  }

  @Test
  void absurdLayerCountsAreRefusedBeforeAllocating() {
    for (long n : new long[] {0, 1025, 1L << 31, 0xFFFF_FFFFL}) {
      byte[] crafted = file();
      le(crafted).putInt(LAYERS_AT, (int) n);
      assertRefused(crafted, "layer count");
    }
    byte[] oneMore = file(); // the payload's first bytes read as a fourth layer header
    le(oneMore).putInt(LAYERS_AT, 4);
    assertRefused(oneMore, "");
  }

  @Test
  void absurdLayerSizesAreRefusedBeforeAllocating() {
    byte[] huge = file();
    le(huge).putLong(FIRST_LAYER, io.bloomery.blocked.BlockedBloomFilter.MAX_BLOCKS);
    assertRefused(huge, "body length");
    byte[] u64 = file();
    le(u64).putLong(FIRST_LAYER, -1L);
    assertRefused(u64, "layer 0 blocks");
    byte[] zero = file();
    le(zero).putLong(FIRST_LAYER, 0);
    assertRefused(zero, "layer 0 blocks");
    byte[] k17 = file();
    le(k17).putInt(FIRST_LAYER + 8, 17);
    assertRefused(k17, "layer 0 hashes");
    byte[] count = file();
    le(count).putLong(FIRST_LAYER + 20, (1L << 62) + 1);
    assertRefused(count, "layer 0 item count");
    // the body length itself claims far more than the input holds
    byte[] longBody = file();
    le(longBody).putLong(BODY - 8, 1L << 40);
    assertThatThrownBy(() -> FilterFormat.fromBytes(longBody)).isInstanceOf(FilterFormatException.class);
    assertThatThrownBy(() -> FilterFormat.read(new ByteArrayInputStream(longBody), 1 << 20))
        .isInstanceOf(FilterFormatException.class);
  }

  @Test
  void aChainThatDoesNotFollowTheGrowthRulesIsRefused() {
    byte[] capacity = file();
    le(capacity).putLong(FIRST_LAYER + 28 + 12, 17); // layer 1 must hold 8 x 2 = 16
    assertRefused(capacity, "layer 1's capacity must be 16");
    byte[] zeroCapacity = file();
    le(zeroCapacity).putLong(FIRST_LAYER + 12, 0);
    assertRefused(zeroCapacity, "layer 0 capacity");
    byte[] expansion = file();
    le(expansion).putInt(BODY, 0);
    assertRefused(expansion, "expansion");
    byte[] expansionBig = file();
    le(expansionBig).putInt(BODY, 32769);
    assertRefused(expansionBig, "expansion");
    for (double rate : new double[] {0, 1, -0.5, Double.NaN, Double.POSITIVE_INFINITY}) {
      byte[] crafted = file();
      le(crafted).putLong(BODY + 4, Double.doubleToRawLongBits(rate));
      assertRefused(crafted, "error rate");
    }
    byte[] protocol = file();
    protocol[6] = 1; // xxh3-edh-v1
    assertRefused(protocol, "hash protocol");
  }

  /** A chain whose next layer cannot be sized refuses the add with FilterFullException and changes nothing. */
  @Test
  void aChainThatCannotGrowRefusesTheAddAndStaysAsItWas() throws Exception {
    ScalableBlockedBloomFilter one = ScalableBlockedBloomFilter.create(SEED, 8, 0.1, 2);
    byte[] crafted = FilterFormat.toBytes(one);
    le(crafted).putLong(FIRST_LAYER + 12, 1L << 62); // capacity 2^62: the next layer would hold 2^63
    le(crafted).putLong(FIRST_LAYER + 20, 1L << 62); // and it is full
    ScalableBlockedBloomFilter full = FilterFormat.fromBytes(withCrc(crafted), ScalableBlockedBloomFilter.class);
    assertThat(full.growthBytes()).isEqualTo(-1);
    byte[] before = FilterFormat.toBytes(full);
    byte[] fresh = "fresh".getBytes(StandardCharsets.UTF_8);
    assertThat(full.mightContain(fresh)).isFalse();
    assertThatThrownBy(() -> full.add(fresh)).isInstanceOf(FilterFullException.class)
        .hasMessageContaining("cannot grow");
    assertThat(FilterFormat.toBytes(full)).isEqualTo(before);
    assertThat(Arrays.equals(FilterFormat.toBytes(full), before)).isTrue();
  }
}
