package io.bloomery.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomery.aging.AgePartitionedFilter;
import io.bloomery.blocked.BlockedBloomFilter;
import io.bloomery.blocked.SplitBlockBloomFilter;
import io.bloomery.counting.CountingBloomFilter;
import io.bloomery.filter.BloomFilter;
import io.bloomery.fuse.BinaryFuseFilter;
import io.bloomery.redisbloom.CuckooFilter;
import io.bloomery.redisbloom.ScalableBloomFilter;
import io.bloomery.sketch.CountMinSketch;
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
        TopK.class, CuckooFilter.class, ScalableBloomFilter.class, io.bloomery.blocked.ScalableBlockedBloomFilter.class,
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
    assertThat(KindAccess.classic()).isNotNull();
    assertThat(KindAccess.blocked()).isNotNull();
    assertThat(KindAccess.splitBlock()).isNotNull();
    assertThat(KindAccess.counting()).isNotNull();
    assertThat(KindAccess.aging()).isNotNull();
    assertThat(KindAccess.fuse()).isNotNull();
    assertThat(KindAccess.countMin()).isNotNull();
    assertThat(KindAccess.topK()).isNotNull();
    assertThat(KindAccess.scalableBlocked()).isNotNull();
    assertThat(KindAccess.tDigest()).isNotNull();
    KindAccess.Classic registered = KindAccess.classic();
    assertThatThrownBy(() -> KindAccess.register(registered))
        .isInstanceOf(IllegalStateException.class).hasMessageContaining("already registered");
    assertThat(KindAccess.classic()).isSameAs(registered);
  }
}
