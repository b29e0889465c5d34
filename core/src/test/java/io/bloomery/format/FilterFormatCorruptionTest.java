package io.bloomery.format;

import static io.bloomery.format.FormatFixtures.filled;
import static org.assertj.core.api.Assertions.assertThat;

import io.bloomery.filter.BloomFilter;
import io.bloomery.hash.ProtocolId;
import io.bloomery.testkit.FormatCorruptionSweep;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The corruption sweep ({@link FormatCorruptionSweep}) over small classic files: every single-byte
 * change (all 255 XOR patterns at every offset), every truncation and every one-byte extension is
 * rejected with {@link FilterFormatException} and nothing else, through the byte-array path (length
 * known) and the stream path (length unknown).
 *
 * <p>Why every change is caught: header fields are validated and their lengths cross-checked against
 * each other and the input, and CRC-32C detects every burst error of up to 32 bits, so any change
 * confined to one byte of the checked region changes the checksum.
 */
class FilterFormatCorruptionTest {

  static Stream<byte[]> files() {
    return Stream.of(
        // 100 bits: the last word has padding bits; a seed exercises the seed-length field.
        FilterFormat.toBytes(filled(ProtocolId.XXH3_EDH_V1, "s1".getBytes(StandardCharsets.UTF_8), 100, 3, 10)),
        // The sha256-doc-v1 fixture (m = 16, k = 3, seed "lab").
        FilterFormat.toBytes(filled(ProtocolId.SHA256_DOC_V1, "lab".getBytes(StandardCharsets.UTF_8), 16, 3, 4)),
        // Two whole words, a protocol with strict parameter checks.
        FilterFormat.toBytes(filled(ProtocolId.GUAVA_MURMUR128_MITZ64, new byte[0], 128, 5, 8)));
  }

  @ParameterizedTest
  @MethodSource("files")
  void everySingleByteChangeIsRejected(byte[] valid) {
    assertThat(FormatCorruptionSweep.assertEverySingleByteChangeRejected(valid)).isEqualTo(valid.length * 255);
  }

  @ParameterizedTest
  @MethodSource("files")
  void everyTruncationIsRejected(byte[] valid) {
    assertThat(FormatCorruptionSweep.assertEveryTruncationRejected(valid)).isEqualTo(valid.length);
  }

  @ParameterizedTest
  @MethodSource("files")
  void everyTrailingByteIsRejected(byte[] valid) {
    assertThat(FormatCorruptionSweep.assertEveryExtensionRejected(valid)).isEqualTo(256);
  }

  @Test
  void aStreamMayCarryBytesAfterTheEnvelope() throws Exception {
    byte[] valid = files().findFirst().orElseThrow();
    ByteArrayInputStream in = new ByteArrayInputStream(Arrays.copyOf(valid, valid.length + 1));
    assertThat(FilterFormat.read(in)).isInstanceOf(BloomFilter.class);
    assertThat(in.available()).isEqualTo(1);
  }
}
