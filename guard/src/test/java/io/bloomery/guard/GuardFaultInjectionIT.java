package io.bloomery.guard;

import static io.bloomery.guard.ExactStoreContract.bytes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;

/**
 * The store goes away mid-stream ({@code pg_ctl stop -m immediate}, a crash): errors surface, no
 * false "duplicate", and after the restart no item is lost.
 */
class GuardFaultInjectionIT {

  /** What the caller of the guard saw for one item over the whole test. */
  private static final class Seen {
    int reportedNew;
    boolean unknownOutcome; // an attempt raised StoreUnavailableException
  }

  @Test
  void crashMidStreamSurfacesErrorsAndLosesNothing() throws Exception {
    // The crawler workload in miniature: 6000 URLs, half of them repeats, in batches of 100.
    List<byte[]> stream = new ArrayList<>();
    Random random = new Random(42);
    for (int i = 0; i < 6_000; i++) {
      stream.add(bytes("https://example.org/" + (i % 2 == 0 ? i : random.nextInt(i))));
    }
    Set<ItemDigest.Key> distinct = new HashSet<>();
    stream.forEach(item -> distinct.add(new ItemDigest.Key(item)));
    Map<ItemDigest.Key, Seen> seen = new HashMap<>();

    try (PostgresCluster cluster = PostgresCluster.startNew()) {
      String url = cluster.createDatabase();
      try (Guard guard = Guard.builder(PostgresStore.open(url)).expectedInsertions(20_000).open()) {
        CountDownLatch stopped = new CountDownLatch(1);
        Thread crasher = new Thread(() -> {
          cluster.stopImmediately();
          stopped.countDown();
        });
        int batches = 0;
        long failures = 0;
        int firstBatchesOk = 0;
        for (int from = 0; from < stream.size(); from += 100) {
          if (batches++ == 20) {
            crasher.start(); // the server dies while the stream keeps going
          }
          List<byte[]> batch = stream.subList(from, from + 100);
          if (from + 100 == stream.size()) {
            // Where the crash lands depends on scheduling; the last batch is sent only once the
            // server is surely down, so at least one batch meets the dead server.
            stopped.await();
          }
          try {
            record(seen, batch, guard.addIfAbsent(batch));
            firstBatchesOk++;
          } catch (StoreUnavailableException e) {
            failures += batch.size();
            batch.forEach(item -> seen(seen, item).unknownOutcome = true);
            if (stopped.getCount() == 0) {
              break; // a real client gives up on the stream and retries it later
            }
          }
        }
        stopped.await();
        assertThat(firstBatchesOk).isGreaterThanOrEqualTo(20);
        assertThat(failures).isPositive();
        assertThat(guard.stats().insertFailures()).isEqualTo(failures);

        // While the server is down: a filter negative still answers (it needs no store) ...
        assertThat(guard.lookup("https://never.example/zzz").maybePresent()).isFalse();
        // ... and a "maybe" is an error, never a guess.
        assertThatThrownBy(() -> guard.lookup(stream.get(0)))
            .isInstanceOf(StoreUnavailableException.class);

        cluster.start();
        // Retry the whole stream against the recovered server. A pooled connection from before
        // the crash may fail once more; that batch's outcome is unknown and it is sent again.
        int retries = 0;
        for (int from = 0; from < stream.size(); from += 100) {
          List<byte[]> batch = stream.subList(from, from + 100);
          try {
            record(seen, batch, guard.addIfAbsent(batch));
          } catch (StoreUnavailableException e) {
            assertThat(++retries).as("the recovered server keeps failing: %s", e).isLessThan(5);
            batch.forEach(item -> seen(seen, item).unknownOutcome = true);
            from -= 100;
          }
        }
        Set<ItemDigest.Key> stored = ExactStoreContract.scanAll(guard.store());
        assertThat(stored).as("after the restart the store holds every item").isEqualTo(distinct);
      }
    }
    assertThat(seen.keySet()).isEqualTo(distinct);
    for (Map.Entry<ItemDigest.Key, Seen> entry : seen.entrySet()) {
      Seen s = entry.getValue();
      assertThat(s.reportedNew).as("item %s reported new more than once", entry.getKey())
          .isLessThanOrEqualTo(1);
      if (s.reportedNew == 0) {
        // Never reported new, yet stored: only allowed when an attempt's outcome was unknown
        // (its commit happened but the reply was lost in the crash).
        assertThat(s.unknownOutcome).as("item %s lost", entry.getKey()).isTrue();
      }
    }
  }

  private static Seen seen(Map<ItemDigest.Key, Seen> seen, byte[] item) {
    return seen.computeIfAbsent(new ItemDigest.Key(item), k -> new Seen());
  }

  /** Records a batch's answers and checks that no "duplicate" is false. */
  private static void record(Map<ItemDigest.Key, Seen> seen, List<byte[]> batch, boolean[] isNew) {
    for (int i = 0; i < batch.size(); i++) {
      Seen s = seen(seen, batch.get(i));
      if (isNew[i]) {
        s.reportedNew++;
      } else {
        assertThat(s.reportedNew == 1 || s.unknownOutcome)
            .as("duplicate reported for an item never stored before").isTrue();
      }
    }
  }
}
