package io.bloomery.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.bloomery.filter.FilterFullException;
import io.bloomery.filter.FilterKind;
import io.bloomery.filter.IncompatibleFilterException;
import io.bloomery.filter.MembershipFilter;
import io.bloomery.filter.Mergeable;
import io.bloomery.format.FilterFormat;
import io.bloomery.format.MappedFilter;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The contract every filter kind honours (docs/ARCHITECTURE.md), run over every {@link FilterFactory}
 * constant. Subclass it (an empty {@code class FilterContractTest extends FilterContract {}}) to run
 * it; capability-dependent tests are skipped for kinds without the capability.
 */
public abstract class FilterContract {

  static final long N = 2_000;
  static final double P = 0.01;
  static final byte[] SEED = "contract".getBytes(StandardCharsets.UTF_8);
  static final long KEY_SEED = 20261130L;

  private static List<byte[]> members() {
    return Keys.urls(KEY_SEED, 0, (int) N);
  }

  private static List<byte[]> nonMembers(int count) {
    return Keys.urls(KEY_SEED, N, count);
  }

  @ParameterizedTest
  @EnumSource(FilterFactory.class)
  void everyAddedItemIsReportedMaybePresent(FilterFactory factory) {
    MembershipFilter filter = factory.create(N, P, SEED);
    List<byte[]> members = members();
    members.forEach(filter::add);
    for (byte[] member : members) {
      assertThat(filter.mightContain(member)).as("no false negatives").isTrue();
    }
  }

  @ParameterizedTest
  @EnumSource(FilterFactory.class)
  void emptyFilterReportsEverythingAbsent(FilterFactory factory) {
    MembershipFilter filter = factory.create(N, P, SEED);
    for (byte[] key : nonMembers(200)) {
      assertThat(filter.mightContain(key)).isFalse();
    }
    assertThat(filter.mightContain(new byte[0])).isFalse();
  }

  @ParameterizedTest
  @EnumSource(FilterFactory.class)
  void addReturnsTheOppositeOfAPriorMightContain(FilterFactory factory) {
    assumeTrue(factory.addReportsChange(), "kind does not promise add's return value");
    MembershipFilter filter = factory.create(N, P, SEED);
    List<byte[]> keys = new ArrayList<>(members());
    keys.addAll(members().subList(0, 100)); // re-inserts
    for (byte[] key : keys) {
      boolean before = filter.mightContain(key);
      assertThat(filter.add(key)).isEqualTo(!before);
    }
  }

  @ParameterizedTest
  @EnumSource(FilterFactory.class)
  void reinsertingChangesNothing(FilterFactory factory) {
    MembershipFilter filter = factory.create(N, P, SEED);
    List<byte[]> members = members();
    members.forEach(filter::add);
    Object state = factory.state(filter);
    List<byte[]> probes = nonMembers(2_000);
    List<Boolean> answers = answers(filter, probes);
    for (byte[] member : members) {
      boolean changed = filter.add(member);
      if (factory.addReportsChange()) {
        assertThat(changed).as("re-insert reports no change").isFalse();
      }
    }
    assertThat(answers(filter, probes)).isEqualTo(answers);
    if (state != null) {
      assertThat(factory.state(filter)).isEqualTo(state);
    }
  }

  @ParameterizedTest
  @EnumSource(FilterFactory.class)
  void nullItemsAreRejectedNamingTheArgument(FilterFactory factory) {
    MembershipFilter filter = factory.create(N, P, SEED);
    assertThatThrownBy(() -> filter.add((byte[]) null)).isInstanceOf(NullPointerException.class).hasMessageContaining("item");
    assertThatThrownBy(() -> filter.mightContain((byte[]) null)).isInstanceOf(NullPointerException.class).hasMessageContaining("item");
    assertThatThrownBy(() -> filter.add((CharSequence) null)).isInstanceOf(NullPointerException.class).hasMessageContaining("item");
    assertThatThrownBy(() -> filter.mightContain((CharSequence) null)).isInstanceOf(NullPointerException.class).hasMessageContaining("item");
  }

