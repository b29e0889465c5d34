package io.bloomery.guard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The contract of a {@link LedgerStore} (SQLite and PostgreSQL subclasses), on top of {@link ExactStoreContract}:
 * the delivery ledger's durable rows kept in a batch's own transaction. A pending mark of another owner is claimed
 * once, an acknowledged one never; a batch with no "maybe" answers and marks as without the hint; a token's answers
 * are stored, replayed, and refused for other items.
 */
abstract class LedgerStoreContract extends ExactStoreContract {

  @Override
  protected abstract LedgerStore createEmptyStore();

  @Override
  protected abstract LedgerStore sameDataStore();

  private static final LedgerStore.Decide AS_STORED = (inserted, claimed) -> {
    boolean[] answers = inserted.clone();
    for (int i = 0; i < answers.length; i++) {
      answers[i] |= claimed[i];
    }
    return answers;
  };

  private static LedgerStore.Ledger plain(String owner, List<byte[]> acknowledged) {
    return new LedgerStore.Ledger(owner, null, null, acknowledged);
  }

  private static LedgerStore.Ledger token(String owner, String token, byte[] request) {
    return new LedgerStore.Ledger(owner, bytes(token), request, List.of());
  }

  @Test
  void aPendingMarkOfAnotherOwnerIsClaimedOnceAndAnAcknowledgedOneNever() {
    LedgerStore store = track(createEmptyStore());
    LedgerStore.Recorded first = store.insertAllIfAbsent(List.of(bytes("a"), bytes("b"), bytes("a")),
        plain("dead", List.of()), AS_STORED);
    assertThat(first.answers()).containsExactly(true, true, false);
    assertThat(first.replayed()).isFalse();
    // "dead" delivered b (acknowledged with its next batch), never a: a's mark stays
    store.insertAllIfAbsent(List.of(bytes("c")), plain("dead", List.of(bytes("b"))), AS_STORED);
    LedgerStore other = track(sameDataStore());
    LedgerStore.Recorded retry = other.insertAllIfAbsent(List.of(bytes("a"), bytes("b"), bytes("c")),
        plain("alive", List.of()), AS_STORED);
    assertThat(retry.inserted()).containsExactly(false, false, false);
    assertThat(retry.answers()).containsExactly(true, false, true);
    // claimed: now "alive"'s marks, so a third owner's add answers 0 ... until "alive" would die
    assertThat(other.insertAllIfAbsent(List.of(bytes("a")), plain("alive", List.of()), AS_STORED).answers())
        .containsExactly(false);
    other.acknowledge("alive", List.of(bytes("a"), bytes("c")));
    assertThat(store.insertAllIfAbsent(List.of(bytes("a"), bytes("c")), plain("third", List.of()), AS_STORED)
        .answers()).containsExactly(false, false);
  }

  /** A {@link LedgerStore.Decide} that answers as stored and records each call's {inserted, claimed}. */
  private static LedgerStore.Decide recording(List<boolean[][]> calls) {
    return (inserted, claimed) -> {
      calls.add(new boolean[][] {inserted.clone(), claimed.clone()});
      return AS_STORED.answers(inserted, claimed);
    };
  }

