/**
 * The guard: a filter in front of the authoritative store. Start at {@link io.bloomery.guard.Guard};
 * stores implement {@link io.bloomery.guard.ExactStore} ({@link io.bloomery.guard.PostgresStore} for
 * production, {@link io.bloomery.guard.SqliteStore} embedded).
 *
 * <p>The delivery ledger (which answers "new" reached a client, across processes and crashes; docs/GUARD.md,
 * "Acknowledgements across a crash") is owned by {@link io.bloomery.guard.DeliveryLedger}: its in-process marks, and
 * what a batch's store transaction records. The rule for every store transaction: <b>no call out of it</b>. Whatever
 * a decision needs from the caller (whether an earlier answer was delivered) is gathered before the transaction
 * opens; inside it only the store's statements and pure computation run, and the caller's own bookkeeping happens
 * after it returned.
 */
package io.bloomery.guard;
