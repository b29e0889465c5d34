package io.bloomery.format;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomery.blocked.SplitBlockBloomFilter;
import java.io.InputStream;
import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** Hostile input for the Thrift header reader: every failure is a FilterFormatException. */
class ParquetBloomFormatTest {

  private static byte[] golden() throws Exception {
    try (InputStream in = ParquetBloomFormatTest.class.getResourceAsStream("/golden/parquet/bloom_filter.xxhash.bin")) {
      return in.readAllBytes();
    }
  }

  private static void assertRejected(byte[] bytes, String message) {
    assertThatThrownBy(() -> ParquetBloomFormat.fromBytes(bytes))
        .isInstanceOf(FilterFormatException.class).hasMessageContaining(message);
  }

  @Test
  void everyTruncationIsRejected() throws Exception {
    byte[] bytes = golden();
    for (int length = 0; length < bytes.length; length++) {
      byte[] truncated = Arrays.copyOf(bytes, length);
      assertThatThrownBy(() -> ParquetBloomFormat.fromBytes(truncated)).isInstanceOf(FilterFormatException.class);
    }
  }

  @Test
  void trailingBytesAreRejected() throws Exception {
    assertRejected(Arrays.copyOf(golden(), 1041), "trailing");
  }

  @Test
  void unsupportedAlgorithmHashOrCompression() throws Exception {
    byte[] bytes = golden();
    byte[] murmur = bytes.clone();
    murmur[8] = 0x2c; // hash union member 2 instead of XXHASH
    assertRejected(murmur, "only XXHASH");
    byte[] compressed = bytes.clone();
    compressed[12] = 0x2c;
    assertRejected(compressed, "only UNCOMPRESSED");
  }

  @Test
  void absurdSizesAreRejectedBeforeAllocating() {
    assertRejected(withNumBytes(0), "positive multiple of 32");
    assertRejected(withNumBytes(33), "positive multiple of 32");
    assertRejected(withNumBytes(Integer.MAX_VALUE), "up to 134217728");
    assertRejected(withNumBytes(-32), "numBytes");
    // 64 MiB claimed, nothing there: refused from the header, before the 64 MiB bitset is allocated.
    assertRejected(withNumBytes(1 << 26), "header says 67108864 bytes, 0 remain");
  }

  private static byte[] withNumBytes(long numBytes) {
    byte[] header = ParquetBloomFormat.header(32);
    byte[] rest = Arrays.copyOfRange(header, 2, header.length); // after 15 40 (numBytes = 32)
    java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
    out.write(0x15);
    long zigzag = (numBytes << 1) ^ (numBytes >> 63);
    while ((zigzag & ~0x7FL) != 0) {
      out.write((int) ((zigzag & 0x7F) | 0x80));
      zigzag >>>= 7;
    }
    out.write((int) zigzag);
    out.writeBytes(rest);
    return out.toByteArray();
  }

  @Test
  void unknownFieldsAreSkippedAndNestingIsCapped() throws Exception {
    byte[] bitset = new byte[32];
    // field 5: binary "ab", field 6: list<i32> [1, 2], then the real fields 1..4 (long-form ids), stop.
    byte[] header = {
      0x58, 0x02, 'a', 'b', 0x19, 0x25, 0x02, 0x04,
      0x05, 0x02, 0x40, 0x0c, 0x04, 0x1c, 0x00, 0x00, 0x0c, 0x06, 0x1c, 0x00, 0x00, 0x0c, 0x08, 0x1c, 0x00, 0x00, 0x00
    };
    byte[] bytes = concat(header, bitset);
    assertThat(ParquetBloomFormat.fromBytes(bytes).byteSize()).isEqualTo(32);
    byte[] deep = new byte[40];
    Arrays.fill(deep, (byte) 0x1c); // struct in struct in struct ...
    deep[0] = 0x5c; // unknown field 5 of the header, skipped recursively
    assertRejected(deep, "nested deeper");
    assertRejected(new byte[] {0x58, (byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff, 0x0f}, "exceeds");
    assertRejected(new byte[] {0x5e, 0x00}, "unknown Thrift compact type 14");
    assertRejected(new byte[] {0x00}, "numBytes");
  }

  @Test
  void flippedBytesNeverEscapeAsAnotherException() throws Exception {
    byte[] bytes = golden();
    SplittableRandom random = new SplittableRandom(7);
    for (int trial = 0; trial < 2_000; trial++) {
      byte[] mutated = bytes.clone();
      int flips = 1 + random.nextInt(3);
      for (int f = 0; f < flips; f++) {
        int at = random.nextInt(20);
        mutated[at] ^= (byte) (1 << random.nextInt(8));
      }
      try {
        SplitBlockBloomFilter filter = ParquetBloomFormat.fromBytes(mutated);
        assertThat(filter.byteSize()).isPositive();
      } catch (FilterFormatException expected) {
        assertThat(expected.getMessage()).isNotBlank();
      }
    }
  }

  private static byte[] concat(byte[] a, byte[] b) {
    byte[] out = Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, out, a.length, b.length);
    return out;
  }
}