  @ParameterizedTest
  @EnumSource(FilterFactory.class)
  void emptyItemIsAnOrdinaryItem(FilterFactory factory) {
    MembershipFilter filter = factory.create(N, P, SEED);
    filter.add(new byte[0]);
    assertThat(filter.mightContain(new byte[0])).isTrue();
    assertThat(filter.mightContain("")).isTrue();
  }

  @ParameterizedTest
  @EnumSource(FilterFactory.class)
  void stringsAreUtf8AndLongsAreLittleEndian(FilterFactory factory) {
    MembershipFilter filter = factory.create(N, P, SEED);
    filter.add("caf\u00e9");
    filter.add(0x0102030405060708L);
    assertThat(filter.mightContain("caf\u00e9".getBytes(StandardCharsets.UTF_8))).isTrue();
    assertThat(filter.mightContain(new byte[] {8, 7, 6, 5, 4, 3, 2, 1})).isTrue();
  }

  @ParameterizedTest
  @EnumSource(FilterFactory.class)
  void batchCallsAnswerAsTheSingleCallsInOrder(FilterFactory factory) {
    List<byte[]> members = members().subList(0, 600);
    List<byte[]> keys = new ArrayList<>(members);
    keys.addAll(members.subList(0, 50)); // re-inserts inside the batch
    MembershipFilter batched = factory.create(N, P, SEED);
    MembershipFilter single = factory.create(N, P, SEED);
    int changed = batched.addAll(keys.toArray(new byte[0][]));
    int singleChanged = 0;
    for (byte[] key : keys) {
      singleChanged += single.add(key) ? 1 : 0;
    }
    if (factory.addReportsChange()) {
      assertThat(changed).as("addAll counts the adds that changed the filter").isEqualTo(singleChanged);
    }
    String[] texts = {"a", "caf\u00e9", ""};
    long[] numbers = {0, -1, 0x0102030405060708L};
    batched.addAll(texts);
    batched.addAll(numbers);
    for (String text : texts) {
      single.add(text);
    }
    for (long number : numbers) {
      single.add(number);
    }

    List<byte[]> probes = new ArrayList<>(members);
    probes.addAll(nonMembers(600));
    byte[][] items = probes.toArray(new byte[0][]);
    boolean[] out = new boolean[items.length + 1];
    out[items.length] = true; // beyond items.length: left as it was
    int maybe = batched.mightContainAll(items, out);
    int expected = 0;
    for (int i = 0; i < items.length; i++) {
      assertThat(out[i]).as("item %d", i).isEqualTo(batched.mightContain(items[i])).isEqualTo(single.mightContain(items[i]));
      expected += out[i] ? 1 : 0;
    }
    assertThat(maybe).isEqualTo(expected);
    assertThat(out[items.length]).isTrue();
    boolean[] textOut = new boolean[texts.length];
    assertThat(batched.mightContainAll(texts, textOut)).isEqualTo(texts.length);
    assertThat(textOut).containsOnly(true);
    boolean[] numberOut = new boolean[numbers.length];
    assertThat(batched.mightContainAll(numbers, numberOut)).isEqualTo(numbers.length);
    assertThat(numberOut).containsOnly(true);
  }

  @ParameterizedTest
  @EnumSource(FilterFactory.class)
  void batchCallsRefuseAShortOutAndNullsTheSameWayOnEveryKind(FilterFactory factory) {
    MembershipFilter filter = factory.create(N, P, SEED);
    assertThatThrownBy(() -> filter.mightContainAll(new byte[][] {{1}, {2}}, new boolean[1]))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("out");
    assertThatThrownBy(() -> filter.mightContainAll(new String[] {"a", "b"}, new boolean[1]))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("out");
    assertThatThrownBy(() -> filter.mightContainAll(new long[] {1, 2}, new boolean[1]))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("out");
    assertThatThrownBy(() -> filter.addAll((byte[][]) null)).isInstanceOf(NullPointerException.class);
    assertThatThrownBy(() -> filter.mightContainAll(new byte[][] {{1}}, null)).isInstanceOf(NullPointerException.class);
    assertThatThrownBy(() -> filter.mightContainAll(new byte[][] {null}, new boolean[1]))
        .isInstanceOf(NullPointerException.class);
  }

