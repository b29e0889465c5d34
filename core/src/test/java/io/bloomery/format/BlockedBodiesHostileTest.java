package io.bloomery.format;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomery.blocked.BlockedBloomFilter;
import io.bloomery.blocked.SplitBlockBloomFilter;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** The blocked and split-block bodies of the native format under hostile bytes: only FilterFormatException. */
class BlockedBodiesHostileTest {

  private static byte[] blocked() {
    BlockedBloomFilter filter = BlockedBloomFilter.create(new byte[] {7, 7}, 3, 5);
    for (int i = 0; i < 40; i++) {
      filter.add(("b" + i).getBytes(StandardCharsets.UTF_8));
    }
    return FilterFormat.toBytes(filter);
  }

  private static byte[] split() {
    SplitBlockBloomFilter filter = SplitBlockBloomFilter.ofBytes(96);
    for (int i = 0; i < 40; i++) {
      filter.add("s" + i);
    }
    return FilterFormat.toBytes(filter);
  }

  @Test
  void roundTripsAndDescribes() throws Exception {
    BlockedBloomFilter blocked = (BlockedBloomFilter) FilterFormat.fromBytes(blocked());
    assertThat(blocked.blockCount()).isEqualTo(3);
    assertThat(blocked.hashCount()).isEqualTo(5);
    assertThat(blocked.seed()).containsExactly(7, 7);
    assertThat(blocked.insertedCount()).isEqualTo(40);
    SplitBlockBloomFilter split = (SplitBlockBloomFilter) FilterFormat.fromBytes(split());
    assertThat(split.byteSize()).isEqualTo(96);
    assertThat(split.mightContain("s3")).isTrue();
  }

  @Test
  void everyTruncationAndTrailingByteIsRejected() {
    for (byte[] bytes : new byte[][] {blocked(), split()}) {
      for (int length = 0; length < bytes.length; length++) {
        byte[] truncated = Arrays.copyOf(bytes, length);
        assertThatThrownBy(() -> FilterFormat.fromBytes(truncated)).isInstanceOf(FilterFormatException.class);
      }
      assertThatThrownBy(() -> FilterFormat.fromBytes(Arrays.copyOf(bytes, bytes.length + 1)))
          .isInstanceOf(FilterFormatException.class);
    }
  }

  @Test
  void absurdFieldsAreRejectedBeforeAllocating() {
    byte[] bytes = blocked();
    int body = 10 + 2 + 8; // fixed prefix, 2-byte seed, body length
    byte[] hugeBlocks = bytes.clone();
    ByteBuffer.wrap(hugeBlocks).order(ByteOrder.LITTLE_ENDIAN).putLong(body, BlockedBloomFilter.MAX_BLOCKS);
    assertThatThrownBy(() -> FilterFormat.fromBytes(hugeBlocks)).isInstanceOf(FilterFormatException.class);
    byte[] u64Blocks = bytes.clone();
    ByteBuffer.wrap(u64Blocks).order(ByteOrder.LITTLE_ENDIAN).putLong(body, -1L);
    assertThatThrownBy(() -> FilterFormat.fromBytes(u64Blocks)).isInstanceOf(FilterFormatException.class)
        .hasMessageContaining("blocks");
    byte[] k17 = bytes.clone();
    ByteBuffer.wrap(k17).order(ByteOrder.LITTLE_ENDIAN).putInt(body + 8, 17);
    assertThatThrownBy(() -> FilterFormat.fromBytes(k17)).isInstanceOf(FilterFormatException.class);
    byte[] wrongProtocol = bytes.clone();
    wrongProtocol[6] = 1; // xxh3-edh-v1 with a blocked body
    assertThatThrownBy(() -> FilterFormat.fromBytes(wrongProtocol)).isInstanceOf(FilterFormatException.class);
  }

  @Test
  void flippedBytesNeverEscapeAsAnotherException() {
    SplittableRandom random = new SplittableRandom(11);
    for (byte[] bytes : new byte[][] {blocked(), split()}) {
      for (int trial = 0; trial < 1_000; trial++) {
        byte[] mutated = bytes.clone();
        mutated[random.nextInt(mutated.length)] ^= (byte) (1 << random.nextInt(8));
        try {
          FilterFormat.fromBytes(mutated);
        } catch (FilterFormatException expected) {
          assertThat(expected.getMessage()).isNotBlank();
        }
      }
    }
  }
}
