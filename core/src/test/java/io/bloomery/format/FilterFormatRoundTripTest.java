package io.bloomery.format;

import static io.bloomery.format.FormatFixtures.assertSameFilter;
import static io.bloomery.format.FormatFixtures.filled;
import static io.bloomery.format.FormatFixtures.item;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomery.filter.BloomFilter;
import io.bloomery.filter.FilterKind;
import io.bloomery.filter.Summary;
import io.bloomery.hash.ProtocolId;
import io.bloomery.hash.Protocols;
import io.bloomery.testkit.ForeignSummary;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class FilterFormatRoundTripTest {

  /** Not one of the kinds: claims the classic kind's code but is no BloomFilter. */
  private static final Summary FOREIGN = ForeignSummary.claimingClassic();

  /** One case per implemented protocol, with parameters that protocol accepts, plus edge sizes. */
  static Stream<Arguments> cases() {
    List<Arguments> cases = new ArrayList<>();
    for (ProtocolId id : Protocols.implemented()) {
      switch (id) {
        case XXH3_EDH_V1:
          cases.add(Arguments.of(id, new byte[0], 1000L, 7, 100));
          cases.add(Arguments.of(id, "tenant-a".getBytes(StandardCharsets.UTF_8), 65L, 3, 5));
          cases.add(Arguments.of(id, new byte[0], 1L, 1, 3));
          cases.add(Arguments.of(id, new byte[0], 64L, 300, 2));
          cases.add(Arguments.of(id, new byte[0], 1L << 20, 10, 50_000));
          break;
        case SHA256_DOC_V1:
          cases.add(Arguments.of(id, "lab".getBytes(StandardCharsets.US_ASCII), 16L, 3, 4));
          cases.add(Arguments.of(id, new byte[255], 65535L, 255, 20));
          break;
        case GUAVA_MURMUR128_MITZ64:
          cases.add(Arguments.of(id, new byte[0], 1024L, 7, 100));
          cases.add(Arguments.of(id, new byte[0], 64L, 1, 1));
          break;
        default:
          // Protocols added by other kinds: every seedless classic shape the protocol accepts.
          long[][] shapes = {{1000, 7}, {127, 2}, {1024, 8}, {4096, 8}};
          for (long[] shape : shapes) {
            if (acceptsClassic(id, shape[0], (int) shape[1])) {
              cases.add(Arguments.of(id, new byte[0], shape[0], (int) shape[1], 100));
            }
          }
          break;
      }
    }
    return cases.stream();
  }

  private static boolean acceptsClassic(ProtocolId id, long bits, int hashes) {
    try {
      Protocols.of(id).checkParameters(bits, hashes, new byte[0]);
      return true;
    } catch (IllegalArgumentException e) {
      return false;
    }
  }

  @Test
  void everyProtocolUsableByClassicFiltersHasACase() {
    assertThat(cases().map(a -> a.get()[0]).distinct())
        .containsAll(CLASSIC_PROTOCOLS);
  }

  @ParameterizedTest(name = "{0} m={2} k={3} n={4}")
  @MethodSource("cases")
  void bytesRoundTripPreservesEverything(ProtocolId id, byte[] seed, long bits, int hashes, int members)
      throws Exception {
    BloomFilter original = filled(id, seed, bits, hashes, members);
    byte[] bytes = FilterFormat.toBytes(original);

    assertThat((long) bytes.length).isEqualTo(FilterFormat.serializedLength(original));
    assertThat((long) bytes.length).isEqualTo(22 + seed.length + 20 + 8 * ((bits + 63) / 64));
    BloomFilter restored = FilterFormat.readBloom(bytes);
    assertSameFilter(restored, original, members, 2_000);
    assertThat(FilterFormat.fromBytes(bytes)).isInstanceOf(BloomFilter.class);
    assertThat(FilterFormat.toBytes(restored)).isEqualTo(bytes);
  }

  @ParameterizedTest(name = "{0} m={2} k={3} n={4}")
  @MethodSource("cases")
  void streamAndFileRoundTrip(ProtocolId id, byte[] seed, long bits, int hashes, int members, @TempDir Path dir)
      throws Exception {
    BloomFilter original = filled(id, seed, bits, hashes, members);
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    FilterFormat.write(original, out);
    assertSameFilter(FilterFormat.readBloom(new ByteArrayInputStream(out.toByteArray())), original, members, 500);

    Path file = dir.resolve("filter" + FilterFormat.FILE_EXTENSION);
    FilterFormat.write(original, file);
    assertThat(Files.readAllBytes(file)).isEqualTo(out.toByteArray());
    assertSameFilter(FilterFormat.readBloom(file), original, members, 500);
    assertSameFilter((BloomFilter) FilterFormat.read(file), original, members, 500);
    try (var listing = Files.list(dir)) {
      assertThat(listing).as("no temporary file left behind").containsExactly(file);
    }
  }

  @Test
  void classicPayloadIsLittleEndianPackedBits() {
    // sha256-doc-v1 fixture (docs/PROTOCOLS.md, vectors/sha256-doc-v1.json): packed bits d291.
    BloomFilter filter = BloomFilter.create(Protocols.of(ProtocolId.SHA256_DOC_V1), "lab".getBytes(StandardCharsets.US_ASCII), 16, 3);
    for (int i = 0; i < 4; i++) {
      filter.add(String.format("doc-%02d", i));
    }
    byte[] bytes = FilterFormat.toBytes(filter);
    int payload = 10 + 3 + 8 + 20;
    assertThat(bytes.length).isEqualTo(payload + 8 + 4);
    assertThat(java.util.Arrays.copyOfRange(bytes, payload, payload + 8))
        .isEqualTo(FormatFixtures.hex("d291000000000000"));
  }

  @Test
  void envelopeFieldsSitWhereTheTableSays() {
    BloomFilter filter = filled(ProtocolId.SHA256_INDEX16, new byte[0], 130, 4, 3);
    byte[] bytes = FilterFormat.toBytes(filter);
    assertThat(java.util.Arrays.copyOfRange(bytes, 0, 10)).isEqualTo(FormatFixtures.hex("424c4d46" + "01" + "01" + "04" + "00" + "0000"));
    // body length = 20 + 8 * 3 words, then m = 130, k = 4, inserted = 3
    assertThat(java.util.Arrays.copyOfRange(bytes, 10, 38))
        .isEqualTo(FormatFixtures.hex("2c00000000000000" + "8200000000000000" + "04000000" + "0300000000000000"));
    java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
    crc.update(bytes, 0, bytes.length - 4);
    long stored = (bytes[bytes.length - 4] & 0xFFL) | (bytes[bytes.length - 3] & 0xFFL) << 8
        | (bytes[bytes.length - 2] & 0xFFL) << 16 | (bytes[bytes.length - 1] & 0xFFL) << 24;
    assertThat(stored).isEqualTo(crc.getValue());
  }

  @Test
  void fileWriteReplacesAtomicallyAndRefusesBeforeTouchingTheDirectory(@TempDir Path dir) throws IOException {
    Path file = dir.resolve("f.blmf");
    Files.write(file, new byte[] {1, 2, 3});
    BloomFilter filter = filled(ProtocolId.XXH3_EDH_V1, new byte[0], 500, 3, 10);
    FilterFormat.write(filter, file);
    assertThat(Files.readAllBytes(file)).isEqualTo(FilterFormat.toBytes(filter));
    assertThatThrownBy(() -> FilterFormat.write(FOREIGN, dir.resolve("g.blmf")))
        .isInstanceOf(IllegalArgumentException.class);
    try (var listing = Files.list(dir)) {
      assertThat(listing).containsExactly(file);
    }
  }

  @Test
  void streamReadConsumesExactlyOneEnvelope() throws IOException {
    BloomFilter first = filled(ProtocolId.XXH3_EDH_V1, new byte[0], 300, 4, 20);
    BloomFilter second = filled(ProtocolId.SHA256_INDEX8, new byte[0], 200, 3, 10);
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    FilterFormat.write(first, out);
    FilterFormat.write(second, out);
    out.write(0x7F);
    InputStream in = new ByteArrayInputStream(out.toByteArray());
    assertSameFilter(FilterFormat.readBloom(in), first, 20, 200);
    assertSameFilter((BloomFilter) FilterFormat.read(in), second, 10, 200);
    assertThat(in.read()).isEqualTo(0x7F);
    assertThat(in.read()).isEqualTo(-1);
  }

  @Test
  void describeReportsTheHeaderWithoutThePayload() throws IOException {
    BloomFilter filter = filled(ProtocolId.XXH3_EDH_V1, "s".getBytes(StandardCharsets.UTF_8), 1000, 7, 100);
    byte[] bytes = FilterFormat.toBytes(filter);
    FilterHeader header = FilterFormat.describe(bytes);
    assertThat(header.formatVersion()).isEqualTo(1);
    assertThat(header.kind()).isEqualTo(FilterKind.CLASSIC_BLOOM);
    assertThat(header.protocolId()).isEqualTo(ProtocolId.XXH3_EDH_V1);
    assertThat(header.seed()).isEqualTo(new byte[] {'s'});
    assertThat(header.parameters()).containsExactly(
        java.util.Map.entry("bits", 1000L), java.util.Map.entry("hashes", 7L),
        java.util.Map.entry("inserted", filter.insertedCount()));
    assertThat(header.totalLength()).isEqualTo(bytes.length);
    assertThat(header.bodyLength()).isEqualTo(20 + 8 * 16);

    InputStream in = new ByteArrayInputStream(bytes);
    assertThat(FilterFormat.describe(in).parameters()).isEqualTo(header.parameters());
    assertThat(in.available()).as("payload and checksum left unread").isEqualTo(16 * 8 + 4);
  }

  @Test
  void readBloomRefusesOtherKindsBeforeReadingTheirBody() {
    byte[] bytes = FilterFormat.toBytes(filled(ProtocolId.XXH3_EDH_V1, new byte[0], 64, 2, 1));
    bytes[5] = (byte) FilterKind.CUCKOO.code();
    assertThatThrownBy(() -> FilterFormat.readBloom(bytes))
        .isInstanceOf(FilterFormatException.class)
        .hasMessage("filter kind at offset 5: expected 1 'classic', found 7 'cuckoo'");
  }

  @Test
  void writeRefusesWhatItCannotSerialize() {
    assertThatThrownBy(() -> FilterFormat.toBytes(FOREIGN))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("not a filter kind this format knows");
    assertThatThrownBy(() -> FilterFormat.toBytes(null)).isInstanceOf(NullPointerException.class).hasMessage("filter");
  }

  @Test
  void readLimitRefusesLargeBodiesFromStreamsBeforeAllocating() {
    BloomFilter filter = filled(ProtocolId.XXH3_EDH_V1, new byte[0], 64 * 1024, 7, 10);
    byte[] bytes = FilterFormat.toBytes(filter);
    assertThatThrownBy(() -> FilterFormat.read(new ByteArrayInputStream(bytes), 1024))
        .isInstanceOf(FilterFormatException.class)
        .hasMessage("body at offset 18 declares 8212 bytes, expected at most the read limit of 1024 bytes");
  }

  @Property(tries = 200, seed = "20261130")
  void anyFilterRoundTrips(
      @ForAll @LongRange(min = 1, max = 5000) long bits,
      @ForAll @IntRange(min = 1, max = 40) int hashes,
      @ForAll @IntRange(min = 0, max = 300) int members,
      @ForAll byte[] seed,
      @ForAll("classicProtocols") ProtocolId id)
      throws Exception {
    if (id == ProtocolId.GUAVA_MURMUR128_MITZ64) {
      bits = 64 * ((bits + 63) / 64);
      seed = new byte[0];
    } else if (id != ProtocolId.XXH3_EDH_V1 && id != ProtocolId.SHA256_DOC_V1) {
      seed = new byte[0];
    } else if (seed.length > 255) {
      seed = java.util.Arrays.copyOf(seed, 255);
    }
    BloomFilter original = filled(id, seed, bits, hashes, members);
    byte[] bytes = FilterFormat.toBytes(original);
    BloomFilter restored = FilterFormat.readBloom(bytes);
    assertSameFilter(restored, original, members, 50);
    assertThat(FilterFormat.toBytes(restored)).isEqualTo(bytes);
    assertThat(restored.mightContain(item("item-", 0))).isEqualTo(members > 0 || original.mightContain(item("item-", 0)));
  }

  @net.jqwik.api.Provide
  net.jqwik.api.Arbitrary<ProtocolId> classicProtocols() {
    return net.jqwik.api.Arbitraries.of(CLASSIC_PROTOCOLS);
  }

  /** The protocols designed for classic filters (docs/PROTOCOLS.md), whose parameter rules the property knows. */
  static final List<ProtocolId> CLASSIC_PROTOCOLS = List.of(ProtocolId.XXH3_EDH_V1, ProtocolId.SHA256_DOC_V1,
      ProtocolId.SHA256_INDEX8, ProtocolId.SHA256_INDEX16, ProtocolId.GUAVA_MURMUR128_MITZ64);

  @Test
  void typedReadsReturnTheExpectedClassAndRefuseAnotherKindAtItsKindByte() throws IOException {
    BloomFilter classic = filled(ProtocolId.XXH3_EDH_V1, new byte[0], 500, 3, 10);
    byte[] bytes = FilterFormat.toBytes(classic);
    BloomFilter read = FilterFormat.fromBytes(bytes, BloomFilter.class);
    assertThat(FilterFormat.toBytes(read)).isEqualTo(bytes);
    assertThat(FilterFormat.read(new java.io.ByteArrayInputStream(bytes), io.bloomery.filter.MembershipFilter.class))
        .isInstanceOf(BloomFilter.class);
    byte[] blocked = FilterFormat.toBytes(io.bloomery.blocked.BlockedBloomFilter.create(100, 0.01));
    assertThatThrownBy(() -> FilterFormat.fromBytes(blocked, BloomFilter.class))
        .isInstanceOf(FilterFormatException.class)
        .hasMessage("filter kind at offset 5: expected a BloomFilter, found 2 'blocked' (a BlockedBloomFilter)");
    assertThatThrownBy(() -> FilterFormat.read(new java.io.ByteArrayInputStream(blocked),
        io.bloomery.sketch.CountMinSketch.class)).isInstanceOf(FilterFormatException.class);
  }
}
