package io.bloomery.hash;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import io.bloomery.filter.BloomFilter;
import io.bloomery.testkit.Hex;
import io.bloomery.testkit.Vectors;
import io.bloomery.testkit.Internals;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@code vectors/sha256-index8.json} and {@code vectors/sha256-index16.json}, byte for byte. */
class Sha256IndexedVectorsTest {

  private static final JsonNode INDEX8 = Vectors.load("sha256-index8.json");
  private static final JsonNode INDEX16 = Vectors.load("sha256-index16.json");

  private static long[] positions(HashProtocol protocol, long m, int k, String item) {
    long[] out = new long[k];
    byte[] bytes = Vectors.utf8(item);
    protocol.bind(m, k, new byte[0]).positions(bytes, 0, bytes.length, out);
    return out;
  }

  private static BloomFilter build(HashProtocol protocol, JsonNode vectors, List<String> members) {
    BloomFilter filter = BloomFilter.create(protocol, new byte[0], vectors.get("m").asLong(), vectors.get("k").asInt());
    members.forEach(filter::add);
    return filter;
  }

  private static List<String> falsePositives(BloomFilter filter, List<String> queries) {
    List<String> falsePositives = new ArrayList<>();
    for (String query : queries) {
      if (filter.mightContain(query)) {
        falsePositives.add(query);
      }
    }
    return falsePositives;
  }

  private static long[] wordsOf(BloomFilter filter) {
    long[] words = new long[(int) Internals.wordCount(filter)];
    for (int j = 0; j < words.length; j++) {
      words[j] = Internals.word(filter, j);
    }
    return words;
  }

  /** Members other than {@code cleared} that turn negative once {@code cleared}'s bits are zeroed in a raw copy. */
  private static List<String> brokenByClearing(
      BloomFilter filter, HashProtocol protocol, List<String> members, String cleared, long[] expectedCleared) {
    long m = filter.bitSize();
    int k = filter.hashCount();
    long[] words = wordsOf(filter);
    long[] clearedPositions = positions(protocol, m, k, cleared);
    if (expectedCleared != null) {
      assertThat(clearedPositions).containsExactlyInAnyOrder(expectedCleared);
    }
    for (long position : clearedPositions) {
      words[(int) (position >>> 6)] &= ~(1L << position);
    }
    List<String> broken = new ArrayList<>();
    for (String member : members) {
      if (!member.equals(cleared) && !Sha256DocV1VectorsTest.allSet(words, positions(protocol, m, k, member))) {
        broken.add(member);
      }
    }
    return broken;
  }

  @Test
  void index8PositionsPackedBitsAndOccupiedBits() {
    HashProtocol protocol = Protocols.of(ProtocolId.SHA256_INDEX8);
    long m = INDEX8.get("m").asLong();
    int k = INDEX8.get("k").asInt();
    List<String> members = Vectors.strings(INDEX8.get("members"));
    for (String member : members) {
      assertThat(positions(protocol, m, k, member)).as(member).containsExactly(Vectors.longs(INDEX8.get("positions").get(member)));
    }
    BloomFilter filter = build(protocol, INDEX8, members);
    assertThat(Hex.encode(filter.toPackedBytes())).isEqualTo(INDEX8.get("packed_bits_hex").asText()).isEqualTo("3a33");
    List<Long> occupied = new ArrayList<>();
    for (long i = 0; i < m; i++) {
      if (((Internals.word(filter, i >>> 6) >>> i) & 1) != 0) {
        occupied.add(i);
      }
    }
    assertThat(occupied).containsExactly(box(Vectors.longs(INDEX8.get("occupied_bits"))));
    assertThat(filter.bitCount()).isEqualTo(occupied.size());
  }

  @Test
  void index8FalsePositivesAreExactlyTheListedTenOfForty() {
    HashProtocol protocol = Protocols.of(ProtocolId.SHA256_INDEX8);
    BloomFilter filter = build(protocol, INDEX8, Vectors.strings(INDEX8.get("members")));
    List<String> queries = Vectors.strings(INDEX8.get("queries"));
    assertThat(queries).hasSize(40);
    List<String> falsePositives = falsePositives(filter, queries);
    assertThat(falsePositives).isEqualTo(Vectors.strings(INDEX8.get("false_positives"))).hasSize(10);
    assertThat(falsePositives.size()).isEqualTo(INDEX8.get("false_positive_count").asInt());
    INDEX8.get("extra_positions").fields().forEachRemaining(entry ->
        assertThat(positions(protocol, 16, 2, entry.getKey())).containsExactly(Vectors.longs(entry.getValue())));
  }

  @Test
  void index8ClearingOneMembersBitsDropsExactlyTheListedMember() {
    HashProtocol protocol = Protocols.of(ProtocolId.SHA256_INDEX8);
    List<String> members = Vectors.strings(INDEX8.get("members"));
    BloomFilter filter = build(protocol, INDEX8, members);
    List<String> broken =
        brokenByClearing(
            filter, protocol, members, INDEX8.get("fault_clear_bits_of").asText(), Vectors.longs(INDEX8.get("fault_cleared_bits")));
    assertThat(broken).isEqualTo(Vectors.strings(INDEX8.get("fault_members_now_negative"))).containsExactly("item-5");
  }

