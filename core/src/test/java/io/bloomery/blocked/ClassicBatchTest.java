package io.bloomery.blocked;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomery.filter.BloomFilter;
import io.bloomery.hash.ProtocolId;
import io.bloomery.hash.Protocols;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** The classic filter's batch API answers exactly like its single-key API, for both code paths. */
class ClassicBatchTest {

  @Test
  void batchAgreesWithSingleKeys() {
    for (ProtocolId protocol : new ProtocolId[] {ProtocolId.XXH3_EDH_V1, ProtocolId.SHA256_INDEX16}) {
      BloomFilter single = BloomFilter.create(Protocols.of(protocol), new byte[0], 20_000, 7);
      BloomFilter batched = BloomFilter.create(Protocols.of(protocol), new byte[0], 20_000, 7);
      byte[][] items = new byte[2_000][];
      for (int i = 0; i < items.length; i++) {
        items[i] = ("k" + i).getBytes(StandardCharsets.UTF_8);
        single.add(items[i]);
      }
      assertThat(batched.addAll(items)).isEqualTo(single.insertedCount());
      byte[][] queries = new byte[5_000][];
      for (int i = 0; i < queries.length; i++) {
        queries[i] = ("k" + (i * 3)).getBytes(StandardCharsets.UTF_8);
      }
      boolean[] out = new boolean[queries.length];
      int maybe = batched.mightContainAll(queries, out);
      int expected = 0;
      for (int i = 0; i < queries.length; i++) {
        assertThat(out[i]).isEqualTo(single.mightContain(queries[i]));
        expected += out[i] ? 1 : 0;
      }
      assertThat(maybe).isEqualTo(expected).isGreaterThanOrEqualTo(667);
      assertThatThrownBy(() -> batched.mightContainAll(queries, new boolean[3])).hasMessageContaining("out has 3");
    }
  }

  /** Parallel batches give the filter and the answers of the one-thread calls (several parts: 60,000 keys). */
  @Test
  void parallelBatchesEqualOneThread() {
    byte[][] items = new byte[60_000][];
    byte[][] queries = new byte[60_000][];
    for (int i = 0; i < items.length; i++) {
      items[i] = ("member-" + i).getBytes(StandardCharsets.UTF_8);
      queries[i] = ("member-" + (2 * i)).getBytes(StandardCharsets.UTF_8);
    }
    BloomFilter oneThread = BloomFilter.create(60_000, 0.01);
    BloomFilter parallel = BloomFilter.create(60_000, 0.01);
    oneThread.addAll(items);
    parallel.addAll(items, 4);
    assertThat(parallel.toPackedBytes()).isEqualTo(oneThread.toPackedBytes());
    boolean[] expected = new boolean[queries.length];
    boolean[] actual = new boolean[queries.length];
    assertThat(parallel.mightContainAll(queries, actual, 3)).isEqualTo(oneThread.mightContainAll(queries, expected));
    assertThat(actual).isEqualTo(expected);

    BlockedBloomFilter blockedOne = BlockedBloomFilter.create(60_000, 0.01);
    BlockedBloomFilter blockedParallel = BlockedBloomFilter.create(60_000, 0.01);
    blockedOne.addAll(items);
    blockedParallel.addAll(items, 4);
    for (long j = 0; j < blockedOne.wordCount(); j++) {
      assertThat(blockedParallel.word(j)).isEqualTo(blockedOne.word(j));
    }
    assertThat(blockedParallel.mightContainAll(queries, actual, 3)).isEqualTo(blockedOne.mightContainAll(queries, expected));
    assertThat(actual).isEqualTo(expected);
    assertThatThrownBy(() -> parallel.addAll(items, 0)).hasMessage("parallelism must be >= 1, was 0");
  }
}
