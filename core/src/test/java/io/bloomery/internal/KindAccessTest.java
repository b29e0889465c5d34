package io.bloomery.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomery.aging.AgePartitionedFilter;
import io.bloomery.blocked.BlockedBloomFilter;
import io.bloomery.blocked.ScalableBlockedBloomFilter;
import io.bloomery.blocked.SplitBlockBloomFilter;
import io.bloomery.counting.CountingBloomFilter;
import io.bloomery.cuckoo.CuckooFilter;
import io.bloomery.filter.BloomFilter;
import io.bloomery.fuse.BinaryFuseFilter;
import io.bloomery.scalable.ScalableBloomFilter;
import io.bloomery.sketch.CountMinSketch;
import io.bloomery.sketch.DecayRandom;
import io.bloomery.sketch.TopK;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The kinds' persisted state is reachable through KindAccess only, never through their public API. */
class KindAccessTest {
  /** Names that must not be public on any kind: restore factories and word/counter/bucket accessors. */
  private static final Set<String> INTERNAL = Set.of("restore", "word", "wordCount", "counterAt", "fingerprint",
      "bucketFingerprint", "heapItem", "heapCount", "writeWords", "writeBitset", "utf8", "littleEndian", "state");

  @Test
  void noKindExportsItsRestoreOrStorageAccessors() {
    List<Class<?>> kinds = List.of(BloomFilter.class, BlockedBloomFilter.class, SplitBlockBloomFilter.class,
        CountingBloomFilter.class, AgePartitionedFilter.class, BinaryFuseFilter.class, CountMinSketch.class,
        TopK.class, CuckooFilter.class, ScalableBloomFilter.class, ScalableBlockedBloomFilter.class,
        io.bloomery.filter.MembershipFilter.class, io.bloomery.sketch.TDigest.class);
    for (Class<?> kind : kinds) {
      List<String> exposed = Arrays.stream(kind.getMethods())
          .filter(m -> Modifier.isPublic(m.getModifiers()) && INTERNAL.contains(m.getName()))
          .map(Method::toString)
          .toList();
      assertThat(exposed).as(kind.getSimpleName()).isEmpty();
      assertThat(kind.getClasses()).as(kind.getSimpleName() + " nested public types")
          .noneMatch(nested -> nested.getSimpleName().endsWith("Source"));
    }
    assertThat(Arrays.stream(TopK.class.getMethods()).map(Method::getName)).doesNotContain("bucketCount");
  }

  @Test
  void eachKindFindsItsAccessEvenBeforeAnyInstanceExistsAndASecondRegistrationIsRefused() {
    assertThat(KindAccess.classic(BloomFilter.class)).isNotNull();
    assertThat(KindAccess.blocked(BlockedBloomFilter.class)).isNotNull();
    assertThat(KindAccess.splitBlock(SplitBlockBloomFilter.class)).isNotNull();
    assertThat(KindAccess.counting(CountingBloomFilter.class)).isNotNull();
    assertThat(KindAccess.aging(AgePartitionedFilter.class, AgePartitionedFilter.Snapshot.class)).isNotNull();
    assertThat(KindAccess.fuse(BinaryFuseFilter.class)).isNotNull();
    assertThat(KindAccess.countMin(CountMinSketch.class)).isNotNull();
    assertThat(KindAccess.topK(TopK.class, DecayRandom.class)).isNotNull();
    assertThat(KindAccess.scalableBlocked(ScalableBlockedBloomFilter.class, BlockedBloomFilter.class)).isNotNull();
    assertThat(KindAccess.tDigest(io.bloomery.sketch.TDigest.class)).isNotNull();
    KindAccess.Classic<BloomFilter> registered = KindAccess.classic(BloomFilter.class);
    assertThat(KindAccess.scalableDumps(ScalableBloomFilter.class, ScalableBloomFilter.Frozen.class)).isNotNull();
    assertThat(KindAccess.cuckooDumps(CuckooFilter.class)).isNotNull();
    assertThatThrownBy(() -> KindAccess.register(BloomFilter.class, registered))
        .isInstanceOf(IllegalStateException.class).hasMessageContaining("already registered");
    assertThat(KindAccess.classic(BloomFilter.class)).isSameAs(registered);
  }

  @Test
  void askingWithAnotherKindsClassFailsAtOnce() {
    // each kind registers when its class initializes: make sure both have, whatever ran before in this JVM
    assertThat(KindAccess.classic(BloomFilter.class)).isNotNull();
    assertThat(KindAccess.scalableBlocked(ScalableBlockedBloomFilter.class, BlockedBloomFilter.class)).isNotNull();
    assertThatThrownBy(() -> KindAccess.classic(BlockedBloomFilter.class))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("classic access is registered for [class io.bloomery.filter.BloomFilter]");
    assertThatThrownBy(() -> KindAccess.scalableBlocked(ScalableBlockedBloomFilter.class, BloomFilter.class))
        .isInstanceOf(IllegalStateException.class).hasMessageContaining("not [");
  }
}