  @Test
  void aBatchWithNoMaybeIsAnsweredAndMarkedAsWithoutTheHint() {
    LedgerStore store = track(createEmptyStore());
    List<boolean[][]> calls = new ArrayList<>();
    LedgerStore.Recorded first = store.insertAllIfAbsent(List.of(bytes("a"), bytes("b"), bytes("c")),
        new boolean[3], plain("dead", List.of()), recording(calls));
    assertThat(first.inserted()).containsExactly(true, true, true);
    assertThat(first.answers()).containsExactly(true, true, true);
    assertThat(calls).hasSize(1);
    assertThat(calls.get(0)[0]).containsExactly(true, true, true);
    assertThat(calls.get(0)[1]).containsExactly(false, false, false);
    // "dead" delivered b, acknowledged with its next (hinted) batch; a and c keep their marks
    LedgerStore.Recorded next = store.insertAllIfAbsent(List.of(bytes("d")), new boolean[1],
        plain("dead", List.of(bytes("b"))), AS_STORED);
    assertThat(next.answers()).containsExactly(true);
    LedgerStore other = track(sameDataStore());
    LedgerStore.Recorded retry = other.insertAllIfAbsent(List.of(bytes("a"), bytes("b"), bytes("c"), bytes("d")),
        new boolean[] {true, true, true, true}, plain("alive", List.of()), AS_STORED);
    assertThat(retry.inserted()).containsExactly(false, false, false, false);
    assertThat(retry.answers()).containsExactly(true, false, true, true);
    assertThat(scanAll(store)).hasSize(4);
  }

  @Test
  void aBatchWithNoMaybeThatMeetsAStoredItemWritesNothingTwiceAndAnswersAsWithoutTheHint() throws Exception {
    LedgerStore store = track(createEmptyStore());
    store.insertAllIfAbsent(List.of(bytes("old"), bytes("delivered")), plain("dead", List.of()), AS_STORED);
    store.acknowledge("dead", List.of(bytes("delivered")));
    List<boolean[][]> calls = new ArrayList<>();
    // the filter said "never seen" for every item (another writer stored two of them): stale negatives
    LedgerStore.Recorded r = track(sameDataStore()).insertAllIfAbsent(
        List.of(bytes("new1"), bytes("old"), bytes("delivered"), bytes("new2")), new boolean[4],
        plain("alive", List.of()), recording(calls));
    assertThat(r.inserted()).containsExactly(true, false, false, true);
    assertThat(r.answers()).containsExactly(true, true, false, true); // old's lost 1 claimed from "dead"
    assertThat(calls).hasSize(1);
    assertThat(calls.get(0)[1]).containsExactly(false, true, false, false);
    assertThat(scanAll(store)).hasSize(4);
    // and a digest collision met on that path still commits nothing of its batch
    plantRow(ItemDigest.of(bytes("later")), bytes("a foreign row under later's digest"));
    assertThatThrownBy(() -> store.insertAllIfAbsent(List.of(bytes("fresh"), bytes("later")), new boolean[2],
        plain("alive", List.of()), AS_STORED)).isInstanceOf(DigestCollisionException.class);
    assertThat(store.contains(bytes("fresh"))).isFalse();
    assertThat(scanAll(store)).hasSize(5);
  }

  @Test
  void aTokensRepliesAreStoredAndReplayedAndRefusedForOtherItems() {
    LedgerStore store = track(createEmptyStore());
    store.insertAllIfAbsent(List.of(bytes("lost")), plain("dead", List.of()), AS_STORED);
    byte[] request = bytes("digest of x, lost, y");
    LedgerStore.Recorded first = store.insertAllIfAbsent(List.of(bytes("x"), bytes("lost"), bytes("y")),
        token("alive", "t1", request), AS_STORED);
    assertThat(first.answers()).containsExactly(true, true, true);
    LedgerStore other = track(sameDataStore());
    LedgerStore.Recorded again = other.insertAllIfAbsent(List.of(bytes("x"), bytes("lost"), bytes("y")),
        token("restarted", "t1", request), AS_STORED);
    assertThat(again.replayed()).isTrue();
    assertThat(again.answers()).containsExactly(true, true, true);
    assertThat(again.inserted()).containsExactly(false, false, false);
    // the token settled lost's mark: a plain add of it by anyone else is a duplicate
    assertThat(other.insertAllIfAbsent(List.of(bytes("lost")), plain("third", List.of()), AS_STORED).answers())
        .containsExactly(false);
    assertThatThrownBy(() -> other.insertAllIfAbsent(List.of(bytes("z")), token("alive", "t1", bytes("other")),
        AS_STORED)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("already used");
    assertThat(other.contains(bytes("z"))).isFalse();
  }
}
