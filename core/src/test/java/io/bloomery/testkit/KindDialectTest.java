package io.bloomery.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomery.blocked.BlockedBloomFilter;
import io.bloomery.filter.BloomFilter;
import io.bloomery.filter.FilterKind;
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
 * One dialect across every persisted kind (issue 9): each names the same concept with the same public method, and
 * none keeps an old spelling. The names are not on a shared interface (the sketches are not membership filters,
 * and adding abstract methods to {@link Summary} would break outside implementations), so this checks each
 * class's public methods by name and return type.
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
    Method protocolId = publicMethod(summary, "protocolId");
    assertThat(protocolId.getReturnType()).isEqualTo(ProtocolId.class);
    Summary written = summary instanceof MappedFilter mapped ? mapped.toHeap() : summary;
    ProtocolId recorded = FilterFormat.describe(FilterFormat.toBytes(written)).protocolId();
    assertThat(protocolId.invoke(summary)).isEqualTo(recorded);
  }

  @ParameterizedTest
  @MethodSource("everyKind")
  void theSameConceptHasTheSameName(Summary summary) throws Exception {
    if (summary.kind() != FilterKind.TOP_K) { // a top-k answers per-item counts (count, query, list), no total
      assertThat(publicMethod(summary, "insertedCount").getReturnType()).isEqualTo(long.class);
    }
    boolean bounded = !Set.of(FilterKind.BINARY_FUSE, FilterKind.COUNT_MIN_SKETCH, FilterKind.TOP_K, FilterKind.T_DIGEST)
        .contains(summary.kind());
    if (bounded) {
      assertThat(publicMethod(summary, "capacity").getReturnType()).isEqualTo(long.class);
      assertThat(publicMethod(summary, "isNearCapacity").getReturnType()).isEqualTo(boolean.class);
    }
    List<String> old = Arrays.stream(summary.getClass().getMethods())
        .filter(m -> Modifier.isPublic(m.getModifiers()) && OLD_NAMES.contains(m.getName()))
        .map(Method::toString).toList();
    assertThat(old).as("old spellings on %s", summary.getClass().getSimpleName()).isEmpty();
  }

  /** The method {@code name()} as a caller sees it: on the kind's class if public, else on a public type it implements. */
  private static Method publicMethod(Summary summary, String name) throws NoSuchMethodException {
    List<Class<?>> types = new ArrayList<>();
    for (Class<?> type = summary.getClass(); type != null; type = type.getSuperclass()) {
      types.add(type);
      types.addAll(Arrays.asList(type.getInterfaces()));
    }
    for (Class<?> type : types) {
      if (Modifier.isPublic(type.getModifiers())) {
        try {
          return type.getMethod(name);
        } catch (NoSuchMethodException e) {
          // try the next public type
        }
      }
    }
    throw new NoSuchMethodException(summary.getClass().getName() + " has no public " + name + "()");
  }
}
