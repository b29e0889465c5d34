package io.bloomery.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

class KeysTest {

  @Test
  void urlsAreDeterministicDistinctAndAbout80Bytes() {
    assertThat(Keys.url(1, 42)).isEqualTo(Keys.url(1, 42));
    assertThat(Keys.url(1, 42)).isNotEqualTo(Keys.url(2, 42));
    Set<String> seen = new HashSet<>();
    long totalLength = 0;
    int count = 20_000;
    for (int i = 0; i < count; i++) {
      String url = Keys.url(7, i);
      assertThat(seen.add(url)).isTrue();
      assertThat(url).startsWith("https://www.").contains(".example.org/");
      totalLength += Keys.urlBytes(7, i).length;
    }
    assertThat((double) totalLength / count).isBetween(70.0, 90.0);
  }

  @Test
  void binaryKeysAreDistinctByIndexAndCoverAllByteValues() {
    Set<String> seen = new HashSet<>();
    boolean[] byteValues = new boolean[256];
    for (int i = 0; i < 5_000; i++) {
      byte[] key = Keys.binary(3, i, 16);
      assertThat(key.length).isBetween(8, 24);
      assertThat(seen.add(Hex.encode(key))).isTrue();
      for (byte b : key) {
        byteValues[b & 0xFF] = true;
      }
    }
    for (boolean present : byteValues) {
      assertThat(present).isTrue();
    }
  }

  @Test
  void vectorRangesKeepZeroPadding() {
    assertThat(Vectors.range("doc-04 .. doc-63")).hasSize(60).startsWith("doc-04", "doc-05").endsWith("doc-63");
    assertThat(Vectors.range("item:0 .. item:999")).hasSize(1000).startsWith("item:0").endsWith("item:999");
  }
}