  @ParameterizedTest
  @EnumSource(FilterFactory.class)
  void aTypedViewAddsAndQueriesTheEncodersBytes(FilterFactory factory) {
    record Visit(String tenant, long id) {}
    MembershipFilter filter = factory.create(N, P, SEED);
    io.bloomery.filter.ItemEncoder<Visit> encoder = io.bloomery.filter.ItemEncoder.composite(
        io.bloomery.filter.ItemEncoder.utf8().on(Visit::tenant), io.bloomery.filter.ItemEncoder.longs().on(Visit::id));
    io.bloomery.filter.TypedFilter<Visit> visits = filter.typed(encoder);
    List<Visit> added = new ArrayList<>();
    for (int i = 0; i < 300; i++) {
      added.add(new Visit("tenant-" + (i % 7), i));
    }
    visits.add(added.get(0));
    visits.addAll(added.subList(1, added.size()));
    boolean[] out = new boolean[added.size()];
    assertThat(visits.mightContainAll(added, out)).isEqualTo(added.size());
    for (Visit visit : added) {
      assertThat(visits.mightContain(visit)).isTrue();
      assertThat(filter.mightContain(encoder.encode(visit))).as("the filter holds the encoder's bytes").isTrue();
    }
    assertThat(visits.filter()).isSameAs(filter);
    assertThatThrownBy(() -> visits.add(null)).isInstanceOf(NullPointerException.class).hasMessageContaining("item");
  }

  @ParameterizedTest
  @EnumSource(FilterFactory.class)
  void compatibleFiltersMergeToTheUnion(FilterFactory factory) {
    assumeTrue(factory.supportsMerge(), "kind does not merge");
    MembershipFilter left = factory.create(N, P, SEED);
    MembershipFilter right = factory.create(N, P, SEED);
    List<byte[]> members = members();
    List<byte[]> leftItems = members.subList(0, members.size() / 2);
    List<byte[]> rightItems = members.subList(members.size() / 2, members.size());
    leftItems.forEach(left::add);
    rightItems.forEach(right::add);
    Object rightState = factory.state(right);
    factory.merge(left, right);
    for (byte[] member : members) {
      assertThat(left.mightContain(member)).isTrue();
    }
    if (rightState != null) {
      assertThat(factory.state(right)).as("merge leaves its source unchanged").isEqualTo(rightState);
    }
    MembershipFilter union = factory.create(N, P, SEED);
    members.forEach(union::add);
    Object unionState = factory.state(union);
    if (unionState != null) {
      assertThat(factory.state(left)).as("merge equals building from the union").isEqualTo(unionState);
    }
  }

  @ParameterizedTest
  @EnumSource(FilterFactory.class)
  void incompatibleMergesAreRefusedAndChangeNothing(FilterFactory factory) {
    assumeTrue(factory.supportsMerge(), "kind does not merge");
    MembershipFilter target = factory.create(N, P, SEED);
    members().subList(0, 100).forEach(target::add);
    Object before = factory.state(target);
    List<MembershipFilter> incompatible = new ArrayList<>();
    incompatible.add(factory.create(2 * N, P, SEED));
    if (factory.supportsSeed()) {
      incompatible.add(factory.create(N, P, "another seed".getBytes(StandardCharsets.UTF_8)));
    }
    for (MembershipFilter other : incompatible) {
      members().subList(100, 200).forEach(other::add);
      assertThatThrownBy(() -> factory.merge(target, other)).isInstanceOf(IllegalArgumentException.class);
      if (before != null) {
        assertThat(factory.state(target)).isEqualTo(before);
      }
    }
  }

