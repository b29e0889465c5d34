package io.bloomery.format;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomery.blocked.BlockedBloomFilter;
import io.bloomery.blocked.BlockedPlacement;
import io.bloomery.filter.BloomFilter;
import io.bloomery.hash.ProtocolId;
import io.bloomery.hash.Protocols;
import io.bloomery.testkit.Internals;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** FilterFormat.writeClassic / writeBlocked and BlockedPlacement against the filters they stand in for. */
class StreamedBodyWriterTest {

  @Test
  void streamedClassicBytesEqualTheFiltersOwn() throws IOException {
    for (ProtocolId id : new ProtocolId[] {ProtocolId.XXH3_EDH_V1, ProtocolId.SHA256_INDEX8}) {
      byte[] seed = id == ProtocolId.XXH3_EDH_V1 ? "s".getBytes(StandardCharsets.UTF_8) : new byte[0];
      BloomFilter filter = BloomFilter.create(Protocols.of(id), seed, 10_007, 5);
      for (int i = 0; i < 700; i++) {
        filter.add(("item-" + i).getBytes(StandardCharsets.UTF_8));
      }
      long[] next = {0};
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      FilterFormat.writeClassic(filter.hashProtocol(), filter.seed(), filter.bitSize(), filter.hashCount(),
          filter.insertedCount(), () -> Internals.word(filter, next[0]++), out);
      assertThat(out.toByteArray()).isEqualTo(FilterFormat.toBytes(filter));
    }
  }

  @Test
  void streamedBlockedBytesEqualTheFiltersOwnAndPlacementSetsTheSameBits() throws IOException {
    byte[] seed = "tenant".getBytes(StandardCharsets.UTF_8);
    BlockedBloomFilter filter = BlockedBloomFilter.create(seed, 37, 8);
    BlockedPlacement placement = BlockedPlacement.of(filter);
    long[] words = new long[37 * 8];
    for (int i = 0; i < 900; i++) {
      byte[] item = ("item-" + i).getBytes(StandardCharsets.UTF_8);
      boolean changedFilter = filter.add(item);
      long hash = placement.hash(item, 0, item.length);
      boolean changedWords = placement.setBits(hash, words, (int) (8 * placement.block(hash)));
      assertThat(changedWords).as("item %d", i).isEqualTo(changedFilter);
    }
    for (int j = 0; j < words.length; j++) {
      assertThat(words[j]).as("word %d", j).isEqualTo(Internals.word(filter, j));
    }
    int[] next = {0};
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    FilterFormat.writeBlocked(seed, 37, 8, filter.insertedCount(), () -> words[next[0]++], out);
    assertThat(out.toByteArray()).isEqualTo(FilterFormat.toBytes(filter));
  }

  @Test
  void invalidParametersAreRefusedBeforeAnyByteIsWritten() {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    assertThatThrownBy(() -> FilterFormat.writeClassic(Protocols.of(ProtocolId.SHA256_DOC_V1), new byte[0],
        70_000, 3, 0, () -> 0L, out)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("65535");
    assertThatThrownBy(() -> FilterFormat.writeClassic(Protocols.defaultProtocol(), new byte[0], 0, 3, 0, () -> 0L, out))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("bit count m");
    assertThatThrownBy(() -> FilterFormat.writeBlocked(new byte[0], 4, 17, 0, () -> 0L, out))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("hashes");
    assertThatThrownBy(() -> FilterFormat.writeBlocked(new byte[0], 4, 8, -1, () -> 0L, out))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("inserted count");
    assertThat(out.size()).isZero();
  }

  @Test
  void aClassicLastWordWithBitsPastMIsRefused() {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    assertThatThrownBy(() -> FilterFormat.writeClassic(Protocols.defaultProtocol(), new byte[0], 100, 3, 0,
        () -> -1L, out)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("beyond m = 100");
  }

  @Test
  void writingWithARecordedCountChangesOnlyTheCountField() throws IOException {
    BloomFilter classic = BloomFilter.create(Protocols.defaultProtocol(), new byte[0], 4_099, 4);
    BlockedBloomFilter blocked = BlockedBloomFilter.create(new byte[] {7}, 9, 6);
    for (int i = 0; i < 300; i++) {
      classic.add("c" + i);
      blocked.add("b" + i);
      blocked.add("b" + i); // a duplicate: offered twice, counted once by the filter
    }
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    FilterFormat.write(classic, 1_234, out);
    assertThat(FilterFormat.fromBytes(out.toByteArray(), BloomFilter.class).insertedCount()).isEqualTo(1_234);
    long[] next = {0};
    ByteArrayOutputStream streamed = new ByteArrayOutputStream();
    FilterFormat.writeClassic(classic.hashProtocol(), classic.seed(), classic.bitSize(), classic.hashCount(), 1_234,
        () -> Internals.word(classic, next[0]++), streamed);
    assertThat(out.toByteArray()).isEqualTo(streamed.toByteArray());

    out.reset();
    FilterFormat.write(blocked, 600, out);
    BlockedBloomFilter read = FilterFormat.fromBytes(out.toByteArray(), BlockedBloomFilter.class);
    assertThat(read.insertedCount()).isEqualTo(600);
    out.reset();
    FilterFormat.write(blocked, blocked.insertedCount(), out);
    assertThat(out.toByteArray()).isEqualTo(FilterFormat.toBytes(blocked));
  }

  @Test
  void writingWithARecordedCountRefusesOtherKindsAndBadCountsBeforeAnyByte() {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    assertThatThrownBy(() -> FilterFormat.write(io.bloomery.blocked.SplitBlockBloomFilter.ofBytes(64), 1, out))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("split-block");
    assertThatThrownBy(() -> FilterFormat.write(BloomFilter.create(1_000, 0.01), -1, out))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("inserted count");
    assertThatThrownBy(() -> FilterFormat.write(BlockedBloomFilter.create(1_000, 0.01), (1L << 62) + 1, out))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("inserted count");
    assertThat(out.size()).isZero();
  }
}
