package io.bloomery.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;

/** The line rules of build/query input, including lines that straddle the 64 KiB read buffer. */
class LineItemsTest {

  @Test
  void rules() throws IOException {
    assertThat(read("")).isEmpty();
    assertThat(read("\n")).containsExactly("");
    assertThat(read("a")).containsExactly("a");
    assertThat(read("a\n")).containsExactly("a");
    assertThat(read("a\n\n")).containsExactly("a", "");
    assertThat(read("a\r\nb\r\n")).containsExactly("a", "b");
    assertThat(read("a\rb\n")).containsExactly("a\rb");
    assertThat(read("a\r\r\n")).containsExactly("a\r");
    assertThat(read(" padded \t\n")).containsExactly(" padded \t");
  }

  @Test
  void hex_decodesAndNamesTheBadLine() throws IOException {
    List<String> decoded = new ArrayList<>();
    LineItems.forEach(stream("00ff\r\n\nC3A9\n"), "in", true,
        (line, bytes, offset, length) -> decoded.add(HexFormat.of().formatHex(bytes, offset, offset + length)));
    assertThat(decoded).containsExactly("00ff", "", "c3a9");
    assertThatThrownBy(() -> LineItems.forEach(stream("00\n0g\n"), "in", true, (l, b, o, n) -> {}))
        .isInstanceOf(CliException.class).hasMessage("in line 2: not hex: 'g' at column 2 (expected digits 0-9, a-f)");
  }

  @Property(tries = 200)
  void anyLines_roundTrip_whateverTheReadChunking(
      @ForAll @Size(max = 20) List<@Size(max = 200) byte[]> items,
      @ForAll boolean crlf,
      @ForAll @IntRange(min = 1, max = 300) int chunk) throws IOException {
    List<byte[]> lines = items.stream().map(LineItemsTest::withoutLineEnds).toList();
    java.io.ByteArrayOutputStream file = new java.io.ByteArrayOutputStream();
    for (byte[] line : lines) {
      file.writeBytes(line);
      file.writeBytes(crlf ? new byte[] {'\r', '\n'} : new byte[] {'\n'});
    }
    List<byte[]> read = new ArrayList<>();
    LineItems.forEach(new ChunkedStream(file.toByteArray(), chunk), "in", false,
        (line, bytes, offset, length) -> read.add(Arrays.copyOfRange(bytes, offset, offset + length)));
    assertThat(read).hasSize(lines.size());
    for (int i = 0; i < lines.size(); i++) {
      assertThat(read.get(i)).isEqualTo(lines.get(i));
    }
  }

  @Test
  void longLine_acrossManyBuffers() throws IOException {
    String longLine = "x".repeat(200_000);
    assertThat(read(longLine + "\r\nshort\n")).containsExactly(longLine, "short");
  }

  private static byte[] withoutLineEnds(byte[] bytes) {
    byte[] copy = bytes.clone();
    for (int i = 0; i < copy.length; i++) {
      if (copy[i] == '\n' || copy[i] == '\r') {
        copy[i] = 'x';
      }
    }
    return copy;
  }

  private static List<String> read(String text) throws IOException {
    List<String> items = new ArrayList<>();
    LineItems.forEach(stream(text), "in", false,
        (line, bytes, offset, length) -> items.add(new String(bytes, offset, length, StandardCharsets.UTF_8)));
    return items;
  }

  private static InputStream stream(String text) {
    return new ByteArrayInputStream(text.getBytes(StandardCharsets.UTF_8));
  }

  /** Returns at most {@code chunk} bytes per read, so line ends land anywhere relative to reads. */
  private static final class ChunkedStream extends ByteArrayInputStream {
    private final int chunk;

    ChunkedStream(byte[] bytes, int chunk) {
      super(bytes);
      this.chunk = chunk;
    }

    @Override
    public synchronized int read(byte[] buffer, int offset, int length) {
      return super.read(buffer, offset, Math.min(length, chunk));
    }
  }
}