  @ParameterizedTest
  @EnumSource(FilterFactory.class)
  void deletingSomeMembersKeepsEveryOtherMember(FilterFactory factory) {
    assumeTrue(factory.supportsRemove(), "kind does not delete");
    MembershipFilter filter = factory.create(N, P, SEED);
    List<byte[]> members = members();
    members.forEach(filter::add);
    for (byte[] removed : members.subList(0, members.size() / 2)) {
      assertThat(factory.remove(filter, removed)).isTrue();
    }
    for (byte[] kept : members.subList(members.size() / 2, members.size())) {
      assertThat(filter.mightContain(kept)).isTrue();
    }
  }

  @ParameterizedTest
  @EnumSource(FilterFactory.class)
  void serializationRoundTripPreservesEveryAnswer(FilterFactory factory) {
    MembershipFilter filter = factory.create(N, P, SEED);
    members().forEach(filter::add);
    MembershipFilter copy = factory.roundTrip(filter);
    assertThat(copy.kind()).isEqualTo(filter.kind());
    List<byte[]> probes = new ArrayList<>(members());
    probes.addAll(nonMembers(2_000));
    assertThat(answers(copy, probes)).isEqualTo(answers(filter, probes));
    Object state = factory.state(filter);
    if (state != null) {
      assertThat(factory.state(copy)).isEqualTo(state);
    }
  }

  @ParameterizedTest
  @EnumSource(FilterFactory.class)
  void aMappedViewAnswersAsTheFilterAndRefusesWrites(FilterFactory factory) throws Exception {
    assumeTrue(factory.supportsMapping(), "kind cannot be mapped");
    MembershipFilter filter = factory.create(N, P, SEED);
    members().forEach(filter::add);
    java.nio.file.Path file = java.nio.file.Files.createTempFile("contract", FilterFormat.FILE_EXTENSION);
    try {
      FilterFormat.write(filter, file);
      MappedFilter mapped = FilterFormat.map(file);
      MappedFilter wrapped = FilterFormat.wrap(java.nio.ByteBuffer.wrap(FilterFormat.toBytes(filter)));
      List<byte[]> probes = new ArrayList<>(members());
      probes.addAll(nonMembers(2_000));
      for (MappedFilter view : List.of(mapped, wrapped)) {
        assertThat(view.kind()).isEqualTo(filter.kind());
        assertThat(answers(view, probes)).isEqualTo(answers(filter, probes));
        assertThatThrownBy(() -> view.add(members().get(0))).isInstanceOf(UnsupportedOperationException.class);
        assertThat(answers(view.toHeap(), probes)).isEqualTo(answers(filter, probes));
      }
    } finally {
      java.nio.file.Files.delete(file);
    }
  }

