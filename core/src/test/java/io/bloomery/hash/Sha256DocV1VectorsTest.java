package io.bloomery.hash;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import io.bloomery.filter.BloomFilter;
import io.bloomery.testkit.Hex;
import io.bloomery.testkit.Vectors;
import io.bloomery.testkit.Internals;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@code vectors/sha256-doc-v1.json}, byte for byte. */
class Sha256DocV1VectorsTest {

  private static final JsonNode VECTORS = Vectors.load("sha256-doc-v1.json");
  private static final HashProtocol PROTOCOL = Protocols.of(ProtocolId.SHA256_DOC_V1);

  private static long[] positions(long m, int k, byte[] seed, byte[] item) {
    long[] out = new long[k];
    PROTOCOL.bind(m, k, seed).positions(item, 0, item.length, out);
    return out;
  }

  private static BloomFilter fixtureFilter() {
    JsonNode fixture = VECTORS.get("fixture");
    BloomFilter filter =
        BloomFilter.create(
            PROTOCOL, Hex.decode(fixture.get("seed_hex").asText()), fixture.get("m").asLong(), fixture.get("k").asInt());
    for (String member : Vectors.strings(fixture.get("members"))) {
      filter.add(member);
    }
    return filter;
  }

  @Test
  void fixturePositionsMatch() {
    JsonNode fixture = VECTORS.get("fixture");
    byte[] seed = Hex.decode(fixture.get("seed_hex").asText());
    for (String member : Vectors.strings(fixture.get("members"))) {
      assertThat(positions(fixture.get("m").asLong(), fixture.get("k").asInt(), seed, Vectors.utf8(member)))
          .as(member)
          .containsExactly(Vectors.longs(fixture.get("positions").get(member)));
    }
  }

  @Test
  void fixturePackedBitsAreD291() {
    BloomFilter filter = fixtureFilter();
    assertThat(Hex.encode(filter.toPackedBytes())).isEqualTo(VECTORS.get("fixture").get("packed_bits_hex").asText()).isEqualTo("d291");
    assertThat(filter.bitCount()).isEqualTo(VECTORS.get("fixture").get("occupied_bit_count").asLong()).isEqualTo(7);
    assertThat(filter.insertedCount()).isEqualTo(4);
  }

  @Test
  void fixtureFalsePositivesAreExactlyTheListedFive() {
    JsonNode fixture = VECTORS.get("fixture");
    BloomFilter filter = fixtureFilter();
    List<String> queries = Vectors.range(fixture.get("nonmember_queries").asText());
    assertThat(queries).hasSize(60).startsWith("doc-04").endsWith("doc-63");
    List<String> falsePositives = new ArrayList<>();
    for (String query : queries) {
      if (filter.mightContain(query)) {
        falsePositives.add(query);
      }
    }
    assertThat(falsePositives)
        .isEqualTo(Vectors.strings(fixture.get("false_positives")))
        .containsExactly("doc-04", "doc-41", "doc-43", "doc-44", "doc-51");
  }

  @Test
  void wireExampleMessageMatches() {
    JsonNode example = VECTORS.get("wire_example");
    byte[] message =
        Sha256DocV1.message(
            example.get("m").asLong(),
            example.get("k").asInt(),
            Hex.decode(example.get("seed_hex").asText()),
            example.get("index").asInt(),
            Hex.decode(example.get("item_hex").asText()));
    assertThat(Hex.encode(message)).isEqualTo(example.get("message_hex").asText());
  }

  @Test
  void framingKeepsSeedAndItemBoundariesApart() {
    JsonNode framing = VECTORS.get("framing_distinct");
    // a: seed "a", item "bc"; b: seed "ab", item "c" -- the same concatenation, different messages.
    byte[] a = Sha256DocV1.message(16, 3, Vectors.utf8("a"), 0, Vectors.utf8("bc"));
    byte[] b = Sha256DocV1.message(16, 3, Vectors.utf8("ab"), 0, Vectors.utf8("c"));
    assertThat(Hex.encode(a)).isEqualTo(framing.get("a").asText());
    assertThat(Hex.encode(b)).isEqualTo(framing.get("b").asText());
    assertThat(a).isNotEqualTo(b);
  }

