package io.bloomery.format;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteOrder;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;

/** The bounded reader and writer every body shares. */
class FormatReaderTest {

  private static FormatReader reader(byte[] bytes, ByteOrder order) {
    return new FormatReader(new ByteArrayInputStream(bytes), bytes.length, bytes.length, order);
  }

  @Test
  void rangeCheckedFieldsNameTheFieldTheOffsetTheRuleAndTheUnsignedValue() throws IOException {
    byte[] bytes = new byte[8 + 8 + 4 + 4];
    java.nio.ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN).putLong(5).putLong(-1L).putInt(0).putInt(7);
    FormatReader in = reader(bytes, ByteOrder.LITTLE_ENDIAN);
    assertThat(in.u64("bits (m)", 1, 5, "1 <= m <= 5")).isEqualTo(5);
    assertThatThrownBy(() -> in.u64("blocks", 1, 100, "1 <= blocks <= 100"))
        .isInstanceOf(FilterFormatException.class)
        .hasMessage("blocks at offset 8: expected 1 <= blocks <= 100, found 18446744073709551615");
    assertThatThrownBy(() -> in.u32("hashes (k)", 1, 16, "1 <= k <= 16"))
        .isInstanceOf(FilterFormatException.class).hasMessage("hashes (k) at offset 16: expected 1 <= k <= 16, found 0");
    assertThatThrownBy(() -> in.u32("k", 8, 8, "k = 8"))
        .isInstanceOf(FilterFormatException.class).hasMessage("k at offset 20: expected k = 8, found 7");
  }

  @Test
  void fixedWidthFieldsDecodeInTheirByteOrder() throws IOException {
    byte[] bytes = FormatFixtures.hex("01" + "0201" + "04030201" + "0807060504030201" + "ffffffffffffffff");
    FormatReader little = reader(bytes, ByteOrder.LITTLE_ENDIAN);
    assertThat(little.u8("a")).isEqualTo(0x01);
    assertThat(little.u16("b")).isEqualTo(0x0102);
    assertThat(little.u32("c")).isEqualTo(0x01020304L);
    assertThat(little.u64("d")).isEqualTo(0x0102030405060708L);
    assertThat(Long.toUnsignedString(little.u64("e"))).isEqualTo("18446744073709551615");
    little.requireEnd();

    FormatReader big = reader(bytes, ByteOrder.BIG_ENDIAN);
    assertThat(big.u8("a")).isEqualTo(0x01);
    assertThat(big.u16("b")).isEqualTo(0x0201);
    assertThat(big.u32("c")).isEqualTo(0x04030201L);
    assertThat(big.u64("d")).isEqualTo(0x0807060504030201L);
  }

  @Test
  void wordsRoundTripThroughTheWriterInBothOrders() throws IOException {
    for (ByteOrder order : new ByteOrder[] {ByteOrder.LITTLE_ENDIAN, ByteOrder.BIG_ENDIAN}) {
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      FormatWriter writer = new FormatWriter(out, order);
      int count = 20_000; // more than one 64 KiB chunk
      for (long i = 0; i < count; i++) {
        writer.word(i * 0x9E37_79B9_7F4A_7C15L);
      }
      writer.flush();
      FormatReader.WordStream words = reader(out.toByteArray(), order).words(count, "payload");
      for (long i = 0; i < count; i++) {
        assertThat(words.next()).isEqualTo(i * 0x9E37_79B9_7F4A_7C15L);
      }
      assertThat(words.wordsLeft()).isZero();
    }
  }

  @Test
  void checksumCoversEveryByteReadOrWritten() throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    FormatWriter writer = new FormatWriter(out);
    writer.u8(7);
    writer.u16(0xBEEF);
    writer.bytes(new byte[100_000]); // crosses the buffer
    writer.u64(-1);
    writer.checksum();
    writer.flush();
    byte[] bytes = out.toByteArray();
    CRC32C crc = new CRC32C();
    crc.update(bytes, 0, bytes.length - 4);
    FormatReader reader = reader(bytes, ByteOrder.LITTLE_ENDIAN);
    reader.bytes(bytes.length - 4, "everything");
    assertThat(reader.checksumSoFar()).isEqualTo((int) crc.getValue());
    reader.verifyChecksum();
    reader.requireEnd();
  }

  @Test
  void readsNeverRunAheadOfWhatWasAskedFor() throws IOException {
    ByteArrayInputStream in = new ByteArrayInputStream(new byte[64]);
    FormatReader reader = new FormatReader(in, FormatReader.UNKNOWN_LENGTH, 1 << 20);
    reader.u32("a");
    FormatReader.WordStream words = reader.words(3, "w");
    words.next();
    assertThat(in.available()).isEqualTo(64 - 4 - 24);
    assertThat(reader.position()).isEqualTo(28);
  }

  @Test
  void declaredSizesAreCheckedBeforeAllocating() {
    FormatReader known = reader(new byte[10], ByteOrder.LITTLE_ENDIAN);
    assertThatThrownBy(() -> known.bytes(11, "seed"))
        .isExactlyInstanceOf(FilterFormatException.class)
        .hasMessage("truncated: seed at offset 0 declares 11 bytes, expected at most the 10 bytes that remain");
    assertThatThrownBy(() -> known.words(1L << 60, "payload"))
        .isExactlyInstanceOf(FilterFormatException.class)
        .hasMessage("payload at offset 0: expected a word count in [0, 2^60), found 1152921504606846976");
    FormatReader stream = new FormatReader(new ByteArrayInputStream(new byte[10]), FormatReader.UNKNOWN_LENGTH, 1000);
    assertThatThrownBy(() -> stream.words(126, "payload"))
        .isExactlyInstanceOf(FilterFormatException.class)
        .hasMessage("payload at offset 0 declares 1008 bytes, expected at most the read limit of 1000 bytes");
    assertThatThrownBy(() -> stream.requireAvailable(-5, "body"))
        .isExactlyInstanceOf(FilterFormatException.class)
        .hasMessage("body at offset 0: expected a length in [0, 2^63), found 18446744073709551611");
  }

  @Test
  void endOfInputNamesTheFieldAndOffset() throws IOException {
    FormatReader reader = new FormatReader(new ByteArrayInputStream(new byte[5]), FormatReader.UNKNOWN_LENGTH, 100);
    reader.u32("first");
    assertThatThrownBy(() -> reader.u64("bits (m)"))
        .isExactlyInstanceOf(FilterFormatException.class)
        .hasMessage("truncated: expected 8 bytes for bits (m) at offset 4, found end of input after 1");
  }
}
