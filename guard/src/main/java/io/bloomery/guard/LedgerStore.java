package io.bloomery.guard;

import java.util.List;

/**
 * An {@link ExactStore} that also keeps the durable half of a {@link DeliveryLedger}: in a batch's own transaction,
 * the pending marks of items answered new until their delivery is acknowledged, and the stored answers of batches
 * sent with a token (docs/GUARD.md, "Acknowledgements across a crash"). {@link DeliveryLedger} owns the protocol
 * ({@link DeliveryLedger#record}); a store runs it over statements in its own SQL dialect, and never calls out of
 * the transaction: {@link Decide} only computes.
 *
 * <p>Implementations are thread-safe.
 */
public interface LedgerStore extends ExactStore {

  /**
   * What a batch written with {@link #insertAllIfAbsent(List, Ledger, Decide)} records in its own
   * transaction so that an answer survives a crash of the process that was to deliver it (see
   * docs/GUARD.md, "Acknowledgements across a crash").
   *
   * @param owner who marks the new items pending (one id per process and guarded key); a pending
   *     mark of another owner is claimable by a duplicate
   * @param token with a token: the batch's answers are stored under it and a later batch with the
   *     same token gets them back instead of running; no pending marks are kept. {@code null}: the
   *     items answered new are marked pending until {@link #acknowledge}d
   * @param request a digest of the batch's items; a token offered again with other items is refused
   * @param acknowledged items of {@code owner} whose answer was delivered: their marks are cleared
   *     in the same transaction
   */
  record Ledger(String owner, byte[] token, byte[] request, List<byte[]> acknowledged) {}

  /**
   * Decides a batch's answers inside its transaction, before the commit; or, on the one-round-trip path of {@link
   * #insertAllIfAbsent(List, boolean[], Ledger, Decide)}, which commits only a batch whose every item was new (so
   * there is nothing to decide: each answer is new), right after the commit, and also when that commit's outcome is
   * unknown (before the store throws), so that a caller who keeps marks of its own has them for every item the batch
   * may have stored. It is called once per batch that commits or may have committed.
   *
   * <p>It runs while the store's transaction is open, so it only computes from its arguments and what its caller
   * gathered before the batch (as {@link DeliveryLedger.Batch#decide()} does): it waits for nothing and calls out to
   * nothing.
   */
  @FunctionalInterface
  interface Decide {
    /**
     * @param inserted the rows this batch inserted
     * @param claimed duplicates that were marked pending by another owner: their mark is now this
     *     batch's (without a token) or cleared (with a token, whose stored reply says 1)
     * @return the answer for each item (new or duplicate); an inserted item is always new
     */
    boolean[] answers(boolean[] inserted, boolean[] claimed);
  }

  /**
   * The outcome of a ledger batch.
   *
   * @param inserted the rows this batch inserted (all false when {@code replayed})
   * @param answers what the batch answers, as {@link Decide} said or as stored under the token
   * @param replayed whether the answers are a token's stored reply (the batch did not run again)
   */
  record Recorded(boolean[] inserted, boolean[] answers, boolean replayed) {}

  /**
   * {@link ExactStore#insertAllIfAbsent(List)} that also keeps the acknowledgement ledger in the same
   * transaction: without a token, every item answered new is marked pending for the ledger's owner
   * until acknowledged; a duplicate marked pending by another owner is claimed (a crash lost that
   * owner's answer, so this batch may answer it new). With a token, the answers are stored under it
   * and a repeat of the token returns them. Both stores run {@link DeliveryLedger}'s one protocol for it, over
   * statements in their own SQL dialect.
   *
   * @throws IllegalArgumentException if the token was stored with other items
   * @throws StoreUnavailableException as for {@link ExactStore#insertAllIfAbsent(List, ExactStore.BeforeCommit)}
   * @throws ReadOnlyStoreException if the store is read-only
   */
  Recorded insertAllIfAbsent(List<byte[]> items, Ledger ledger, Decide decide);

  /**
   * {@link #insertAllIfAbsent(List, Ledger, Decide)} given the filter's "maybe" of each item ({@code
   * probablyPresent}, as for {@link ExactStore#insertIfAbsent(byte[], boolean)}). Where no item is "maybe", the batch has no
   * token and no item repeats, a store may send it on a path that costs one round trip, commit included, and commits
   * only if every item is new; if one is stored already nothing is written and the batch runs as without the hint.
   * The answers are the same as without it; {@link Decide} may then run right after the commit (see there).
   */
  default Recorded insertAllIfAbsent(List<byte[]> items, boolean[] probablyPresent, Ledger ledger, Decide decide) {
    return insertAllIfAbsent(items, ledger, decide);
  }

  /** Clears the pending marks of {@code owner} on {@code items}, whose answers were delivered. */
  void acknowledge(String owner, List<byte[]> items);
}
