package io.bloomery.format;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomery.blocked.BlockedBloomFilter;
import io.bloomery.counting.CountingBloomFilter;
import io.bloomery.filter.BloomFilter;
import io.bloomery.filter.MembershipFilter;
import io.bloomery.filter.Summary;
import io.bloomery.hash.ProtocolId;
import io.bloomery.hash.Protocols;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Mapped and wrapped filters against the heap filters the same bytes read into: the same answer to
 * every query, the same statistics, and every hostile file refused with a {@link FilterFormatException}.
 * The property runs with segments of a few words so that words are read across many segments (a
 * multi-GB file's layout, scaled down).
 */
class MappedFilterTest {

  @TempDir Path directory;

  private static final ProtocolId[] CLASSIC_PROTOCOLS = {
    ProtocolId.XXH3_EDH_V1, ProtocolId.SHA256_DOC_V1, ProtocolId.SHA256_INDEX8, ProtocolId.GUAVA_MURMUR128_MITZ64
  };

  /** A random heap filter of a mappable kind, filled with {@code items}. */
  private static MembershipFilter randomFilter(Random random, List<byte[]> items) {
    MembershipFilter filter;
    if (random.nextBoolean()) {
      byte[] seed = new byte[random.nextInt(12)];
      random.nextBytes(seed);
      filter = BlockedBloomFilter.create(seed, 1 + random.nextInt(40), 1 + random.nextInt(16));
    } else {
      ProtocolId protocol = CLASSIC_PROTOCOLS[random.nextInt(CLASSIC_PROTOCOLS.length)];
      boolean seeded = protocol == ProtocolId.XXH3_EDH_V1 || protocol == ProtocolId.SHA256_DOC_V1;
      byte[] seed = new byte[seeded ? random.nextInt(12) : 0];
      random.nextBytes(seed);
      long bits = protocol == ProtocolId.GUAVA_MURMUR128_MITZ64 ? 64L * (1 + random.nextInt(200)) : 1 + random.nextInt(20_000);
      filter = BloomFilter.create(Protocols.of(protocol), seed, bits, 1 + random.nextInt(12));
    }
    for (byte[] item : items) {
      filter.add(item);
    }
    return filter;
  }

  private static List<byte[]> randomItems(Random random, int count) {
    List<byte[]> items = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      byte[] item = new byte[random.nextInt(40)];
      random.nextBytes(item);
      items.add(item);
    }
    return items;
  }

  @Property(tries = 60)
  void mappedAndWrappedFiltersAnswerAsTheHeapFilter(@ForAll long seed) throws IOException {
    Random random = new Random(seed);
    List<byte[]> members = randomItems(random, random.nextInt(300));
    MembershipFilter heap = randomFilter(random, members);
    Path scratch = Files.createTempDirectory("mapped"); // jqwik injects no @TempDir
    try {
      checkEveryView(random, seed, members, heap, scratch.resolve("f" + FilterFormat.FILE_EXTENSION));
    } finally {
      try (var files = Files.list(scratch)) {
        for (Path file : files.toList()) {
          Files.delete(file);
        }
      }
      Files.delete(scratch);
    }
  }

  private static void checkEveryView(Random random, long seed, List<byte[]> members, MembershipFilter heap, Path file)
      throws IOException {
    FilterFormat.write(heap, file);
    int shift = random.nextInt(5); // 1 to 16 words per segment
    byte[] bytes = Files.readAllBytes(file);
    ByteBuffer direct = ByteBuffer.allocateDirect(bytes.length + 3);
    direct.position(3);
    direct.put(bytes).position(3);
    List<MappedFilter> views = List.of(
        MappedImage.map(file, MappedFilter.Verification.CHECKSUM, shift),
        MappedImage.wrap(ByteBuffer.wrap(bytes), MappedFilter.Verification.CHECKSUM, shift),
        MappedImage.wrap(direct, MappedFilter.Verification.HEADER_ONLY, shift),
        FilterFormat.map(file));
    List<byte[]> probes = new ArrayList<>(members);
    probes.addAll(randomItems(random, 500));
    byte[][] batch = probes.toArray(new byte[0][]);
    boolean[] expected = new boolean[batch.length];
    for (int i = 0; i < batch.length; i++) {
      expected[i] = heap.mightContain(batch[i]);
    }
    for (MappedFilter view : views) {
      String what = "seed " + seed + ", " + heap + " viewed as " + view;
      assertThat(view.kind()).as(what).isEqualTo(heap.kind());
      boolean[] answers = new boolean[batch.length];
      for (int i = 0; i < batch.length; i++) {
        answers[i] = view.mightContain(batch[i]);
      }
      assertThat(answers).as(what).isEqualTo(expected);
      boolean[] batched = new boolean[batch.length];
      int maybe = view.mightContainAll(batch, batched);
      assertThat(batched).as(what).isEqualTo(expected);
      assertThat(maybe).as(what).isEqualTo(count(expected));
      for (int i = 0; i < 50; i++) {
        long number = random.nextLong();
        String text = Long.toString(number, 36) + "é";
        assertThat(view.mightContain(number)).as(what).isEqualTo(heap.mightContain(number));
        assertThat(view.mightContain(text)).as(what).isEqualTo(heap.mightContain(text));
        assertThat(view.mightContain(new StringBuilder(text))).as(what).isEqualTo(heap.mightContain(text));
      }
      assertSameStatistics(heap, view, what);
      assertThat(FilterFormat.toBytes(view.toHeap())).as(what).isEqualTo(bytes);
      assertThat(view.serializedLength()).isEqualTo(bytes.length);
      view.verify();
      assertThat(view.isChecksumVerified()).isTrue();
    }
  }

  private static void assertSameStatistics(MembershipFilter heap, MappedFilter view, String what) {
    if (heap instanceof BloomFilter classic) {
      MappedBloomFilter mapped = (MappedBloomFilter) view;
      assertThat(mapped.protocolId()).as(what).isEqualTo(classic.protocolId());
      assertThat(mapped.seed()).as(what).isEqualTo(classic.seed());
      assertThat(mapped.bitSize()).as(what).isEqualTo(classic.bitSize());
      assertThat(mapped.hashCount()).as(what).isEqualTo(classic.hashCount());
      assertThat(mapped.insertedCount()).as(what).isEqualTo(classic.insertedCount());
      assertThat(mapped.bitCount()).as(what).isEqualTo(classic.bitCount());
      assertThat(mapped.fillRatio()).as(what).isEqualTo(classic.fillRatio());
      assertThat(mapped.estimatedFpp()).as(what).isEqualTo(classic.estimatedFpp());
      assertThat(mapped.estimatedCardinality()).as(what).isEqualTo(classic.estimatedCardinality());
      assertThat(mapped.capacity()).as(what).isEqualTo(classic.capacity());
      assertThat(mapped.isNearCapacity()).as(what).isEqualTo(classic.isNearCapacity());
      assertThat(mapped.isCompatible(classic)).as(what).isTrue();
    } else {
      BlockedBloomFilter blocked = (BlockedBloomFilter) heap;
      MappedBlockedBloomFilter mapped = (MappedBlockedBloomFilter) view;
      assertThat(mapped.protocolId()).as(what).isEqualTo(blocked.protocolId());
      assertThat(mapped.seed()).as(what).isEqualTo(blocked.seed());
      assertThat(mapped.blockCount()).as(what).isEqualTo(blocked.blockCount());
      assertThat(mapped.bitSize()).as(what).isEqualTo(blocked.bitSize());
      assertThat(mapped.hashCount()).as(what).isEqualTo(blocked.hashCount());
      assertThat(mapped.insertedCount()).as(what).isEqualTo(blocked.insertedCount());
      assertThat(mapped.bitCount()).as(what).isEqualTo(blocked.bitCount());
      assertThat(mapped.estimatedFpp()).as(what).isEqualTo(blocked.estimatedFpp());
      assertThat(mapped.estimatedCardinality()).as(what).isEqualTo(blocked.estimatedCardinality());
      assertThat(mapped.capacity()).as(what).isEqualTo(blocked.capacity());
      assertThat(mapped.isNearCapacity()).as(what).isEqualTo(blocked.isNearCapacity());
      assertThat(mapped.isCompatible(blocked)).as(what).isTrue();
    }
  }

  private static int count(boolean[] answers) {
    int n = 0;
    for (boolean answer : answers) {
      n += answer ? 1 : 0;
    }
    return n;
  }

  @Test
  void writesAreRefusedWithAClearException() throws IOException {
    for (Summary heap : List.of(BloomFilter.create(100, 0.01), BlockedBloomFilter.create(100, 0.01))) {
      MappedFilter mapped = FilterFormat.wrap(ByteBuffer.wrap(FilterFormat.toBytes(heap)));
      assertThatThrownBy(() -> mapped.add(new byte[] {1})).isInstanceOf(UnsupportedOperationException.class)
          .hasMessageContaining("read-only").hasMessageContaining("toHeap()");
      assertThatThrownBy(() -> mapped.add("x")).isInstanceOf(UnsupportedOperationException.class);
      assertThatThrownBy(() -> mapped.add(7L)).isInstanceOf(UnsupportedOperationException.class);
      MembershipFilter copy = mapped.toHeap();
      assertThat(copy.add("x")).isTrue();
      assertThat(mapped.mightContain("x")).isEqualTo(heap instanceof BloomFilter b ? b.mightContain("x") : false);
    }
  }

  @Test
  void theExpectedTypeIsChecked() throws IOException {
    Path classic = directory.resolve("classic.blmf");
    FilterFormat.write(BloomFilter.create(100, 0.01), classic);
    assertThat(FilterFormat.map(classic, MappedBloomFilter.class).bitSize()).isPositive();
    assertThatThrownBy(() -> FilterFormat.map(classic, MappedBlockedBloomFilter.class))
        .isInstanceOf(FilterFormatException.class).hasMessageContaining("expected a MappedBlockedBloomFilter")
        .hasMessageContaining("classic");
  }

  @Test
  void kindsThatCannotBeMappedAreRefusedByName() throws IOException {
    Path counting = directory.resolve("counting.blmf");
    FilterFormat.write(CountingBloomFilter.create(100, 0.01), counting);
    assertThatThrownBy(() -> FilterFormat.map(counting)).isInstanceOf(FilterFormatException.class)
        .hasMessageContaining(counting.toString()).hasMessageContaining("the kinds that can be mapped")
        .hasMessageContaining("FilterFormat.read");
  }

  @Test
  void everyTruncationAndEverySingleByteChangeIsRefused() throws IOException {
    for (Summary heap : List.of(filled(BloomFilter.create(40, 0.01)), filled(BlockedBloomFilter.create(40, 0.01)))) {
      byte[] valid = FilterFormat.toBytes(heap);
      for (int length = 0; length < valid.length; length++) {
        ByteBuffer truncated = ByteBuffer.wrap(valid, 0, length);
        assertThatThrownBy(() -> FilterFormat.wrap(truncated)).as("truncated to %d bytes", length)
            .isInstanceOf(FilterFormatException.class);
      }
      for (int offset = 0; offset < valid.length; offset++) {
        for (int pattern : new int[] {0x01, 0x80, 0xFF}) {
          byte[] changed = valid.clone();
          changed[offset] ^= (byte) pattern;
          assertThatThrownBy(() -> FilterFormat.wrap(ByteBuffer.wrap(changed)))
              .as("byte %d xor %02x", offset, pattern).isInstanceOf(FilterFormatException.class);
        }
      }
      byte[] longer = Arrays.copyOf(valid, valid.length + 1);
      assertThatThrownBy(() -> FilterFormat.wrap(ByteBuffer.wrap(longer))).isInstanceOf(FilterFormatException.class)
          .hasMessageContaining("trailing bytes");
    }
  }

  @Test
  void aHeaderLyingAboutMIsRefusedBeforeAnyPayloadIsRead() throws IOException {
    byte[] valid = FilterFormat.toBytes(filled(BloomFilter.create(1000, 0.01)));
    ByteBuffer header = ByteBuffer.wrap(valid).order(ByteOrder.LITTLE_ENDIAN);
    int bitsOffset = 18; // empty seed: the body starts at 18, m is its first field
    long bits = header.getLong(bitsOffset);
    header.putLong(bitsOffset, bits * 2);
    assertThatThrownBy(() -> FilterFormat.wrap(ByteBuffer.wrap(valid), MappedFilter.Verification.HEADER_ONLY))
        .isInstanceOf(FilterFormatException.class).hasMessageContaining("body length");
    // m and the body length both say 2m: the file is too short for them.
    long bodyLength = header.getLong(10);
    header.putLong(10, bodyLength + 8 * ((2 * bits + 63) / 64 - (bits + 63) / 64));
    assertThatThrownBy(() -> FilterFormat.wrap(ByteBuffer.wrap(valid), MappedFilter.Verification.HEADER_ONLY))
        .isInstanceOf(FilterFormatException.class).hasMessageContaining("truncated");
    // m a little smaller, same word count: the last word has bits at or beyond the new m.
    byte[] smaller = FilterFormat.toBytes(filled(BloomFilter.create(Protocols.defaultProtocol(), new byte[0], 640, 7)));
    ByteBuffer.wrap(smaller).order(ByteOrder.LITTLE_ENDIAN).putLong(bitsOffset, 600);
    assertThatThrownBy(() -> FilterFormat.wrap(ByteBuffer.wrap(smaller), MappedFilter.Verification.HEADER_ONLY))
        .isInstanceOf(FilterFormatException.class).hasMessageContaining("bits >= m = 600");
  }

  @Test
  void headerOnlyOpensACorruptPayloadWhichVerifyThenCatches() throws IOException {
    byte[] bytes = FilterFormat.toBytes(filled(BlockedBloomFilter.create(1000, 0.01)));
    bytes[bytes.length - 10] ^= 0x10;
    Path file = directory.resolve("corrupt.blmf");
    Files.write(file, bytes);
    assertThatThrownBy(() -> FilterFormat.map(file)).isInstanceOf(FilterFormatException.class)
        .hasMessageContaining(file.toString()).hasMessageContaining("checksum mismatch");
    MappedFilter unverified = FilterFormat.map(file, MappedFilter.Verification.HEADER_ONLY);
    assertThat(unverified.isChecksumVerified()).isFalse();
    assertThatThrownBy(unverified::verify).isInstanceOf(FilterFormatException.class)
        .hasMessageContaining("checksum mismatch").hasMessageContaining(file.toString());
  }

  @Test
  void aFileChangedInPlaceAfterMappingIsDetectedByVerify() throws IOException {
    Path file = directory.resolve("changing.blmf");
    FilterFormat.write(filled(BloomFilter.create(1000, 0.01)), file);
    MappedFilter mapped = FilterFormat.map(file);
    long size = Files.size(file);
    try (RandomAccessFile raw = new RandomAccessFile(file.toFile(), "rw")) {
      raw.seek(size - 100);
      int b = raw.read();
      raw.seek(size - 100);
      raw.write(b ^ 0x01);
    }
    assertThatThrownBy(mapped::verify).isInstanceOf(FilterFormatException.class)
        .hasMessageContaining("checksum mismatch");

    MappedFilter again = FilterFormat.map(directory.resolve("shrinking.blmf").getFileSystem().getPath(
        writeFilled(directory.resolve("shrinking.blmf")).toString()));
    try (RandomAccessFile raw = new RandomAccessFile(directory.resolve("shrinking.blmf").toFile(), "rw")) {
      raw.setLength(raw.length() / 2);
    }
    assertThatThrownBy(again::verify).isInstanceOf(FilterFormatException.class)
        .hasMessageContaining("changed after it was mapped").hasMessageContaining("replace it by rename");
  }

  @Test
  void aFileReplacedByRenameLeavesTheMappingOnTheOldFile() throws IOException {
    Path file = directory.resolve("replaced.blmf");
    BloomFilter first = BloomFilter.create(1000, 0.01);
    first.add("first");
    FilterFormat.write(first, file);
    MappedFilter mapped = FilterFormat.map(file);
    BloomFilter second = BloomFilter.create(50, 0.01);
    second.add("second");
    FilterFormat.write(second, file); // AtomicWrite: a new file renamed over the old one
    mapped.verify();
    assertThat(mapped.mightContain("first")).isTrue();
    assertThat(FilterFormat.map(file).mightContain("second")).isTrue();
  }

  private Path writeFilled(Path file) throws IOException {
    FilterFormat.write(filled(BlockedBloomFilter.create(1000, 0.01)), file);
    return file;
  }

  private static <F extends MembershipFilter> F filled(F filter) {
    for (int i = 0; i < 30; i++) {
      filter.add("item " + i);
    }
    return filter;
  }
}
