package io.bloomery.filter;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomery.hash.HashProtocol;
import io.bloomery.hash.ProtocolId;
import io.bloomery.hash.Protocols;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * Properties of the classic filter over random (m, k, protocol, seed, item sets), for every protocol.
 * jqwik reports the seed of any failing run; freeze it as a named regression test.
 */
class BloomFilterPropertiesTest {

  /** One random case: parameters valid for the protocol, plus two item lists. */
  record Case(ProtocolId protocol, long bits, int hashes, byte[] seed, List<byte[]> items, List<byte[]> others) {
    BloomFilter empty() {
      return BloomFilter.create(Protocols.of(protocol), seed, bits, hashes);
    }

    @Override
    public String toString() {
      return protocol.protocolName() + " m=" + bits + " k=" + hashes + " seed=" + seed.length + "B items=" + items.size() + "+" + others.size();
    }
  }

  @Provide
  Arbitrary<Case> cases() {
    Arbitrary<ProtocolId> protocols =
        Arbitraries.of(
            ProtocolId.XXH3_EDH_V1,
            ProtocolId.SHA256_DOC_V1,
            ProtocolId.SHA256_INDEX8,
            ProtocolId.SHA256_INDEX16,
            ProtocolId.GUAVA_MURMUR128_MITZ64);
    Arbitrary<byte[]> item = Arbitraries.bytes().array(byte[].class).ofMaxSize(40);
    Arbitrary<List<byte[]>> items = item.list().ofMaxSize(60);
    return protocols.flatMap(protocol -> {
      boolean seeded = protocol == ProtocolId.XXH3_EDH_V1 || protocol == ProtocolId.SHA256_DOC_V1;
      boolean guava = protocol == ProtocolId.GUAVA_MURMUR128_MITZ64;
      Arbitrary<Long> bits =
          guava
              ? Arbitraries.longs().between(1, 200).map(words -> words * 64)
              : Arbitraries.longs().between(1, protocol == ProtocolId.SHA256_DOC_V1 ? 65_535 : 20_000);
      Arbitrary<byte[]> seed = seeded ? Arbitraries.bytes().array(byte[].class).ofMaxSize(12) : Arbitraries.just(new byte[0]);
      return Combinators.combine(bits, Arbitraries.integers().between(1, 12), seed, items, items)
          .as((m, k, s, a, b) -> new Case(protocol, m, k, s, a, b));
    });
  }

  private static long[] words(BloomFilter filter) {
    return BloomFilterTest.wordsOf(filter);
  }

  @Property(tries = 200)
  void noFalseNegatives(@ForAll("cases") Case c) {
    BloomFilter filter = c.empty();
    c.items().forEach(filter::add);
    for (byte[] item : c.items()) {
      assertThat(filter.mightContain(item)).isTrue();
    }
  }

  @Property(tries = 200)
  void reinsertingReturnsFalseAndChangesNoWord(@ForAll("cases") Case c) {
    BloomFilter filter = c.empty();
    c.items().forEach(filter::add);
    long[] before = words(filter);
    long inserted = filter.insertedCount();
    long setBits = filter.bitCount();
    for (byte[] item : c.items()) {
      assertThat(filter.add(item)).isFalse();
    }
    assertThat(words(filter)).isEqualTo(before);
    assertThat(filter.insertedCount()).isEqualTo(inserted);
    assertThat(filter.bitCount()).isEqualTo(setBits);
  }

  @Property(tries = 200)
  void insertionOrderDoesNotMatter(@ForAll("cases") Case c, @ForAll long shuffleSeed) {
    BloomFilter forward = c.empty();
    c.items().forEach(forward::add);
    List<byte[]> shuffled = new ArrayList<>(c.items());
    Collections.shuffle(shuffled, new Random(shuffleSeed));
    BloomFilter reordered = c.empty();
    shuffled.forEach(reordered::add);
    assertThat(words(reordered)).isEqualTo(words(forward));
  }

  @Property(tries = 200)
  void unionEqualsBuildingFromTheUnion(@ForAll("cases") Case c) {
    BloomFilter left = c.empty();
    BloomFilter right = c.empty();
    BloomFilter union = c.empty();
    c.items().forEach(left::add);
    c.others().forEach(right::add);
    c.items().forEach(union::add);
    c.others().forEach(union::add);
    long[] rightBefore = words(right);
    left.mergeFrom(right);
    assertThat(words(left)).isEqualTo(words(union));
    assertThat(left.bitCount()).isEqualTo(union.bitCount());
    assertThat(words(right)).isEqualTo(rightBefore);
  }

  @Property(tries = 200)
  void addReturnsTheOppositeOfAPriorMightContain(@ForAll("cases") Case c) {
    BloomFilter filter = c.empty();
    List<byte[]> all = new ArrayList<>(c.items());
    all.addAll(c.others());
    all.addAll(c.items());
    for (byte[] item : all) {
      boolean before = filter.mightContain(item);
      assertThat(filter.add(item)).isEqualTo(!before);
    }
  }

  @Property(tries = 100)
  void positionsAreAlwaysInRange(@ForAll("cases") Case c) {
    HashProtocol.Placement placement = Protocols.of(c.protocol()).bind(c.bits(), c.hashes(), c.seed());
    long[] out = new long[c.hashes()];
    for (byte[] item : c.items()) {
      placement.positions(item, 0, item.length, out);
      for (long position : out) {
        assertThat(position).isBetween(0L, c.bits() - 1);
      }
    }
  }
}
