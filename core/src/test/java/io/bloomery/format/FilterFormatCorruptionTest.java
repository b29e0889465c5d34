package io.bloomery.format;

import static io.bloomery.format.FormatFixtures.filled;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import io.bloomery.filter.BloomFilter;
import io.bloomery.hash.ProtocolId;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The corruption sweep: every single-byte change, every truncation and every one-byte extension of
 * small valid files is rejected with {@link FilterFormatException} and nothing else, through both the
 * byte-array path (length known) and the stream path (length unknown).
 *
 * <p>Why every change is caught: header fields are validated (and their lengths cross-checked against
 * each other and the input), and CRC-32C detects every burst error of up to 32 bits, so any change
 * confined to one byte of the checked region changes the checksum.
 */
class FilterFormatCorruptionTest {

  static Stream<byte[]> files() {
    return Stream.of(
        // 100 bits: the last word has padding bits; a seed exercises the seed-length field.
        FilterFormat.toBytes(filled(ProtocolId.XXH3_EDH_V1, "s1".getBytes(StandardCharsets.UTF_8), 100, 3, 10)),
        // The sha256-doc-v1 fixture (m = 16, k = 3, seed "lab").
        FilterFormat.toBytes(filled(ProtocolId.SHA256_DOC_V1, "lab".getBytes(StandardCharsets.UTF_8), 16, 3, 4)),
        // Two whole words, protocol with strict parameter checks.
        FilterFormat.toBytes(filled(ProtocolId.GUAVA_MURMUR128_MITZ64, new byte[0], 128, 5, 8)));
  }

  @ParameterizedTest
  @MethodSource("files")
  void everySingleByteChangeIsRejected(byte[] valid) throws Exception {
    FilterFormat.readBloom(valid); // the unmodified file is valid
    int rejected = 0;
    for (int position = 0; position < valid.length; position++) {
      for (int pattern = 1; pattern <= 0xFF; pattern++) {
        byte[] corrupt = valid.clone();
        corrupt[position] ^= (byte) pattern;
        String what = "byte " + position + " XOR " + pattern;
        assertRejectedFromBytes(corrupt, what);
        if (Integer.bitCount(pattern) == 1 || pattern == 0xFF) {
          // The stream path decodes the same bytes; single-bit flips and 0xFF cover its checks.
          assertRejectedFromStream(corrupt, what);
        }
        rejected++;
      }
    }
    assertThat(rejected).isEqualTo(valid.length * 255);
  }

  @ParameterizedTest
  @MethodSource("files")
  void everyTruncationIsRejected(byte[] valid) {
    for (int length = 0; length < valid.length; length++) {
      byte[] truncated = Arrays.copyOf(valid, length);
      assertRejectedFromBytes(truncated, "truncated to " + length);
      assertRejectedFromStream(truncated, "truncated to " + length);
    }
  }

  @ParameterizedTest
  @MethodSource("files")
  void everyTrailingByteIsRejected(byte[] valid) throws Exception {
    for (int value = 0; value <= 0xFF; value++) {
      byte[] longer = Arrays.copyOf(valid, valid.length + 1);
      longer[valid.length] = (byte) value;
      assertRejectedFromBytes(longer, "trailing byte " + value);
    }
    // A stream may carry more after the envelope: read() stops at the checksum and leaves it there.
    ByteArrayInputStream in = new ByteArrayInputStream(Arrays.copyOf(valid, valid.length + 1));
    assertThat(FilterFormat.read(in)).isInstanceOf(BloomFilter.class);
    assertThat(in.available()).isEqualTo(1);
  }

  private static void assertRejectedFromBytes(byte[] bytes, String what) {
    try {
      Object filter = FilterFormat.fromBytes(bytes);
      fail("accepted (%s) as %s", what, filter);
    } catch (FilterFormatException expected) {
      if (expected.getMessage() == null || expected.getMessage().isBlank()) {
        fail("%s: rejected without a message", what);
      }
    } catch (Throwable other) {
      throw new AssertionError("fromBytes, " + what + ": expected FilterFormatException, found " + other, other);
    }
  }

  private static void assertRejectedFromStream(byte[] bytes, String what) {
    try {
      Object filter = FilterFormat.read(new ByteArrayInputStream(bytes), 1 << 20);
      fail("accepted (%s) from a stream as %s", what, filter);
    } catch (FilterFormatException expected) {
      if (expected.getMessage() == null || expected.getMessage().isBlank()) {
        fail("%s: rejected without a message", what);
      }
    } catch (Throwable other) {
      throw new AssertionError("read(InputStream), " + what + ": expected FilterFormatException, found " + other, other);
    }
  }
}