  @ParameterizedTest
  @EnumSource(FilterFactory.class)
  void concurrentAddsOfDisjointSetsLoseNothing(FilterFactory factory) throws Exception {
    assumeTrue(factory.threadSafe(), "kind is not thread-safe");
    MembershipFilter filter = factory.create(N, P, SEED);
    List<byte[]> members = members();
    int threads = 4;
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      List<Future<?>> futures = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        int from = t * members.size() / threads;
        int to = (t + 1) * members.size() / threads;
        futures.add(pool.submit(() -> members.subList(from, to).forEach(filter::add)));
      }
      for (Future<?> future : futures) {
        future.get(60, TimeUnit.SECONDS);
      }
    } finally {
      pool.shutdownNow();
    }
    for (byte[] member : members) {
      assertThat(filter.mightContain(member)).isTrue();
    }
  }

  @ParameterizedTest
  @EnumSource(FilterFactory.class)
  void parameterErrorsAreIllegalArgumentExceptions(FilterFactory factory) {
    List<ThrowingCallable> creations = factory.invalidCreations();
    assertThat(creations).isNotEmpty();
    for (int i = 0; i < creations.size(); i++) {
      assertThatThrownBy(creations.get(i)).as("invalid creation #%d", i).isInstanceOf(IllegalArgumentException.class);
    }
  }

  @ParameterizedTest
  @EnumSource(FilterFactory.class)
  @SuppressWarnings({"unchecked", "rawtypes"})
  void mergeRulesAreTheSameForEveryKind(FilterFactory factory) {
    MembershipFilter filter = factory.create(N, P, SEED);
    assertThat(filter instanceof Mergeable).as("Mergeable exactly when the kind merges").isEqualTo(factory.supportsMerge());
    assumeTrue(factory.supportsMerge(), "kind does not merge");
    Mergeable mergeable = (Mergeable) filter;
    members().subList(0, 100).forEach(filter::add);
    Object before = factory.state(filter);
    List<Boolean> answers = answers(filter, nonMembers(1_000));
    assertThatThrownBy(() -> mergeable.isCompatible(null)).isInstanceOf(NullPointerException.class).hasMessageContaining("other");
    assertThatThrownBy(() -> mergeable.mergeFrom(null)).isInstanceOf(NullPointerException.class).hasMessageContaining("other");
    assertThat(mergeable.isCompatible(mergeable)).as("never compatible with itself").isFalse();
    assertThatThrownBy(() -> mergeable.mergeFrom(mergeable)).isInstanceOf(IllegalArgumentException.class)
        .isNotInstanceOf(IncompatibleFilterException.class);
    assertThat(answers(filter, nonMembers(1_000))).as("a refused self-merge changes nothing").isEqualTo(answers);
    if (before != null) {
      assertThat(factory.state(filter)).isEqualTo(before);
    }
    MembershipFilter twin = factory.create(N, P, SEED);
    MembershipFilter other = factory.create(2 * N, P, SEED);
    assertThat(mergeable.isCompatible((Mergeable) twin)).isTrue();
    assertThat(mergeable.isCompatible((Mergeable) other)).isFalse();
    assertThatThrownBy(() -> mergeable.mergeFrom((Mergeable) other)).isInstanceOf(IncompatibleFilterException.class);
  }

  @ParameterizedTest
  @EnumSource(FilterFactory.class)
  void aFullFilterRefusesAddsWithFilterFullExceptionAndKeepsItsMembers(FilterFactory factory) {
    MembershipFilter bounded = factory.createBounded(100);
    List<byte[]> keys = Keys.urls(KEY_SEED, 10 * N, 100_000);
    if (bounded == null) {
      // The bit-array kinds never refuse an add: far past their capacity they saturate instead.
      if (factory.kind() == FilterKind.BINARY_FUSE) {
        return;
      }
      MembershipFilter small = factory.create(100, P, SEED);
      keys.subList(0, 5_000).forEach(small::add);
      assertThat(small.mightContain(keys.get(0))).isTrue();
      return;
    }
    List<byte[]> accepted = new ArrayList<>();
    byte[] refused = null;
    for (byte[] key : keys) {
      try {
        bounded.add(key);
        accepted.add(key);
      } catch (FilterFullException full) {
        refused = key;
        break;
      }
    }
    assertThat(refused).as("a bounded filter fills within 100,000 distinct items").isNotNull();
    List<Boolean> answers = answers(bounded, nonMembers(1_000));
    byte[] next = refused;
    assertThatThrownBy(() -> bounded.add(next)).as("still full").isInstanceOf(FilterFullException.class);
    for (byte[] member : accepted) {
      assertThat(bounded.mightContain(member)).as("a full filter keeps its members").isTrue();
    }
    assertThat(answers(bounded, nonMembers(1_000))).as("a refused add changes nothing").isEqualTo(answers);
  }

  private static List<Boolean> answers(MembershipFilter filter, List<byte[]> probes) {
    List<Boolean> answers = new ArrayList<>(probes.size());
    for (byte[] probe : probes) {
      answers.add(filter.mightContain(probe));
    }
    return answers;
  }
}
