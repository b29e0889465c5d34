package io.bloomery.filter;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomery.hash.Protocols;
import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;

/**
 * The classic kind's grouped batch probe and insert against its single-key calls, over random filters
 * (m, k, seed, and segment sizes small enough that positions span many segments) and random keys. jqwik
 * prints the seed of a failing try.
 */
class ClassicBatchPropertiesTest {

  @Property(tries = 300)
  void batchedEqualsSingle(
      @ForAll @Size(max = 200) List<byte[]> members, @ForAll @Size(max = 200) List<byte[]> others,
      @ForAll @IntRange(min = 1, max = 6000) int bits, @ForAll @IntRange(min = 1, max = 40) int hashes,
      @ForAll @IntRange(min = 0, max = 8) int segmentShift, @ForAll @Size(max = 3) byte[] seed) {
    BloomFilter single = new BloomFilter(Protocols.defaultProtocol(), seed, bits, hashes, segmentShift);
    BloomFilter batched = new BloomFilter(Protocols.defaultProtocol(), seed, bits, hashes, segmentShift);
    byte[][] added = members.toArray(new byte[0][]);
    int changedSingly = 0;
    for (byte[] item : added) {
      changedSingly += single.add(item) ? 1 : 0;
    }
    assertThat(batched.addAll(added)).isEqualTo(changedSingly);
    assertThat(batched.insertedCount()).isEqualTo(single.insertedCount());
    assertThat(batched.bitCount()).isEqualTo(single.bitCount());
    assertThat(batched.toPackedBytes()).isEqualTo(single.toPackedBytes());

    // Runs of members and of non-members, so that groups take both the mostly-members and the compacting path.
    List<byte[]> queries = new ArrayList<>(members);
    queries.addAll(others);
    queries.addAll(members);
    queries.addAll(others);
    byte[][] asked = queries.toArray(new byte[0][]);
    boolean[] out = new boolean[asked.length + 1];
    out[asked.length] = true; // past the items: must stay untouched
    int expected = 0;
    int maybe = batched.mightContainAll(asked, out);
    for (int i = 0; i < asked.length; i++) {
      assertThat(out[i]).as("query %d", i).isEqualTo(single.mightContain(asked[i]));
      expected += out[i] ? 1 : 0;
    }
    assertThat(maybe).isEqualTo(expected);
    assertThat(out[asked.length]).isTrue();
    boolean[] parallel = new boolean[asked.length];
    assertThat(batched.mightContainAll(asked, parallel, 3)).isEqualTo(expected);
    for (int i = 0; i < asked.length; i++) {
      assertThat(parallel[i]).isEqualTo(out[i]);
    }
  }
}
