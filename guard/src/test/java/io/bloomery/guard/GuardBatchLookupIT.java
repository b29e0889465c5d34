package io.bloomery.guard;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link Guard#lookup(List)} answers exactly what item-by-item lookups answer, on PostgreSQL and SQLite. */
class GuardBatchLookupIT {
  @TempDir Path dir;

  static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  void sameAsSingleLookups(Guard guard, long seed) {
    Random r = new Random(seed);
    List<byte[]> added = new ArrayList<>();
    for (int i = 0; i < 300; i++) {
      added.add(b("https://example.org/" + i + "/" + r.nextInt(1_000_000)));
    }
    guard.addIfAbsent(added);
    List<byte[]> asked = new ArrayList<>();
    for (int i = 0; i < 400; i++) {
      asked.add(r.nextInt(4) == 0 ? added.get(r.nextInt(added.size())) : b("never-" + seed + "-" + i));
    }
    asked.add(asked.get(0)); // a repeat inside the call
    List<Verdict> batch = guard.lookup(asked);
    assertThat(batch).hasSize(asked.size());
    for (int i = 0; i < asked.size(); i++) {
      Verdict single = guard.lookup(asked.get(i));
      assertThat(batch.get(i)).as("item %d (seed %d)", i, seed).isEqualTo(single);
    }
    assertThat(guard.lookup(List.of())).isEmpty();
  }

  @Test
  void postgres() {
    long seed = System.nanoTime();
    try (Guard guard = Guard.builder(PostgresStore.open(PostgresCluster.shared().createDatabase()))
        .expectedInsertions(1000).fpp(0.05).open()) {
      sameAsSingleLookups(guard, seed);
      GuardStats s = guard.stats();
      assertThat(s.storeLookupsMade() + s.storeLookupsAvoided()).isEqualTo(300 + 2L * 401); // adds, batch, singles
    }
  }

  @Test
  void sqlite() {
    long seed = System.nanoTime();
    try (Guard guard = Guard.builder(SqliteStore.open(dir.resolve("seen.db"))).expectedInsertions(1000).fpp(0.05)
        .open()) {
      sameAsSingleLookups(guard, seed);
    }
  }
}
