package io.bloomery.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomery.blocked.BlockedBloomFilter;
import io.bloomery.filter.BloomFilter;
import io.bloomery.testkit.Internals;
import java.nio.CharBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.CharRange;
import net.jqwik.api.constraints.StringLength;
import org.junit.jupiter.api.Test;

/**
 * The per-thread UTF-8 scratch behind the allocation-free {@code add(CharSequence)} and
 * {@code mightContain(CharSequence)} of non-String sequences: its bytes are
 * {@code String.getBytes(UTF_8)}'s for hostile text, and a String, a StringBuilder and the bytes are
 * the same item in the classic and blocked kinds.
 */
class Utf8ScratchTest {

  /** Hostile text: surrogate pairs, unpaired surrogates (each encoded as '?'), NUL, and keys longer than the scratch. */
  static final List<String> HOSTILE = List.of(
      "", "plain ascii", "\u0000nul\u0000", "é", "e\u0301", "ÿ\u0080\u07ff\u0800\uffff", "日本語",
      "emoji \uD83D\uDE00", "non-BMP \uD800\uDC00 \uDBFF\uDFFF", "lone high \uD800 surrogate", "lone low \uDC00",
      "end high \uD83D", "\uDE00\uD83D reversed pair", "\uD83D\uD83D\uDE00 high high low", "x".repeat(70_000),
      "ü".repeat(40_000), "\uD83D".repeat(1000), "a".repeat(300) + "\uD83D\uDE00");

  @Test
  void hostileText_encodesLikeGetBytes_forStringsAndOtherCharSequences() {
    Utf8Scratch scratch = Utf8Scratch.get();
    for (String text : HOSTILE) {
      byte[] expected = text.getBytes(StandardCharsets.UTF_8);
      for (CharSequence form : List.of(text, new StringBuilder(text), CharBuffer.wrap(text))) {
        int length = scratch.encode(form);
        assertThat(Arrays.copyOf(scratch.bytes(), length)).as(describe(text)).isEqualTo(expected);
      }
    }
  }

  @Test
  void hostileText_isTheSameItemAsItsBytes_inTheClassicAndBlockedKinds() {
    for (String text : HOSTILE) {
      byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
      BloomFilter classicString = BloomFilter.create(1000, 0.01);
      BloomFilter classicBytes = BloomFilter.create(1000, 0.01);
      BlockedBloomFilter blockedString = BlockedBloomFilter.create(1000, 0.01);
      BlockedBloomFilter blockedBytes = BlockedBloomFilter.create(1000, 0.01);
      assertThat(classicString.add(text)).isTrue();
      classicBytes.add(bytes);
      assertThat(blockedString.add(text)).isTrue();
      blockedBytes.add(bytes);
      assertThat(classicString.toPackedBytes()).as(describe(text)).isEqualTo(classicBytes.toPackedBytes());
      for (long w = 0; w < Internals.wordCount(blockedString); w++) {
        assertThat(Internals.word(blockedString, w)).as(describe(text)).isEqualTo(Internals.word(blockedBytes, w));
      }
      assertThat(classicBytes.mightContain(text)).isTrue();
      assertThat(blockedBytes.mightContain(text)).isTrue();
      assertThat(classicBytes.mightContain(new StringBuilder(text))).isTrue();
      assertThat(blockedBytes.mightContain(CharBuffer.wrap(text))).isTrue();
      BloomFilter classicBuilder = BloomFilter.create(1000, 0.01);
      classicBuilder.add(new StringBuilder(text));
      assertThat(classicBuilder.toPackedBytes()).as(describe(text)).isEqualTo(classicBytes.toPackedBytes());
    }
  }

  /** Any UTF-16 text, surrogates anywhere included, encodes as String.getBytes(UTF_8) does. */
  @Property(tries = 2000)
  void anyText_encodesLikeGetBytes(@ForAll @CharRange(from = '\u0000', to = '\uffff') @StringLength(max = 600) String text) {
    Utf8Scratch scratch = Utf8Scratch.get();
    int length = scratch.encode(text);
    assertThat(Arrays.copyOf(scratch.bytes(), length)).as(describe(text)).isEqualTo(text.getBytes(StandardCharsets.UTF_8));
  }

  @Property(tries = 300)
  void anyText_inTheClassicKind_isItsBytes(@ForAll @StringLength(max = 200) String text) {
    BloomFilter viaString = BloomFilter.create(100, 0.01);
    BloomFilter viaBytes = BloomFilter.create(100, 0.01);
    viaString.add(text);
    viaBytes.add(text.getBytes(StandardCharsets.UTF_8));
    assertThat(viaString.toPackedBytes()).isEqualTo(viaBytes.toPackedBytes());
  }

  private static String describe(String text) {
    StringBuilder codes = new StringBuilder();
    text.chars().limit(12).forEach(c -> codes.append(String.format("\\u%04x", c)));
    return "text of " + text.length() + " chars starting " + codes;
  }
}
