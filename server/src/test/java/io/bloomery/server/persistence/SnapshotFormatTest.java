package io.bloomery.server.persistence;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.bloomery.filter.BloomFilter;
import io.bloomery.filter.MembershipFilter;
import io.bloomery.format.FilterFormat;
import io.bloomery.sketch.CountMinSketch;
import io.bloomery.testkit.FilterFactory;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SnapshotFormatTest {
  @TempDir Path dir;

  private record Loaded(String valueHex, long expireAt) {}

  private static Map<String, Loaded> read(Path file) throws IOException {
    Map<String, Loaded> loaded = new LinkedHashMap<>();
    SnapshotFormat.read(file, (key, value, expireAt) -> loaded.put(new String(key, StandardCharsets.UTF_8),
        new Loaded(java.util.HexFormat.of().formatHex(FilterFormat.toBytes((io.bloomery.filter.Summary) value)), expireAt)));
    return loaded;
  }

  private Path write(Map<String, Object> values, long expireAt) throws IOException {
    Path file = dir.resolve(DataDirectory.snapshotName(3));
    try (SnapshotFormat.Writer writer = new SnapshotFormat.Writer(file)) {
      writer.begin(1_764_460_800_000L, 3);
      for (Map.Entry<String, Object> e : values.entrySet()) {
        writer.accept(e.getKey().getBytes(StandardCharsets.UTF_8), e.getValue(), expireAt);
      }
      writer.publish();
    }
    return file;
  }

  @Test
  void everyKindRoundTripsWithKeyAndExpiry() throws IOException {
    Map<String, Object> values = new LinkedHashMap<>();
    for (FilterFactory kind : FilterFactory.values()) {
      MembershipFilter filter = kind.create(100, 0.01, kind.supportsSeed() ? new byte[] {7} : new byte[0]);
      for (int i = 0; i < 50; i++) {
        filter.add(("item" + i).getBytes(StandardCharsets.UTF_8));
      }
      values.put("key:" + kind.name(), kind.formatObject(filter));
    }
    CountMinSketch sketch = CountMinSketch.initByDimensions(50, 3);
    sketch.incrementBy("x".getBytes(StandardCharsets.UTF_8), 5);
    values.put("", sketch);
    Path file = write(values, 1_900_000_000_000L);
    Map<String, Loaded> loaded = read(file);
    assertThat(loaded.keySet()).containsExactlyElementsOf(values.keySet());
    values.forEach((key, value) -> {
      assertThat(loaded.get(key).expireAt()).isEqualTo(1_900_000_000_000L);
      if (key.equals("key:" + FilterFactory.AGE_PARTITIONED_XXH3_EDH_V1.name())) {
        // Read back under the system clock, it rotates away the test clock's generations when
        // serialized again; its bytes as stored are checked by the core format's own tests.
        assertThat(loaded.get(key).valueHex()).startsWith(java.util.HexFormat.of().formatHex(FilterFormat.toBytes((io.bloomery.filter.Summary) value), 0, 6));
        return;
      }
      assertThat(loaded.get(key).valueHex()).isEqualTo(java.util.HexFormat.of().formatHex(FilterFormat.toBytes((io.bloomery.filter.Summary) value)));
    });
    assertThat(DataDirectory.temporaries(dir)).isEmpty();
  }

  /**
   * A metadata entry (a cluster shard's slot state) is handed to the loader by name with its bytes, is not counted
   * as a key, and every flipped byte or cut within it is refused like a key entry's.
   */
  @Test
  void aMetadataEntryRoundTripsBesideTheKeysAndAnyDamageToItIsRefused() throws IOException {
    Path file = dir.resolve(DataDirectory.snapshotName(4));
    byte[] state = new byte[300];
    for (int i = 0; i < state.length; i++) {
      state[i] = (byte) (i * 31);
    }
    try (SnapshotFormat.Writer writer = new SnapshotFormat.Writer(file)) {
      writer.begin(1_764_460_800_000L, 0);
      writer.accept("bf".getBytes(StandardCharsets.UTF_8), BloomFilter.create(5, 0.2), -1);
      writer.metadata("slots".getBytes(StandardCharsets.UTF_8), state);
      writer.publish();
    }
    Map<String, byte[]> metadata = new LinkedHashMap<>();
    List<String> keys = new ArrayList<>();
    KeyLoader loader = new KeyLoader() {
      @Override
      public void load(byte[] key, Object value, long expireAtMillis) {
        keys.add(new String(key, StandardCharsets.UTF_8));
      }

      @Override
      public void metadata(byte[] name, byte[] bytes) {
        metadata.put(new String(name, StandardCharsets.UTF_8), bytes);
      }
    };
    assertThat(SnapshotFormat.read(file, loader).keys()).isEqualTo(1);
    assertThat(keys).containsExactly("bf");
    assertThat(metadata).containsOnlyKeys("slots");
    assertThat(metadata.get("slots")).isEqualTo(state);
    assertThat(read(file)).containsOnlyKeys("bf"); // a loader that keeps no metadata ignores it

    byte[] whole = Files.readAllBytes(file);
    int from = indexOf(whole, SnapshotFormat.META_MARKER);
    int to = whole.length - SnapshotFormat.TRAILER_LENGTH;
    Path damaged = dir.resolve("damaged.snap");
    for (int at = from; at < to; at++) {
      byte[] bytes = whole.clone();
      bytes[at] ^= 0x01;
      Files.write(damaged, bytes);
      assertThatThrownBy(() -> SnapshotFormat.read(damaged, loader)).as("byte %d", at)
          .isInstanceOf(PersistenceCorruptionException.class);
    }
    for (int length = from + 1; length < to; length++) {
      Files.write(damaged, Arrays.copyOf(whole, length));
      assertThatThrownBy(() -> SnapshotFormat.read(damaged, loader)).as("cut at %d", length)
          .isInstanceOf(PersistenceCorruptionException.class);
    }
  }

  private static int indexOf(byte[] haystack, byte[] needle) {
    outer:
    for (int i = 0; i + needle.length <= haystack.length; i++) {
      for (int j = 0; j < needle.length; j++) {
        if (haystack[i + j] != needle[j]) {
          continue outer;
        }
      }
      return i;
    }
    throw new AssertionError("not found");
  }

  @Test
  void anEmptyKeyspaceIsAValidSnapshot() throws IOException {
    Path file = write(Map.of(), -1);
    assertThat(Files.size(file)).isEqualTo(SnapshotFormat.HEADER_LENGTH + SnapshotFormat.TRAILER_LENGTH);
    assertThat(read(file)).isEmpty();
  }

  @Test
  void everyFlippedByteAndEveryTruncationIsRefusedWithTheFileNamedAlsoByVerify() throws IOException {
    BloomFilter small = BloomFilter.create(5, 0.2);
    small.add("a".getBytes(StandardCharsets.UTF_8));
    CountMinSketch sketch = CountMinSketch.initByDimensions(4, 2);
    Map<String, Object> values = new LinkedHashMap<>();
    values.put("bf", small);
    values.put("cms", sketch);
    Path file = write(values, -1);
    byte[] whole = Files.readAllBytes(file);
    Path damaged = dir.resolve("damaged.snap");
    for (int at = 0; at < whole.length; at++) {
      for (int pattern : new int[] {0x01, 0x80}) {
        byte[] bytes = whole.clone();
        bytes[at] ^= (byte) pattern;
        Files.write(damaged, bytes);
        Throwable thrown = catchThrowable(() -> read(damaged));
        assertThat(thrown).as("byte %d ^ %02X", at, pattern).isInstanceOf(PersistenceCorruptionException.class);
        assertThat(thrown).hasMessageStartingWith(damaged.toString() + " at offset ");
        assertThatThrownBy(() -> SnapshotFormat.verify(damaged)).as("verify, byte %d ^ %02X", at, pattern)
            .isInstanceOf(PersistenceCorruptionException.class);
      }
    }
    for (int length = 0; length < whole.length; length++) {
      Files.write(damaged, Arrays.copyOf(whole, length));
      assertThatThrownBy(() -> read(damaged)).as("cut at %d", length).isInstanceOf(PersistenceCorruptionException.class);
    }
    Files.write(damaged, Arrays.copyOf(whole, whole.length + 1));
    assertThatThrownBy(() -> read(damaged)).hasMessageContaining("after the trailer");
  }

  /**
   * One flipped byte anywhere in a snapshot used to make the whole file unreadable. Now every flip inside a
   * key entry loses that entry only: a flip in its value or value CRC names the key, a flip in its header
   * (marker, lengths, expiry, key, header CRC) is resynchronised at the next entry; a flip in the trailer
   * loses nothing. Only the file header is not skippable.
   */
  @Test
  void everyFlippedByteLosesAtMostItsOwnEntryWhenSkipping() throws IOException {
    Map<String, Object> values = new LinkedHashMap<>();
    for (String key : new String[] {"first", "middle", "last"}) {
      BloomFilter filter = BloomFilter.create(20, 0.1);
      filter.add(key.getBytes(StandardCharsets.UTF_8));
      values.put(key, filter);
    }
    Path file = write(values, -1);
    byte[] whole = Files.readAllBytes(file);
    long[] starts = new long[4];
    long at = SnapshotFormat.HEADER_LENGTH;
    int index = 0;
    for (Map.Entry<String, Object> e : values.entrySet()) {
      starts[index++] = at;
      at += SnapshotFormat.ENTRY_HEAD_LENGTH + e.getKey().length() + 4
          + FilterFormat.serializedLength((io.bloomery.filter.Summary) e.getValue()) + 4;
    }
    starts[3] = at;
    assertThat(starts[3] + SnapshotFormat.TRAILER_LENGTH).isEqualTo(whole.length);
    Path damaged = dir.resolve("damaged.snap");
    List<String> names = List.copyOf(values.keySet());
    for (int flip = 0; flip < whole.length; flip++) {
      byte[] bytes = whole.clone();
      bytes[flip] ^= 0x10;
      Files.write(damaged, bytes);
      if (flip < SnapshotFormat.HEADER_LENGTH) {
        assertThatThrownBy(() -> SnapshotFormat.readSkippingDamage(damaged, null)).as("byte %d", flip)
            .isInstanceOf(PersistenceCorruptionException.class);
        continue;
      }
      List<String> loaded = new ArrayList<>();
      SnapshotFormat.Summary summary = SnapshotFormat.readSkippingDamage(damaged,
          (key, value, expireAt) -> loaded.add(new String(key, StandardCharsets.UTF_8)));
      assertThat(summary.damaged()).as("byte %d", flip).hasSize(1);
      SnapshotFormat.Damaged entry = summary.damaged().getFirst();
      if (flip >= starts[3]) {
        assertThat(loaded).as("byte %d", flip).containsExactlyElementsOf(names);
        continue;
      }
      int hit = flip < starts[1] ? 0 : flip < starts[2] ? 1 : 2;
      List<String> expected = new ArrayList<>(names);
      expected.remove(hit);
      assertThat(loaded).as("byte %d", flip).containsExactlyElementsOf(expected);
      assertThat(entry.offset()).isEqualTo(starts[hit]);
      assertThat(entry.end()).isEqualTo(starts[hit + 1]);
      long valueStart = starts[hit] + SnapshotFormat.ENTRY_HEAD_LENGTH + names.get(hit).length() + 4;
      assertThat(entry.name()).as("byte %d", flip)
          .isEqualTo(flip >= valueStart ? "'" + names.get(hit) + "'" : "(key unreadable: the entry header is damaged)");
      Path repaired = dir.resolve("repaired.snap");
      SnapshotFormat.copyWithoutDamage(damaged, summary, repaired);
      List<String> reread = new ArrayList<>();
      SnapshotFormat.read(repaired, (key, value, expireAt) -> reread.add(new String(key, StandardCharsets.UTF_8)));
      assertThat(reread).containsExactlyElementsOf(expected);
    }
  }

  @Test
  void aFormatOneSnapshotIsStillRead() throws IOException {
    Path file = dir.resolve(DataDirectory.snapshotName(2));
    try (var in = getClass().getResourceAsStream("/persistence/format-1-directory/snapshot.0000000002.snap")) {
      Files.write(file, in.readAllBytes());
    }
    SnapshotFormat.Summary summary = SnapshotFormat.read(file, (key, value, expireAt) -> {});
    assertThat(summary.version()).isEqualTo(1);
    assertThat(summary.keys()).isEqualTo(2);
    assertThat(summary.firstSegment()).isEqualTo(2);
  }

  @Test
  void anAbandonedWriterLeavesNoFile() throws IOException {
    Path file = dir.resolve(DataDirectory.snapshotName(4));
    try (SnapshotFormat.Writer writer = new SnapshotFormat.Writer(file)) {
      writer.begin(0, 4);
      writer.accept(new byte[] {1}, BloomFilter.create(10, 0.1), -1);
    }
    assertThat(file).doesNotExist();
    assertThat(DataDirectory.temporaries(dir)).isEmpty();
  }
}
