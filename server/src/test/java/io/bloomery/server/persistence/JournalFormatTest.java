package io.bloomery.server.persistence;

import static io.bloomery.server.persistence.TestKeyspace.argv;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class JournalFormatTest {
  @TempDir Path dir;

  private static final List<List<byte[]>> COMMANDS = List.of(
      argv("BF.ADD", "urls", "https://example.org/a"),
      argv("CMS.INCRBY", "hits", "home", "3"),
      argv("BF.ADD", "urls", ""),
      argv("DEL", "hits"));

  /** A segment holding COMMANDS; offsets[i] is where record i starts, offsets[n] the file's end. */
  private Path segment(long[] offsets) throws IOException {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    bytes.writeBytes(JournalFormat.header(7));
    for (int i = 0; i < COMMANDS.size(); i++) {
      offsets[i] = bytes.size();
      bytes.writeBytes(JournalFormat.encode(COMMANDS.get(i)));
    }
    offsets[COMMANDS.size()] = bytes.size();
    Path file = dir.resolve(DataDirectory.segmentName(7));
    Files.write(file, bytes.toByteArray());
    return file;
  }

  private static List<String> scanned(Path file, List<Long> offsets) throws IOException {
    List<String> seen = new ArrayList<>();
    JournalFormat.scan(file, 7, (offset, argv) -> {
      offsets.add(offset);
      seen.add(String.join(" ", argv.stream().map(a -> new String(a, StandardCharsets.UTF_8)).toList()));
    });
    return seen;
  }

  @Test
  void recordsRoundTripWithTheirOffsets() throws IOException {
    long[] offsets = new long[COMMANDS.size() + 1];
    Path file = segment(offsets);
    List<Long> seenOffsets = new ArrayList<>();
    JournalFormat.Scan scan = JournalFormat.scan(file, 7, (o, a) -> seenOffsets.add(o));
    assertThat(scan.clean()).isTrue();
    assertThat(scan.records()).isEqualTo(4);
    assertThat(scan.goodEnd()).isEqualTo(offsets[4]);
    assertThat(seenOffsets).containsExactly(offsets[0], offsets[1], offsets[2], offsets[3]);
    assertThat(scanned(file, new ArrayList<>())).containsExactly(
        "BF.ADD urls https://example.org/a", "CMS.INCRBY hits home 3", "BF.ADD urls ", "DEL hits");
  }

  @Test
  void everyTruncationOfTheLastRecordIsATornTailAtItsStart() throws IOException {
    long[] offsets = new long[COMMANDS.size() + 1];
    Path file = segment(offsets);
    byte[] whole = Files.readAllBytes(file);
    for (long length = offsets[3] + 1; length < offsets[4]; length++) {
      Files.write(file, Arrays.copyOf(whole, (int) length));
      JournalFormat.Scan scan = JournalFormat.scan(file, 7, (o, a) -> {});
      assertThat(scan.damage()).as("cut at %d", length).isNotNull();
      assertThat(scan.damage().tornTail()).as("cut at %d: %s", length, scan.damage()).isTrue();
      assertThat(scan.damage().offset()).isEqualTo(offsets[3]);
      assertThat(scan.goodEnd()).isEqualTo(offsets[3]);
      assertThat(scan.records()).isEqualTo(3);
    }
  }

  @Test
  void everyFlippedByteOfAMiddleRecordIsCorruptionAtThatRecord() throws IOException {
    long[] offsets = new long[COMMANDS.size() + 1];
    Path file = segment(offsets);
    byte[] whole = Files.readAllBytes(file);
    for (long at = offsets[1]; at < offsets[2]; at++) {
      for (int pattern : new int[] {0x01, 0x80, 0xFF}) {
        byte[] damaged = whole.clone();
        damaged[(int) at] ^= (byte) pattern;
        Files.write(file, damaged);
        JournalFormat.Scan scan = JournalFormat.scan(file, 7, (o, a) -> {});
        assertThat(scan.damage()).as("byte %d ^ %02X", at, pattern).isNotNull();
        assertThat(scan.damage().tornTail()).as("byte %d ^ %02X: %s", at, pattern, scan.damage()).isFalse();
        assertThat(scan.damage().offset()).isEqualTo(offsets[1]);
        assertThat(scan.records()).isEqualTo(1);
      }
    }
  }

  @Test
  void aDamagedHeaderIsNamedAndAShortOneIsTorn() throws IOException {
    long[] offsets = new long[COMMANDS.size() + 1];
    Path file = segment(offsets);
    byte[] whole = Files.readAllBytes(file);
    byte[] badMagic = whole.clone();
    badMagic[0] = 'X';
    Files.write(file, badMagic);
    assertThat(JournalFormat.scan(file, 7, (o, a) -> {}).damage().problem()).contains("not a journal segment");
    assertThat(JournalFormat.scan(dir.resolve(DataDirectory.segmentName(7)), 8, (o, a) -> {}).damage()).isNotNull();
    Files.write(file, whole);
    assertThat(JournalFormat.scan(file, 8, (o, a) -> {}).damage().problem())
        .isEqualTo("segment header says number 7, the file name says 8");
    Files.write(file, Arrays.copyOf(whole, 9));
    JournalFormat.Damage torn = JournalFormat.scan(file, 7, (o, a) -> {}).damage();
    assertThat(torn.tornTail()).isTrue();
    assertThat(torn.offset()).isZero();
  }

  @Test
  void aZeroFilledTailIsTorn() throws IOException {
    long[] offsets = new long[COMMANDS.size() + 1];
    Path file = segment(offsets);
    Files.write(file, new byte[4096], java.nio.file.StandardOpenOption.APPEND);
    JournalFormat.Scan scan = JournalFormat.scan(file, 7, (o, a) -> {});
    assertThat(scan.records()).isEqualTo(4);
    assertThat(scan.damage().tornTail()).isTrue();
    assertThat(scan.goodEnd()).isEqualTo(offsets[4]);
  }

  @Test
  void hostilePayloadsAreRefusedNotAllocated() {
    for (String payload : List.of("", "*", "*0\r\n", "*1\r\n", "*1\r\n$5\r\nab\r\n", "*1\r\n$2\r\nab", "*99999999999\r\n",
        "*2147483647\r\n$0\r\n\r\n", "*1\r\n$-1\r\n", "*1\r\n$2\r\nabXY", "*1\r\n$0\r\n\r\nextra", "$1\r\na\r\n",
        "*1\r\n$4294967296\r\n", "*1 \r\n$0\r\n\r\n", "*+1\r\n$0\r\n\r\n")) {
      assertThat(JournalFormat.decodePayload(payload.getBytes(StandardCharsets.ISO_8859_1))).as(payload).isNull();
    }
    assertThat(JournalFormat.decodePayload("*1\r\n$0\r\n\r\n".getBytes(StandardCharsets.ISO_8859_1))).hasSize(1);
  }
}