  @Test
  void index16PositionsPackedBitsAndSetBits() throws Exception {
    HashProtocol protocol = Protocols.of(ProtocolId.SHA256_INDEX16);
    long m = INDEX16.get("m").asLong();
    int k = INDEX16.get("k").asInt();
    assertThat(positions(protocol, m, k, "item:0")).containsExactly(Vectors.longs(INDEX16.get("positions_item0")));
    BloomFilter filter = build(protocol, INDEX16, Vectors.range(INDEX16.get("members").asText()));
    byte[] packed = filter.toPackedBytes();
    assertThat(packed).hasSize(INDEX16.get("packed_bytes").asInt());
    assertThat(Hex.encode(MessageDigest.getInstance("SHA-256").digest(packed)))
        .isEqualTo(INDEX16.get("packed_bits_sha256").asText());
    assertThat(filter.bitCount()).isEqualTo(INDEX16.get("set_bits").asLong()).isEqualTo(4968);
    // One of the 1000 members was already reported maybe-present when added (all 7 bits set by
    // earlier members), so exactly 999 adds changed the filter.
    assertThat(filter.insertedCount()).isEqualTo(999);
  }

  @Test
  void index16FalsePositivesAre73Of10000() {
    HashProtocol protocol = Protocols.of(ProtocolId.SHA256_INDEX16);
    BloomFilter filter = build(protocol, INDEX16, Vectors.range(INDEX16.get("members").asText()));
    List<String> queries = Vectors.range(INDEX16.get("queries").asText());
    assertThat(queries).hasSize(10_000);
    List<String> falsePositives = falsePositives(filter, queries);
    assertThat(falsePositives).hasSize(INDEX16.get("false_positive_count").asInt()).hasSize(73);
    assertThat(falsePositives.get(0)).isEqualTo(INDEX16.get("first_false_positive").asText());
    assertThat(falsePositives.subList(0, 10)).isEqualTo(Vectors.strings(INDEX16.get("first_10_false_positives")));
    assertThat(io.bloomery.sizing.BloomMath.falsePositiveRate(10_000, 7, 1_000))
        .isCloseTo(INDEX16.get("model_estimate").asDouble(), org.assertj.core.data.Offset.offset(1e-15));
  }

  @Test
  void index16OverfullFilterHas8016FalsePositivesOf10000() {
    HashProtocol protocol = Protocols.of(ProtocolId.SHA256_INDEX16);
    JsonNode overfull = INDEX16.get("overfull");
    BloomFilter filter = build(protocol, INDEX16, Vectors.range(overfull.get("members").asText()));
    List<String> falsePositives = falsePositives(filter, Vectors.range(INDEX16.get("queries").asText()));
    assertThat(falsePositives).hasSize(overfull.get("false_positive_count").asInt()).hasSize(8016);
    assertThat(filter.isNearCapacity()).isTrue();
  }

  @Test
  void index16ClearingItem0sBitsFirstBreaksItem79() {
    HashProtocol protocol = Protocols.of(ProtocolId.SHA256_INDEX16);
    List<String> members = Vectors.range(INDEX16.get("members").asText());
    BloomFilter filter = build(protocol, INDEX16, members);
    List<String> broken = brokenByClearing(filter, protocol, members, "item:0", null);
    assertThat(broken).isNotEmpty();
    assertThat(broken.get(0)).isEqualTo(INDEX16.get("clear_bits_of_item0_breaks").asText());
  }

  @Test
  void indexWidthLimitsHashCountAndThereIsNoSeed() {
    HashProtocol index8 = Protocols.of(ProtocolId.SHA256_INDEX8);
    HashProtocol index16 = Protocols.of(ProtocolId.SHA256_INDEX16);
    index8.checkParameters(1000, 256, new byte[0]);
    assertThatThrownBy(() -> index8.checkParameters(1000, 257, new byte[0]))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("k must be in [1, 256], was 257");
    index16.checkParameters(1000, 65536, new byte[0]);
    assertThatThrownBy(() -> index16.checkParameters(1000, 65537, new byte[0]))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("k must be in [1, 65536], was 65537");
    assertThatThrownBy(() -> index8.bind(1000, 3, new byte[] {1}))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("takes no seed");
    // Index 256 of index16 is u16be(0x0100): distinct from index 0 and from index8's (byte) 256 == 0.
    long[] out = new long[257];
    index16.bind(1L << 40, 257, new byte[0]).positions(new byte[0], 0, 0, out);
    assertThat(out[256]).isNotEqualTo(out[0]);
  }

  private static Long[] box(long[] values) {
    Long[] boxed = new Long[values.length];
    for (int i = 0; i < values.length; i++) {
      boxed[i] = values[i];
    }
    return boxed;
  }
}
