package io.bloomery.hash;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.common.hash.Funnels;
import io.bloomery.filter.BloomFilter;
import io.bloomery.testkit.Keys;
import io.bloomery.testkit.Internals;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@code guava-murmur128-mitz64} against Guava itself (a test dependency only). */
class GuavaMurmur128Mitz64Test {

  private static final HashProtocol PROTOCOL = Protocols.of(ProtocolId.GUAVA_MURMUR128_MITZ64);

  /** Guava's writeTo: i8 strategy ordinal, u8 k, i32 word count, big-endian words. */
  private record GuavaBits(int strategy, int hashes, long[] words) {
    static GuavaBits of(com.google.common.hash.BloomFilter<?> guava) throws IOException {
      ByteArrayOutputStream bytes = new ByteArrayOutputStream();
      guava.writeTo(bytes);
      DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes.toByteArray()));
      int strategy = in.readByte();
      int hashes = in.readUnsignedByte();
      long[] words = new long[in.readInt()];
      for (int i = 0; i < words.length; i++) {
        words[i] = in.readLong();
      }
      assertThat(in.read()).isEqualTo(-1);
      return new GuavaBits(strategy, hashes, words);
    }
  }

  private static long[] wordsOf(BloomFilter filter) {
    long[] words = new long[(int) Internals.wordCount(filter)];
    for (int j = 0; j < words.length; j++) {
      words[j] = Internals.word(filter, j);
    }
    return words;
  }

  @Test
  void hash4jMurmur3x64_128IsGuavasMurmur3_128() {
    for (int i = 0; i < 300; i++) {
      byte[] key = Keys.binary(128, i, i % 70);
      byte[] guava = com.google.common.hash.Hashing.murmur3_128().hashBytes(key).asBytes();
      com.dynatrace.hash4j.hashing.HashValue128 ours = com.dynatrace.hash4j.hashing.Hashing.murmur3_128().hashBytesTo128Bits(key);
      byte[] mine =
          ByteBuffer.allocate(16).order(ByteOrder.LITTLE_ENDIAN).putLong(ours.getLeastSignificantBits()).putLong(ours.getMostSignificantBits()).array();
      assertThat(mine).isEqualTo(guava);
    }
  }

  @Test
  void byteArrayFunnelFilterHasIdenticalBits() throws IOException {
    com.google.common.hash.BloomFilter<byte[]> guava =
        com.google.common.hash.BloomFilter.create(Funnels.byteArrayFunnel(), 5_000, 0.01);
    List<byte[]> keys = Keys.urls(55, 0, 5_000);
    keys.forEach(guava::put);
    guava.put(new byte[0]);
    GuavaBits bits = GuavaBits.of(guava);
    assertThat(bits.strategy()).as("MURMUR128_MITZ_64 ordinal").isEqualTo(1);
    BloomFilter ours = BloomFilter.create(PROTOCOL, new byte[0], 64L * bits.words().length, bits.hashes());
    keys.forEach(ours::add);
    ours.add(new byte[0]);
    assertThat(wordsOf(ours)).isEqualTo(bits.words());
    // And the other way round: every answer agrees on non-members too.
    for (byte[] probe : Keys.urls(56, 5_000, 5_000)) {
      assertThat(ours.mightContain(probe)).isEqualTo(guava.mightContain(probe));
    }
  }

  @Test
  void utf8StringFunnelFilterHasIdenticalBits() throws IOException {
    com.google.common.hash.BloomFilter<CharSequence> guava =
        com.google.common.hash.BloomFilter.create(Funnels.stringFunnel(StandardCharsets.UTF_8), 2_000, 0.001);
    String[] specials = {"", "caf\u00e9", "cafe\u0301", "\uD83D\uDE00 emoji", "\u0000nul"};
    for (String special : specials) {
      guava.put(special);
    }
    for (int i = 0; i < 2_000; i++) {
      guava.put(Keys.url(7, i));
    }
    GuavaBits bits = GuavaBits.of(guava);
    BloomFilter ours = BloomFilter.create(PROTOCOL, new byte[0], 64L * bits.words().length, bits.hashes());
    for (String special : specials) {
      ours.add(special);
    }
    for (int i = 0; i < 2_000; i++) {
      ours.add(Keys.url(7, i));
    }
    assertThat(wordsOf(ours)).isEqualTo(bits.words());
  }

  @Test
  void limitsAreThoseOfGuavasFormat() {
    PROTOCOL.checkParameters(64, 255, new byte[0]);
    PROTOCOL.checkParameters(64L * Integer.MAX_VALUE, 1, new byte[0]);
    assertThatThrownBy(() -> PROTOCOL.checkParameters(100, 3, new byte[0]))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("multiple of 64");
    assertThatThrownBy(() -> PROTOCOL.checkParameters(64, 256, new byte[0]))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("k must be in [1, 255]");
    assertThatThrownBy(() -> PROTOCOL.checkParameters(64L * Integer.MAX_VALUE + 64, 3, new byte[0]))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> PROTOCOL.checkParameters(64, 3, new byte[] {1}))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("takes no seed");
  }
}
