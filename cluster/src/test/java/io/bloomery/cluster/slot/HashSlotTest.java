package io.bloomery.cluster.slot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.Test;

class HashSlotTest {

  private static int slot(String key) {
    return HashSlot.of(key.getBytes(StandardCharsets.UTF_8));
  }

  @Test
  void crc16IsXmodemWithItsCheckValue() {
    byte[] check = "123456789".getBytes(StandardCharsets.US_ASCII);
    assertThat(HashSlot.crc16(check, 0, check.length)).isEqualTo(0x31C3);
    assertThat(HashSlot.crc16(new byte[0], 0, 0)).isZero();
  }

  @Test
  void answersTheRedisDocumentationExamples() {
    assertThat(slot("somekey")).isEqualTo(11058);
    assertThat(slot("foo{hash_tag}")).isEqualTo(2515);
    assertThat(slot("bar{hash_tag}")).isEqualTo(2515);
  }

  @Test
  void hashTagRulesOfTheClusterSpecification() {
    assertThat(slot("{user1000}.following")).isEqualTo(slot("{user1000}.followers")).isEqualTo(slot("user1000"));
    assertThat(slot("foo{}{bar}")).as("empty first tag: the whole key").isEqualTo(crc("foo{}{bar}"));
    assertThat(slot("foo{{bar}}zap")).as("the first '{' to the first '}' after it").isEqualTo(slot("{bar"));
    assertThat(slot("foo{bar}{zap}")).as("only the first tag").isEqualTo(slot("bar"));
    assertThat(slot("a{b")).as("no closing brace").isEqualTo(crc("a{b"));
    assertThat(slot("a}b{c}")).as("a '}' before the '{' does not close it").isEqualTo(slot("c"));
  }

  private static int crc(String key) {
    byte[] b = key.getBytes(StandardCharsets.UTF_8);
    return HashSlot.crc16(b, 0, b.length) % HashSlot.SLOTS;
  }

  @Test
  void agreesWithRedisOnEveryRecordedKey() throws IOException {
    List<String[]> rows = new ArrayList<>();
    try (InputStream in = HashSlotTest.class.getResourceAsStream("keyslots.txt");
        BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.US_ASCII))) {
      for (String line = r.readLine(); line != null; line = r.readLine()) {
        if (!line.startsWith("#")) {
          rows.add(line.split("\t", -1));
        }
      }
    }
    assertThat(rows).hasSizeGreaterThan(400);
    for (String[] row : rows) {
      byte[] key = HexFormat.of().parseHex(row[0]);
      assertThat(HashSlot.of(key)).as("key %s", row[0]).isEqualTo(Integer.parseInt(row[1]));
    }
  }

  @Test
  void everySlotIsInRange() {
    for (int i = 0; i < 100_000; i++) {
      assertThat(slot("key:" + i)).isBetween(0, HashSlot.SLOTS - 1);
    }
  }

  @Test
  void refusesNullAndBadRanges() {
    assertThatThrownBy(() -> HashSlot.of(null)).isInstanceOf(NullPointerException.class).hasMessage("key");
    assertThatThrownBy(() -> HashSlot.crc16(new byte[2], 1, 3)).isInstanceOf(IndexOutOfBoundsException.class);
  }
}
