package io.bloomery.cluster.chaos;

import static io.bloomery.cluster.chaos.History.Query.CONTAINS;
import static io.bloomery.cluster.chaos.History.Query.COUNT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomery.cluster.chaos.History.Add;
import io.bloomery.cluster.chaos.History.Increment;
import io.bloomery.cluster.chaos.History.Op;
import io.bloomery.cluster.chaos.History.Read;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * Hand-made histories the checker must accept and must reject: each rejected one differs from an accepted one in
 * a single step (an answer, an outcome, an order in time), so every rule is shown to bite and to allow exactly what
 * it should.
 */
class HistoryCheckerTest {
  private final AtomicLong time = new AtomicLong();
  private final History history = new History(time::get);

  /** Sets the clock to {@code t}; the next invocation or completion happens then. */
  private HistoryCheckerTest t(long t) {
    time.set(t);
    return this;
  }

  private Op add(String key, String item) {
    return history.write("w", "ADD " + key + " " + item, List.of(new Add(key, item)));
  }

  private Op incr(String key, String item, long by) {
    return history.write("w", "INCRBY " + key + " " + item + " " + by, List.of(new Increment(key, item, by)));
  }

  /** A cuckoo add: the item is a member and its CF.COUNT grows by one. */
  private Op cfAdd(String key, String item) {
    return history.write("w", "CF.ADD " + key + " " + item, List.of(new Add(key, item), new Increment(key, item, 1)));
  }

  private Op contains(String key, String... items) {
    return history.read("r", "EXISTS " + key, Read.linearizable(CONTAINS, key, List.of(items)));
  }

  private Op count(String key, String item) {
    return history.read("r", "COUNT " + key + " " + item, Read.linearizable(COUNT, key, List.of(item)));
  }

  private List<String> violations() {
    return HistoryChecker.violations(history);
  }

  // ---- membership -------------------------------------------------------------------------------------------

  @Test
  void aReadAfterTheAcknowledgedAddSeesTheItem() {
    Op w = t(0).add("bf", "a");
    t(10).op(w).ok(5);
    Op r = t(20).contains("bf", "a", "b");
    t(30).op(r).ok(List.of(1L, 0L));
    assertThat(violations()).isEmpty();
  }

  @Test
  void aReadAfterTheAcknowledgedAddThatMissesTheItemIsAViolation() {
    Op w = t(0).add("bf", "a");
    t(10).op(w).ok(5);
    Op r = t(20).contains("bf", "a", "b");
    t(30).op(r).ok(List.of(0L, 0L));
    assertThat(violations()).singleElement().asString().contains("read answered 0 for bf a").contains("#0")
        .contains("#1");
  }

  @Test
  void aReadConcurrentWithTheAddMayMissIt() {
    Op w = t(0).add("bf", "a");
    Op r = t(5).contains("bf", "a");
    t(10).op(w).ok(5);
    t(30).op(r).ok(List.of(0L));
    assertThat(violations()).isEmpty();
  }

  @Test
  void aReadAfterATimedOutOrFailedAddMayMissIt() {
    Op lost = t(0).add("bf", "a");
    Op failed = t(0).add("bf", "b");
    t(10).op(lost).timeout("no answer");
    t(10).op(failed).fail("connection reset");
    Op r = t(20).contains("bf", "a", "b");
    t(30).op(r).ok(List.of(0L, 1L));
    assertThat(violations()).isEmpty();
  }

  @Test
  void aFailedReadIsNotChecked() {
    Op w = t(0).add("bf", "a");
    t(10).op(w).ok(5);
    Op r = t(20).contains("bf", "a");
    t(30).op(r).timeout("no answer");
    assertThat(violations()).isEmpty();
  }

  @Test
  void membershipNeverGoesBackFromOneToZero() {
    Op w = t(0).add("bf", "a");
    Op first = t(1).contains("bf", "a");
    t(2).op(first).ok(List.of(1L));
    Op second = t(3).contains("bf", "a");
    t(4).op(second).ok(List.of(0L));
    t(50).op(w).timeout("no answer");
    assertThat(violations()).singleElement().asString().contains("went down from 1 to 0");
  }

  @Test
  void overlappingReadsMayDisagree() {
    Op w = t(0).add("bf", "a");
    Op first = t(1).contains("bf", "a");
    Op second = t(2).contains("bf", "a");
    t(3).op(first).ok(List.of(1L));
    t(4).op(second).ok(List.of(0L));
    t(5).op(w).ok(3);
    assertThat(violations()).isEmpty();
  }

  @Test
  void aReadAtAnIndexSeesEveryAddAcknowledgedAtOrBelowIt() {
    Op below = t(0).add("bf", "a");
    t(1).op(below).ok(9);
    Op above = t(2).add("bf", "b");
    t(3).op(above).ok(11);
    Op r = t(4).history.read("r", "MEXISTS", Read.atIndex(CONTAINS, "bf", List.of("a", "b"), 10));
    t(5).op(r).ok(List.of(1L, 0L));
    assertThat(violations()).isEmpty();

    Op stale = t(6).history.read("r", "MEXISTS", Read.atIndex(CONTAINS, "bf", List.of("a"), 9));
    t(7).op(stale).ok(List.of(0L));
    assertThat(violations()).singleElement().asString().contains("read answered 0 for bf a");
  }

  @Test
  void aReadAtAnIndexIsNotOrderedInTime() {
    Op w = t(0).add("bf", "a");
    t(1).op(w).ok(12);
    Op r = t(5).history.read("r", "MEXISTS on a follower", Read.atIndex(CONTAINS, "bf", List.of("a"), 10));
    t(6).op(r).ok(List.of(0L));
    assertThat(violations()).isEmpty();
  }

  // ---- counters ---------------------------------------------------------------------------------------------

