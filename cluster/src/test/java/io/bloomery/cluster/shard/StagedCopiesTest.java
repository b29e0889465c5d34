package io.bloomery.cluster.shard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomery.server.keyspace.Key;
import java.util.Arrays;
import java.util.BitSet;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class StagedCopiesTest {
  private static final Key KEY = Key.of("big");

  private static byte[] payload(int n) {
    byte[] b = new byte[n];
    new Random(n).nextBytes(b);
    return b;
  }

  @Test
  void partsInOrderGiveThePayloadOnceAndTheSnapshotEntriesCarryWhatCameSoFar() {
    byte[] payload = payload(2_500_000);
    StagedCopies copies = new StagedCopies(StagedCopies.COPIES);
    assertThat(copies.part(KEY, 77, payload.length, 0, Arrays.copyOfRange(payload, 0, 2_100_000))).isNull();
    assertThat(copies.bytes()).isEqualTo(payload.length);
    List<byte[]> entries = copies.encode();
    assertThat(entries).as("2.1 MB in entries of at most 1 MB").hasSize(3);
    assertThat(entries).allSatisfy(e -> assertThat(e.length).isLessThan(1 << 20));

    StagedCopies restarted = new StagedCopies(StagedCopies.COPIES);
    entries.forEach(restarted::decode);
    assertThat(restarted.part(KEY, 77, payload.length, 2_100_000, Arrays.copyOfRange(payload, 2_100_000,
        payload.length))).isEqualTo(payload);
    assertThat(restarted.bytes()).isZero();
    assertThat(restarted.encode()).isEmpty();
  }

  @Test
  void aPartThatDoesNotFollowOrPassesTheTotalIsRefusedAndTheCopyForgotten() {
    byte[] payload = payload(1000);
    StagedCopies copies = new StagedCopies(StagedCopies.COPIES);
    assertThatThrownBy(() -> copies.part(KEY, -1, 1000, 10, new byte[10])).hasMessageContaining("does not follow any");
    copies.part(KEY, -1, 1000, 0, Arrays.copyOf(payload, 100));
    assertThatThrownBy(() -> copies.part(KEY, -1, 1000, 100, new byte[901])).hasMessageContaining("passes");
    assertThat(copies.encode()).isEmpty();
    copies.part(KEY, -1, 1000, 0, Arrays.copyOf(payload, 100));
    assertThatThrownBy(() -> copies.part(KEY, 5, 1000, 100, new byte[10])).as("another expiry")
        .hasMessageContaining("does not follow");
    copies.part(KEY, -1, 1000, 0, Arrays.copyOf(payload, 100));
    assertThatThrownBy(() -> copies.part(KEY, -1, 999, 100, new byte[10])).as("another total")
        .hasMessageContaining("does not follow");
    assertThatThrownBy(() -> copies.part(KEY, -1, 0, 0, new byte[0])).hasMessageContaining("0 bytes");
    assertThatThrownBy(() -> copies.part(KEY, -1, StagedCopies.MAX_TOTAL + 1, 0, new byte[0]))
        .hasMessageContaining("bytes");

    copies.part(KEY, -1, 1000, 0, Arrays.copyOf(payload, 100));
    BitSet other = new BitSet();
    other.set((io.bloomery.cluster.slot.HashSlot.of(KEY.bytes()) + 1) % 16384);
    copies.forget(other);
    assertThat(copies.encode()).hasSize(1);
    BitSet mine = new BitSet();
    mine.set(io.bloomery.cluster.slot.HashSlot.of(KEY.bytes()));
    copies.forget(mine);
    assertThat(copies.encode()).isEmpty();
  }

  @Test
  void everyCutOfASnapshotEntryIsRefusedAsMalformed() {
    StagedCopies copies = new StagedCopies(StagedCopies.COPIES);
    copies.part(KEY, -1, 1000, 0, payload(100));
    byte[] entry = copies.encode().get(0);
    for (int n = 0; n < 4 + 3 + 24; n++) {
      byte[] cut = Arrays.copyOf(entry, n);
      assertThatThrownBy(() -> new StagedCopies(StagedCopies.COPIES).decode(cut)).as("cut at %d", n)
          .isInstanceOf(IllegalArgumentException.class);
    }
    byte[] negative = entry.clone();
    negative[0] = (byte) 0x80;
    assertThatThrownBy(() -> new StagedCopies(StagedCopies.COPIES).decode(negative)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("key of");
    StagedCopies large = new StagedCopies(StagedCopies.COPIES);
    large.part(KEY, -1, 3_000_000, 0, payload(2_000_000));
    byte[] second = large.encode().get(1);
    assertThatThrownBy(() -> new StagedCopies(StagedCopies.COPIES).decode(second)).as("an entry without the one before it")
        .hasMessageContaining("does not follow any part");
  }
}
