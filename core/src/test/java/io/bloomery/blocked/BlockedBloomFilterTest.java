package io.bloomery.blocked;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import com.dynatrace.hash4j.hashing.Hashing;
import io.bloomery.filter.FilterKind;
import io.bloomery.filter.IncompatibleFilterException;
import io.bloomery.filter.MembershipFilter;
import io.bloomery.internal.Items;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class BlockedBloomFilterTest {

  private static byte[] key(String prefix, long i) {
    return (prefix + i).getBytes(StandardCharsets.UTF_8);
  }

  @Test
  void protocolKnownAnswers() {
    // xxh3-blocked-v1 pinned: hash, block and positions of "hello" in a 1000-block, k=7 filter.
    // XXH3-64("hello") = 9555e8555c62dcfd is the reference xxHash value.
    BlockedBloomFilter filter = BlockedBloomFilter.create(new byte[0], 1000, 7);
    filter.add("hello".getBytes(StandardCharsets.UTF_8));
    long h = Hashing.xxh3_64().hashBytesToLong("hello".getBytes(StandardCharsets.UTF_8));
    long block = ((h >>> 32) * 1000) >>> 32;
    long expectedBits = 0;
    List<Long> positions = new ArrayList<>();
    for (int i = 0; i < 7; i++) {
      int y = (int) h * BlockedBloomFilter.SALTS[i];
      positions.add(block * 512 + (y >>> 23));
    }
    for (long p : positions) {
      assertThat((filter.word(p >>> 6) >>> (p & 63)) & 1).as("bit %d", p).isEqualTo(1);
    }
    expectedBits = positions.stream().distinct().count();
    assertThat(filter.bitCount()).isEqualTo(expectedBits);
    assertThat(Long.toHexString(h)).isEqualTo("9555e8555c62dcfd");
    assertThat(positions).containsExactly(POSITIONS_OF_HELLO);
    // Seed 0 and "no seed" are the same XXH3.
    assertThat(Hashing.xxh3_64(0).hashBytesToLong(new byte[] {1, 2, 3}))
        .isEqualTo(Hashing.xxh3_64().hashBytesToLong(new byte[] {1, 2, 3}));
  }

  private static final Long[] POSITIONS_OF_HELLO = {
    298_497L, 298_811L, 298_564L, 298_588L, 298_780L, 298_530L, 298_750L
  };

  @Test
  void knownFalsePositiveCount() {
    // Catches any silent drift of the protocol: fixed keys, exact count.
    BlockedBloomFilter filter = BlockedBloomFilter.create(100_000, 0.01);
    assertThat(filter.blockCount()).isEqualTo(1933);
    assertThat(filter.hashCount()).isEqualTo(6);
    for (int i = 0; i < 100_000; i++) {
      filter.add(key("member-", i));
    }
    int falsePositives = 0;
    for (int i = 0; i < 100_000; i++) {
      if (filter.mightContain(key("absent-", i))) {
        falsePositives++;
      }
    }
    assertThat(falsePositives).isEqualTo(KNOWN_FALSE_POSITIVES);
  }

  private static final int KNOWN_FALSE_POSITIVES = 1010;

  @ParameterizedTest
  @ValueSource(doubles = {0.1, 0.01, 0.001})
  void realizedFprWithinBinomialBoundOfTheModel(double fpp) {
    int n = 300_000;
    BlockedBloomFilter filter = BlockedBloomFilter.create(n, fpp);
    byte[][] members = new byte[n][];
    for (int i = 0; i < n; i++) {
      members[i] = key("m", i);
    }
    filter.addAll(members);
    boolean[] answers = new boolean[n];
    assertThat(filter.mightContainAll(members, answers)).isEqualTo(n);
    int probes = 1_000_000;
    long positives = 0;
    for (int i = 0; i < probes; i++) {
      if (filter.mightContain(key("x", i))) {
        positives++;
      }
    }
    // The instance's exact FPR (mean block fill^k) against the probes, then the model against it.
    Binomial.assertWithin999(positives, probes, filter.estimatedFpp(), "blocked vs its own estimatedFpp");
    Binomial.assertWithin999(positives, probes, filter.modelFpp(n), "blocked vs model");
    assertThat(filter.modelFpp(n)).isLessThanOrEqualTo(fpp);
  }

  @Test
  void batchSliceAndSingleAgree() {
    BlockedBloomFilter single = BlockedBloomFilter.create(10_000, 0.02);
    BlockedBloomFilter batched = BlockedBloomFilter.create(10_000, 0.02);
    BlockedBloomFilter sliced = BlockedBloomFilter.create(10_000, 0.02);
    int count = 10_037;
    byte[][] items = new byte[count][];
    ByteArrayOutputStream buffer = new ByteArrayOutputStream();
    int[] offsets = new int[count];
    int[] lengths = new int[count];
    for (int i = 0; i < count; i++) {
      items[i] = key("k", i * 7L);
      offsets[i] = buffer.size();
      lengths[i] = items[i].length;
      buffer.writeBytes(items[i]);
    }
    int changedSingle = 0;
    for (byte[] item : items) {
      changedSingle += single.add(item) ? 1 : 0;
    }
    assertThat(batched.addAll(items)).isEqualTo(changedSingle);
    assertThat(sliced.addAll(buffer.toByteArray(), offsets, lengths, count)).isEqualTo(changedSingle);
    for (long w = 0; w < single.wordCount(); w++) {
      assertThat(batched.word(w)).isEqualTo(single.word(w));
      assertThat(sliced.word(w)).isEqualTo(single.word(w));
    }
    byte[][] queries = new byte[20_000][];
    for (int i = 0; i < queries.length; i++) {
      queries[i] = key("k", i);
    }
    boolean[] out = new boolean[queries.length];
    int maybe = single.mightContainAll(queries, out);
    int expected = 0;
    for (int i = 0; i < queries.length; i++) {
      assertThat(out[i]).isEqualTo(single.mightContain(queries[i]));
      expected += out[i] ? 1 : 0;
    }
    assertThat(maybe).isEqualTo(expected);
    boolean[] sliceOut = new boolean[count];
    assertThat(single.mightContainAll(buffer.toByteArray(), offsets, lengths, count, sliceOut)).isEqualTo(count);
    String[] strings = new String[queries.length];
    for (int i = 0; i < strings.length; i++) {
      strings[i] = "k" + i;
    }
    boolean[] stringOut = new boolean[strings.length];
    assertThat(single.mightContainAll(strings, stringOut)).isEqualTo(expected);
    assertThat(stringOut).isEqualTo(out);
  }

  @Test
  void stringsHashTheirUtf8Bytes() {
    BlockedBloomFilter filter = BlockedBloomFilter.create(1000, 0.01);
    String[] texts = {
      "", "plain ascii", "é", "e\u0301", "日本語", "emoji \uD83D\uDE00", "lone high \uD800 surrogate", "lone low \uDC00",
      "end high \uD83D", "x".repeat(70_000), "ü".repeat(40_000)
    };
    for (String text : texts) {
      BlockedBloomFilter viaBytes = BlockedBloomFilter.create(1000, 0.01);
      viaBytes.add(text.getBytes(StandardCharsets.UTF_8));
      filter.add(text);
      assertThat(viaBytes.mightContain(text)).isTrue();
      assertThat(filter.mightContain(text.getBytes(StandardCharsets.UTF_8))).isTrue();
      assertThat(filter.mightContain(new StringBuilder(text))).isTrue();
    }
    // 'é' in NFC and NFD are two different items (no normalisation).
    BlockedBloomFilter one = BlockedBloomFilter.create(new byte[0], 1, 7);
    one.add("é");
    assertThat(one.bitCount()).isEqualTo(BlockedBloomFilter.create(new byte[0], 1, 7).bitCount() + one.bitCount());
  }

  @Test
  void longsAreEightLittleEndianBytes() {
    BlockedBloomFilter a = BlockedBloomFilter.create(1000, 0.01);
    BlockedBloomFilter b = BlockedBloomFilter.create(1000, 0.01);
    for (long v : new long[] {0, 1, -1, Long.MIN_VALUE, 0x0102030405060708L}) {
      a.add(v);
      b.add(Items.littleEndian(v));
    }
    for (long w = 0; w < a.wordCount(); w++) {
      assertThat(a.word(w)).isEqualTo(b.word(w));
    }
  }

  @Test
  void seedChangesPlacementAndBlocksMerge() {
    BlockedBloomFilter plain = BlockedBloomFilter.create(new byte[0], 100, 7);
    BlockedBloomFilter seeded = BlockedBloomFilter.create(new byte[] {42}, 100, 7);
    plain.add(key("a", 1));
    seeded.add(key("a", 1));
    boolean differs = false;
    for (long w = 0; w < plain.wordCount(); w++) {
      differs |= plain.word(w) != seeded.word(w);
    }
    assertThat(differs).isTrue();
    assertThat(plain.isCompatible(seeded)).isFalse();
    long inserted = plain.insertedCount();
    assertThat(plain.isCompatible(plain)).isFalse();
    assertThatThrownBy(() -> plain.mergeFrom(plain)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("itself");
    assertThat(plain.insertedCount()).isEqualTo(inserted);
    assertThatThrownBy(() -> plain.mergeFrom(seeded)).isInstanceOf(IncompatibleFilterException.class).hasMessageContaining("seed");
    assertThatThrownBy(() -> plain.mergeFrom(BlockedBloomFilter.create(new byte[0], 101, 7)))
        .isInstanceOf(IncompatibleFilterException.class).hasMessageContaining("block count differs (this filter: 100, other filter: 101)");
    assertThatThrownBy(() -> plain.mergeFrom(BlockedBloomFilter.create(new byte[0], 100, 6)))
        .isInstanceOf(IncompatibleFilterException.class).hasMessageContaining("hash count k differs (this filter: 7, other filter: 6)");
  }

  @Test
  void mergeIsTheUnionOfTheBuilds() {
    BlockedBloomFilter a = BlockedBloomFilter.create(20_000, 0.01);
    BlockedBloomFilter b = BlockedBloomFilter.create(20_000, 0.01);
    BlockedBloomFilter both = BlockedBloomFilter.create(20_000, 0.01);
    for (int i = 0; i < 10_000; i++) {
      a.add(key("a", i));
      b.add(key("b", i));
      both.add(key("a", i));
      both.add(key("b", i));
    }
    BlockedBloomFilter merged = a.copy();
    merged.mergeFrom(b);
    for (long w = 0; w < both.wordCount(); w++) {
      assertThat(merged.word(w)).isEqualTo(both.word(w));
    }
    assertThat(merged.insertedCount()).isEqualTo(a.insertedCount() + b.insertedCount());
    assertThat(merged.estimatedCardinality()).isCloseTo(20_000L, within(400L));
    assertThat(a.estimatedCardinality()).isCloseTo(10_000L, within(200L));
    assertThat(merged.fillRatio()).isBetween(0.4, 0.6);
    assertThat(merged.estimatedFpp()).isCloseTo(merged.modelFpp(20_000), within(0.002));
  }

  @Test
  void writeAndRestoreRoundTrip() throws Exception {
    BlockedBloomFilter filter = BlockedBloomFilter.create(new byte[] {1, 2, 3}, 37, 5);
    for (int i = 0; i < 500; i++) {
      filter.add(key("r", i));
    }
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    filter.writeWords(out);
    assertThat(out.size()).isEqualTo(37 * 64);
    BlockedBloomFilter restored = BlockedBloomFilter.restore(filter.seed(), 37, 5, filter.insertedCount(),
        new ByteArrayInputStream(out.toByteArray()));
    for (long w = 0; w < filter.wordCount(); w++) {
      assertThat(restored.word(w)).isEqualTo(filter.word(w));
    }
    assertThat(restored.insertedCount()).isEqualTo(filter.insertedCount());
    for (int i = 0; i < 500; i++) {
      assertThat(restored.mightContain(key("r", i))).isTrue();
    }
    byte[] truncated = java.util.Arrays.copyOf(out.toByteArray(), out.size() - 1);
    assertThatThrownBy(() -> BlockedBloomFilter.restore(filter.seed(), 37, 5, 0, new ByteArrayInputStream(truncated)))
        .isInstanceOf(EOFException.class);
  }

  @Test
  void parameterChecks() {
    assertThatThrownBy(() -> BlockedBloomFilter.create(new byte[0], 0, 7)).hasMessageContaining("blocks must be in [1, ");
    assertThatThrownBy(() -> BlockedBloomFilter.create(new byte[0], BlockedBloomFilter.MAX_BLOCKS + 1, 7)).hasMessageContaining("blocks");
    assertThatThrownBy(() -> BlockedBloomFilter.create(new byte[0], 1, 0)).hasMessageContaining("hashes must be in [1, 16]");
    assertThatThrownBy(() -> BlockedBloomFilter.create(new byte[0], 1, 17)).hasMessageContaining("hashes");
    assertThatThrownBy(() -> BlockedBloomFilter.create(new byte[256], 1, 7)).hasMessageContaining("seed");
    BlockedBloomFilter filter = BlockedBloomFilter.create(10, 0.01);
    assertThat(filter.kind()).isEqualTo(FilterKind.BLOCKED_BLOOM);
    assertThatThrownBy(() -> filter.add((byte[]) null)).isInstanceOf(NullPointerException.class).hasMessageContaining("item");
    assertThatThrownBy(() -> filter.mightContain((String) null)).isInstanceOf(NullPointerException.class);
    assertThatThrownBy(() -> filter.add(new byte[3], 2, 2)).isInstanceOf(IndexOutOfBoundsException.class);
    assertThatThrownBy(() -> filter.mightContainAll(new byte[3][], new boolean[2])).hasMessageContaining("out has 2");
    assertThatThrownBy(() -> filter.addAll(new byte[4], new int[] {0}, new int[] {5}, 1)).isInstanceOf(IndexOutOfBoundsException.class);
    assertThatThrownBy(() -> filter.addAll(new byte[4], new int[] {0}, new int[] {1}, 2)).hasMessageContaining("count 2");
    assertThat(filter.add(new byte[0])).isTrue();
    assertThat(filter.mightContain(new byte[0])).isTrue();
  }

  @Test
  void concurrentAddsLoseNothing() throws Exception {
    BlockedBloomFilter filter = BlockedBloomFilter.create(400_000, 0.01);
    int threads = 4;
    int perThread = 100_000;
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      List<Future<?>> futures = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        int thread = t;
        futures.add(pool.submit(() -> {
          byte[][] batch = new byte[1000][];
          for (int i = 0; i < perThread; i++) {
            if (i % 2 == 0) {
              filter.add(key("t" + thread + "-", i));
            } else {
              batch[(i / 2) % 1000] = key("t" + thread + "-", i);
              if ((i / 2) % 1000 == 999) {
                filter.addAll(batch);
              }
            }
            filter.mightContain(key("q", i)); // readers interleave, never block
          }
        }));
      }
      for (Future<?> future : futures) {
        future.get();
      }
    } finally {
      pool.shutdown();
    }
    BlockedBloomFilter sequential = BlockedBloomFilter.create(400_000, 0.01);
    for (int t = 0; t < threads; t++) {
      for (int i = 0; i < perThread; i++) {
        assertThat(filter.mightContain(key("t" + t + "-", i))).isTrue();
        sequential.add(key("t" + t + "-", i));
      }
    }
    for (long w = 0; w < filter.wordCount(); w++) {
      assertThat(filter.word(w)).isEqualTo(sequential.word(w));
    }
  }
}
