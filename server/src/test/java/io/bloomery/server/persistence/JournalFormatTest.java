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
      bytes.writeBytes(JournalFormat.encode(COMMANDS.get(i), 41 + i));
    }
    offsets[COMMANDS.size()] = bytes.size();
    Path file = dir.resolve(DataDirectory.segmentName(7));
    Files.write(file, bytes.toByteArray());
    return file;
  }

  private static List<String> scanned(Path file, List<Long> offsets) throws IOException {
    List<String> seen = new ArrayList<>();
    JournalFormat.scan(file, 7, 40, (offset, argv) -> {
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
    JournalFormat.Scan scan = JournalFormat.scan(file, 7, 40, (o, a) -> seenOffsets.add(o));
    assertThat(scan.clean()).isTrue();
    assertThat(scan.records()).isEqualTo(4);
    assertThat(scan.goodEnd()).isEqualTo(offsets[4]);
    assertThat(scan.lastSequence()).isEqualTo(44);
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
      JournalFormat.Scan scan = JournalFormat.scan(file, 7, 40, (o, a) -> {});
      assertThat(scan.damages()).as("cut at %d", length).hasSize(1);
      assertThat(scan.tail()).as("cut at %d: %s", length, scan.damages()).isNotNull();
      assertThat(scan.tail().offset()).isEqualTo(offsets[3]);
      assertThat(scan.tail().firstLost()).isEqualTo(44);
      assertThat(scan.goodEnd()).isEqualTo(offsets[3]);
      assertThat(scan.records()).isEqualTo(3);
    }
  }

  /**
   * A flipped byte anywhere in a middle record used to end the scan there (every later record lost); now
   * exactly that record is a damaged region, named by its sequence number, and the scan reads on.
   */
  @Test
  void everyFlippedByteOfAMiddleRecordLosesThatRecordOnly() throws IOException {
    long[] offsets = new long[COMMANDS.size() + 1];
    Path file = segment(offsets);
    byte[] whole = Files.readAllBytes(file);
    for (long at = offsets[1]; at < offsets[2]; at++) {
      for (int pattern : new int[] {0x01, 0x80, 0xFF}) {
        byte[] damaged = whole.clone();
        damaged[(int) at] ^= (byte) pattern;
        Files.write(file, damaged);
        List<Long> seen = new ArrayList<>();
        JournalFormat.Scan scan = JournalFormat.scan(file, 7, 40, (o, a) -> seen.add(o));
        assertThat(scan.damages()).as("byte %d ^ %02X", at, pattern).hasSize(1);
        JournalFormat.Damage damage = scan.damages().getFirst();
        assertThat(damage.tail()).as("byte %d ^ %02X: %s", at, pattern, damage).isFalse();
        assertThat(damage.offset()).isEqualTo(offsets[1]);
        assertThat(damage.end()).isEqualTo(offsets[2]);
        assertThat(damage.lost()).isEqualTo("record 42");
        assertThat(damage.recordsAfter()).isEqualTo(2);
        assertThat(seen).containsExactly(offsets[0], offsets[2], offsets[3]);
        assertThat(scan.records()).isEqualTo(3);
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
    assertThat(JournalFormat.scan(file, 7, 40, (o, a) -> {}).damages().getFirst().problem()).contains("not a journal segment");
    Files.write(file, whole);
    assertThat(JournalFormat.scan(file, 8, 40, (o, a) -> {}).damages().getFirst().problem())
        .isEqualTo("segment header says number 7, the file name says 8");
    Files.write(file, Arrays.copyOf(whole, 9));
    JournalFormat.Damage torn = JournalFormat.scan(file, 7, 40, (o, a) -> {}).tail();
    assertThat(torn).isNotNull();
    assertThat(torn.offset()).isZero();
  }

  /** Zero bytes after the last record (preallocated headroom, or pages never written) are one zero tail. */
  @Test
  void aZeroFilledTailIsOneZeroRegion() throws IOException {
    long[] offsets = new long[COMMANDS.size() + 1];
    Path file = segment(offsets);
    Files.write(file, new byte[200_000], java.nio.file.StandardOpenOption.APPEND);
    JournalFormat.Scan scan = JournalFormat.scan(file, 7, 40, (o, a) -> {});
    assertThat(scan.records()).isEqualTo(4);
    assertThat(scan.damages()).hasSize(1);
    assertThat(scan.tail().zeros()).isTrue();
    assertThat(scan.tail().offset()).isEqualTo(offsets[4]);
    assertThat(scan.goodEnd()).isEqualTo(offsets[4]);
  }

  /**
   * The case: one flipped byte in the middle of a 150-record journal. The scan reads the 149 good
   * records and names the one lost; a damaged header (no length to skip by) is resynchronised at the next
   * marker, with the same result.
   */
  @Test
  void aFlippedByteAmong150RecordsLosesOneNamedRecord() throws IOException {
    java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
    bytes.writeBytes(JournalFormat.header(3));
    List<Long> starts = new ArrayList<>();
    for (int i = 1; i <= 150; i++) {
      starts.add((long) bytes.size());
      bytes.writeBytes(JournalFormat.encode(argv("BF.ADD", "urls", "u" + i), i));
    }
    byte[] whole = bytes.toByteArray();
    Path file = dir.resolve(DataDirectory.segmentName(3));
    for (int inRecord : new int[] {2, 6, 13, 22, 30}) {
      byte[] damaged = whole.clone();
      damaged[(int) (starts.get(0) + inRecord)] ^= 0x04;
      Files.write(file, damaged);
      List<String> items = new ArrayList<>();
      JournalFormat.Scan scan = JournalFormat.scan(file, 3, 0, (o, a) -> items.add(new String(a.get(2), StandardCharsets.UTF_8)));
      assertThat(scan.records()).as("byte %d", inRecord).isEqualTo(149);
      assertThat(items).first().isEqualTo("u2");
      assertThat(scan.damages()).singleElement().satisfies(d -> {
        assertThat(d.offset()).isEqualTo(starts.get(0));
        assertThat(d.lastLost()).isEqualTo(1);
        assertThat(d.recordsAfter()).isEqualTo(149);
      });
      damaged = whole.clone();
      damaged[(int) (starts.get(70) + inRecord)] ^= 0x04;
      Files.write(file, damaged);
      scan = JournalFormat.scan(file, 3, 0, (o, a) -> {});
      assertThat(scan.records()).isEqualTo(149);
      assertThat(scan.damages()).singleElement().satisfies(d -> assertThat(d.lost()).isEqualTo("record 71"));
    }
  }

  @Test
  void aFormatOneSegmentIsStillRead() throws IOException {
    Path file = dir.resolve(DataDirectory.segmentName(2));
    try (var in = getClass().getResourceAsStream("/persistence/format-1-directory/journal.0000000002.log")) {
      Files.write(file, in.readAllBytes());
    }
    List<String> commands = new ArrayList<>();
    JournalFormat.Scan scan = JournalFormat.scan(file, 2, 0, (o, a) -> commands.add(new String(a.get(0), StandardCharsets.UTF_8)));
    assertThat(scan.version()).isEqualTo(1);
    assertThat(scan.clean()).isTrue();
    assertThat(scan.records()).isEqualTo(32);
    assertThat(commands).startsWith("BF.ADD", "DEL", "BF.ADD", "CMS.INCRBY");
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