  /** Increments of 3 and 4 acknowledged, one of 5 timed out, then a read answering {@code value}. */
  private List<String> countAfterAcknowledgedAndTimedOut(long value) {
    Op a = t(0).incr("cms", "x", 3);
    Op b = t(0).incr("cms", "x", 4);
    Op c = t(0).incr("cms", "x", 5);
    t(10).op(a).ok(1);
    t(10).op(b).ok(2);
    t(10).op(c).timeout("no answer");
    Op r = t(20).count("cms", "x");
    t(30).op(r).ok(List.of(value));
    return violations();
  }

  @Test
  void aCountIsTheAcknowledgedIncrementsWithOrWithoutTheTimedOutOne() {
    assertThat(countAfterAcknowledgedAndTimedOut(7)).isEmpty();
  }

  @Test
  void aCountWithTheTimedOutIncrementIsValid() {
    assertThat(countAfterAcknowledgedAndTimedOut(12)).isEmpty();
  }

  @Test
  void aCountMissingAnAcknowledgedIncrementIsAViolation() {
    assertThat(countAfterAcknowledgedAndTimedOut(4)).singleElement().asString()
        .contains("count of cms x read 4, but 7 was acknowledged");
  }

  @Test
  void aCountWithAnIncrementAppliedTwiceIsAViolation() {
    assertThat(countAfterAcknowledgedAndTimedOut(10)).singleElement().asString().contains("read 10");
  }

  @Test
  void aCountNoSubsetOfTheUncertainIncrementsMakesIsAViolation() {
    Op a = t(0).incr("cms", "x", 3);
    Op b = t(0).incr("cms", "x", 5);
    t(10).op(a).fail("reset");
    t(10).op(b).timeout("no answer");
    Op r = t(20).count("cms", "x");
    t(30).op(r).ok(List.of(4L));
    assertThat(violations()).singleElement().asString().contains("only these 2 may also count [3, 5]");
  }

  @Test
  void aCuckooAddIsCountedExactlyOnceWhenAcknowledged() {
    for (int i = 0; i < 3; i++) {
      Op w = t(i).cfAdd("cf", "x");
      t(i).op(w).ok(i + 1);
    }
    Op r = t(10).count("cf", "x");
    t(11).op(r).ok(List.of(3L));
    assertThat(violations()).isEmpty();

    Op twice = t(12).count("cf", "x");
    t(13).op(twice).ok(List.of(4L));
    assertThat(violations()).singleElement().asString().contains("count of cf x read 4, but 3 was acknowledged");
  }

  @Test
  void anIncrementInvokedAfterTheReadCompletedCannotCount() {
    Op r = t(0).count("cms", "x");
    t(5).op(r).ok(List.of(2L));
    Op w = t(10).incr("cms", "x", 2);
    t(20).op(w).ok(1);
    assertThat(violations()).singleElement().asString().contains("count of cms x read 2, but 0");
  }

  @Test
  void aCountConcurrentWithAnIncrementMayIncludeIt() {
    Op w = t(0).incr("cms", "x", 2);
    Op r = t(1).count("cms", "x");
    t(5).op(r).ok(List.of(2L));
    t(20).op(w).ok(1);
    assertThat(violations()).isEmpty();
  }

  @Test
  void anIncrementThatNeverCompletedMayCount() {
    t(0).incr("cms", "x", 2);
    Op r = t(10).count("cms", "x");
    t(11).op(r).ok(List.of(2L));
    assertThat(violations()).isEmpty();
  }

  @Test
  void aCountNeverGoesDown() {
    Op w = t(0).incr("cms", "x", 2);
    Op first = t(1).count("cms", "x");
    t(2).op(first).ok(List.of(2L));
    Op second = t(3).count("cms", "x");
    t(4).op(second).ok(List.of(0L));
    t(9).op(w).timeout("no answer");
    assertThat(violations()).singleElement().asString().contains("went down from 2 to 0");
  }

  @Test
  void theFinalCountAtAnIndexAllowsOnlyTheUncertainIncrements() {
    Op a = t(0).incr("cms", "x", 1);
    Op b = t(0).incr("cms", "x", 2);
    t(1).op(a).ok(4);
    t(1).op(b).timeout("no answer");
    for (long value : new long[] {1, 3}) {
      Op r = t(2).history.read("r", "QUERY", Read.atIndex(COUNT, "cms", List.of("x"), 10));
      t(3).op(r).ok(List.of(value));
    }
    assertThat(violations()).isEmpty();
    Op r = t(4).history.read("r", "QUERY", Read.atIndex(COUNT, "cms", List.of("x"), 10));
    t(5).op(r).ok(List.of(2L));
    assertThat(violations()).singleElement().asString().contains("read 2, but 1 was acknowledged");
  }

  // ---- the history itself -----------------------------------------------------------------------------------

  @Test
  void anOperationCompletesOnce() {
    Op w = t(0).add("bf", "a");
    w.ok(1);
    assertThatThrownBy(() -> w.timeout("late")).isInstanceOf(IllegalStateException.class);
    Op r = contains("bf", "a");
    assertThatThrownBy(() -> r.ok(List.of(1L, 1L))).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void assertValidNamesTheContextAndTheCounts() {
    Op w = t(0).add("bf", "a");
    t(1).op(w).ok(1);
    Op r = t(2).contains("bf", "a");
    t(3).op(r).ok(List.of(0L));
    assertThatThrownBy(() -> HistoryChecker.assertValid(history, "seed 42")).isInstanceOf(AssertionError.class)
        .hasMessageContaining("seed 42: 1 violations in a history of 1 writes (1 ok, 0 fail, 0 timeout), 1 reads");
  }

  private Op op(Op op) {
    return op;
  }
}
