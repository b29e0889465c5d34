package io.bloomery.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomery.blocked.BlockedBloomFilter;
import io.bloomery.filter.BloomFilter;
import io.bloomery.filter.BoundedFilter;
import io.bloomery.filter.FilterKind;
import io.bloomery.filter.MembershipFilter;
import io.bloomery.filter.Summary;
import io.bloomery.format.FilterFormat;
import io.bloomery.format.FilterFormatException;
import io.bloomery.format.MappedFilter;
import io.bloomery.fuse.BinaryFuseFilter;
import io.bloomery.hash.ProtocolId;
import io.bloomery.sketch.CountMinSketch;
import io.bloomery.sketch.DecayRandom;
import io.bloomery.sketch.TopK;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * One dialect across every persisted kind (issue 9). The shared names are interfaces the compiler holds each kind
 * to ({@link Summary#protocolId()}, {@link MembershipFilter#insertedCount()}, {@link BoundedFilter}); this checks
 * what the compiler cannot: that every kind sized for a number of items says so by implementing {@link
 * BoundedFilter}, that {@code protocolId()} is what the format records, and that no kind keeps an old spelling.
 */
class KindDialectTest {

  /** Spellings that were folded into one name each: itemCount/count → insertedCount, expectedFpp → estimatedFpp, … */
  private static final Set<String> OLD_NAMES = Set.of("itemCount", "expectedFpp", "protocol", "delete", "merge",
      "restore", "word", "wordCount", "counterAt");

  static Stream<Summary> everyKind() throws FilterFormatException {
    List<Summary> kinds = new ArrayList<>();
    for (FilterFactory factory : FilterFactory.values()) {
      if (factory.kind() != FilterKind.BINARY_FUSE) { // the factory's fuse is a test accumulator; the real one below
        kinds.add(factory.create(1_000, 0.01, "dialect".getBytes(StandardCharsets.UTF_8)));
      }
    }
    kinds.add(BinaryFuseFilter.build(Keys.urls(1, 0, 1_000), 8));
    kinds.add(CountMinSketch.initByDimensions(64, 4));
    kinds.add(TopK.reserve(5, 16, 4, 0.9, DecayRandom.glibc(1)));
    kinds.add(io.bloomery.sketch.TDigest.create(50));
    kinds.add(FilterFormat.wrap(ByteBuffer.wrap(FilterFormat.toBytes(BloomFilter.create(1_000, 0.01)))));
    kinds.add(FilterFormat.wrap(ByteBuffer.wrap(FilterFormat.toBytes(BlockedBloomFilter.create(1_000, 0.01)))));
    return kinds.stream();
  }

  @ParameterizedTest
  @MethodSource("everyKind")
  void protocolIdNamesWhatTheFormatRecords(Summary summary) throws Exception {
    Summary written = summary instanceof MappedFilter mapped ? mapped.toHeap() : summary;
    ProtocolId recorded = FilterFormat.describe(FilterFormat.toBytes(written)).protocolId();
    assertThat(summary.protocolId()).isEqualTo(recorded);
  }

  @ParameterizedTest
  @MethodSource("everyKind")
  void everyFilterSizedForItemsIsABoundedFilter(Summary summary) {
    boolean sizedForItems = summary instanceof MembershipFilter && summary.kind() != FilterKind.BINARY_FUSE;
    assertThat(summary instanceof BoundedFilter)
        .as("%s implements BoundedFilter", summary.getClass().getSimpleName()).isEqualTo(sizedForItems);
  }

  @ParameterizedTest
  @MethodSource("everyKind")
  void noKindKeepsAnOldSpelling(Summary summary) {
    List<String> old = Arrays.stream(summary.getClass().getMethods())
        .filter(m -> Modifier.isPublic(m.getModifiers()) && OLD_NAMES.contains(m.getName()))
        .map(Method::toString).toList();
    assertThat(old).as("old spellings on %s", summary.getClass().getSimpleName()).isEmpty();
  }
}
