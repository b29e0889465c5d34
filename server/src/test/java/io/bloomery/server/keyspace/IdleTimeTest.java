package io.bloomery.server.keyspace;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomery.sketch.CountMinSketch;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * A key's idle time ({@code OBJECT IDLETIME}) on Redis's LRU clock: whole seconds, started again by every access
 * ({@code read}, a write's lookup) but not by a {@code peek}, set back by {@code RESTORE ... IDLETIME} with Redis's
 * wrap-around of its 24-bit clock.
 */
class IdleTimeTest {
  private final AtomicLong now = new AtomicLong(1_796_000_000_000L);
  private final Keyspace keyspace = new Keyspace(now::get);
  private final Key k = Key.of("k".getBytes(StandardCharsets.UTF_8));

  private void put() {
    try (Keyspace.Write w = keyspace.write(k)) {
      w.put(k, CountMinSketch.initByDimensions(2, 2));
    }
  }

  @Test
  void countsWholeSecondsSinceTheLastAccess() {
    assertThat(keyspace.idleSeconds(k)).isEqualTo(-1);
    put();
    assertThat(keyspace.idleSeconds(k)).isZero();
    now.addAndGet(999);
    assertThat(keyspace.idleSeconds(k)).as("resolution: one second").isLessThanOrEqualTo(1);
    now.addAndGet(41_001);
    assertThat(keyspace.idleSeconds(k)).isEqualTo(42);
    assertThat(keyspace.peek(k)).isNotNull();
    assertThat(keyspace.idleSeconds(k)).as("a peek is no access").isEqualTo(42);
    assertThat(keyspace.read(k)).isNotNull();
    assertThat(keyspace.idleSeconds(k)).isZero();
    now.addAndGet(7_000);
    try (Keyspace.Write w = keyspace.write(k)) {
      assertThat(w.exists(k)).isTrue();
    }
    assertThat(keyspace.idleSeconds(k)).as("a write's lookup is an access").isZero();
  }

  @Test
  void restoreIdletimeSetsTheLastAccessBackWithRedisWrapAround() {
    put();
    try (Keyspace.Write w = keyspace.write(k)) {
      w.idle(k, 100);
    }
    assertThat(keyspace.idleSeconds(k)).isEqualTo(100);
    now.set(10_000); // LRU clock 10: going back 20 s wraps below 0
    put();
    try (Keyspace.Write w = keyspace.write(k)) {
      w.idle(k, 20);
    }
    assertThat(keyspace.idleSeconds(k)).isEqualTo(20);
    now.set((Keyspace.LRU_CLOCK_MAX + 5L) * 1000); // the clock itself wraps: 2^24 s later it reads 4
    put();
    now.addAndGet(3_000);
    assertThat(keyspace.idleSeconds(k)).isEqualTo(3);
  }
}
