package io.bloomery.filter;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomery.blocked.BlockedBloomFilter;
import io.bloomery.testkit.Hex;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The built-in encoders' bytes are frozen: a filter built with them today must answer the same tomorrow. */
class ItemEncoderTest {
  record Pair(String first, String second) {}

  private static final ItemEncoder<Pair> PAIRS =
      ItemEncoder.composite(ItemEncoder.utf8().on(Pair::first), ItemEncoder.utf8().on(Pair::second));

  @Test
  void builtInEncodersGiveTheBytesOfTheMatchingOverloads() {
    assertThat(ItemEncoder.utf8().encode("caf\u00e9")).isEqualTo("caf\u00e9".getBytes(StandardCharsets.UTF_8));
    assertThat(Hex.encode(ItemEncoder.longs().encode(0x0102030405060708L))).isEqualTo("0807060504030201");
    byte[] raw = {1, 2, 3};
    byte[] encoded = ItemEncoder.bytes().encode(raw);
    raw[0] = 9;
    assertThat(encoded).containsExactly(1, 2, 3);

    BlockedBloomFilter filter = BlockedBloomFilter.create(1_000, 0.01);
    TypedFilter<CharSequence> strings = filter.typed(ItemEncoder.utf8());
    strings.add("caf\u00e9");
    assertThat(filter.mightContain("caf\u00e9")).isTrue();
    filter.typed(ItemEncoder.longs()).add(42L);
    assertThat(filter.mightContain(42L)).isTrue();
  }

  @Test
  void compositeWritesEachPartAfterItsLengthSoSplitsDiffer() {
    assertThat(Hex.encode(PAIRS.encode(new Pair("ab", "c")))).isEqualTo("02000000" + "6162" + "01000000" + "63");
    assertThat(Hex.encode(PAIRS.encode(new Pair("a", "bc")))).isEqualTo("01000000" + "61" + "02000000" + "6263");
    assertThat(Hex.encode(PAIRS.encode(new Pair("", "")))).isEqualTo("0000000000000000");

    BlockedBloomFilter filter = BlockedBloomFilter.create(1_000, 0.001);
    TypedFilter<Pair> pairs = filter.typed(PAIRS);
    pairs.add(new Pair("ab", "c"));
    assertThat(pairs.mightContain(new Pair("ab", "c"))).isTrue();
    assertThat(pairs.mightContain(new Pair("a", "bc"))).isFalse();
  }

  @Test
  void nullsAndEmptyCompositesAreRefused() {
    assertThatThrownBy(() -> PAIRS.encode(null)).isInstanceOf(NullPointerException.class).hasMessageContaining("item");
    assertThatThrownBy(() -> PAIRS.encode(new Pair(null, "x")))
        .isInstanceOf(NullPointerException.class).hasMessageContaining("field");
    assertThatThrownBy(() -> ItemEncoder.composite(List.of())).isInstanceOf(IllegalArgumentException.class);
    ItemEncoder<String> broken = item -> null;
    assertThatThrownBy(() -> ItemEncoder.composite(broken).encode("x"))
        .isInstanceOf(NullPointerException.class).hasMessageContaining("part 0");
    assertThatThrownBy(() -> BloomFilter.create(100, 0.01).typed(null)).isInstanceOf(NullPointerException.class);
  }
}