  @Test
  void smallFilterPackedBitsAre8001() {
    JsonNode small = VECTORS.get("small_filter");
    BloomFilter filter =
        BloomFilter.create(PROTOCOL, Hex.decode(small.get("seed_hex").asText()), small.get("m").asLong(), small.get("k").asInt());
    for (String member : Vectors.strings(small.get("members_hex"))) {
      filter.add(Hex.decode(member));
    }
    assertThat(Hex.encode(filter.toPackedBytes())).isEqualTo(small.get("packed_bits_hex").asText()).isEqualTo("8001");
  }

  @Test
  void allSeventyPositionCasesMatch() {
    JsonNode cases = VECTORS.get("position_cases");
    assertThat(cases.size()).isEqualTo(70);
    for (JsonNode c : cases) {
      long m = c.get("m").asLong();
      int k = c.get("k").asInt();
      long[] actual = positions(m, k, Hex.decode(c.get("seed_hex").asText()), Hex.decode(c.get("item_hex").asText()));
      assertThat(actual).as(c.toString()).containsExactly(Vectors.longs(c.get("positions")));
    }
  }

  @Test
  void clearingTheSharedBitSilentlyDropsTheOtherMember() {
    JsonNode fault = VECTORS.get("shared_bit_fault");
    String removed = fault.get("removed").asText();
    long sharedBit = fault.get("shared_bit").asLong();
    BloomFilter filter = fixtureFilter();
    long[] removedPositions = positionsOf(filter, removed);
    assertThat(removedPositions).contains(sharedBit);
    assertThat(positionsOf(filter, fault.get("damaged_member").asText())).contains(sharedBit);
    long[] words = wordsOf(filter); // a raw copy: there is no delete API
    words[(int) (sharedBit >>> 6)] &= ~(1L << sharedBit);
    assertThat(negativeMembersOtherThan(filter, words, removed)).containsExactly(fault.get("damaged_member").asText());
  }

  @Test
  void clearingAllOfOneMembersBitsDropsEveryMemberSharingAnyOfThem() {
    // doc-00 sits on bits 4, 15, 12: bit 4 is shared with doc-01, bit 15 with doc-01 and doc-03.
    String removed = VECTORS.get("shared_bit_fault").get("removed").asText();
    BloomFilter filter = fixtureFilter();
    long[] words = wordsOf(filter);
    for (long position : positionsOf(filter, removed)) {
      words[(int) (position >>> 6)] &= ~(1L << position);
    }
    assertThat(negativeMembersOtherThan(filter, words, removed)).containsExactly("doc-01", "doc-03");
  }

  private static long[] positionsOf(BloomFilter filter, String item) {
    return positions(filter.bitSize(), filter.hashCount(), filter.seed(), Vectors.utf8(item));
  }

  private static long[] wordsOf(BloomFilter filter) {
    long[] words = new long[(int) Internals.wordCount(filter)];
    for (int j = 0; j < words.length; j++) {
      words[j] = Internals.word(filter, j);
    }
    return words;
  }

  private static List<String> negativeMembersOtherThan(BloomFilter filter, long[] words, String removed) {
    List<String> negative = new ArrayList<>();
    for (String member : Vectors.strings(VECTORS.get("fixture").get("members"))) {
      if (!member.equals(removed) && !allSet(words, positionsOf(filter, member))) {
        negative.add(member);
      }
    }
    return negative;
  }

  static boolean allSet(long[] words, long[] positions) {
    for (long position : positions) {
      if ((words[(int) (position >>> 6)] & (1L << position)) == 0) {
        return false;
      }
    }
    return true;
  }

  @Test
  void parametersTheWireFormatCannotExpressAreRefused() {
    assertThatThrownBy(() -> PROTOCOL.bind(65536, 3, new byte[0]))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("m must be in [1, 65535]")
        .hasMessageContaining("65536");
    assertThatThrownBy(() -> PROTOCOL.bind(100, 256, new byte[0]))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("k must be in [1, 255]");
    assertThatThrownBy(() -> PROTOCOL.bind(100, 0, new byte[0])).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> PROTOCOL.bind(0, 3, new byte[0])).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> PROTOCOL.bind(100, 3, new byte[256]))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("seed must be at most 255 bytes, was 256");
    HashProtocol.Placement placement = PROTOCOL.bind(65535, 255, new byte[255]);
    long[] out = new long[255];
    placement.positions(new byte[65535], 0, 65535, out); // the limits themselves are fine
    assertThatThrownBy(() -> placement.positions(new byte[65536], 0, 65536, out))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("item must be at most 65535 bytes");
    assertThatThrownBy(() -> BloomFilter.create(PROTOCOL, new byte[0], 70_000, 3))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("sha256-doc-v1");
  }
}
